//===- tools/verify_image_lock.cc - verify-image: materials against the lock -===//
//
// The lock's inputs of one variant, named as scripts/image/attest.py names them in the
// statement's resolvedDependencies: "source" (digest gitCommit), "debian-suite:<codename>/
// <component>" (the InRelease sha256), "deb:<package>" and "pypi:<project>" (sha256), and
// "lock" (the sha256 of the lock file itself). The check passes when both sets hold the
// same names with the same digests.
//
//===----------------------------------------------------------------------===//
#include "tools/verify_image_impl.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

namespace rs::tools::detail {

using nlohmann::json;

namespace {

/// name -> (digest algorithm, digest) of every input of `variant` in the lock.
std::map<std::string, std::pair<std::string, std::string>>
lockInputs(const json &lock, const std::string &variant, const std::string &lock_sha256) {
  std::map<std::string, std::pair<std::string, std::string>> in;
  in["source"] = {"gitCommit", lock.value("source", json::object()).value("commit", "")};
  const json debian = lock.value("debian", json::object());
  for (const json &s : debian.value("suites", json::array()))
    in["debian-suite:" + s.value("codename", "") + "/" + s.value("component", "")] = {
        "sha256", s.value("inrelease_sha256", "")};
  auto add = [&](const json &items, const std::string &prefix) {
    for (const json &e : items) {
      const std::vector<std::string> variants = e.value("variants", std::vector<std::string>{});
      if (std::find(variants.begin(), variants.end(), variant) != variants.end())
        in[prefix + e.value("name", "")] = {"sha256", e.value("sha256", "")};
    }
  };
  add(debian.value("packages", json::array()), "deb:");
  add(lock.value("wheels", json::array()), "pypi:");
  in["lock"] = {"sha256", lock_sha256};
  return in;
}

} // namespace

ImageCheck checkMaterials(const json &statement, const json &lock, const std::string &lock_path,
                          const std::string &lock_sha256) {
  ImageCheck c{"materials", false, false, ""};
  const json def = statement.value("predicate", json::object()).value("buildDefinition", json());
  if (!def.is_object()) {
    c.detail = "the predicate has no buildDefinition";
    return c;
  }
  const std::string variant =
      def.value("externalParameters", json::object()).value("variant", std::string());
  const auto want = lockInputs(lock, variant, lock_sha256);
  std::map<std::string, std::pair<std::string, std::string>> got;
  for (const json &m : def.value("resolvedDependencies", json::array())) {
    if (!m.is_object() || !m.contains("digest") || !m["digest"].is_object() || m["digest"].empty())
      continue;
    const auto first = m["digest"].begin();
    got[m.value("name", "")] = {first.key(), first->is_string() ? first->get<std::string>() : ""};
  }
  std::vector<std::string> bad;
  for (const auto &[name, digest] : want) {
    auto it = got.find(name);
    if (it == got.end())
      bad.push_back(name + " is in " + lock_path + " but not in the attestation");
    else if (it->second != digest)
      bad.push_back(name + ": " + it->second.first + " " + it->second.second +
                    " in the attestation, " + digest.first + " " + digest.second + " in " +
                    lock_path);
  }
  for (const auto &[name, digest] : got)
    if (want.count(name) == 0)
      bad.push_back(name + " is in the attestation but not in " + lock_path);
  if (bad.empty()) {
    c.ok = true;
    c.detail = std::to_string(want.size()) + " inputs of the " + variant + " image match " +
               lock_path + " (commit " + want.at("source").second.substr(0, 12) + ")";
  } else {
    c.detail =
        bad[0] + (bad.size() > 1 ? " (and " + std::to_string(bad.size() - 1) + " more)" : "");
  }
  return c;
}

} // namespace rs::tools::detail
