//===- server/evidence.cc - The deployment-identity document --------------===//
#include "server/evidence.h"

#include "bundle/program_files.h"
#include "runtime/pjrt_backend.h"
#include "server/model_metadata.h"

#include <fmt/core.h>
#include <google/protobuf/stubs/common.h>
#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <openssl/crypto.h>
#include <spdlog/version.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>

#include <gnu/libc-version.h>
#include <unistd.h>

namespace rs::server {
namespace {

using nlohmann::json;

bool isInstanceKey(std::string_view key) {
  for (std::string_view k : kInstanceConfigKeys) {
    if (k.back() == '.' ? key.substr(0, k.size()) == k : key == k)
      return true;
  }
  return false;
}

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

namespace {

json specsJson(const std::vector<protocol::TensorSpec> &specs) {
  json out = json::array();
  for (const protocol::TensorSpec &s : specs)
    out.push_back({{"name", s.name}, {"datatype", dtypeWireName(s.dtype)}, {"shape", s.shape}});
  return out;
}

std::string sha256Of(const runtime::LoadedModel &m, const std::string &file) {
  auto it = m.file_sha256.find(file);
  return it == m.file_sha256.end() ? "" : it->second;
}

/// The key of program `key` under `programs`: its batch size as a decimal string ("8"; "0"
/// for an unbatched model.mlir), or in a multi-shape bundle "v1.b8" ("v1.b0" unbatched).
std::string programKeyText(const bundle::ProgramKey &key, bool multi_shape) {
  const std::string size = std::to_string(key.batch_size);
  return multi_shape ? "v" + std::to_string(key.variant) + ".b" + size : size;
}

/// The compared part of one loaded model.
json modelJson(const runtime::LoadedModel &m) {
  const bool multi_shape = !m.manifest.input_shapes.empty();
  const protocol::ModelMetadata metadata = modelMetadataOf(m);
  json programs = json::object();
  for (const auto &[key, exe] : m.programs) {
    (void)exe;
    const std::string file = bundle::programFileName(key, multi_shape);
    auto c = m.cache.find(key);
    programs[programKeyText(key, multi_shape)] = {
        {"file", file},
        {"sha256", sha256Of(m, file)},
        {"cache_key", c == m.cache.end() ? "" : c->second.key}};
  }
  json model = {{"state", "ready"},
                {"manifest_sha256", sha256Of(m, "manifest.yaml")},
                {"weights_sha256", sha256Of(m, "weights.safetensors")},
                {"programs", std::move(programs)},
                {"batch_sizes", m.batch_sizes},
                {"numerics", m.numerics.outcome()},
                {"inputs", specsJson(metadata.inputs)},
                {"outputs", specsJson(metadata.outputs)}};
  if (multi_shape) {
    json variants = json::array();
    for (const bundle::ShapeVariant &variant : m.manifest.input_shapes) {
      json sizes = json::object();
      for (const auto &[letter, size] : variant)
        sizes[std::string(1, letter)] = size;
      variants.push_back(std::move(sizes));
    }
    model["input_shapes"] = std::move(variants);
  }
  return model;
}

} // namespace

std::string evidenceHostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0)
    return "unknown";
  return buf;
}

json evidenceDocument(const WorkerFacts &facts, const runtime::ModelRepository &repository) {
  const config::WorkerConfig &c = facts.config;
  json config = json::object();
  json instance_config = json::object();
  for (const auto &[key, value] : config::effectiveSettings(c))
    (isInstanceKey(key) ? instance_config : config)[key] = value;

  const runtime::DeviceInfo &d = facts.device;
  const BackendFacts &b = facts.backend;
  json backend = {{"platform", d.platform},
                  {"device_kind", d.device_kind},
                  {"compute_capability", d.compute_capability},
                  {"backend_version", d.backend_version},
                  {"driver_version", b.driver_version},
                  {"cuda_version", b.cuda_version},
                  {"pjrt_plugin_path", b.pjrt_plugin_path},
                  {"pjrt_plugin_version", b.pjrt_plugin_version},
                  {"pjrt_plugin_sha256", b.pjrt_plugin_sha256}};
  json probe = json::object();
  for (const auto &[key, value] : facts.tf32_probe)
    probe[key] = value;

  json models = json::object();
  json model_dirs = json::object();
  json cache_programs = json::object();
  for (const runtime::ModelState &s : repository.states()) {
    model_dirs[s.name] = s.dir;
    if (!s.model) {
      models[s.name] = {{"state", "failed"}, {"reason", s.status.message()}};
      continue;
    }
    models[s.name] = modelJson(*s.model);
    json outcomes = json::object();
    const bool multi_shape = !s.model->manifest.input_shapes.empty();
    for (const auto &[key, outcome] : s.model->cache)
      outcomes[programKeyText(key, multi_shape)] =
          outcome.hit ? "hit" : "miss: " + outcome.miss_reason;
    cache_programs[s.name] = std::move(outcomes);
  }

  json instance = {
      {"worker", c.worker_name},
      {"worker_index", c.worker_index},
      {"node_file", c.node_file},
      {"node_host", c.node_host},
      {"hostname", evidenceHostName()},
      {"pid", static_cast<int64_t>(getpid())},
      {"started_at", facts.started_at},
      {"config", std::move(instance_config)},
      {"config_sources", {{"from_environment", c.env_keys}, {"from_profile", c.profile_keys}}},
      {"model_dirs", std::move(model_dirs)},
      {"executable_cache",
       {{"hits", repository.executableCacheHits()},
        {"misses", repository.executableCacheMisses()},
        {"programs", std::move(cache_programs)}}},
  };
  return {{"format", kEvidenceFormat},      {"build", buildEvidence(facts.build)},
          {"config", std::move(config)},    {"backend", std::move(backend)},
          {"tf32_probe", std::move(probe)}, {"models", std::move(models)},
          {"instance", std::move(instance)}};
}

std::string parseNvidiaDriverVersion(std::string_view text) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 ..." or
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build ...":
  // the first word after "Kernel Module" made of digits and at least one dot.
  const size_t at = text.find("Kernel Module");
  if (at == std::string_view::npos)
    return "";
  const size_t line_end = std::min(text.find('\n', at), text.size());
  size_t i = at;
  while (i < line_end) {
    while (i < line_end && text[i] == ' ')
      ++i;
    size_t end = i;
    while (end < line_end && text[end] != ' ')
      ++end;
    const std::string_view word = text.substr(i, end - i);
    const bool version = !word.empty() && std::isdigit(static_cast<unsigned char>(word[0])) &&
                         word.find('.') != std::string_view::npos &&
                         std::all_of(word.begin(), word.end(), [](char c) {
                           return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
                         });
    if (version)
      return std::string(word);
    i = end;
  }
  return "";
}

BackendFacts pjrtBackendFacts(const runtime::PjrtBackend &backend) {
  BackendFacts f;
  const pjrt::Client &client = backend.client();
  f.pjrt_plugin_path = client.plugin().path();
  f.pjrt_plugin_version = client.plugin().apiVersion();
  f.cuda_version = client.device().platform_version;
  Result<std::string> digest = runtime::fileSha256(f.pjrt_plugin_path);
  f.pjrt_plugin_sha256 = digest.isOk() ? *digest : "unknown (" + digest.status().message() + ")";
  std::ifstream in("/proc/driver/nvidia/version");
  std::ostringstream text;
  text << in.rdbuf();
  f.driver_version = parseNvidiaDriverVersion(text.str());
  if (f.driver_version.empty())
    f.driver_version = "unknown (no NVIDIA kernel module version in /proc/driver/nvidia/version)";
  return f;
}

std::string utcNow() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

//===----------------------------------------------------------------------===//
// diffEvidence
//===----------------------------------------------------------------------===//

namespace {

std::string categoryOf(const std::vector<std::string> &p) {
  const std::string &top = p.empty() ? std::string() : p[0];
  if (top == "build")
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

} // namespace rs::server
