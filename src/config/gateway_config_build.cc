//===- config/gateway_config_build.cc - gateway.yml typed values -----------===//
//
// Every key typed and range-checked by its row (config/keys.h), then the rules that join
// keys: the endpoint lists, a gRPC listen address, and the startup warnings.
//
//===----------------------------------------------------------------------===//
#include "config/gateway_config_impl.h"

#include "config/key_reader.h"
#include "config/keys.h"
#include "support/text.h"

#include <set>

namespace rs::config::gateway_detail {
namespace {

/// Host:port syntax of a worker endpoint (no scheme, or grpc://).
Status checkEndpoint(const std::string &file, std::string_view key, const std::string &e) {
  std::string_view s = e;
  if (s.starts_with("grpc://"))
    s.remove_prefix(7);
  size_t colon = s.rfind(':');
  const int64_t port =
      colon == std::string_view::npos ? 0 : yaml::parseInteger(s.substr(colon + 1)).value_or(0);
  if (colon == std::string_view::npos || colon == 0 || port < 1 || port > 65535)
    return invalidArgument() << file << ": " << key << ": '" << e
                             << "' is not host:port with a port in [1, 65535]";
  return Status::ok();
}

/// endpoints, metrics_endpoints and worker_names as read: aligned, de-duplicated by endpoint
/// (the first wins), names defaulting to the endpoint and unique. Messages point at the
/// key's line when the file sets it.
Status resolveEndpoints(const KeyReader &r, GatewayConfig &c) {
  auto at = [&r](std::string_view key) {
    const yaml::Value *v = r.lookup(key);
    return v ? yaml::location(*v, r.file()) : r.file();
  };
  const std::vector<std::string> endpoints = std::move(c.endpoints);
  const std::vector<std::string> metrics = std::move(c.metrics_endpoints);
  const std::vector<std::string> names = std::move(c.worker_names);
  c.endpoints.clear();
  c.metrics_endpoints.clear();
  c.worker_names.clear();
  if (endpoints.empty())
    return invalidArgument() << r.file()
                             << ": endpoints is required (a list of worker host:port, or "
                                "REACTANT_GATEWAY_WORKERS)";
  if (!metrics.empty() && metrics.size() != endpoints.size())
    return invalidArgument() << at("metrics_endpoints") << ": metrics_endpoints has "
                             << metrics.size() << " entries but endpoints has " << endpoints.size();
  if (!names.empty() && names.size() != endpoints.size())
    return invalidArgument() << at("worker_names") << ": worker_names has " << names.size()
                             << " entries but endpoints has " << endpoints.size();
  std::set<std::string> seen_endpoints, seen_names;
  for (size_t i = 0; i < endpoints.size(); ++i) {
    const std::string endpoint(trim(endpoints[i]));
    RS_RETURN_IF_ERROR(checkEndpoint(at("endpoints"), "endpoints", endpoint));
    if (!seen_endpoints.insert(endpoint).second)
      continue; // de-duplicated, first one wins
    std::string name = names.empty() ? endpoint : std::string(trim(names[i]));
    if (name.empty())
      return invalidArgument() << at("worker_names") << ": worker_names[" << i << "] is empty";
    if (!seen_names.insert(name).second)
      return invalidArgument() << at(names.empty() ? "endpoints" : "worker_names")
                               << ": duplicate worker name '" << name << "'";
    const std::string metric = metrics.empty() ? "" : std::string(trim(metrics[i]));
    if (!metric.empty())
      RS_RETURN_IF_ERROR(checkEndpoint(at("metrics_endpoints"), "metrics_endpoints", metric));
    c.endpoints.push_back(endpoint);
    c.metrics_endpoints.push_back(metric);
    c.worker_names.push_back(std::move(name));
  }
  return Status::ok();
}

} // namespace

Status buildConfig(const yaml::Value &root, const std::string &file, GatewayConfig &c) {
  const std::string where = file.empty() ? "gateway config" : file;
  KeyReader r(root, where);
  if (const yaml::Value *p = r.lookup("scheduling.routing_policy");
      p && p->isScalar() && p->scalar == "least_outstanding")
    return r.error(*p, "scheduling.routing_policy")
           << "'least_outstanding' is a scheduling mode, not a routing policy: set "
              "scheduling.mode: least_outstanding instead";
  RS_RETURN_IF_ERROR(readKeys(gatewayKeys(), r, c));
  if (!c.listen_grpc.enabled()) {
    const yaml::Value *v = r.lookup("listen.grpc");
    return invalidArgument() << (v ? yaml::location(*v, where) : where)
                             << ": listen.grpc must not be empty";
  }
  RS_RETURN_IF_ERROR(resolveEndpoints(r, c));
  RS_RETURN_IF_ERROR(checkOrigins(r, "http.cors_allowed_origins", c.cors_allowed_origins));
  if (!c.tls_cert_file.empty() || !c.tls_key_file.empty() || !c.tls_client_ca_file.empty())
    c.warnings.push_back("tls settings are parsed but not enforced: traffic stays cleartext h2c");
  if (c.max_concurrent_requests_per_worker > 0 &&
      c.max_concurrent_requests_per_worker <= c.max_concurrent_streams)
    c.warnings.push_back("grpc.max_concurrent_requests_per_worker (" +
                         std::to_string(c.max_concurrent_requests_per_worker) +
                         ") is not above worker_client.max_concurrent_streams (" +
                         std::to_string(c.max_concurrent_streams) + ")");
  return Status::ok();
}

} // namespace rs::config::gateway_detail
