//===- protocol/evidence.cc - The deployment-identity document ------------===//
#include "protocol/evidence.h"

#include <fmt/core.h>
#include <google/protobuf/stubs/common.h>
#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <openssl/crypto.h>
#include <spdlog/version.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include <gnu/libc-version.h>
#include <unistd.h>

namespace rs::protocol {
namespace {

using nlohmann::json;

std::string versionText(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

} // namespace

json buildEvidence(const ServerBuild &b) {
  json libraries = {
      {"cpp_httplib", CPPHTTPLIB_VERSION},
      {"fmt", versionText(FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100)},
      {"glibc", gnu_get_libc_version()},
      {"grpc", grpc::Version()},
      {"nlohmann_json", versionText(NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR,
                                    NLOHMANN_JSON_VERSION_PATCH)},
      {"openssl", OpenSSL_version(OPENSSL_VERSION)},
      {"protobuf",
       versionText(GOOGLE_PROTOBUF_VERSION / 1000000, GOOGLE_PROTOBUF_VERSION / 1000 % 1000,
                   GOOGLE_PROTOBUF_VERSION % 1000)},
      {"spdlog", versionText(SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH)},
  };
  return {{"version", b.version},       {"commit", b.commit}, {"compiler", b.compiler},
          {"build_type", b.build_type}, {"eigen", b.eigen},   {"libraries", std::move(libraries)}};
}

std::string evidenceHostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0)
    return "unknown";
  return buf;
}

std::string utcNow() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

std::string categoryOf(const std::vector<std::string> &p) {
  const std::string &top = p.empty() ? std::string() : p[0];
  if (top == "build" || top == "image")
    return "image/build";
  if (top == "backend") {
    const std::string leaf = p.size() > 1 ? p[1] : "";
    if (leaf == "platform" || leaf == "device_kind" || leaf == "compute_capability")
      return "device class";
    if (leaf == "driver_version")
      return "driver";
    return "backend";
  }
  if (top == "config") {
    const std::string key = p.size() > 1 ? p[1] : "";
    if (key == "runtime.numerics")
      return "numerics mode";
    if (key == "runtime.profile")
      return "profile";
    return "settings";
  }
  if (top == "tf32_probe")
    return "tf32 probe";
  if (top == "models") {
    if (p.size() <= 2)
      return "models";
    const std::string &field = p[2];
    if (field == "manifest_sha256" || field == "weights_sha256")
      return "bundle hashes";
    if (field == "programs" && p.size() == 5 && p[4] == "sha256")
      return "bundle hashes";
    if (field == "programs" && p.size() == 5 && p[4] == "cache_key")
      return "cache keys";
    if (field == "programs" && p.size() == 5 && p[4] == "cache_payload_sha256")
      return "cache entries";
    return "model load";
  }
  if (top == "format")
    return "format";
  return "other";
}

std::string valueText(const json *v) { return v ? v->dump() : "(absent)"; }

void diffAt(const json *a, const json *b, std::vector<std::string> &path,
            std::vector<FactChange> &out) {
  if (!path.empty() && path.back() == "instance")
    return;
  if (a && b && a->is_object() && b->is_object()) {
    // Union of keys, in order (both are sorted maps).
    std::vector<std::string> keys;
    for (auto it = a->begin(); it != a->end(); ++it)
      keys.push_back(it.key());
    for (auto it = b->begin(); it != b->end(); ++it)
      if (!a->contains(it.key()))
        keys.push_back(it.key());
    std::stable_sort(keys.begin(), keys.end());
    for (const std::string &k : keys) {
      path.push_back(k);
      auto ia = a->find(k);
      auto ib = b->find(k);
      diffAt(ia == a->end() ? nullptr : &*ia, ib == b->end() ? nullptr : &*ib, path, out);
      path.pop_back();
    }
    return;
  }
  if (a && b && *a == *b)
    return;
  std::string dotted;
  for (const std::string &p : path)
    dotted += (dotted.empty() ? "" : ".") + p;
  out.push_back({dotted, valueText(a), valueText(b), categoryOf(path)});
}

} // namespace

std::vector<FactChange> diffEvidence(const json &recorded, const json &current) {
  std::vector<FactChange> out;
  std::vector<std::string> path;
  diffAt(&recorded, &current, path, out);
  return out;
}

} // namespace rs::protocol
