//===- tools/probe_command.cc - `reactant-server probe` --------------------===//
#include "tools/probe_command.h"

#include "support/net.h"
#include "tools/exit_status.h"

#include <httplib.h>

#include <cstdlib>
#include <iostream>
#include <memory>

namespace rs::tools {

int runProbe(const ProbeOptions &o, std::ostream &out, std::ostream &err) {
  constexpr std::string_view kScheme = "http://";
  if (o.url.rfind(kScheme, 0) != 0) {
    err << "probe: url '" << o.url << "' must start with http://\n";
    return kExitError;
  }
  const std::string rest = o.url.substr(kScheme.size());
  const size_t slash = rest.find('/');
  const std::string path = slash == std::string::npos ? "/" : rest.substr(slash);
  Result<HostPort> hp = parseHostPort(rest.substr(0, slash), "url '" + o.url + "'");
  if (!hp.isOk()) {
    err << "probe: " << hp.status().message() << "\n";
    return kExitError;
  }
  httplib::Client client(hp->host, hp->port);
  const time_t sec = static_cast<time_t>(o.timeout_ms / 1000);
  const time_t usec = static_cast<time_t>((o.timeout_ms % 1000) * 1000);
  client.set_connection_timeout(sec, usec);
  client.set_read_timeout(sec, usec);
  httplib::Result r = client.Get(path);
  if (!r) {
    err << "probe: " << o.url << ": " << httplib::to_string(r.error()) << "\n";
    return kExitError;
  }
  const std::string first = r->body.substr(0, r->body.find('\n'));
  out << "probe: " << o.url << ": " << r->status << " " << first << "\n";
  return r->status >= 200 && r->status < 300 ? kExitOk : kExitCheckFailed;
}

void addProbeCommand(CLI::App &app) {
  auto o = std::make_shared<ProbeOptions>();
  CLI::App *c = app.add_subcommand("probe", "GET a health path (the image's health check)");
  c->add_option("--url", o->url, "http://HOST:PORT/PATH (default the local /readyz)");
  c->add_option("--timeout-ms", o->timeout_ms, "Connect and read deadline in ms")
      ->check(CLI::PositiveNumber);
  c->callback([o] { std::exit(runProbe(*o, std::cout, std::cerr)); });
}

} // namespace rs::tools
