//===- config/worker_build.cc - Typing, validation and the profile --------===//
//
// Turns a merged, env-applied worker tree into a WorkerConfig: every key typed and
// range-checked by its row (config/keys.h), then the rules that join keys, then the
// regulated profile of the reproducibility page.
//
//===----------------------------------------------------------------------===//
#include "config/worker_build_impl.h"

#include "config/key_reader.h"
#include "config/keys.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

namespace rs::config::detail {
namespace {

constexpr std::string_view kDeterminismFlag = "xla_gpu_exclude_nondeterministic_ops";

/// runtime.shared_host_weights_mode: an octal permission string such as "660", at most 0777.
Status checkSharedWeightsMode(const KeyReader &b, const RuntimeConfig &r) {
  const yaml::Value *v = b.lookup("runtime.shared_host_weights_mode");
  if (!v)
    return Status::ok();
  const std::string &s = r.shared_host_weights_mode;
  bool octal = !s.empty() && s.size() <= 4 &&
               std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '7'; });
  if (!octal || std::strtol(s.c_str(), nullptr, 8) > 0777)
    return b.error(*v, "runtime.shared_host_weights_mode")
           << "'" << s << "' is not an octal permission string like \"660\" (at most 777)";
  return Status::ok();
}

/// endpoints.shared_memory_prefix is '/' and the start of an object name;
/// endpoints.shared_memory_allowed_uids are uids (filled into shared_memory_uids).
Status checkSharedMemory(const KeyReader &b, EndpointsConfig &e) {
  const std::string &prefix = e.shared_memory_prefix;
  if (prefix.empty() || prefix[0] != '/' || prefix.find('/', 1) != std::string::npos)
    return b.error(*b.lookup("endpoints.shared_memory_prefix"), "endpoints.shared_memory_prefix")
           << "'" << prefix
           << "' must be '/' followed by the start of a shared memory object name (no other '/')";
  e.shared_memory_uids.clear();
  for (const std::string &uid : e.shared_memory_allowed_uids) {
    uint64_t parsed = 0;
    const auto [end, ec] = std::from_chars(uid.data(), uid.data() + uid.size(), parsed);
    if (uid.empty() || ec != std::errc() || end != uid.data() + uid.size() || parsed > UINT32_MAX)
      return b.error(*b.lookup("endpoints.shared_memory_allowed_uids"),
                     "endpoints.shared_memory_allowed_uids")
             << "'" << uid << "' is not a uid (an integer in [0, 4294967295])";
    e.shared_memory_uids.push_back(static_cast<uint32_t>(parsed));
  }
  return Status::ok();
}

/// The ports of one worker must differ (0 turns metrics and HTTP off).
Status checkPorts(const KeyReader &b, const EndpointsConfig &e) {
  if (e.metrics_port != 0 && e.metrics_port == e.port)
    return b.error(*b.lookup("endpoints.metrics_port"), "endpoints.metrics_port")
           << e.metrics_port << " must differ from endpoints.port " << e.port;
  if (e.http_port != 0 && (e.http_port == e.port || e.http_port == e.metrics_port)) {
    const yaml::Value *v = b.lookup("endpoints.http_port");
    if (!v) // the default 8000 collides with an explicit port
      v = e.http_port == e.port ? b.lookup("endpoints.port") : b.lookup("endpoints.metrics_port");
    return b.error(*v, "endpoints.http_port")
           << e.http_port << " must differ from endpoints.port " << e.port
           << " and endpoints.metrics_port " << e.metrics_port << " (0 disables HTTP)";
  }
  return Status::ok();
}

/// tls.*: a key file needs a certificate and the other way round; client CAs need both.
Status checkTls(const KeyReader &b, const TlsConfig &t) {
  if (t.cert_file.empty() != t.key_file.empty()) {
    const char *set = t.cert_file.empty() ? "tls.key_file" : "tls.cert_file";
    const char *missing = t.cert_file.empty() ? "tls.cert_file" : "tls.key_file";
    return b.error(*b.lookup(set), set) << "set without " << missing << " (TLS needs both)";
  }
  if (!t.client_ca_file.empty() && t.cert_file.empty())
    return b.error(*b.lookup("tls.client_ca_file"), "tls.client_ca_file")
           << "needs tls.cert_file and tls.key_file (client certificates are checked over TLS)";
  return Status::ok();
}

/// model_dirs must name existing directories.
Status checkModelDirs(const KeyReader &b, const std::vector<std::string> &dirs) {
  const yaml::Value *v = b.lookup("model_dirs");
  if (dirs.empty()) {
    if (v)
      return b.error(*v, "model_dirs") << "at least one model directory is required";
    return invalidArgument() << b.file()
                             << ": model_repo: at least one model directory is required";
  }
  for (const std::string &dir : dirs) {
    std::error_code ec;
    if (std::filesystem::is_directory(dir, ec))
      continue;
    if (v)
      return b.error(*v, "model_dirs") << "'" << dir << "' is not a directory";
    return invalidArgument() << b.file() << ": model_dirs: '" << dir << "' is not a directory";
  }
  return Status::ok();
}

/// The error of list key `key` at its file position, or naming the file when a variable set it.
Status listError(const KeyReader &b, std::string_view key, const std::string &what) {
  if (const yaml::Value *v = b.lookup(key))
    return b.error(*v, key) << what;
  return invalidArgument() << b.file() << ": " << key << ": " << what;
}

/// hooks.python_path holds absolute paths; hooks.allowed_packages top-level module names (a
/// Python identifier, no dot).
Status checkHookLists(const KeyReader &b, const HooksConfig &hooks) {
  for (const std::string &dir : hooks.python_path)
    if (dir.empty() || dir.front() != '/')
      return listError(b, "hooks.python_path",
                       "'" + dir + "' is not an absolute path (expected a directory from /)");
  for (const std::string &name : hooks.allowed_packages) {
    bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name.front()));
    for (const char ch : name)
      ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
    if (!ok)
      return listError(b, "hooks.allowed_packages",
                       "'" + name +
                           "' is not a top-level module name (expected a Python "
                           "identifier such as numpy, without dots)");
  }
  return Status::ok();
}

/// The regulated profile: each setting only where nothing set it explicitly.
void applyRegulatedProfile(const KeyReader &b, WorkerConfig &out) {
  if (out.runtime.profile != Profile::kRegulated)
    return;
  if (!b.lookup("runtime.batch_sizes")) {
    out.runtime.batch_sizes = BatchSizes::kLargest;
    out.profile_keys.push_back("runtime.batch_sizes");
  }
  if (!b.lookup("scheduler.coalescing")) {
    out.scheduler.coalescing = false;
    out.profile_keys.push_back("scheduler.coalescing");
  }
  if (!out.runtime.xla_flags.count(std::string(kDeterminismFlag))) {
    out.runtime.xla_flags[std::string(kDeterminismFlag)] = "true";
    out.profile_keys.push_back("runtime.xla_flags." + std::string(kDeterminismFlag));
  }
}

} // namespace

Status buildWorker(const yaml::Value &raw, std::string_view file, WorkerConfig &out) {
  const KeyTable<WorkerConfig> &keys = workerKeys();
  KeyReader b(raw, std::string(file), "", keys.lenient_env_booleans);
  RS_RETURN_IF_ERROR(readKeys(keys, b, out));

  // Rules that join keys.
  RS_RETURN_IF_ERROR(checkSharedWeightsMode(b, out.runtime));
  for (auto &[name, m] : out.scheduler.models)
    if (m.pin_to_gpu && !m.residency)
      m.residency = Residency::kPinnedDevice; // alias (reference-system.md §2.2)
  RS_RETURN_IF_ERROR(checkPorts(b, out.endpoints));
  RS_RETURN_IF_ERROR(checkSharedMemory(b, out.endpoints));
  RS_RETURN_IF_ERROR(
      checkOrigins(b, "endpoints.cors_allowed_origins", out.endpoints.cors_allowed_origins));
  if (out.grpc.busy_poll_us < 0) // unset: poll on a GPU worker, whose cores wait on the device
    out.grpc.busy_poll_us = out.runtime.backend == Backend::kCuda ? 20000 : 0;
  RS_RETURN_IF_ERROR(checkTls(b, out.tls));
  RS_RETURN_IF_ERROR(checkModelDirs(b, out.model_dirs));
  RS_RETURN_IF_ERROR(checkHookLists(b, out.hooks));
  if (out.model_control_mode == ModelControlMode::kDynamic && out.model_poll_seconds <= 0)
    return b.error(*b.lookup("model_poll_seconds"), "model_poll_seconds")
           << "must be > 0 with model_control_mode dynamic";
  if (out.runtime.numerics == Numerics::kTf32 && out.runtime.backend == Backend::kCpu)
    return b.error(*b.lookup("runtime.numerics"), "runtime.numerics")
           << "tf32 needs runtime.backend cuda (the cpu backend computes f32 exactly)";

  applyRegulatedProfile(b, out);
  return Status::ok();
}

} // namespace rs::config::detail
