//===- config/gateway_config_build.cc - gateway.yml typed values -----------===//
#include "config/gateway_config_impl.h"
#include "support/text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

namespace rs::config::gateway_detail {
namespace {

using config::ConfigValue;

/// Typed reads of one resolved tree, with the file for messages.
class Reader {
public:
  Reader(const ConfigValue &root, std::string file) : root_(root), file_(std::move(file)) {}

  const ConfigValue *lookup(std::string_view path) const {
    const ConfigValue *v = config::findPath(root_, path);
    return v && !v->isNull() ? v : nullptr;
  }

  Result<std::string> scalar(const ConfigValue &v) const {
    if (!v.isScalar())
      return Status(keyError(file_, v) << "expected a single value, got " << v.kindName());
    return v.scalar;
  }

  Status text(std::string_view path, std::string *out) const {
    if (const ConfigValue *v = lookup(path)) {
      RS_ASSIGN_OR_RETURN(*out, scalar(*v));
    }
    return Status::ok();
  }

  Status integer(std::string_view path, int64_t *out, int64_t lo, int64_t hi) const {
    const ConfigValue *v = lookup(path);
    if (!v)
      return Status::ok();
    RS_ASSIGN_OR_RETURN(std::string s, scalar(*v));
    int64_t x = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
      return keyError(file_, *v) << "expected an integer, got '" << s << "'";
    if (x < lo || x > hi)
      return keyError(file_, *v) << x << " is out of range [" << lo << ", " << hi << "]";
    *out = x;
    return Status::ok();
  }

  /// A number in (lo, hi) with open/closed ends as flagged.
  Status number(std::string_view path, double *out, double lo, bool lo_open, double hi,
                bool hi_open) const {
    const ConfigValue *v = lookup(path);
    if (!v)
      return Status::ok();
    RS_ASSIGN_OR_RETURN(std::string s, scalar(*v));
    RS_ASSIGN_OR_RETURN(double x, parseNumber(*v, s));
    const bool below = lo_open ? !(x > lo) : !(x >= lo);
    const bool above = hi_open ? !(x < hi) : !(x <= hi);
    if (below || above) {
      std::ostringstream range;
      range << (lo_open ? "(" : "[") << lo << ", ";
      if (std::isinf(hi))
        range << "inf)";
      else
        range << hi << (hi_open ? ")" : "]");
      return keyError(file_, *v) << s << " is out of range " << range.str();
    }
    *out = x;
    return Status::ok();
  }

  Result<double> parseNumber(const ConfigValue &v, const std::string &s) const {
    double x = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(x))
      return Status(keyError(file_, v) << "expected a number, got '" << s << "'");
    return x;
  }

  Status boolean(std::string_view path, bool *out) const {
    const ConfigValue *v = lookup(path);
    if (!v)
      return Status::ok();
    RS_ASSIGN_OR_RETURN(std::string s, scalar(*v));
    const std::string b = lower(s);
    if (b == "true" || b == "yes" || b == "on" || b == "1")
      *out = true;
    else if (b == "false" || b == "no" || b == "off" || b == "0")
      *out = false;
    else
      return keyError(file_, *v) << "expected a boolean (true or false), got '" << s << "'";
    return Status::ok();
  }

  template <typename E, size_t N>
  Status choice(std::string_view path, E *out,
                const std::pair<std::string_view, E> (&values)[N]) const {
    const ConfigValue *v = lookup(path);
    if (!v)
      return Status::ok();
    RS_ASSIGN_OR_RETURN(std::string s, scalar(*v));
    std::string allowed;
    for (const auto &[name, value] : values) {
      if (name == s) {
        *out = value;
        return Status::ok();
      }
      allowed += (allowed.empty() ? "" : ", ") + std::string(name);
    }
    return keyError(file_, *v) << "'" << s << "' is not one of " << allowed;
  }

  Status list(std::string_view path, std::vector<std::string> *out) const {
    const ConfigValue *v = lookup(path);
    if (!v)
      return Status::ok();
    if (!v->isList())
      return keyError(file_, *v) << "expected a list, got " << v->kindName();
    out->clear();
    for (const ConfigValue &item : v->list) {
      RS_ASSIGN_OR_RETURN(std::string s, scalar(item));
      out->push_back(std::string(trim(s)));
    }
    return Status::ok();
  }

  Status listen(std::string_view path, ListenAddress *out) const {
    const ConfigValue *v = lookup(path);
    if (!v)
      return Status::ok();
    RS_ASSIGN_OR_RETURN(std::string s, scalar(*v));
    if (trim(s).empty()) {
      *out = ListenAddress{};
      return Status::ok();
    }
    std::string host, port;
    if (s.front() == '[') {
      size_t close = s.find(']');
      if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':')
        return keyError(file_, *v) << "expected [ipv6]:port, got '" << s << "'";
      host = s.substr(1, close - 1);
      port = s.substr(close + 2);
    } else {
      size_t colon = s.rfind(':');
      if (colon == std::string::npos)
        return keyError(file_, *v) << "expected host:port, got '" << s << "'";
      host = s.substr(0, colon);
      port = s.substr(colon + 1);
    }
    int p = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (host.empty() || port.empty() || ec != std::errc() || ptr != port.data() + port.size() ||
        p < 0 || p > 65535)
      return keyError(file_, *v) << "expected host:port with a port in [0, 65535], got '" << s
                                 << "'";
    *out = ListenAddress{host, p};
    return Status::ok();
  }

  /// `replicas`: an integer >= 1 or "all" (kAllReplicas).
  Result<int64_t> replicas(const ConfigValue &v) const {
    RS_ASSIGN_OR_RETURN(std::string s, scalar(v));
    if (lower(s) == "all")
      return kAllReplicas;
    int64_t x = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || x < 1)
      return Status(keyError(file_, v) << "expected an integer >= 1 or 'all', got '" << s << "'");
    return x;
  }

private:
  const ConfigValue &root_;
  std::string file_;
};

/// Host:port syntax of a worker endpoint (no scheme, or grpc://).
Status checkEndpoint(const std::string &file, std::string_view key, const std::string &e) {
  std::string_view s = e;
  if (s.starts_with("grpc://"))
    s.remove_prefix(7);
  size_t colon = s.rfind(':');
  int port = 0;
  if (colon != std::string_view::npos) {
    std::string_view p = s.substr(colon + 1);
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
    if (ec != std::errc() || ptr != p.data() + p.size())
      port = 0;
  }
  if (colon == std::string_view::npos || colon == 0 || port < 1 || port > 65535)
    return invalidArgument() << (file.empty() ? "gateway config" : file) << ": " << key << ": '"
                             << e << "' is not host:port with a port in [1, 65535]";
  return Status::ok();
}

} // namespace

Status buildConfig(const ConfigValue &root, const std::string &file, GatewayConfig &c) {
  Reader r(root, file);
  RS_RETURN_IF_ERROR(r.listen("listen.grpc", &c.listen_grpc));
  RS_RETURN_IF_ERROR(r.listen("listen.metrics", &c.listen_metrics));
  RS_RETURN_IF_ERROR(r.listen("listen.http", &c.listen_http));
  if (!c.listen_grpc.enabled())
    return invalidArgument() << (file.empty() ? "gateway config" : file)
                             << ": listen.grpc must not be empty";

  std::vector<std::string> endpoints, metrics, names;
  RS_RETURN_IF_ERROR(r.list("endpoints", &endpoints));
  RS_RETURN_IF_ERROR(r.list("metrics_endpoints", &metrics));
  RS_RETURN_IF_ERROR(r.list("worker_names", &names));
  const std::string where = file.empty() ? "gateway config" : file;
  if (endpoints.empty())
    return invalidArgument() << where
                             << ": endpoints is required (a list of worker host:port, or "
                                "REACTANT_GATEWAY_WORKERS)";
  if (!metrics.empty() && metrics.size() != endpoints.size())
    return invalidArgument() << where << ": metrics_endpoints has " << metrics.size()
                             << " entries but endpoints has " << endpoints.size();
  if (!names.empty() && names.size() != endpoints.size())
    return invalidArgument() << where << ": worker_names has " << names.size()
                             << " entries but endpoints has " << endpoints.size();
  std::set<std::string> seen_endpoints, seen_names;
  for (size_t i = 0; i < endpoints.size(); ++i) {
    RS_RETURN_IF_ERROR(checkEndpoint(file, "endpoints", endpoints[i]));
    if (!seen_endpoints.insert(endpoints[i]).second)
      continue; // de-duplicated, first one wins
    std::string name = names.empty() ? endpoints[i] : names[i];
    if (name.empty())
      return invalidArgument() << where << ": worker_names[" << i << "] is empty";
    if (!seen_names.insert(name).second)
      return invalidArgument() << where << ": duplicate worker name '" << name << "'";
    if (!metrics.empty() && !metrics[i].empty())
      RS_RETURN_IF_ERROR(checkEndpoint(file, "metrics_endpoints", metrics[i]));
    c.endpoints.push_back(endpoints[i]);
    c.metrics_endpoints.push_back(metrics.empty() ? "" : metrics[i]);
    c.worker_names.push_back(std::move(name));
  }

  constexpr int64_t kMaxInt = 2147483647;
  RS_RETURN_IF_ERROR(r.integer("grpc.max_recv_msg_bytes", &c.max_recv_msg_bytes, 1, kMaxInt));
  RS_RETURN_IF_ERROR(r.integer("grpc.max_send_msg_bytes", &c.max_send_msg_bytes, 1, kMaxInt));
  RS_RETURN_IF_ERROR(r.integer("grpc.max_concurrent_requests_per_worker",
                               &c.max_concurrent_requests_per_worker, 0, kMaxInt));
  constexpr double kInf = std::numeric_limits<double>::infinity();
  RS_RETURN_IF_ERROR(r.number("worker_client.request_timeout_seconds", &c.request_timeout_seconds,
                              0, true, kInf, true));
  RS_RETURN_IF_ERROR(
      r.integer("worker_client.max_concurrent_streams", &c.max_concurrent_streams, 1, kMaxInt));
  RS_RETURN_IF_ERROR(r.text("logging.level", &c.logging_level));
  RS_RETURN_IF_ERROR(r.text("logging.format", &c.logging_format));
  static constexpr std::string_view kLevels[] = {"trace", "debug", "info", "warn", "error"};
  if (std::find(std::begin(kLevels), std::end(kLevels), c.logging_level) == std::end(kLevels))
    return keyError(file, *r.lookup("logging.level"))
           << "'" << c.logging_level << "' is not one of trace, debug, info, warn, error";
  if (c.logging_format != "json" && c.logging_format != "text")
    return keyError(file, *r.lookup("logging.format"))
           << "'" << c.logging_format << "' is not one of json, text";
  RS_RETURN_IF_ERROR(r.text("tls.cert_file", &c.tls_cert_file));
  RS_RETURN_IF_ERROR(r.text("tls.key_file", &c.tls_key_file));
  RS_RETURN_IF_ERROR(r.text("tls.client_ca_file", &c.tls_client_ca_file));
  if (!c.tls_cert_file.empty() || !c.tls_key_file.empty() || !c.tls_client_ca_file.empty())
    c.warnings.push_back("tls settings are parsed but not enforced: traffic stays cleartext h2c");

  SchedulingConfig &s = c.scheduling;
  if (const ConfigValue *p = r.lookup("scheduling.routing_policy");
      p && p->isScalar() && p->scalar == "least_outstanding")
    return keyError(file, *p) << "'least_outstanding' is a scheduling mode, not a routing "
                                 "policy: set scheduling.mode: least_outstanding instead";
  static constexpr std::pair<std::string_view, SchedulingMode> kModes[] = {
      {"round_robin", SchedulingMode::kRoundRobin},
      {"least_outstanding", SchedulingMode::kLeastOutstanding},
      {"lpt_packing", SchedulingMode::kLptPacking}};
  RS_RETURN_IF_ERROR(r.choice("scheduling.mode", &s.mode, kModes));
  static constexpr std::pair<std::string_view, WorkBasis> kBases[] = {
      {"compute", WorkBasis::kCompute},
      {"items", WorkBasis::kItems},
      {"requests", WorkBasis::kRequests}};
  RS_RETURN_IF_ERROR(r.choice("scheduling.work_basis", &s.work_basis, kBases));
  RS_RETURN_IF_ERROR(r.number("scheduling.rebalance_compute_seconds", &s.rebalance_compute_seconds,
                              0, true, kInf, true));
  RS_RETURN_IF_ERROR(r.number("scheduling.first_rebalance_compute_seconds",
                              &s.first_rebalance_compute_seconds, 0, false, kInf, true));
  RS_RETURN_IF_ERROR(r.number("scheduling.ema_halflife_compute_seconds",
                              &s.ema_halflife_compute_seconds, 0, false, kInf, true));
  RS_RETURN_IF_ERROR(r.number("scheduling.hysteresis", &s.hysteresis, 0, false, 1, true));
  RS_RETURN_IF_ERROR(
      r.number("scheduling.max_worker_share", &s.max_worker_share, 0, true, 1, false));
  if (const ConfigValue *v = r.lookup("scheduling.default_replicas")) {
    RS_ASSIGN_OR_RETURN(s.default_replicas, r.replicas(*v));
  }
  RS_RETURN_IF_ERROR(
      r.number("scheduling.routing_fill_factor", &s.routing_fill_factor, 0, true, kInf, true));
  static constexpr std::pair<std::string_view, RoutingPolicy> kPolicies[] = {
      {"fill_least", RoutingPolicy::kFillLeast}, {"fill_rr", RoutingPolicy::kFillRr}};
  RS_RETURN_IF_ERROR(r.choice("scheduling.routing_policy", &s.routing_policy, kPolicies));
  static constexpr std::pair<std::string_view, FillMode> kFills[] = {
      {"run", FillMode::kRun}, {"spread", FillMode::kSpread}, {"inflight", FillMode::kInflight}};
  RS_RETURN_IF_ERROR(r.choice("scheduling.routing_fill_mode", &s.routing_fill_mode, kFills));
  RS_RETURN_IF_ERROR(
      r.boolean("scheduling.forbid_memory_oversubscription", &s.forbid_memory_oversubscription));
  static constexpr std::pair<std::string_view, CompactionMode> kCompactions[] = {
      {"off", CompactionMode::kOff},
      {"eager", CompactionMode::kEager},
      {"scheduled", CompactionMode::kScheduled}};
  RS_RETURN_IF_ERROR(r.choice("scheduling.compaction_mode", &s.compaction_mode, kCompactions));
  RS_RETURN_IF_ERROR(
      r.integer("scheduling.compaction_interval", &s.compaction_interval, 0, kMaxInt));

  if (const ConfigValue *models = r.lookup("scheduling.models")) {
    for (const auto &[name, settings] : models->map) {
      ModelPlacementConfig m;
      if (const ConfigValue *v = settings.find("replicas"); v && !v->isNull()) {
        RS_ASSIGN_OR_RETURN(m.replicas, r.replicas(*v));
      }
      if (const ConfigValue *v = settings.find("fill_mode"); v && !v->isNull()) {
        RS_ASSIGN_OR_RETURN(std::string mode, r.scalar(*v));
        if (mode != "inherit") {
          Result<FillMode> fill = parseFillMode(mode);
          if (!fill.isOk())
            return keyError(file, *v)
                   << "'" << mode << "' is not one of run, spread, inflight, inherit";
          m.fill_mode = *fill;
        }
      }
      if (const ConfigValue *v = settings.find("fill_factor"); v && !v->isNull()) {
        RS_ASSIGN_OR_RETURN(std::string text, r.scalar(*v));
        RS_ASSIGN_OR_RETURN(double f, r.parseNumber(*v, text));
        if (!(f > 0))
          return keyError(file, *v) << text << " is out of range (0, inf)";
        m.fill_factor = f;
      }
      s.models[name] = m;
    }
  }
  if (c.max_concurrent_requests_per_worker > 0 &&
      c.max_concurrent_requests_per_worker <= c.max_concurrent_streams)
    c.warnings.push_back("grpc.max_concurrent_requests_per_worker (" +
                         std::to_string(c.max_concurrent_requests_per_worker) +
                         ") is not above worker_client.max_concurrent_streams (" +
                         std::to_string(c.max_concurrent_streams) + ")");
  return Status::ok();
}

} // namespace rs::config::gateway_detail
