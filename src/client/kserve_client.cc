//===- client/kserve_client.cc - A KServe V2 client over gRPC or HTTP --------===//
#include "client/kserve_client.h"

#include "client/grpc_channel.h"

#include "frontend/tls.h"
#include "protocol/grpc_codec.h"
#include "protocol/http_codec.h"
#include "protocol/proto/grpc_service.grpc.pb.h"
#include "protocol/status_mapping.h"

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <climits>

namespace rs::client {
namespace {

constexpr int64_t kNoTimeoutHttpSeconds = 24 * 3600; // httplib needs some read timeout

/// "host:port", the host bracketed when it is an IPv6 literal.
/// "http://host:port" or "https://host:port", for messages.
std::string httpUrl(const HostPort &hp, bool tls) {
  return (tls ? "https://" : "http://") + formatHostPort(hp);
}

/// The PEM contents of the TLS files of `options` (read once, when the client is made).
struct TlsPems {
  std::string ca, cert, key;
};

/// Percent-encodes the characters that would change the meaning of a URL path segment
/// (httplib encodes spaces and non-ASCII itself).
std::string pathSegment(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '%' || c == '/' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

class GrpcClient final : public KServeClient {
public:
  GrpcClient(const KServeClientOptions &options, const HostPort &hp, const TlsPems &pems)
      : options_(options), target_(formatHostPort(hp)) {
    ChannelOptions channel;
    channel.max_message_bytes = options.max_message_bytes;
    if (options.tls) {
      grpc::SslCredentialsOptions o;
      o.pem_root_certs = pems.ca; // "" = gRPC's default roots
      o.pem_cert_chain = pems.cert;
      o.pem_private_key = pems.key;
      channel.credentials = grpc::SslCredentials(o);
    }
    stub_ = inference::GRPCInferenceService::NewStub(makeChannel(target_, channel));
  }

  Result<protocol::InferResponse> infer(const protocol::InferRequest &request) override {
    grpc::ClientContext ctx;
    setDeadline(ctx);
    inference::ModelInferResponse resp;
    grpc::Status s = stub_->ModelInfer(&ctx, protocol::encodeModelInferRequest(request), &resp);
    if (!s.ok())
      return protocol::fromGrpcStatus(s);
    return protocol::decodeModelInferResponse(resp);
  }

  Result<bool> serverReady() override {
    grpc::ClientContext ctx;
    setDeadline(ctx);
    inference::ServerReadyResponse resp;
    grpc::Status s = stub_->ServerReady(&ctx, {}, &resp);
    if (!s.ok())
      return protocol::fromGrpcStatus(s);
    return resp.ready();
  }

  std::string target() const override { return target_; }

private:
  void setDeadline(grpc::ClientContext &ctx) const {
    if (options_.timeout_ms > 0)
      ctx.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(options_.timeout_ms));
  }

  KServeClientOptions options_;
  std::string target_; // "host:port"
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

class HttpClient final : public KServeClient {
public:
  HttpClient(const KServeClientOptions &options, HostPort hp)
      : options_(options), hp_(std::move(hp)) {}

  Result<protocol::InferResponse> infer(const protocol::InferRequest &request) override {
    std::string path = "/v2/models/" + pathSegment(request.model_name);
    if (!request.model_version.empty())
      path += "/versions/" + pathSegment(request.model_version);
    path += "/infer";
    protocol::OutputEncoding encoding;
    encoding.binary_by_default = options_.binary;
    protocol::HttpBody body = protocol::encodeHttpInferRequest(request, options_.binary, encoding);
    httplib::Headers headers;
    if (body.json_length)
      headers.emplace(protocol::kInferenceHeaderContentLength, std::to_string(*body.json_length));
    httplib::Client cli = client();
    const auto sent = std::chrono::steady_clock::now();
    httplib::Result r =
        cli.Post(path.c_str(), headers, body.body,
                 body.json_length ? "application/octet-stream" : "application/json");
    if (!r)
      return transportError(r.error(), sent);
    if (r->status != 200)
      return protocol::fromHttpError(r->status, r->body);
    std::optional<std::string> header;
    if (r->has_header(protocol::kInferenceHeaderContentLength))
      header = r->get_header_value(protocol::kInferenceHeaderContentLength);
    return protocol::decodeHttpInferResponse(
        r->body, header ? std::optional<std::string_view>(*header) : std::nullopt);
  }

  Result<bool> serverReady() override {
    httplib::Client cli = client();
    const auto sent = std::chrono::steady_clock::now();
    httplib::Result r = cli.Get("/v2/health/ready");
    if (!r)
      return transportError(r.error(), sent);
    if (r->status == 200)
      return true;
    if (r->status == 400 || r->status == 503)
      return false;
    return protocol::fromHttpError(r->status, r->body);
  }

  std::string target() const override { return formatHostPort(hp_); }

private:
  httplib::Client client() const {
    httplib::Client cli = options_.tls
                              ? httplib::Client("https://" + formatHostPort(hp_),
                                                options_.tls_cert_file, options_.tls_key_file)
                              : httplib::Client(hp_.host, hp_.port);
    if (options_.tls) {
      cli.enable_server_certificate_verification(true);
      if (!options_.tls_ca_file.empty())
        cli.set_ca_cert_path(options_.tls_ca_file);
    }
    cli.set_tcp_nodelay(true);
    time_t seconds = options_.timeout_ms > 0
                         ? static_cast<time_t>((options_.timeout_ms + 999) / 1000)
                         : static_cast<time_t>(kNoTimeoutHttpSeconds);
    cli.set_connection_timeout(seconds);
    cli.set_read_timeout(seconds);
    cli.set_write_timeout(seconds);
    return cli;
  }

  /// A request sent at `sent` got no HTTP reply. A read that failed well before the read
  /// timeout is a connection closed or answered in another protocol (a gRPC or TLS port),
  /// not a deadline.
  Status transportError(httplib::Error e, std::chrono::steady_clock::time_point sent) const {
    std::string where = httpUrl(hp_, options_.tls);
    const int64_t timeout_ms =
        options_.timeout_ms > 0 ? options_.timeout_ms : kNoTimeoutHttpSeconds * int64_t{1000};
    const bool early =
        std::chrono::steady_clock::now() - sent < std::chrono::milliseconds(timeout_ms) * 9 / 10;
    if (e == httplib::Error::Read && early)
      return unavailable() << where
                           << ": the connection closed without an HTTP reply (is it the server's "
                              "HTTP port, in plain HTTP?)";
    if (e == httplib::Error::Read || e == httplib::Error::ConnectionTimeout)
      return deadlineExceeded() << where << ": no reply in time (" << httplib::to_string(e) << ")";
    if (e == httplib::Error::Connection)
      return unavailable() << "cannot reach " << where
                           << ": connection failed (nothing listening there, or the host is "
                              "unknown or unreachable)";
    return unavailable() << "cannot reach " << where << ": " << httplib::to_string(e);
  }

  KServeClientOptions options_;
  HostPort hp_;
};

} // namespace

Result<HostPort> parseServerUrl(const std::string &url, WireProtocol protocol) {
  const std::string scheme = protocol == WireProtocol::kGrpc ? "grpc://" : "http://";
  const int default_port = protocol == WireProtocol::kGrpc ? 8001 : 8000;
  if (url.empty())
    return HostPort{"127.0.0.1", default_port};
  std::string s = url;
  if (size_t p = s.find("://"); p != std::string::npos) {
    if (s.compare(0, p + 3, scheme) != 0)
      return invalidArgument() << "url '" << url << "': expected " << scheme << " for "
                               << (protocol == WireProtocol::kGrpc ? "grpc" : "http");
    s = s.substr(p + 3);
  }
  while (!s.empty() && s.back() == '/')
    s.pop_back();
  return parseHostPort(s, "url '" + url + "'");
}

Result<std::unique_ptr<KServeClient>> KServeClient::create(KServeClientOptions options) {
  RS_ASSIGN_OR_RETURN(HostPort hp, parseServerUrl(options.url, options.protocol));
  TlsPems pems;
  if (options.tls) {
    if (options.tls_cert_file.empty() != options.tls_key_file.empty())
      return invalidArgument() << "a TLS client certificate needs its key and the other way "
                                  "round (--cert-file and --key-file)";
    if (!options.tls_ca_file.empty()) {
      RS_ASSIGN_OR_RETURN(pems.ca, frontend::readPemFile(options.tls_ca_file, "CA file"));
    }
    if (!options.tls_cert_file.empty()) {
      RS_ASSIGN_OR_RETURN(pems.cert,
                          frontend::readPemFile(options.tls_cert_file, "client certificate"));
      RS_ASSIGN_OR_RETURN(pems.key, frontend::readPemFile(options.tls_key_file, "client key"));
    }
  }
  if (options.protocol == WireProtocol::kGrpc)
    return std::unique_ptr<KServeClient>(std::make_unique<GrpcClient>(options, hp, pems));
  return std::unique_ptr<KServeClient>(std::make_unique<HttpClient>(options, hp));
}

} // namespace rs::client
