//===- server/evidence.cc - A worker's deployment-identity document -------===//
#include "server/evidence.h"

#include "server/gpu_flags.h"

#include "bundle/program_files.h"
#include "pjrt/vendor_profile.h"
#include "runtime/pjrt_backend.h"
#include "server/model_metadata.h"
#include "support/digest.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>

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
    auto f = m.program_files.find(key);
    const std::string file =
        f == m.program_files.end() ? bundle::programFileName(key, multi_shape) : f->second;
    auto c = m.cache.find(key);
    json entry = {{"file", file},
                  {"sha256", sha256Of(m, file)},
                  {"cache_key", c == m.cache.end() ? "" : c->second.key},
                  {"cache_payload_sha256", c == m.cache.end() ? "" : c->second.payload_sha256}};
    // A program refined from a shape-polymorphic model.mlir: the hash of the refined module
    // beside the hash of the file it was refined from.
    if (auto r = m.refined_sha256.find(key); r != m.refined_sha256.end())
      entry["refined_sha256"] = r->second;
    programs[programKeyText(key, multi_shape)] = std::move(entry);
  }
  json model = {{"state", "ready"},
                {"manifest_sha256", sha256Of(m, "manifest.yaml")},
                {"weights_sha256", sha256Of(m, "weights.safetensors")},
                {"programs", std::move(programs)},
                {"batch_sizes", m.batch_sizes},
                {"numerics", m.numerics.outcome()},
                {"inputs", specsJson(metadata.inputs)},
                {"outputs", specsJson(metadata.outputs)}};
  // model.py hooks: what their behaviour depends on (runtime/model_extension.h).
  if (m.extension) {
    const runtime::ExtensionEnvironment env = m.extension->environment();
    model["hooks"] = {{"sha256", m.extension->identity()},
                      {"files", m.extension->files()},
                      {"runtime", env.runtime},
                      {"packages", env.packages}};
    // Only when set, so that the evidence of hooks served without them keeps its shape.
    if (!env.python_path.empty())
      model["hooks"]["python_path"] = env.python_path;
    if (!env.allowed_packages.empty())
      model["hooks"]["allowed_packages"] = env.allowed_packages;
  }
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

/// The compared part of the image's identity: "none" outside a release image, else its
/// digest, version, commit, lock_sha256 and variant ("" when unknown).
json imageJson(const config::ImageIdentity &image) {
  if (!image.known())
    return "none";
  return {{"digest", image.digest},
          {"version", image.version},
          {"commit", image.commit},
          {"lock_sha256", image.lock_sha256},
          {"variant", image.variant}};
}

} // namespace

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
  // The autotune cache in effect (server/gpu_flags.h): what the compiles of this process
  // read and wrote, as it is now.
  const config::RuntimeConfig &rt = c.runtime;
  if (rt.backend != config::Backend::kCpu && !rt.autotune_cache_dir.empty() &&
      rt.autotune_cache.value_or(true)) {
    const AutotuneCacheContents cached = inspectAutotuneCache(rt.autotune_cache_dir);
    backend["autotune_cache_dir"] = rt.autotune_cache_dir;
    backend["autotune_cache_results"] = cached.results;
    backend["autotune_cache_sha256"] = cached.sha256;
  }
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
      {"hostname", protocol::evidenceHostName()},
      {"pid", static_cast<int64_t>(getpid())},
      {"started_at", facts.started_at},
      {"image_identity_file", facts.image.file},
      {"config", std::move(instance_config)},
      {"config_sources", {{"from_environment", c.env_keys}, {"from_profile", c.profile_keys}}},
      {"model_dirs", std::move(model_dirs)},
      {"executable_cache",
       {{"hits", repository.executableCacheHits()},
        {"misses", repository.executableCacheMisses()},
        {"programs", std::move(cache_programs)}}},
  };
  return {{"format", protocol::kEvidenceFormat}, {"build", protocol::buildEvidence(facts.build)},
          {"image", imageJson(facts.image)},     {"config", std::move(config)},
          {"backend", std::move(backend)},       {"tf32_probe", std::move(probe)},
          {"models", std::move(models)},         {"instance", std::move(instance)}};
}

BackendFacts pjrtBackendFacts(const runtime::PjrtBackend &backend) {
  BackendFacts f;
  const pjrt::Client &client = backend.client();
  f.pjrt_plugin_path = client.plugin().path();
  f.pjrt_plugin_version = client.plugin().apiVersion();
  f.cuda_version = client.device().platform_version;
  Result<std::string> digest = sha256OfFile(f.pjrt_plugin_path);
  f.pjrt_plugin_sha256 = digest.isOk() ? *digest : "unknown (" + digest.status().message() + ")";
  f.driver_version = pjrt::probeDriverVersion(backend.vendor());
  return f;
}

} // namespace rs::server
