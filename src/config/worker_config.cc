//===- config/worker_config.cc - One worker's resolved configuration -------===//
#include "config/worker_config.h"

#include <algorithm>
#include <charconv>

namespace rs::config {

std::string_view backendName(Backend v) { return v == Backend::kCpu ? "cpu" : "cuda"; }

std::string_view modelControlModeName(ModelControlMode v) {
  switch (v) {
  case ModelControlMode::kStatic: return "static";
  case ModelControlMode::kDynamic: return "dynamic";
  case ModelControlMode::kExplicit: return "explicit";
  }
  return "dynamic";
}

std::string_view numericsName(Numerics v) {
  switch (v) {
  case Numerics::kF32: return "f32";
  case Numerics::kAuto: return "auto";
  case Numerics::kTf32: return "tf32";
  }
  return "auto";
}

std::string_view profileName(Profile v) { return v == Profile::kNone ? "none" : "regulated"; }

std::string_view batchSizesName(BatchSizes v) { return v == BatchSizes::kAll ? "all" : "largest"; }

std::string_view disciplineName(Discipline v) {
  switch (v) {
  case Discipline::kFair: return "fair";
  case Discipline::kFifo: return "fifo";
  case Discipline::kEdf: return "edf";
  }
  return "fair";
}

std::string_view residencyName(Residency v) {
  switch (v) {
  case Residency::kUnpinned: return "unpinned";
  case Residency::kPinnedSystem: return "pinned_system";
  case Residency::kPinnedDevice: return "pinned_device";
  }
  return "unpinned";
}

namespace {

std::string boolText(bool b) { return b ? "true" : "false"; }

/// Shortest text that reads back as the same double ("0.9", "30", "1e-05").
std::string numberText(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

std::string listText(const std::vector<std::string> &items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + items[i];
  return out + "]";
}

std::string mapText(const std::map<std::string, std::string> &items) {
  std::string out = "{";
  bool first = true;
  for (const auto &[k, v] : items) {
    out += (first ? "" : ", ") + k + ": " + v;
    first = false;
  }
  return out + "}";
}

} // namespace

std::vector<std::pair<std::string, std::string>> effectiveSettings(const WorkerConfig &c) {
  std::vector<std::pair<std::string, std::string>> s;
  auto add = [&](std::string key, std::string value) {
    s.emplace_back(std::move(key), std::move(value));
  };
  add("cache_dir", c.cache_dir);
  add("model_control_mode", std::string(modelControlModeName(c.model_control_mode)));
  add("model_dirs", listText(c.model_dirs));
  add("model_poll_seconds", numberText(c.model_poll_seconds));
  add("models_include", listText(c.models_include));

  const RuntimeConfig &r = c.runtime;
  add("runtime.allow_cpu_fallback", boolText(r.allow_cpu_fallback));
  add("runtime.autotune", boolText(r.autotune));
  add("runtime.autotune_cache", r.autotune_cache ? boolText(*r.autotune_cache) : "unset");
  add("runtime.autotune_cache_dir", r.autotune_cache_dir);
  add("runtime.backend", std::string(backendName(r.backend)));
  add("runtime.batch_sizes", std::string(batchSizesName(r.batch_sizes)));
  add("runtime.cpu_threads", std::to_string(r.cpu_threads));
  add("runtime.device_ordinal", std::to_string(r.device_ordinal));
  add("runtime.event_spin_us", std::to_string(r.event_spin_us));
  add("runtime.executable_cache", boolText(r.executable_cache));
  add("runtime.mem_fraction", numberText(r.mem_fraction));
  add("runtime.numerics", std::string(numericsName(r.numerics)));
  add("runtime.pjrt_plugin", r.pjrt_plugin);
  add("runtime.preallocate", boolText(r.preallocate));
  add("runtime.profile", std::string(profileName(r.profile)));
  add("runtime.shared_host_weights", boolText(r.shared_host_weights));
  add("runtime.shared_host_weights_mode", r.shared_host_weights_mode);
  add("runtime.weight_cache_fraction", numberText(r.weight_cache_fraction));
  add("runtime.weight_cache_wiggle_fraction", numberText(r.weight_cache_wiggle_fraction));
  add("runtime.xla_flags", mapText(r.xla_flags));

  const SchedulerConfig &sc = c.scheduler;
  add("scheduler.coalescing", boolText(sc.coalescing));
  add("scheduler.coalescing_discount", numberText(sc.coalescing_discount));
  add("scheduler.compaction_interval", std::to_string(sc.compaction_interval));
  add("scheduler.cost_ema_alpha", numberText(sc.cost_ema_alpha));
  add("scheduler.discipline", std::string(disciplineName(sc.discipline)));
  add("scheduler.dispatch_timeout_seconds", numberText(sc.dispatch_timeout_seconds));
  add("scheduler.ema_halflife_seconds", numberText(sc.ema_halflife_seconds));
  add("scheduler.max_queue_delay_microseconds", std::to_string(sc.max_queue_delay_microseconds));
  add("scheduler.max_queue_depth", std::to_string(sc.max_queue_depth));
  add("scheduler.recency_penalty_cap", numberText(sc.recency_penalty_cap));
  for (const auto &[name, m] : sc.models) {
    const std::string prefix = "scheduler.models." + name + ".";
    add(prefix + "max_batch_size", m.max_batch_size ? std::to_string(*m.max_batch_size) : "unset");
    add(prefix + "residency", m.residency ? std::string(residencyName(*m.residency)) : "unset");
    add(prefix + "weight", numberText(m.weight));
  }

  const EndpointsConfig &e = c.endpoints;
  add("endpoints.host", e.host);
  add("endpoints.http_port", std::to_string(e.http_port));
  add("endpoints.max_concurrent_requests", std::to_string(e.max_concurrent_requests));
  add("endpoints.max_request_bytes", std::to_string(e.max_request_bytes));
  add("endpoints.metrics_port", std::to_string(e.metrics_port));
  add("endpoints.port", std::to_string(e.port));
  add("grpc.max_recv_msg_bytes", std::to_string(c.grpc.max_recv_msg_bytes));
  add("grpc.max_send_msg_bytes", std::to_string(c.grpc.max_send_msg_bytes));
  add("grpc.polling_threads", std::to_string(c.grpc.polling_threads));
  add("grpc.busy_poll_us", std::to_string(c.grpc.busy_poll_us));
  add("tls.cert_file", c.tls.cert_file);
  add("tls.client_ca_file", c.tls.client_ca_file);
  add("tls.key_file", c.tls.key_file);

  std::stable_sort(s.begin(), s.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  return s;
}

} // namespace rs::config
