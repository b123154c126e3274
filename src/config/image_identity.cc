//===- config/image_identity.cc - The release image a worker runs in -----===//
#include "config/image_identity.h"

#include "support/file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace rs::config {
namespace {

using nlohmann::json;

/// Whether `text` is exactly `digits` lower-case hexadecimal digits.
bool isLowerHex(std::string_view text, size_t digits) {
  return text.size() == digits && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

/// The string value of required key `key` of `doc`, or InvalidArgument naming `file`.
Result<std::string> stringKey(const json &doc, std::string_view key, const std::string &file) {
  auto it = doc.find(key);
  if (it == doc.end())
    return invalidArgument() << "image identity " << file << ": missing key '" << key << "'";
  if (!it->is_string())
    return invalidArgument() << "image identity " << file << ": '" << key
                             << "' must be a string, got " << it->dump();
  return it->get<std::string>();
}

/// The value of `name` in `env`; "" when absent or empty.
std::string variable(const std::map<std::string, std::string> &env, std::string_view name) {
  auto it = env.find(std::string(name));
  return it == env.end() ? "" : it->second;
}

} // namespace

Result<ImageIdentity> parseImageIdentity(std::string_view text, const std::string &file) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return invalidArgument() << "image identity " << file
                             << ": not a JSON object (expected {\"version\", \"commit\", "
                                "\"lock_sha256\", \"variant\"})";
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "version" && it.key() != "commit" && it.key() != "lock_sha256" &&
        it.key() != "variant")
      return invalidArgument() << "image identity " << file << ": unknown key '" << it.key()
                               << "' (expected version, commit, lock_sha256, variant)";
  ImageIdentity out;
  out.file = file;
  RS_ASSIGN_OR_RETURN(out.version, stringKey(doc, "version", file));
  RS_ASSIGN_OR_RETURN(out.commit, stringKey(doc, "commit", file));
  RS_ASSIGN_OR_RETURN(out.lock_sha256, stringKey(doc, "lock_sha256", file));
  RS_ASSIGN_OR_RETURN(out.variant, stringKey(doc, "variant", file));
  if (out.version.empty())
    return invalidArgument() << "image identity " << file << ": 'version' is empty";
  if (!isLowerHex(out.commit, 40))
    return invalidArgument() << "image identity " << file << ": 'commit' is '" << out.commit
                             << "', expected 40 lower-case hex digits (a git commit)";
  if (!isLowerHex(out.lock_sha256, 64))
    return invalidArgument() << "image identity " << file << ": 'lock_sha256' is '"
                             << out.lock_sha256 << "', expected 64 lower-case hex digits";
  if (out.variant != "cpu" && out.variant != "gpu")
    return invalidArgument() << "image identity " << file << ": 'variant' is '" << out.variant
                             << "', expected \"cpu\" or \"gpu\"";
  return out;
}

Result<ImageIdentity> readImageIdentity(const std::map<std::string, std::string> &env) {
  ImageIdentity out;
  const std::string named = variable(env, kImageIdentityFileVariable);
  const std::string file = named.empty() ? std::string(kImageIdentityFile) : named;
  std::error_code ec;
  if (!named.empty() || std::filesystem::exists(file, ec)) {
    Result<std::string> text = readWholeFile(file);
    if (!text.isOk())
      return invalidArgument() << "image identity " << file
                               << (named.empty()
                                       ? ""
                                       : " (" + std::string(kImageIdentityFileVariable) + ")")
                               << ": cannot be read: " << text.status().message();
    RS_ASSIGN_OR_RETURN(out, parseImageIdentity(*text, file));
  }
  out.digest = variable(env, kImageDigestVariable);
  if (!out.digest.empty() && !(out.digest.starts_with("sha256:") &&
                               isLowerHex(std::string_view(out.digest).substr(7), 64)))
    return invalidArgument() << kImageDigestVariable << ": '" << out.digest
                             << "' is not an image digest (expected sha256:<64 lower-case hex "
                                "digits>)";
  return out;
}

std::vector<std::pair<std::string, std::string>> imageSettings(const ImageIdentity &image) {
  if (!image.known())
    return {{"image", "none"}};
  auto orUnset = [](const std::string &v) { return v.empty() ? std::string("unset") : v; };
  return {
      {"image.digest", orUnset(image.digest)},   {"image.version", orUnset(image.version)},
      {"image.commit", orUnset(image.commit)},   {"image.lock_sha256", orUnset(image.lock_sha256)},
      {"image.variant", orUnset(image.variant)}, {"image.file", orUnset(image.file)}};
}

} // namespace rs::config
