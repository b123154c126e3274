//===- config/config_keys.cc - Worker keys, key checks, env overrides ------===//
//
// One table (kKeys) lists every worker key with its type and whether a node file block or
// the environment may set it; the unknown/removed key checks and the INFERENCE_SERVER_*
// variable names (INFERENCE_SERVER_ + the dotted key upper-cased, '.' -> '_') follow it.
//
//===----------------------------------------------------------------------===//
#include "config/worker_build_impl.h"
#include "support/text.h"

#include <algorithm>
#include <cctype>

namespace rs::config::detail {

StatusBuilder keyError(std::string_view file, const ConfigValue &v) {
  StatusBuilder b = invalidArgument();
  if (v.from_env)
    b << v.origin << ": ";
  else
    b << file << ": " << v.origin << ": ";
  return b;
}

namespace {

enum class KeyType : uint8_t {
  kString,
  kInt,
  kFloat,
  kBool,
  kOptBool,
  kEnum,
  kList,     // list of strings; env: ':'-separated
  kFlagMap,  // runtime.xla_flags: name -> scalar
  kModelMap, // scheduler.models: name -> {weight, residency, pin_to_gpu, max_batch_size}
};

struct KeyInfo {
  std::string_view path;
  KeyType type;
  bool in_file; // may appear in `global` / worker override blocks
  bool in_env;  // INFERENCE_SERVER_<PATH> may set it
};

constexpr KeyInfo kKeys[] = {
    {"cache_dir", KeyType::kString, true, true},
    {"model_control_mode", KeyType::kEnum, true, true},
    {"model_dirs", KeyType::kList, false, true}, // from the node's model_repo
    {"model_poll_seconds", KeyType::kFloat, true, true},
    {"models_include", KeyType::kList, true, true},
    {"runtime.allow_cpu_fallback", KeyType::kBool, true, true},
    {"runtime.autotune", KeyType::kBool, true, true},
    {"runtime.autotune_cache", KeyType::kOptBool, true, true},
    {"runtime.autotune_cache_dir", KeyType::kString, true, true},
    {"runtime.backend", KeyType::kEnum, true, true},
    {"runtime.batch_sizes", KeyType::kEnum, true, true},
    {"runtime.cpu_threads", KeyType::kInt, true, true},
    {"runtime.device_ordinal", KeyType::kInt, true, true},
    {"runtime.event_spin_us", KeyType::kInt, true, true},
    {"runtime.executable_cache", KeyType::kBool, true, true},
    {"runtime.mem_fraction", KeyType::kFloat, true, true},
    {"runtime.numerics", KeyType::kEnum, true, true},
    {"runtime.pjrt_plugin", KeyType::kString, true, true},
    {"runtime.preallocate", KeyType::kBool, true, true},
    {"runtime.profile", KeyType::kEnum, true, true},
    {"runtime.shared_host_weights", KeyType::kBool, true, true},
    {"runtime.shared_host_weights_mode", KeyType::kString, true, true},
    {"runtime.weight_cache_fraction", KeyType::kFloat, true, true},
    {"runtime.weight_cache_wiggle_fraction", KeyType::kFloat, true, true},
    {"runtime.xla_flags", KeyType::kFlagMap, true, true},
    {"scheduler.coalescing", KeyType::kBool, true, true},
    {"scheduler.coalescing_discount", KeyType::kFloat, true, true},
    {"scheduler.compaction_interval", KeyType::kInt, true, true},
    {"scheduler.cost_ema_alpha", KeyType::kFloat, true, true},
    {"scheduler.discipline", KeyType::kEnum, true, true},
    {"scheduler.dispatch_timeout_seconds", KeyType::kFloat, true, true},
    {"scheduler.ema_halflife_seconds", KeyType::kFloat, true, true},
    {"scheduler.max_queue_delay_microseconds", KeyType::kInt, true, true},
    {"scheduler.max_queue_depth", KeyType::kInt, true, true},
    {"scheduler.models", KeyType::kModelMap, true, false},
    {"scheduler.recency_penalty_cap", KeyType::kFloat, true, true},
    {"endpoints.host", KeyType::kString, true, true},
    {"endpoints.http_port", KeyType::kInt, true, true},
    {"endpoints.max_concurrent_requests", KeyType::kInt, true, true},
    {"endpoints.max_request_bytes", KeyType::kInt, true, true},
    {"endpoints.metrics_port", KeyType::kInt, true, true},
    {"endpoints.port", KeyType::kInt, true, true},
    {"grpc.max_recv_msg_bytes", KeyType::kInt, true, true},
    {"grpc.max_send_msg_bytes", KeyType::kInt, true, true},
    {"grpc.polling_threads", KeyType::kInt, true, true},
    {"grpc.busy_poll_us", KeyType::kInt, true, true},
    {"tls.cert_file", KeyType::kString, true, true},
    {"tls.client_ca_file", KeyType::kString, true, true},
    {"tls.key_file", KeyType::kString, true, true},
};

constexpr std::string_view kSections[] = {"runtime", "scheduler", "endpoints", "grpc", "tls"};
constexpr std::string_view kModelKeys[] = {"max_batch_size", "pin_to_gpu", "residency", "weight"};
constexpr std::string_view kEnvPrefix = "INFERENCE_SERVER_";

constexpr std::string_view kBatchPolicyRemoved =
    "'batch_policy' was removed: cap coalescing per model with "
    "scheduler.models.<name>.max_batch_size (the batch axis comes from the manifest; "
    "allow_padding never had an effect)";
constexpr std::string_view kResidencyModeRemoved =
    "'runtime.residency_mode' was removed: use the top-level model_control_mode ('explicit' "
    "replaces 'externally_managed'; static and dynamic are self-managed)";

const KeyInfo *findKey(std::string_view path) {
  for (const KeyInfo &k : kKeys)
    if (k.path == path)
      return &k;
  return nullptr;
}

bool isSection(std::string_view key) {
  return std::find(std::begin(kSections), std::end(kSections), key) != std::end(kSections);
}

std::string envVarFor(std::string_view path) {
  std::string var(kEnvPrefix);
  for (char c : path)
    var += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return var;
}

/// Checks the children of a kModelMap value.
Status checkModelMap(const ConfigValue &v, std::string_view file) {
  if (v.isNull())
    return Status::ok();
  if (!v.isMap())
    return keyError(file, v) << "expected a map of model name to settings, got " << v.kindName();
  for (const auto &[name, model] : v.map) {
    if (model.isNull())
      continue;
    if (!model.isMap())
      return keyError(file, model)
             << "expected a map {weight, residency, max_batch_size}, got " << model.kindName();
    for (const auto &[key, value] : model.map)
      if (std::find(std::begin(kModelKeys), std::end(kModelKeys), key) == std::end(kModelKeys))
        return invalidArgument() << file << ": unknown key '" << value.origin << "'";
  }
  return Status::ok();
}

Status checkKey(std::string_view path, const ConfigValue &v, std::string_view file) {
  if (path == "runtime.residency_mode")
    return keyError(file, v) << kResidencyModeRemoved;
  const KeyInfo *info = findKey(path);
  if (!info || !info->in_file)
    return invalidArgument() << file << ": unknown key '" << v.origin << "'";
  if (info->type == KeyType::kModelMap)
    return checkModelMap(v, file);
  return Status::ok();
}

// --- environment -------------------------------------------------------------

Result<ConfigValue> envXlaFlags(const std::string &var, const std::string &value,
                                const std::string &origin) {
  ConfigValue flags;
  flags.kind = ConfigValue::Kind::kMap;
  flags.origin = origin;
  flags.from_env = true;
  std::string item;
  auto flush = [&]() -> Status {
    if (item.empty())
      return Status::ok();
    std::string_view s = item;
    if (s.starts_with("--"))
      s.remove_prefix(2);
    size_t eq = s.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == s.size())
      return invalidArgument() << "environment override " << var << ": item '" << item
                               << "' is not name=value";
    ConfigValue v = ConfigValue::scalarValue(std::string(s.substr(eq + 1)), origin);
    v.from_env = true;
    flags.map[std::string(s.substr(0, eq))] = std::move(v);
    item.clear();
    return Status::ok();
  };
  for (char c : value) {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      RS_RETURN_IF_ERROR(flush());
    } else {
      item += c;
    }
  }
  RS_RETURN_IF_ERROR(flush());
  return flags;
}

} // namespace

Status checkBlockKeys(const ConfigValue &block, std::string_view file) {
  if (block.isNull())
    return Status::ok();
  if (!block.isMap())
    return keyError(file, block) << "expected a map, got " << block.kindName();
  for (const auto &[key, value] : block.map) {
    if (key == "batch_policy")
      return keyError(file, value) << kBatchPolicyRemoved;
    if (!isSection(key)) {
      RS_RETURN_IF_ERROR(checkKey(key, value, file));
      continue;
    }
    if (value.isNull())
      continue;
    if (!value.isMap())
      return keyError(file, value) << "expected a map, got " << value.kindName();
    for (const auto &[sub, sub_value] : value.map)
      RS_RETURN_IF_ERROR(checkKey(key + "." + sub, sub_value, file));
  }
  return Status::ok();
}

Status applyEnvironment(const Environment &env, ConfigValue &raw, WorkerConfig &out) {
  for (const auto &[var, value] : env) {
    if (!std::string_view(var).starts_with(kEnvPrefix))
      continue;
    const std::string_view suffix = std::string_view(var).substr(kEnvPrefix.size());
    if (suffix.starts_with("BATCH_POLICY_"))
      return invalidArgument() << "environment override " << var << ": " << kBatchPolicyRemoved;
    if (suffix == "RUNTIME_RESIDENCY_MODE")
      return invalidArgument() << "environment override " << var << ": " << kResidencyModeRemoved;
    const KeyInfo *info = nullptr;
    for (const KeyInfo &k : kKeys)
      if (k.in_env && envVarFor(k.path) == var)
        info = &k;
    if (!info)
      return invalidArgument() << "environment: unknown variable " << var
                               << " (not a configuration key)";
    const std::string origin = "environment override " + var;
    ConfigValue v;
    if (info->type == KeyType::kList) {
      v.kind = ConfigValue::Kind::kList;
      size_t start = 0;
      while (start <= value.size()) {
        size_t colon = value.find(':', start);
        std::string item =
            value.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (!item.empty()) {
          ConfigValue s = ConfigValue::scalarValue(item, origin);
          s.from_env = true;
          v.list.push_back(std::move(s));
        }
        if (colon == std::string::npos)
          break;
        start = colon + 1;
      }
    } else if (info->type == KeyType::kFlagMap) {
      RS_ASSIGN_OR_RETURN(v, envXlaFlags(var, value, origin));
    } else {
      v = ConfigValue::scalarValue(value, origin);
    }
    v.origin = origin;
    v.from_env = true;
    setPath(raw, info->path, std::move(v));
    out.env_overrides.emplace_back(var, value);
    out.env_keys.insert(std::string(info->path));
  }
  return Status::ok();
}

} // namespace rs::config::detail
