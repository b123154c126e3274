//===- client/load_generator.cc - Load of valid and malformed requests -------===//
#include "client/load_generator.h"

#include "client/grpc_channel.h"
#include "client/kserve_client.h"
#include "client/load_requests.h"
#include "client/tensor_compare.h"
#include "protocol/http_codec.h"
#include "protocol/proto/grpc_service.grpc.pb.h"
#include "protocol/status_mapping.h"

#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace rs::client {
namespace {

using namespace loadgen;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kAlign = 64;

uint64_t alignUp(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

std::shared_ptr<grpc::Channel> makeLoadChannel(const HostPort &hp) {
  ChannelOptions options;
  // A channel per client spreads the load over connections, as separate clients would.
  options.private_subchannels = true;
  // The client's own cost is part of every latency measured here, so the channel carries
  // only what a benchmark client needs (CANCELLED is sent again by hand, below; the message
  // limits are unbounded, so no message-size filter is needed; docs/performance.md).
  options.minimal_stack = true;
  return makeChannel(formatHostPort(hp), options);
}

std::unique_ptr<httplib::Client> makeHttp(const HostPort &hp, int64_t timeout_ms) {
  auto c = std::make_unique<httplib::Client>(hp.host, hp.port);
  c->set_keep_alive(true);
  // Without it the body, written after the headers, waits for the server's delayed ACK
  // (Nagle), which adds about 40 ms to every request.
  c->set_tcp_nodelay(true);
  const int64_t ms = timeout_ms > 0 ? timeout_ms : 24 * 3600 * 1000;
  c->set_read_timeout(std::chrono::milliseconds(ms));
  c->set_write_timeout(std::chrono::milliseconds(ms));
  c->set_connection_timeout(std::chrono::seconds(5));
  return c;
}

Result<Model> modelFromGrpc(const HostPort &hp, const std::string &name) {
  auto stub = inference::GRPCInferenceService::NewStub(makeLoadChannel(hp));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  inference::ModelMetadataRequest req;
  req.set_name(name);
  inference::ModelMetadataResponse resp;
  grpc::Status s = stub->ModelMetadata(&ctx, req, &resp);
  if (!s.ok())
    return protocol::fromGrpcStatus(s).withPrefix("model metadata of '" + name + "'");
  Model m;
  m.name = name;
  auto add = [](const auto &t, std::vector<protocol::TensorSpec> &out) -> Status {
    std::optional<DType> dt = dtypeFromWireName(t.datatype());
    if (!dt)
      return invalidArgument() << "tensor '" << t.name() << "': unknown datatype '" << t.datatype()
                               << "'";
    out.push_back({t.name(), *dt, Shape(t.shape().begin(), t.shape().end())});
    return Status::ok();
  };
  for (const auto &t : resp.inputs())
    RS_RETURN_IF_ERROR(add(t, m.inputs));
  for (const auto &t : resp.outputs())
    RS_RETURN_IF_ERROR(add(t, m.outputs));
  return m;
}

Result<Model> modelFromHttp(const HostPort &hp, const std::string &name) {
  auto c = makeHttp(hp, 10000);
  auto r = c->Get("/v2/models/" + name);
  if (!r)
    return unavailable() << "model metadata of '" << name << "': " << httplib::to_string(r.error());
  if (r->status != 200)
    return protocol::fromHttpError(r->status, r->body)
        .withPrefix("model metadata of '" + name + "'");
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return invalidArgument() << "model metadata of '" << name << "' is not a JSON object";
  Model m;
  m.name = name;
  for (const char *key : {"inputs", "outputs"}) {
    auto &out = std::string(key) == "inputs" ? m.inputs : m.outputs;
    for (const auto &t : j.value(key, nlohmann::json::array())) {
      std::optional<DType> dt = dtypeFromWireName(t.value("datatype", ""));
      if (!dt)
        return invalidArgument() << "model metadata: bad datatype in " << t.dump();
      out.push_back({t.value("name", ""), *dt, t.value("shape", Shape{})});
    }
  }
  return m;
}

/// Everything the client threads share.
struct Run {
  const LoadgenOptions &options;
  Model model;
  std::vector<Payload> payloads;
  std::vector<KindSpec> valid, malformed;
  HostPort grpc_hp, http_hp;
  bool use_grpc = false, use_http = false;
  Clock::time_point start;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> issued{0};
  std::atomic<uint64_t> serial{0};

  std::mutex mu;
  std::map<std::string, KindStats> kinds;                    // GUARDED_BY(mu)
  std::vector<double> latencies_ms;                          // GUARDED_BY(mu)
  std::vector<std::optional<std::vector<std::string>>> refs; // GUARDED_BY(mu)

  explicit Run(const LoadgenOptions &o) : options(o) {}
};

/// An answer, protocol-neutral.
struct Answer {
  StatusCode code = StatusCode::kOk;
  int http_status = 0; // HTTP only
  bool transport_lost = false;
  bool unreachable = false; // no connection could be made
  bool retried = false;
  std::string message;
  std::vector<std::string> outputs; // bytes of every output in model order (valid, OK)
};

class ClientThread {
public:
  ClientThread(Run &run, int index)
      : run_(run), index_(index), rng_(run.options.seed * 7919 + index) {}
  ~ClientThread() { teardownShm(); }

  Status setup() {
    if (run_.use_grpc)
      stub_ = inference::GRPCInferenceService::NewStub(makeLoadChannel(run_.grpc_hp));
    if (run_.use_http)
      http_ = makeHttp(run_.http_hp, run_.options.timeout_ms);
    if (run_.options.shared_memory)
      return setupShm();
    return Status::ok();
  }

  void loop() {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    while (!run_.stop.load() && !(run_.options.cancel && run_.options.cancel->load())) {
      if (run_.options.requests > 0 && run_.issued.fetch_add(1) >= run_.options.requests)
        break;
      if (run_.options.duration_s > 0 &&
          std::chrono::duration<double>(Clock::now() - run_.start).count() >=
              run_.options.duration_s)
        break;
      const bool bad = !run_.malformed.empty() && unit(rng_) < run_.options.malformed_fraction;
      const std::vector<KindSpec> &pool = bad ? run_.malformed : run_.valid;
      const KindSpec &kind = pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng_)];
      const size_t p = std::uniform_int_distribution<size_t>(0, run_.payloads.size() - 1)(rng_);
      one(kind, p);
      if (run_.options.stop_when_unreachable > 0 &&
          unreachable_in_a_row_ >= run_.options.stop_when_unreachable)
        break; // the server is gone
    }
  }

private:
  void one(const KindSpec &kind, size_t p) {
    const Payload &payload = run_.payloads[p];
    if (kind.shm && !kind.malformed)
      writeShmInputs(payload);
    const WireRequest &req = wireRequest(kind, p);
    const auto t0 = Clock::now();
    Answer a = kind.proto == Proto::kGrpc ? sendGrpc(kind, req) : sendHttp(kind, req);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (a.code == StatusCode::kOk && !kind.malformed && kind.shm)
      a.outputs = readShmOutputs(payload);
    record(kind, p, a, ms);
  }

  /// The request of `kind` for payload `p`. A valid kind's request depends only on the
  /// payload (and this client's shared memory), so it is built once and sent again as it
  /// is; a malformed one is built each time (unknown_model names are unique).
  const WireRequest &wireRequest(const KindSpec &kind, size_t p) {
    const ClientShm *shm = kind.shm ? &shm_ : nullptr;
    if (kind.malformed) {
      scratch_ = buildRequest(kind, run_.model, run_.payloads[p], shm, run_.serial.fetch_add(1));
      return scratch_;
    }
    auto [it, inserted] = built_.try_emplace({kind.name, p});
    if (inserted)
      it->second = buildRequest(kind, run_.model, run_.payloads[p], shm, 0);
    return it->second;
  }

  Answer sendGrpc(const KindSpec &kind, const WireRequest &req) {
    Answer a;
    grpc::ClientContext ctx;
    if (run_.options.timeout_ms > 0)
      ctx.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(run_.options.timeout_ms));
    inference::ModelInferResponse resp;
    grpc::Status s = stub_->ModelInfer(&ctx, req.grpc, &resp);
    if (s.error_code() == grpc::StatusCode::CANCELLED) {
      // Not this client's cancellation (it never cancels), so gRPC core's: it answers so,
      // without running the call, when the call reaches a server in the instant it starts
      // shutting down. Sent again once, like an HTTP request on a connection found closed.
      a.retried = true;
      grpc::ClientContext again;
      if (run_.options.timeout_ms > 0)
        again.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::milliseconds(run_.options.timeout_ms));
      resp.Clear();
      s = stub_->ModelInfer(&again, req.grpc, &resp);
    }
    a.code = static_cast<StatusCode>(s.error_code());
    a.message = s.error_message();
    if (a.code == StatusCode::kCancelled && refusesConnections(run_.grpc_hp)) {
      // Cancelled again, and the server no longer listens: it exited while the call was
      // in transit, before any handler ran (see the HTTP reset case).
      a.code = StatusCode::kUnavailable;
      a.unreachable = true;
      a.message += " (cancelled, and the server stopped listening)";
      return a;
    }
    // gRPC says "failed to connect" (and similar) when no connection can be made.
    a.unreachable =
        a.code == StatusCode::kUnavailable && a.message.find("connect") != std::string::npos;
    if (!s.ok() || kind.malformed || kind.shm)
      return a;
    for (const protocol::TensorSpec &spec : run_.model.outputs) {
      std::string bytes;
      bool found = false;
      for (int i = 0; i < resp.outputs_size(); ++i)
        if (resp.outputs(i).name() == spec.name && i < resp.raw_output_contents_size()) {
          bytes = resp.raw_output_contents(i);
          found = true;
        }
      if (!found) {
        a.code = StatusCode::kInternal;
        a.message = "reply has no raw output '" + spec.name + "'";
        return a;
      }
      a.outputs.push_back(std::move(bytes));
    }
    return a;
  }

  /// True when a fresh TCP connection to `hp` is refused (nothing listens there). An
  /// HTTP/1.1 GET serves as the probe on either port: on the gRPC port a listening server
  /// accepts the connection and then fails the GET some other way.
  static bool refusesConnections(const HostPort &hp) {
    std::unique_ptr<httplib::Client> c = makeHttp(hp, 1000);
    httplib::Result r = c->Get("/v2/health/live");
    return !r && r.error() == httplib::Error::Connection;
  }

  Answer sendHttp(const KindSpec &kind, const WireRequest &req) {
    Answer a;
    httplib::Headers headers;
    if (req.http.header_length)
      headers.emplace(protocol::kInferenceHeaderContentLength, *req.http.header_length);
    const char *type = req.http.header_length ? "application/octet-stream" : "application/json";
    auto r = http_->Post(req.http.path, headers, req.http.body, type);
    if (!r && r.error() != httplib::Error::Connection && http_reused_) {
      // The server closed the kept-alive connection (e.g. it is shutting down): send again
      // once on a new connection.
      http_ = makeHttp(run_.http_hp, run_.options.timeout_ms);
      http_reused_ = false;
      a.retried = true;
      r = http_->Post(req.http.path, headers, req.http.body, type);
    }
    if (!r) {
      // Refused, or the connection closed before the whole request was written: the server
      // cannot have run it (it reads the whole body first). A failure after the request was
      // sent (no reply) is a request lost in flight.
      const httplib::Error e = r.error();
      a.code = StatusCode::kUnavailable;
      a.unreachable = e == httplib::Error::Connection;
      a.transport_lost = e != httplib::Error::Connection &&
                         e != httplib::Error::ConnectionTimeout && e != httplib::Error::Write;
      a.message = "http: " + httplib::to_string(r.error());
      if (a.transport_lost && refusesConnections(run_.http_hp)) {
        // The connection was reset with no reply and the server no longer listens: it
        // exited with the request still in the kernel's accept queue or unread, so the
        // request never reached it (an HTTP/1.1 race no server can close). A crash looks
        // the same here; the process's exit status tells the two apart.
        a.transport_lost = false;
        a.unreachable = true;
        a.message += " (connection reset, and the server stopped listening)";
      }
      http_ = makeHttp(run_.http_hp, run_.options.timeout_ms);
      http_reused_ = false;
      return a;
    }
    // httplib keeps the connection unless the server said `Connection: close`.
    http_reused_ = r->get_header_value("Connection") != "close";
    a.http_status = r->status;
    if (r->status != 200) {
      Status s = protocol::fromHttpError(r->status, r->body);
      a.code = s.code();
      a.message = s.message();
      return a;
    }
    if (kind.malformed || kind.shm)
      return a;
    std::optional<std::string> header;
    if (r->has_header(protocol::kInferenceHeaderContentLength))
      header = r->get_header_value(protocol::kInferenceHeaderContentLength);
    Result<protocol::InferResponse> resp = protocol::decodeHttpInferResponse(
        r->body, header ? std::optional<std::string_view>(*header) : std::nullopt);
    if (!resp.isOk()) {
      a.code = StatusCode::kInternal;
      a.message = "reply does not decode: " + resp.status().message();
      return a;
    }
    for (const protocol::TensorSpec &spec : run_.model.outputs) {
      const Tensor *t = nullptr;
      for (const protocol::NamedTensor &o : resp->outputs)
        if (o.name == spec.name)
          t = &o.tensor;
      if (!t) {
        a.code = StatusCode::kInternal;
        a.message = "reply has no output '" + spec.name + "'";
        return a;
      }
      a.outputs.emplace_back(reinterpret_cast<const char *>(t->data()), t->bytes().size());
    }
    return a;
  }

  void record(const KindSpec &kind, size_t p, const Answer &a, double ms) {
    unreachable_in_a_row_ = a.unreachable ? unreachable_in_a_row_ + 1 : 0;
    std::lock_guard lock(run_.mu);
    KindStats &k = run_.kinds[(kind.proto == Proto::kGrpc ? "grpc " : "http ") + kind.name];
    k.malformed = kind.malformed;
    ++k.sent;
    ++k.codes[std::string(statusCodeName(a.code))];
    k.retried += a.retried ? 1 : 0;
    auto unexpected = [&](const std::string &why) {
      ++k.lost;
      if (k.first_unexpected.empty())
        k.first_unexpected = why;
    };
    if (a.transport_lost) {
      unexpected(a.message);
      return;
    }
    if (a.code == StatusCode::kUnavailable) {
      ++k.unavailable;
      return;
    }
    if (a.code == StatusCode::kResourceExhausted) {
      ++k.shed;
      return;
    }
    if (kind.malformed) {
      const bool expected = kind.proto == Proto::kGrpc
                                ? a.code == kind.expected
                                : a.http_status == protocol::toHttpStatus(kind.expected);
      if (expected)
        ++k.ok;
      else
        unexpected(std::string(statusCodeName(a.code)) + ": " + a.message);
      return;
    }
    if (a.code != StatusCode::kOk) {
      unexpected(std::string(statusCodeName(a.code)) + ": " + a.message);
      return;
    }
    if (run_.options.verify) {
      std::optional<std::vector<std::string>> &ref = run_.refs[p];
      if (!ref) {
        ref = a.outputs;
      } else {
        for (size_t o = 0; o < a.outputs.size(); ++o)
          if (!sameWithin(a.outputs[o], (*ref)[o], run_.model.outputs[o].dtype,
                          run_.options.rtol)) {
            ++k.wrong;
            if (k.first_unexpected.empty())
              k.first_unexpected = "output '" + run_.model.outputs[o].name +
                                   "' differs from the first answer to this payload";
            return;
          }
      }
    }
    ++k.ok;
    run_.latencies_ms.push_back(ms);
  }

  // ---- Shared memory --------------------------------------------------------

  Status setupShm() {
    const Payload &p0 = run_.payloads[0];
    uint64_t off = 0;
    for (const protocol::NamedTensor &in : p0.inputs) {
      shm_.input_offsets.push_back(off);
      off = alignUp(off + static_cast<uint64_t>(in.tensor.byteSize()));
    }
    shm_.in_size = std::max<uint64_t>(off, kAlign);
    off = 0;
    for (int64_t bytes : p0.output_bytes) {
      shm_.output_offsets.push_back(off);
      off = alignUp(off + static_cast<uint64_t>(bytes));
    }
    shm_.out_size = std::max<uint64_t>(off, kAlign);
    const std::string tag = std::to_string(::getpid()) + "_" + std::to_string(index_);
    shm_.key = "/rs_loadgen_" + tag;
    shm_.in_region = "loadgen_" + tag + "_in";
    shm_.out_region = "loadgen_" + tag + "_out";
    shm_.fd = ::shm_open(shm_.key.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
    if (shm_.fd < 0)
      return internalError() << "loadgen: cannot create shared memory " << shm_.key << ": "
                             << std::strerror(errno);
    if (::ftruncate(shm_.fd, static_cast<off_t>(shm_.in_size + shm_.out_size)) != 0)
      return internalError() << "loadgen: cannot size shared memory " << shm_.key;
    RS_RETURN_IF_ERROR(registerRegion(shm_.in_region, 0, shm_.in_size));
    RS_RETURN_IF_ERROR(registerRegion(shm_.out_region, shm_.in_size, shm_.out_size));
    registered_ = true;
    return Status::ok();
  }

  Status registerRegion(const std::string &name, uint64_t offset, uint64_t size) {
    if (run_.use_grpc) {
      grpc::ClientContext ctx;
      inference::SystemSharedMemoryRegisterRequest req;
      req.set_name(name);
      req.set_key(shm_.key);
      req.set_offset(offset);
      req.set_byte_size(size);
      inference::SystemSharedMemoryRegisterResponse resp;
      grpc::Status s = stub_->SystemSharedMemoryRegister(&ctx, req, &resp);
      return s.ok() ? Status::ok() : protocol::fromGrpcStatus(s).withPrefix("register " + name);
    }
    nlohmann::json body = {{"key", shm_.key}, {"offset", offset}, {"byte_size", size}};
    auto r = http_->Post("/v2/systemsharedmemory/region/" + name + "/register", body.dump(),
                         "application/json");
    if (!r)
      return unavailable() << "register " << name << ": " << httplib::to_string(r.error());
    if (r->status != 200)
      return protocol::fromHttpError(r->status, r->body).withPrefix("register " + name);
    return Status::ok();
  }

  void teardownShm() {
    if (registered_) {
      for (const std::string &name : {shm_.in_region, shm_.out_region}) {
        if (run_.use_grpc) {
          grpc::ClientContext ctx;
          ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
          inference::SystemSharedMemoryUnregisterRequest req;
          req.set_name(name);
          inference::SystemSharedMemoryUnregisterResponse resp;
          (void)stub_->SystemSharedMemoryUnregister(&ctx, req, &resp);
        } else if (http_) {
          (void)http_->Post("/v2/systemsharedmemory/region/" + name + "/unregister", "",
                            "application/json");
        }
      }
    }
    if (shm_.fd >= 0) {
      ::close(shm_.fd);
      ::shm_unlink(shm_.key.c_str());
      shm_.fd = -1;
    }
  }

  void writeShmInputs(const Payload &p) {
    for (size_t i = 0; i < p.inputs.size(); ++i) {
      auto bytes = p.inputs[i].tensor.bytes();
      if (::pwrite(shm_.fd, bytes.data(), bytes.size(),
                   static_cast<off_t>(shm_.input_offsets[i])) != static_cast<ssize_t>(bytes.size()))
        std::abort(); // our own object, sized above
    }
  }

  std::vector<std::string> readShmOutputs(const Payload &p) {
    std::vector<std::string> out;
    for (size_t o = 0; o < p.output_bytes.size(); ++o) {
      std::string bytes(static_cast<size_t>(p.output_bytes[o]), '\0');
      if (::pread(shm_.fd, bytes.data(), bytes.size(),
                  static_cast<off_t>(shm_.in_size + shm_.output_offsets[o])) !=
          static_cast<ssize_t>(bytes.size()))
        std::abort();
      out.push_back(std::move(bytes));
    }
    return out;
  }

  Run &run_;
  int index_;
  std::mt19937_64 rng_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
  std::unique_ptr<httplib::Client> http_;
  bool http_reused_ = false; // the next HTTP request goes over a kept-alive connection
  int unreachable_in_a_row_ = 0;
  ClientShm shm_;
  bool registered_ = false;
  std::map<std::pair<std::string, size_t>, WireRequest> built_; // valid kinds, by payload
  WireRequest scratch_;                                         // the last malformed request
};

/// Samples the server's resident memory until `run.stop`.
void sampleRss(Run &run, const HostPort &hp, std::vector<std::pair<double, int64_t>> &out) {
  auto c = makeHttp(hp, 5000);
  auto sample = [&] {
    auto r = c->Get("/metrics");
    if (!r || r->status != 200)
      return;
    std::optional<double> v = scrapeValue(r->body, "process_resident_memory_bytes");
    if (v)
      out.emplace_back(std::chrono::duration<double>(Clock::now() - run.start).count(),
                       static_cast<int64_t>(*v));
  };
  sample();
  auto next = Clock::now();
  while (!run.stop.load()) {
    next += std::chrono::milliseconds(static_cast<int64_t>(run.options.rss_interval_s * 1000));
    while (!run.stop.load() && Clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    sample();
  }
}

} // namespace

double quantileOf(const std::vector<double> &sorted, double q) {
  if (sorted.empty())
    return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

std::optional<double> scrapeValue(const std::string &exposition, const std::string &metric) {
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(metric, 0) != 0 || line.size() <= metric.size())
      continue;
    const char next = line[metric.size()];
    if (next != ' ' && next != '{')
      continue;
    size_t value_at = next == '{' ? line.find("} ", metric.size()) : metric.size();
    if (value_at == std::string::npos)
      continue;
    value_at = line.find_first_not_of(" }", value_at);
    if (value_at == std::string::npos)
      continue;
    try {
      return std::stod(line.substr(value_at));
    } catch (...) {
      continue;
    }
  }
  return std::nullopt;
}

Result<LoadgenReport> runLoad(const LoadgenOptions &options) {
  if (options.model.empty())
    return invalidArgument() << "loadgen: --model is required";
  if (options.concurrency < 1)
    return invalidArgument() << "loadgen: concurrency must be at least 1";
  if (options.duration_s <= 0 && options.requests <= 0)
    return invalidArgument() << "loadgen: give a duration or a request count";
  if (options.malformed_fraction < 0 || options.malformed_fraction > 1)
    return invalidArgument() << "loadgen: the malformed share must be in [0, 1]";
  if (options.rows < 1 || options.payloads < 1)
    return invalidArgument() << "loadgen: rows and payloads must be at least 1";
  Run run(options);
  run.use_grpc = options.protocol == "grpc" || options.protocol == "both";
  run.use_http = options.protocol == "http" || options.protocol == "both";
  if (!run.use_grpc && !run.use_http)
    return invalidArgument() << "loadgen: protocol must be grpc, http or both, got '"
                             << options.protocol << "'";
  if (run.use_grpc) {
    RS_ASSIGN_OR_RETURN(run.grpc_hp, parseServerUrl(options.grpc_url, WireProtocol::kGrpc));
  }
  if (run.use_http) {
    RS_ASSIGN_OR_RETURN(run.http_hp, parseServerUrl(options.http_url, WireProtocol::kHttp));
  }
  RS_ASSIGN_OR_RETURN(run.model, run.use_grpc ? modelFromGrpc(run.grpc_hp, options.model)
                                              : modelFromHttp(run.http_hp, options.model));
  if (run.model.inputs.empty() || run.model.outputs.empty())
    return invalidArgument() << "loadgen: model '" << options.model
                             << "' has no inputs or no outputs";
  std::mt19937_64 rng(options.seed);
  for (int i = 0; i < options.payloads; ++i) {
    RS_ASSIGN_OR_RETURN(Payload p, makePayload(run.model, options.rows, rng));
    run.payloads.push_back(std::move(p));
  }
  run.refs.resize(run.payloads.size());
  for (KindSpec &k : allKinds(run.use_grpc, run.use_http, options.shared_memory))
    (k.malformed ? run.malformed : run.valid).push_back(std::move(k));

  std::vector<std::unique_ptr<ClientThread>> clients;
  for (int i = 0; i < options.concurrency; ++i) {
    clients.push_back(std::make_unique<ClientThread>(run, i));
    RS_RETURN_IF_ERROR(clients.back()->setup());
  }
  LoadgenReport report;
  run.start = Clock::now();
  std::thread sampler;
  if (!options.metrics_url.empty()) {
    RS_ASSIGN_OR_RETURN(HostPort metrics_hp,
                        parseServerUrl(options.metrics_url, WireProtocol::kHttp));
    sampler = std::thread([&run, metrics_hp, &report] { sampleRss(run, metrics_hp, report.rss); });
  }
  std::vector<std::thread> threads;
  for (auto &c : clients)
    threads.emplace_back([&c] { c->loop(); });
  for (std::thread &t : threads)
    t.join();
  report.seconds = std::chrono::duration<double>(Clock::now() - run.start).count();
  run.stop = true;
  if (sampler.joinable())
    sampler.join();
  clients.clear(); // unregisters and unlinks shared memory

  report.kinds = std::move(run.kinds);
  for (const auto &[name, k] : report.kinds) {
    report.requests += k.sent;
    if (!k.malformed)
      report.valid += k.sent;
    report.unexpected += k.lost + k.wrong;
    for (const auto &[code, n] : k.codes)
      if (code != "OK")
        report.errors += n;
  }
  report.throughput =
      report.seconds > 0 ? static_cast<double>(report.requests) / report.seconds : 0;
  std::sort(run.latencies_ms.begin(), run.latencies_ms.end());
  report.valid_ok = run.latencies_ms.size();
  report.p50_ms = quantileOf(run.latencies_ms, 0.5);
  report.p90_ms = quantileOf(run.latencies_ms, 0.9);
  report.p99_ms = quantileOf(run.latencies_ms, 0.99);
  report.max_ms = run.latencies_ms.empty() ? 0 : run.latencies_ms.back();
  report.rss_trend = rssTrend(report.rss);
  return report;
}

std::string LoadgenReport::text() const {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << "requests " << requests << " in " << seconds << " s: " << throughput << " req/s\n";
  os.precision(3);
  // The percentiles are over the valid requests answered OK (the others have no latency).
  os << "valid " << valid << " ok " << valid_ok << " latency ms: p50 " << p50_ms << " p90 "
     << p90_ms << " p99 " << p99_ms << " max " << max_ms << "\n";
  os << "errors " << errors << " (answers other than OK, malformed included), unexpected "
     << unexpected << "\n";
  // Names up to 36 characters ("http binary_size_overflow (bad)") keep the columns aligned.
  char header[160];
  std::snprintf(header, sizeof header, "%-36s %9s %8s %8s %8s %8s %8s %8s  codes\n", "kind", "sent",
                "ok", "unavail", "shed", "wrong", "lost", "retried");
  os << header;
  for (const auto &[name, k] : kinds) {
    char line[200];
    std::snprintf(
        line, sizeof line, "%-36s %9llu %8llu %8llu %8llu %8llu %8llu %8llu  ",
        (name + (k.malformed ? " (bad)" : "")).c_str(), static_cast<unsigned long long>(k.sent),
        static_cast<unsigned long long>(k.ok), static_cast<unsigned long long>(k.unavailable),
        static_cast<unsigned long long>(k.shed), static_cast<unsigned long long>(k.wrong),
        static_cast<unsigned long long>(k.lost), static_cast<unsigned long long>(k.retried));
    os << line;
    bool first = true;
    for (const auto &[code, n] : k.codes) {
      os << (first ? "" : ",") << code << "=" << n;
      first = false;
    }
    os << "\n";
    if (!k.first_unexpected.empty())
      os << "    first unexpected: " << k.first_unexpected.substr(0, 300) << "\n";
  }
  if (!rss.empty()) {
    os << "server rss MiB:";
    for (const auto &[t, bytes] : rss) {
      os.precision(0);
      os << " " << t << "s=";
      os.precision(1);
      os << static_cast<double>(bytes) / (1 << 20);
    }
    os << "\n";
    os.precision(2);
    os << "server rss per " << rssTrendText(rss_trend) << "\n";
    if (rss_trend.growth) {
      os << "rss growth after the first minute: " << *rss_trend.growth * 100
         << "% (lowest sample of the last 60 s over minute 1's lowest)\n";
      os << "rss highest sample after the first minute: " << *rss_trend.peak_over_floor * 100
         << "% over minute 1's lowest\n";
    }
  }
  return os.str();
}

} // namespace rs::client
