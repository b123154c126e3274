//===- test/config/image_identity_test.cc - The release image's identity --===//
//
// The identity file and the digest variable: a valid pair, their absence (`image=none`),
// and every malformed file or digest refused with the file or variable and what was
// expected.
//
//===----------------------------------------------------------------------===//
#include "config/image_identity.h"

#include "common/files.h"
#include "common/temp_dir.h"

#include <gtest/gtest.h>

#include <string>

namespace rs::config {
namespace {

const std::string kCommit(40, 'a');
const std::string kLock(64, 'c');
const std::string kDigest = "sha256:" + std::string(64, 'd');

std::string identityJson(const std::string &commit = kCommit, const std::string &variant = "gpu") {
  return R"({"version": "0.4.0", "commit": ")" + commit + R"(", "lock_sha256": ")" + kLock +
         R"(", "variant": ")" + variant + R"("})";
}

TEST(ImageIdentity, FileAndDigestAreTheIdentity) {
  rs::testing::TempDir tmp;
  const std::string file = tmp.str() + "/image.json";
  rs::testing::writeFile(file, identityJson());
  Result<ImageIdentity> image = readImageIdentity(
      {{"REACTANT_IMAGE_IDENTITY_FILE", file}, {"REACTANT_IMAGE_DIGEST", kDigest}});
  ASSERT_TRUE(image.isOk()) << image.status().toString();
  EXPECT_EQ(*image, (ImageIdentity{.file = file,
                                   .version = "0.4.0",
                                   .commit = kCommit,
                                   .lock_sha256 = kLock,
                                   .variant = "gpu",
                                   .digest = kDigest}));
  EXPECT_EQ(imageSettings(*image),
            (std::vector<std::pair<std::string, std::string>>{{"image.digest", kDigest},
                                                              {"image.version", "0.4.0"},
                                                              {"image.commit", kCommit},
                                                              {"image.lock_sha256", kLock},
                                                              {"image.variant", "gpu"},
                                                              {"image.file", file}}));
}

TEST(ImageIdentity, FileWithoutDigestLeavesTheDigestUnset) {
  rs::testing::TempDir tmp;
  const std::string file = tmp.str() + "/image.json";
  rs::testing::writeFile(file, identityJson(kCommit, "cpu"));
  Result<ImageIdentity> image =
      readImageIdentity({{"REACTANT_IMAGE_IDENTITY_FILE", file}, {"REACTANT_IMAGE_DIGEST", ""}});
  ASSERT_TRUE(image.isOk()) << image.status().toString();
  EXPECT_TRUE(image->known());
  EXPECT_EQ(image->digest, "");
  EXPECT_EQ(imageSettings(*image).front(),
            (std::pair<std::string, std::string>{"image.digest", "unset"}));
}

TEST(ImageIdentity, NeitherFileNorDigestIsNone) {
  // No variable: the default file, absent on a build machine.
  Result<ImageIdentity> image = readImageIdentity({});
  ASSERT_TRUE(image.isOk()) << image.status().toString();
  EXPECT_FALSE(image->known());
  EXPECT_EQ(*image, ImageIdentity{});
  EXPECT_EQ(imageSettings(*image),
            (std::vector<std::pair<std::string, std::string>>{{"image", "none"}}));
  // A digest alone is known: the image's other facts are unset.
  Result<ImageIdentity> digest_only = readImageIdentity({{"REACTANT_IMAGE_DIGEST", kDigest}});
  ASSERT_TRUE(digest_only.isOk());
  EXPECT_TRUE(digest_only->known());
  EXPECT_EQ(digest_only->commit, "");
}

TEST(ImageIdentity, MalformedFileIsRefusedNamingFileAndKey) {
  const std::string f = "/img/image.json";
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "image identity /img/image.json: not a JSON object (expected {\"version\", "
                   "\"commit\", \"lock_sha256\", \"variant\"})"},
      {"[1]", "image identity /img/image.json: not a JSON object (expected {\"version\", "
              "\"commit\", \"lock_sha256\", \"variant\"})"},
      {R"({"version": "1", "commit": ")" + kCommit + R"(", "variant": "cpu"})",
       "image identity /img/image.json: missing key 'lock_sha256'"},
      {R"({"version": 1, "commit": ")" + kCommit + R"(", "lock_sha256": ")" + kLock +
           R"(", "variant": "cpu"})",
       "image identity /img/image.json: 'version' must be a string, got 1"},
      {identityJson("ABCDEF" + std::string(34, 'a')),
       "image identity /img/image.json: 'commit' is 'ABCDEF" + std::string(34, 'a') +
           "', expected 40 lower-case hex digits (a git commit)"},
      {identityJson(std::string(39, 'a')),
       "image identity /img/image.json: 'commit' is '" + std::string(39, 'a') +
           "', expected 40 lower-case hex digits (a git commit)"},
      {identityJson(kCommit, "tpu"),
       "image identity /img/image.json: 'variant' is 'tpu', expected \"cpu\" or \"gpu\""},
      {R"({"version": "1", "commit": ")" + kCommit +
           R"(", "lock_sha256": "abc", "variant": "cpu"})",
       "image identity /img/image.json: 'lock_sha256' is 'abc', expected 64 lower-case hex "
       "digits"},
      {R"({"version": "", "commit": ")" + kCommit + R"(", "lock_sha256": ")" + kLock +
           R"(", "variant": "cpu"})",
       "image identity /img/image.json: 'version' is empty"},
      {R"({"version": "1", "commit": ")" + kCommit + R"(", "lock_sha256": ")" + kLock +
           R"(", "variant": "cpu", "digest": "x"})",
       "image identity /img/image.json: unknown key 'digest' (expected version, commit, "
       "lock_sha256, variant)"},
  };
  for (const auto &[text, message] : cases) {
    Result<ImageIdentity> image = parseImageIdentity(text, f);
    ASSERT_FALSE(image.isOk()) << text;
    EXPECT_EQ(image.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(image.status().message(), message) << text;
  }
}

TEST(ImageIdentity, MissingNamedFileAndMalformedDigestAreRefused) {
  rs::testing::TempDir tmp;
  const std::string missing = tmp.str() + "/absent.json";
  Result<ImageIdentity> no_file = readImageIdentity({{"REACTANT_IMAGE_IDENTITY_FILE", missing}});
  ASSERT_FALSE(no_file.isOk());
  EXPECT_EQ(no_file.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      no_file.status().message().rfind(
          "image identity " + missing + " (REACTANT_IMAGE_IDENTITY_FILE): cannot be read: ", 0),
      0u)
      << no_file.status().message();

  for (const std::string &digest :
       {std::string(64, 'd'), "sha256:" + std::string(63, 'd'), "sha512:" + std::string(64, 'd'),
        "sha256:" + std::string(64, 'D')}) {
    Result<ImageIdentity> bad = readImageIdentity({{"REACTANT_IMAGE_DIGEST", digest}});
    ASSERT_FALSE(bad.isOk()) << digest;
    EXPECT_EQ(bad.status().message(), "REACTANT_IMAGE_DIGEST: '" + digest +
                                          "' is not an image digest (expected sha256:<64 "
                                          "lower-case hex digits>)");
  }
}

} // namespace
} // namespace rs::config
