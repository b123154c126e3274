// `reactant-server verify-image` on a small OCI layout made by scripts/image.sh tiny and
// signed by scripts/image.sh sign with the release lock (its cpu inputs), as the real
// binary: the untouched image verifies; a tampered layer, a wrong key, a digest that is not
// the image's, another image's attestation and a lock that differs are each refused with
// their documented line (docs/deploy.md, "The release image"); an image without a digest
// is a usage error unless --allow-no-digest, whose verdict says so. Also the DSSE encoding and
// the lock check the image build applies to every downloaded input.
#include "tools/verify_image.h"
#include "tools_test_util.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>

namespace rs::testing {
namespace {

const fs::path kSource = RS_SOURCE_DIR;

/// Runs a shell command line; true when it exits 0.
bool sh(const std::string &command) { return std::system(command.c_str()) == 0; }

/// A signed tiny image in a temporary directory: img/ (the layout with
/// img/attestation.dsse.json), key.pem/key.pub and lock.json (a copy of the release lock).
struct SignedImage {
  TempDir dir{"rs_verify_image_"};
  std::string img = dir.file("img");
  std::string key = dir.file("keys/release-signing.pub");
  std::string lock = dir.file("lock.json");
  std::string attestation = dir.file("img/attestation.dsse.json");
  std::string digest; // "sha256:<hex>" of the manifest

  SignedImage() {
    const std::string script = shellQuote((kSource / "scripts/image.sh").string());
    fs::copy_file(kSource / "deploy/lock/release.lock.json", lock);
    EXPECT_TRUE(sh("bash " + script + " tiny " + shellQuote(img) + " >/dev/null"));
    EXPECT_TRUE(sh("bash " + script + " keygen " + shellQuote(dir.file("keys")) + " >/dev/null"));
    EXPECT_TRUE(sh("RS_IMAGE_LOCK=" + shellQuote(lock) + " bash " + script + " sign " +
                   shellQuote(img) + " " + shellQuote(dir.file("keys/release-signing.pem")) +
                   " cpu >/dev/null"));
    digest = nlohmann::json::parse(readFile(img + "/index.json"))["manifests"][0]["digest"];
  }

  /// The blob file of the first layer.
  std::string layerBlob() const {
    const nlohmann::json manifest =
        nlohmann::json::parse(readFile(img + "/blobs/sha256/" + digest.substr(7)));
    return img + "/blobs/sha256/" + manifest["layers"][0]["digest"].get<std::string>().substr(7);
  }

  RunResult verify(const std::string &image, const std::string &pubkey,
                   std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {"verify-image",  "--image",   image,
                                     "--attestation", attestation, "--key",
                                     pubkey,          "--lock",    lock};
    args.insert(args.end(), extra.begin(), extra.end());
    return runServer(args);
  }
};

/// The line of `out` that starts with "verify-image: <check>: ".
std::string checkLine(const std::string &out, const std::string &check) {
  for (const std::string &l : lines(out))
    if (l.rfind("verify-image: " + check + ": ", 0) == 0)
      return l;
  return "";
}

/// sha256sum's digest of the file at `path`.
std::string sha256Of(const std::string &path) {
  FILE *p = ::popen(("sha256sum " + shellQuote(path)).c_str(), "r");
  char buf[65] = {};
  EXPECT_EQ(std::fread(buf, 1, 64, p), 64u);
  ::pclose(p);
  return buf;
}

TEST(VerifyImage, SignedImageVerifies) {
  SignedImage s;
  RunResult r = s.verify(s.img + "@" + s.digest, s.key);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(checkLine(r.out, "signature"),
            "verify-image: signature: OK: Ed25519 signature 1 verifies with " + s.key);
  EXPECT_EQ(checkLine(r.out, "blobs"),
            "verify-image: blobs: OK: 3 blobs, each matching its digest");
  EXPECT_EQ(checkLine(r.out, "subject"), "verify-image: subject: OK: the manifest " + s.digest +
                                             " is the attestation's subject");
  EXPECT_EQ(checkLine(r.out, "digest"),
            "verify-image: digest: OK: the manifest is the digest given, " + s.digest);
  EXPECT_EQ(lines(r.out).back(), "verify-image: VERIFIED");
}

TEST(VerifyImage, ImageWithoutDigestIsAUsageError) {
  SignedImage s;
  // No check runs: the layout alone does not say which image is deployed.
  RunResult plain = s.verify(s.img, s.key);
  EXPECT_EQ(plain.status, 2) << plain.out << plain.err;
  EXPECT_EQ(plain.out, "");
  EXPECT_EQ(plain.err, "verify-image: --image " + s.img +
                           " names no digest: give --image OCI_DIR@sha256:DIGEST with the "
                           "digest you deploy (the other checks do not pin which image that "
                           "is), or --allow-no-digest to check the signature, blobs, subject "
                           "and materials alone\n");
  // Allowed: the digest check is skipped, the rest passes, and the verdict says what was not
  // checked.
  RunResult allowed = s.verify(s.img, s.key, {"--allow-no-digest"});
  EXPECT_EQ(allowed.status, 0) << allowed.out << allowed.err;
  EXPECT_EQ(checkLine(allowed.out, "digest"),
            "verify-image: digest: SKIPPED: no digest given (give --image "
            "OCI_DIR@sha256:DIGEST to pin the image)");
  EXPECT_EQ(checkLine(allowed.out, "materials").substr(0, 29), "verify-image: materials: OK: ");
  EXPECT_EQ(lines(allowed.out).back(),
            "verify-image: VERIFIED (digest not checked: the image was given without "
            "@sha256:DIGEST, so this is not proof that the image deployed is this one)");
  // The flag changes nothing for an image given by digest.
  RunResult pinned = s.verify(s.img + "@" + s.digest, s.key, {"--allow-no-digest"});
  EXPECT_EQ(pinned.status, 0) << pinned.out;
  EXPECT_EQ(lines(pinned.out).back(), "verify-image: VERIFIED");
}

TEST(VerifyImage, TamperedLayerIsRefused) {
  SignedImage s;
  const std::string blob = s.layerBlob();
  std::string bytes = readFile(blob);
  bytes[bytes.size() / 2] ^= 1;
  writeFile(blob, bytes);
  RunResult r = s.verify(s.img + "@" + s.digest, s.key);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(checkLine(r.out, "blobs"),
            "verify-image: blobs: FAILED: blob sha256:" + fs::path(blob).filename().string() +
                " has content sha256:" + sha256Of(blob));
  EXPECT_EQ(checkLine(r.out, "signature").substr(0, 29), "verify-image: signature: OK: ");
  EXPECT_EQ(lines(r.out).back(), "verify-image: REFUSED: 1 of 6 checks failed");
}

TEST(VerifyImage, WrongKeyIsRefused) {
  SignedImage s;
  TempDir other("rs_verify_key_");
  ASSERT_TRUE(sh("bash " + shellQuote((kSource / "scripts/image.sh").string()) + " keygen " +
                 shellQuote(other.str()) + " >/dev/null"));
  const std::string wrong = other.file("release-signing.pub");
  RunResult r = s.verify(s.img + "@" + s.digest, wrong);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(checkLine(r.out, "signature"),
            "verify-image: signature: FAILED: no signature of the envelope (1) verifies with " +
                wrong + ": wrong key, or the attestation was changed after signing");
  for (const char *check : {"statement", "subject", "materials"})
    EXPECT_EQ(checkLine(r.out, check), std::string("verify-image: ") + check +
                                           ": FAILED: not checked: the signature did not verify");
  EXPECT_EQ(lines(r.out).back(), "verify-image: REFUSED: 4 of 6 checks failed");
}

TEST(VerifyImage, DigestMismatchIsRefused) {
  SignedImage s;
  const std::string other = "sha256:" + std::string(64, 'a');
  RunResult r = s.verify(s.img + "@" + other, s.key);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(checkLine(r.out, "digest"), "verify-image: digest: FAILED: the layout's manifest is " +
                                            s.digest + ", not the digest given " + other);
  EXPECT_EQ(lines(r.out).back(), "verify-image: REFUSED: 1 of 6 checks failed");
}

TEST(VerifyImage, AnotherImagesAttestationIsRefused) {
  SignedImage s;
  // Another layout (one layer holding another file), checked with s's attestation.
  ASSERT_TRUE(sh("cd " + shellQuote(s.dir.str()) +
                 " && mkdir -p l/etc && echo other > l/etc/x && "
                 "printf '{\"epoch\":0,\"ref_name\":\"t\",\"layers\":[{\"dir\":\"l\","
                 "\"created_by\":\"x\"}],\"config\":{},\"annotations\":{}}' > spec.json && "
                 "/usr/bin/python3 " +
                 shellQuote((kSource / "scripts/image/oci_layout.py").string()) +
                 " --spec spec.json --out other >/dev/null"));
  const std::string other = s.dir.file("other");
  const std::string digest =
      nlohmann::json::parse(readFile(other + "/index.json"))["manifests"][0]["digest"];
  RunResult r = s.verify(other + "@" + digest, s.key);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(checkLine(r.out, "subject"),
            "verify-image: subject: FAILED: the attestation's subject is " + s.digest +
                ", the layout's manifest is " + digest);
}

TEST(VerifyImage, LockThatDiffersIsRefused) {
  SignedImage s;
  nlohmann::json lock = nlohmann::json::parse(readFile(s.lock));
  nlohmann::json &libc = lock["debian"]["packages"][0];
  const std::string name = libc["name"], was = libc["sha256"];
  libc["sha256"] = std::string(64, '0');
  writeFile(s.lock, lock.dump(1) + "\n");
  RunResult r = s.verify(s.img + "@" + s.digest, s.key);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  // The lock file's own digest differs too; the first difference named is the package.
  EXPECT_EQ(checkLine(r.out, "materials"), "verify-image: materials: FAILED: deb:" + name +
                                               ": sha256 " + was + " in the attestation, sha256 " +
                                               std::string(64, '0') + " in " + s.lock +
                                               " (and 1 more)");
}

TEST(VerifyImage, UnreadableInputIsAnError) {
  SignedImage s;
  RunResult r = s.verify(s.dir.file("no_such_layout") + "@" + s.digest, s.key);
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("verify-image: "), std::string::npos) << r.err;
}

TEST(VerifyImage, DssePaeAndBase64) {
  // The DSSE v1.0.2 protocol's test vector.
  EXPECT_EQ(tools::dssePae("http://example.com/HelloWorld", "hello world"),
            "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  EXPECT_EQ(*tools::decodeBase64("aGVsbG8/Pz8="), "hello???");
  EXPECT_EQ(*tools::decodeBase64("aGVsbG8_Pz8"), "hello???"); // URL-safe, unpadded
  EXPECT_FALSE(tools::decodeBase64("a*b").isOk());
}

TEST(ImageLock, InputWithAnotherHashIsRefused) {
  TempDir dir("rs_image_lock_");
  const nlohmann::json lock =
      nlohmann::json::parse(readFile(kSource / "deploy/lock/release.lock.json"));
  const nlohmann::json &pkg = lock["debian"]["packages"][0];
  const std::string deb = dir.file(pkg["filename"].get<std::string>());
  writeFile(deb, "not the package");
  const std::string err = dir.file("err");
  const std::string lock_path = (kSource / "deploy/lock/release.lock.json").string();
  EXPECT_FALSE(sh("/usr/bin/python3 " + shellQuote((kSource / "scripts/image/lock.py").string()) +
                  " check " + shellQuote(lock_path) + " deb " + pkg["name"].get<std::string>() +
                  " " + shellQuote(deb) + " 2>" + shellQuote(err)));
  EXPECT_EQ(readFile(err), "image: refusing deb " + pkg["name"].get<std::string>() + " " +
                               pkg["version"].get<std::string>() + " (" +
                               pkg["filename"].get<std::string>() + "): its sha256 is " +
                               sha256Of(deb) + ", " + lock_path + " pins " +
                               pkg["sha256"].get<std::string>() + "\n");
}

} // namespace
} // namespace rs::testing
