//===- client/load_client.cc - One loadgen client thread ------------------===//
//
// The connections of a client, its loop over random request kinds and payloads, sending a
// request over gRPC or HTTP (with the one resend a closed connection or a shutting-down
// server calls for), and recording each answer in the run's counts and latencies.
//
//===----------------------------------------------------------------------===//
#include "client/load_generator_impl.h"

#include "client/grpc_channel.h"
#include "client/tensor_compare.h"
#include "protocol/http_codec.h"
#include "protocol/status_mapping.h"

namespace rs::client::loadgen {

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

ClientThread::~ClientThread() {
  teardownShm();
  if (cq_) {
    // Every call has ended (callModelInfer waits for its own), so the queue drains at once.
    cq_->Shutdown();
    void *tag = nullptr;
    bool ok = false;
    while (cq_->Next(&tag, &ok)) {
    }
  }
}

Status ClientThread::setup() {
  if (run_.use_grpc)
    stub_ = inference::GRPCInferenceService::NewStub(makeLoadChannel(run_.grpc_hp));
  if (run_.use_grpc && run_.options.busy_poll)
    cq_ = std::make_unique<grpc::CompletionQueue>();
  if (run_.use_http)
    http_ = makeHttp(run_.http_hp, run_.options.timeout_ms);
  if (run_.options.shared_memory)
    return setupShm();
  return Status::ok();
}

void ClientThread::loop() {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  while (!run_.stop.load() && !(run_.options.cancel && run_.options.cancel->load())) {
    if (run_.options.requests > 0 && run_.issued.fetch_add(1) >= run_.options.requests)
      break;
    if (run_.options.duration_s > 0 &&
        std::chrono::duration<double>(Clock::now() - run_.start).count() >= run_.options.duration_s)
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

void ClientThread::one(const KindSpec &kind, size_t p) {
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

const WireRequest &ClientThread::wireRequest(const KindSpec &kind, size_t p) {
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

Answer ClientThread::sendGrpc(const KindSpec &kind, const WireRequest &req) {
  Answer a;
  grpc::ClientContext ctx;
  if (run_.options.timeout_ms > 0)
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(run_.options.timeout_ms));
  inference::ModelInferResponse resp;
  grpc::Status s = callModelInfer(ctx, req.grpc, resp);
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
    s = callModelInfer(again, req.grpc, resp);
  }
  a.code = static_cast<StatusCode>(s.error_code());
  a.message = s.error_message();
  if (a.code == StatusCode::kCancelled && refusesConnections(run_.grpc_hp)) {
    // Cancelled again, and nothing listens on the server's port: it exited while the call was
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
  if (!outputCountMatches(static_cast<size_t>(resp.outputs_size()), a))
    return a;
  for (const protocol::TensorSpec &spec : run_.model.outputs) {
    std::string bytes;
    bool found = false;
    for (int i = 0; i < resp.outputs_size(); ++i)
      if (resp.outputs(i).name() == spec.name && i < resp.raw_output_contents_size()) {
        bytes.swap(*resp.mutable_raw_output_contents(i)); // taken, not copied
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

grpc::Status ClientThread::callModelInfer(grpc::ClientContext &ctx,
                                          const inference::ModelInferRequest &req,
                                          inference::ModelInferResponse &resp) {
  if (!cq_)
    return stub_->ModelInfer(&ctx, req, &resp);
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<inference::ModelInferResponse>> call =
      stub_->AsyncModelInfer(&ctx, req, cq_.get());
  call->Finish(&resp, &status, this);
  // A zero deadline makes every AsyncNext poll once and return: the thread never sleeps.
  const gpr_timespec now = gpr_time_0(GPR_CLOCK_MONOTONIC);
  void *tag = nullptr;
  bool ok = false;
  for (;;) {
    const grpc::CompletionQueue::NextStatus next = cq_->AsyncNext(&tag, &ok, now);
    if (next == grpc::CompletionQueue::GOT_EVENT && tag == this)
      return status;
    if (next == grpc::CompletionQueue::SHUTDOWN)
      return grpc::Status(grpc::StatusCode::INTERNAL, "loadgen: completion queue shut down");
  }
}

bool ClientThread::outputCountMatches(size_t got, Answer &a) const {
  if (got == run_.model.outputs.size())
    return true;
  a.code = StatusCode::kInternal;
  a.message = "reply has " + std::to_string(got) + " outputs for " +
              std::to_string(run_.model.outputs.size()) + " requested";
  return false;
}

bool ClientThread::refusesConnections(const HostPort &hp) {
  std::unique_ptr<httplib::Client> c = makeHttp(hp, 1000);
  httplib::Result r = c->Get("/v2/health/live");
  return !r && r.error() == httplib::Error::Connection;
}

Answer ClientThread::sendHttp(const KindSpec &kind, const WireRequest &req) {
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
    a.transport_lost = e != httplib::Error::Connection && e != httplib::Error::ConnectionTimeout &&
                       e != httplib::Error::Write;
    a.message = "http: " + httplib::to_string(r.error());
    if (a.transport_lost && refusesConnections(run_.http_hp)) {
      // The connection was reset with no reply and nothing listens on the port: the server
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
  if (!outputCountMatches(resp->outputs.size(), a))
    return a;
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

void ClientThread::record(const KindSpec &kind, size_t p, const Answer &a, double ms) {
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
        if (!sameWithin(a.outputs[o], (*ref)[o], run_.model.outputs[o].dtype, run_.options.rtol)) {
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

} // namespace rs::client::loadgen
