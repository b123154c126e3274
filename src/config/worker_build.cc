//===- config/worker_build.cc - Typing, validation and the profile --------===//
//
// Turns a merged, env-applied worker tree into a WorkerConfig: every value parsed and
// range-checked (ranges of reference-system.md §2.2), cross-key rules, then the regulated
// profile of the reproducibility page.
//
//===----------------------------------------------------------------------===//
#include "config/worker_build_impl.h"
#include "support/text.h"

#include "config/xla_flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

namespace rs::config::detail {
namespace {

constexpr std::string_view kDeterminismFlag = "xla_gpu_exclude_nondeterministic_ops";

// --- scalar parsing --------------------------------------------------------

std::optional<int64_t> parseInt(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '+')
    text.remove_prefix(1);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    return std::nullopt;
  return v;
}

std::optional<double> parseDouble(std::string_view text) {
  std::string s(trim(text));
  if (s.empty())
    return std::nullopt;
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

/// YAML booleans (file values); nullopt if not one.
std::optional<bool> parseYamlBool(std::string_view text) {
  const std::string s = lower(trim(text));
  if (s == "true" || s == "yes" || s == "on")
    return true;
  if (s == "false" || s == "no" || s == "off")
    return false;
  return std::nullopt;
}

/// Environment booleans (§2.3): 1|true|yes|on are true, anything else false.
bool parseEnvBool(std::string_view text) {
  const std::string s = lower(trim(text));
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

std::string formatNumber(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

/// A closed/open interval for doubles; hi = +inf means unbounded.
struct Range {
  double lo;
  double hi;
  bool lo_open;
  bool hi_open;
  bool contains(double v) const {
    return (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  }
  std::string text() const {
    if (std::isinf(hi))
      return std::string(lo_open ? "must be > " : "must be >= ") + formatNumber(lo);
    return std::string("is out of range ") + (lo_open ? "(" : "[") + formatNumber(lo) + ", " +
           formatNumber(hi) + (hi_open ? ")" : "]");
  }
};
constexpr double kInf = std::numeric_limits<double>::infinity();

// --- typed build ---------------------------------------------------------------

class Builder {
public:
  /// Reads keys below `raw`; `label` prefixes key names in messages (e.g.
  /// "scheduler.models.bert." for a per-model block).
  Builder(const ConfigValue &raw, std::string_view file, std::string label = "")
      : raw_(raw), file_(file), label_(std::move(label)) {}

  /// The value at `path` (relative to the builder's root), or nullptr when absent or null.
  const ConfigValue *lookup(std::string_view path) const {
    const ConfigValue *v = findPath(raw_, path);
    return v && !v->isNull() ? v : nullptr;
  }

  /// An error about value `v` of key `path` ("<file>: <origin>: [<path> ]...").
  StatusBuilder error(const ConfigValue &v, std::string_view path) const {
    StatusBuilder b = keyError(file_, v);
    // The variable or a key path ending in the key already names it.
    const std::string key = label_ + std::string(path);
    if (!v.from_env && !std::string_view(v.origin).ends_with(key))
      b << key << " ";
    return b;
  }

  Result<const ConfigValue *> scalar(std::string_view path) const {
    const ConfigValue *v = lookup(path);
    if (v && !v->isScalar())
      return Status(error(*v, path) << "expected a single value, got " << v->kindName());
    return v;
  }

  Status str(std::string_view path, std::string *out) const {
    RS_ASSIGN_OR_RETURN(const ConfigValue *v, scalar(path));
    if (v)
      *out = v->scalar;
    return Status::ok();
  }

  Status integer(std::string_view path, int64_t *out, int64_t lo, int64_t hi) const {
    RS_ASSIGN_OR_RETURN(const ConfigValue *v, scalar(path));
    if (!v)
      return checkInt(path, *out, lo, hi, nullptr);
    std::optional<int64_t> parsed = parseInt(v->scalar);
    if (!parsed)
      return error(*v, path) << (v->from_env ? "invalid integer value '"
                                             : "expected an integer, got '")
                             << v->scalar << "' (range [" << lo << ", " << hi << "])";
    *out = *parsed;
    return checkInt(path, *out, lo, hi, v);
  }

  Status number(std::string_view path, double *out, Range range) const {
    RS_ASSIGN_OR_RETURN(const ConfigValue *v, scalar(path));
    if (!v)
      return Status::ok();
    std::optional<double> parsed = parseDouble(v->scalar);
    if (!parsed)
      return error(*v, path) << (v->from_env ? "invalid number value '"
                                             : "expected a number, got '")
                             << v->scalar << "'";
    if (!range.contains(*parsed))
      return error(*v, path) << v->scalar << " " << range.text();
    *out = *parsed;
    return Status::ok();
  }

  Status boolean(std::string_view path, bool *out) const {
    std::optional<bool> value;
    RS_RETURN_IF_ERROR(optBoolean(path, &value));
    if (value)
      *out = *value;
    return Status::ok();
  }

  Status optBoolean(std::string_view path, std::optional<bool> *out) const {
    RS_ASSIGN_OR_RETURN(const ConfigValue *v, scalar(path));
    if (!v)
      return Status::ok();
    if (v->from_env) {
      *out = parseEnvBool(v->scalar);
      return Status::ok();
    }
    std::optional<bool> parsed = parseYamlBool(v->scalar);
    if (!parsed)
      return error(*v, path) << "expected a boolean (true or false), got '" << v->scalar << "'";
    *out = *parsed;
    return Status::ok();
  }

  template <typename E>
  Status choice(std::string_view path, E *out,
                std::initializer_list<std::pair<std::string_view, E>> options) const {
    RS_ASSIGN_OR_RETURN(const ConfigValue *v, scalar(path));
    if (!v)
      return Status::ok();
    const std::string s = lower(trim(v->scalar));
    std::string names;
    for (const auto &[name, value] : options) {
      if (s == name) {
        *out = value;
        return Status::ok();
      }
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    return error(*v, path) << "'" << v->scalar << "' is not one of " << names;
  }

  Status stringList(std::string_view path, std::vector<std::string> *out) const {
    const ConfigValue *v = lookup(path);
    if (!v)
      return Status::ok();
    if (!v->isList())
      return error(*v, path) << "expected a list of strings, got " << v->kindName();
    out->clear();
    for (const ConfigValue &item : v->list) {
      if (!item.isScalar())
        return error(item, path) << "expected a string, got " << item.kindName();
      out->push_back(item.scalar);
    }
    return Status::ok();
  }

  const std::string &file() const { return file_; }

private:
  Status checkInt(std::string_view path, int64_t value, int64_t lo, int64_t hi,
                  const ConfigValue *v) const {
    if (value >= lo && value <= hi)
      return Status::ok();
    if (!v) // a default is always in range
      return Status::ok();
    if (hi == std::numeric_limits<int64_t>::max())
      return error(*v, path) << value << " must be >= " << lo;
    return error(*v, path) << value << " is out of range [" << lo << ", " << hi << "]";
  }

  const ConfigValue &raw_;
  std::string file_;
  std::string label_;
};

constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxGrpcBytes = 2147483647; // gRPC sizes are C ints

Status buildRuntime(const Builder &b, RuntimeConfig &r) {
  RS_RETURN_IF_ERROR(b.choice<Backend>(
      "runtime.backend", &r.backend,
      {{"cpu", Backend::kCpu}, {"cuda", Backend::kCuda}, {"gpu", Backend::kCuda}}));
  RS_RETURN_IF_ERROR(b.integer("runtime.device_ordinal", &r.device_ordinal, 0, 1 << 20));
  RS_RETURN_IF_ERROR(b.number("runtime.mem_fraction", &r.mem_fraction, {0, 1, true, false}));
  RS_RETURN_IF_ERROR(b.boolean("runtime.preallocate", &r.preallocate));
  RS_RETURN_IF_ERROR(b.integer("runtime.event_spin_us", &r.event_spin_us, 0, 1000000));
  RS_RETURN_IF_ERROR(b.boolean("runtime.allow_cpu_fallback", &r.allow_cpu_fallback));
  RS_RETURN_IF_ERROR(
      b.number("runtime.weight_cache_fraction", &r.weight_cache_fraction, {0, 1, false, false}));
  RS_RETURN_IF_ERROR(b.number("runtime.weight_cache_wiggle_fraction",
                              &r.weight_cache_wiggle_fraction, {0, 1, false, true}));
  RS_RETURN_IF_ERROR(b.boolean("runtime.autotune", &r.autotune));
  RS_RETURN_IF_ERROR(b.optBoolean("runtime.autotune_cache", &r.autotune_cache));
  RS_RETURN_IF_ERROR(b.str("runtime.autotune_cache_dir", &r.autotune_cache_dir));
  RS_RETURN_IF_ERROR(b.choice<Numerics>(
      "runtime.numerics", &r.numerics,
      {{"f32", Numerics::kF32}, {"auto", Numerics::kAuto}, {"tf32", Numerics::kTf32}}));
  RS_RETURN_IF_ERROR(b.boolean("runtime.shared_host_weights", &r.shared_host_weights));
  RS_RETURN_IF_ERROR(b.str("runtime.shared_host_weights_mode", &r.shared_host_weights_mode));
  RS_RETURN_IF_ERROR(
      b.choice<Profile>("runtime.profile", &r.profile,
                        {{"none", Profile::kNone}, {"regulated", Profile::kRegulated}}));
  RS_RETURN_IF_ERROR(
      b.choice<BatchSizes>("runtime.batch_sizes", &r.batch_sizes,
                           {{"all", BatchSizes::kAll}, {"largest", BatchSizes::kLargest}}));
  RS_RETURN_IF_ERROR(b.boolean("runtime.executable_cache", &r.executable_cache));
  RS_RETURN_IF_ERROR(b.str("runtime.pjrt_plugin", &r.pjrt_plugin));
  RS_RETURN_IF_ERROR(b.integer("runtime.cpu_threads", &r.cpu_threads, 0, 4096));

  // shared_host_weights_mode: an octal permission string such as "660", at most 0777.
  if (const ConfigValue *v = b.lookup("runtime.shared_host_weights_mode")) {
    const std::string &s = r.shared_host_weights_mode;
    bool octal = !s.empty() && s.size() <= 4 &&
                 std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '7'; });
    if (!octal || std::strtol(s.c_str(), nullptr, 8) > 0777)
      return b.error(*v, "runtime.shared_host_weights_mode")
             << "'" << s << "' is not an octal permission string like \"660\" (at most 777)";
  }

  if (const ConfigValue *flags = b.lookup("runtime.xla_flags")) {
    if (!flags->isMap())
      return b.error(*flags, "runtime.xla_flags")
             << "expected a map of XLA option name to value, got " << flags->kindName();
    r.xla_flags.clear();
    for (const auto &[name, value] : flags->map) {
      bool valid_name = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
      if (!valid_name)
        return b.error(value, "runtime.xla_flags." + name)
               << "flag name '" << name << "' must be letters, digits and '_' (no leading --)";
      if (!value.isScalar() || trim(value.scalar).empty())
        return b.error(value, "runtime.xla_flags." + name)
               << "expected a value (true, false, a number or text), got " << value.kindName();
      if (!isKnownXlaFlag(name)) { // a typo must fail here, not abort inside XLA
        const std::string hint = closestXlaFlag(name);
        return b.error(value, "runtime.xla_flags." + name)
               << "unknown XLA flag '" << name << "'"
               << (hint.empty() ? std::string(" (not an XLA option of this build)")
                                : " (did you mean '" + hint + "'?)");
      }
      r.xla_flags[name] = std::string(trim(value.scalar));
    }
  }
  return Status::ok();
}

Status buildScheduler(const Builder &b, SchedulerConfig &s) {
  RS_RETURN_IF_ERROR(b.choice<Discipline>(
      "scheduler.discipline", &s.discipline,
      {{"fair", Discipline::kFair}, {"fifo", Discipline::kFifo}, {"edf", Discipline::kEdf}}));
  RS_RETURN_IF_ERROR(
      b.number("scheduler.ema_halflife_seconds", &s.ema_halflife_seconds, {0, kInf, true, true}));
  RS_RETURN_IF_ERROR(
      b.number("scheduler.recency_penalty_cap", &s.recency_penalty_cap, {0, 1, true, false}));
  RS_RETURN_IF_ERROR(
      b.number("scheduler.coalescing_discount", &s.coalescing_discount, {0, 1, false, true}));
  RS_RETURN_IF_ERROR(b.number("scheduler.cost_ema_alpha", &s.cost_ema_alpha, {0, 1, true, false}));
  RS_RETURN_IF_ERROR(b.integer("scheduler.max_queue_depth", &s.max_queue_depth, 1, kMaxInt));
  RS_RETURN_IF_ERROR(b.integer("scheduler.max_queue_delay_microseconds",
                               &s.max_queue_delay_microseconds, 0, 60000000)); // at most 60 s
  RS_RETURN_IF_ERROR(
      b.integer("scheduler.compaction_interval", &s.compaction_interval, 0, kMaxInt));
  RS_RETURN_IF_ERROR(b.number("scheduler.dispatch_timeout_seconds", &s.dispatch_timeout_seconds,
                              {0, kInf, true, true}));
  RS_RETURN_IF_ERROR(b.boolean("scheduler.coalescing", &s.coalescing));

  const ConfigValue *models = b.lookup("scheduler.models");
  if (!models)
    return Status::ok();
  if (!models->isMap())
    return b.error(*models, "scheduler.models")
           << "expected a map of model name to settings, got " << models->kindName();
  for (const auto &[name, block] : models->map) {
    ModelSchedulerConfig m;
    if (!block.isNull() && !block.isMap())
      return b.error(block, "scheduler.models." + name)
             << "expected a map {weight, residency, max_batch_size}, got " << block.kindName();
    // Model names may contain '.', so the block gets its own builder.
    Builder mb(block, b.file(), "scheduler.models." + name + ".");
    RS_RETURN_IF_ERROR(mb.number("weight", &m.weight, {0, kInf, true, true}));
    if (mb.lookup("residency")) {
      Residency residency = Residency::kUnpinned;
      RS_RETURN_IF_ERROR(mb.choice<Residency>("residency", &residency,
                                              {{"unpinned", Residency::kUnpinned},
                                               {"system", Residency::kPinnedSystem},
                                               {"pinned_system", Residency::kPinnedSystem},
                                               {"device", Residency::kPinnedDevice},
                                               {"pinned_device", Residency::kPinnedDevice}}));
      m.residency = residency;
    }
    bool pin_to_gpu = false;
    RS_RETURN_IF_ERROR(mb.boolean("pin_to_gpu", &pin_to_gpu));
    if (pin_to_gpu && !m.residency)
      m.residency = Residency::kPinnedDevice; // alias (§2.2)
    if (mb.lookup("max_batch_size")) {
      int64_t max_batch = 0;
      RS_RETURN_IF_ERROR(mb.integer("max_batch_size", &max_batch, 1, kMaxInt));
      m.max_batch_size = max_batch;
    }
    s.models[name] = m;
  }
  return Status::ok();
}

Status buildEndpoints(const Builder &b, EndpointsConfig &e, GrpcConfig &g) {
  RS_RETURN_IF_ERROR(b.str("endpoints.host", &e.host));
  RS_RETURN_IF_ERROR(b.integer("endpoints.port", &e.port, 1, 65535));
  RS_RETURN_IF_ERROR(b.integer("endpoints.metrics_port", &e.metrics_port, 0, 65535));
  RS_RETURN_IF_ERROR(
      b.integer("endpoints.max_concurrent_requests", &e.max_concurrent_requests, 0, kMaxInt));
  RS_RETURN_IF_ERROR(b.integer("endpoints.http_port", &e.http_port, 0, 65535));
  RS_RETURN_IF_ERROR(
      b.integer("endpoints.max_request_bytes", &e.max_request_bytes, 1, kMaxGrpcBytes));
  RS_RETURN_IF_ERROR(b.integer("grpc.max_recv_msg_bytes", &g.max_recv_msg_bytes, 1, kMaxGrpcBytes));
  RS_RETURN_IF_ERROR(b.integer("grpc.max_send_msg_bytes", &g.max_send_msg_bytes, 1, kMaxGrpcBytes));
  RS_RETURN_IF_ERROR(b.integer("grpc.polling_threads", &g.polling_threads, 1, 256));
  if (b.lookup("grpc.busy_poll_us")) // else resolved by the backend (buildWorker)
    RS_RETURN_IF_ERROR(b.integer("grpc.busy_poll_us", &g.busy_poll_us, 0, 1000000));

  if (e.metrics_port != 0 && e.metrics_port == e.port)
    return b.error(*b.lookup("endpoints.metrics_port"), "endpoints.metrics_port")
           << e.metrics_port << " must differ from endpoints.port " << e.port;
  if (e.http_port != 0 && (e.http_port == e.port || e.http_port == e.metrics_port)) {
    const ConfigValue *v = b.lookup("endpoints.http_port");
    if (!v) // the default 8000 collides with an explicit port
      v = e.http_port == e.port ? b.lookup("endpoints.port") : b.lookup("endpoints.metrics_port");
    return b.error(*v, "endpoints.http_port")
           << e.http_port << " must differ from endpoints.port " << e.port
           << " and endpoints.metrics_port " << e.metrics_port << " (0 disables HTTP)";
  }
  return Status::ok();
}

/// tls.*: a key file needs a certificate and the other way round; client CAs need both.
Status buildTls(const Builder &b, TlsConfig &t) {
  RS_RETURN_IF_ERROR(b.str("tls.cert_file", &t.cert_file));
  RS_RETURN_IF_ERROR(b.str("tls.key_file", &t.key_file));
  RS_RETURN_IF_ERROR(b.str("tls.client_ca_file", &t.client_ca_file));
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

} // namespace

Status buildWorker(const ConfigValue &raw, std::string_view file, WorkerConfig &out) {
  Builder b(raw, file);
  RS_RETURN_IF_ERROR(b.stringList("model_dirs", &out.model_dirs));
  RS_RETURN_IF_ERROR(b.str("cache_dir", &out.cache_dir));
  RS_RETURN_IF_ERROR(b.choice<ModelControlMode>("model_control_mode", &out.model_control_mode,
                                                {{"static", ModelControlMode::kStatic},
                                                 {"dynamic", ModelControlMode::kDynamic},
                                                 {"explicit", ModelControlMode::kExplicit}}));
  RS_RETURN_IF_ERROR(
      b.number("model_poll_seconds", &out.model_poll_seconds, {0, kInf, false, true}));
  RS_RETURN_IF_ERROR(b.stringList("models_include", &out.models_include));
  RS_RETURN_IF_ERROR(buildRuntime(b, out.runtime));
  RS_RETURN_IF_ERROR(buildScheduler(b, out.scheduler));
  RS_RETURN_IF_ERROR(buildEndpoints(b, out.endpoints, out.grpc));
  if (out.grpc.busy_poll_us < 0) // unset: poll on a GPU worker, whose cores wait on the device
    out.grpc.busy_poll_us = out.runtime.backend == Backend::kCuda ? 20000 : 0;
  RS_RETURN_IF_ERROR(buildTls(b, out.tls));

  // Cross-key rules.
  if (out.model_dirs.empty()) {
    const ConfigValue *v = b.lookup("model_dirs");
    if (v)
      return b.error(*v, "model_dirs") << "at least one model directory is required";
    return invalidArgument() << file << ": model_repo: at least one model directory is required";
  }
  for (const std::string &dir : out.model_dirs) {
    std::error_code ec;
    if (std::filesystem::is_directory(dir, ec))
      continue;
    if (const ConfigValue *v = b.lookup("model_dirs"))
      return b.error(*v, "model_dirs") << "'" << dir << "' is not a directory";
    return invalidArgument() << file << ": model_dirs: '" << dir << "' is not a directory";
  }
  if (out.model_control_mode == ModelControlMode::kDynamic && out.model_poll_seconds <= 0)
    return b.error(*b.lookup("model_poll_seconds"), "model_poll_seconds")
           << "must be > 0 with model_control_mode dynamic";
  if (out.runtime.numerics == Numerics::kTf32 && out.runtime.backend == Backend::kCpu)
    return b.error(*b.lookup("runtime.numerics"), "runtime.numerics")
           << "tf32 needs runtime.backend cuda (the cpu backend computes f32 exactly)";

  // The regulated profile: each setting only where nothing set it explicitly.
  if (out.runtime.profile == Profile::kRegulated) {
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
  return Status::ok();
}

} // namespace rs::config::detail
