//===- test/hardening/cancellation_test.cc - Clients that go away while queued ==//
//
// The scenario on a real worker: while the device is held by a blocked batch
// (WorkerOptions::before_dispatch), 30 HTTP requests whose connections are then reset and
// 30 gRPC calls the client then cancels wait in the queue. Released, none of them runs;
// each is counted under status CANCELLED and logged.
//
//===----------------------------------------------------------------------===//
#include "log_capture.h"
#include "worker_util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rs::testing {
namespace {

using inference::ModelInferRequest;
using inference::ModelInferResponse;

/// WorkerOptions::before_dispatch that, once armed, holds the next dispatch until
/// released, and counts every dispatch.
struct DeviceHold {
  std::mutex mu;
  std::condition_variable cv;
  bool armed = false, held = false, released = false;
  int dispatches = 0;

  std::function<void(const std::string &)> hook() {
    return [this](const std::string &) {
      std::unique_lock<std::mutex> lock(mu);
      ++dispatches;
      if (!armed || held)
        return;
      held = true;
      cv.notify_all();
      cv.wait(lock, [&] { return released; });
    };
  }
  void arm() {
    std::lock_guard<std::mutex> lock(mu);
    armed = true;
  }
  void waitHeld() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return held; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
    cv.notify_all();
  }
  int count() {
    std::lock_guard<std::mutex> lock(mu);
    return dispatches;
  }
};

/// Polls `done` (state another thread changes: the front-ends' sockets and gRPC's queue)
/// every millisecond for up to 30 s; whether it became true.
bool eventually(const std::function<bool()> &done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

/// A connected TCP socket to 127.0.0.1:`port` that has sent `bytes`; -1 on failure.
int sendRaw(int port, const std::string &bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
      ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(bytes.size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// Closes `fd` with a reset (SO_LINGER 0) instead of an orderly FIN.
void resetConnection(int fd) {
  linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  ::close(fd);
}

TEST(Cancellation, QueuedRequestsOfResetConnectionsAndCancelledCallsNeverRun) {
  DeviceHold hold;
  WorkerSetup o;
  o.global_yaml = "  scheduler: {discipline: fifo}\n"; // no warmup dispatches
  o.before_dispatch = hold.hook();
  auto w = startHardeningWorker(kIrisRepo, o);
  ASSERT_TRUE(w);

  // The blocker: its batch holds the device until released.
  hold.arm();
  int blocker_status = 0;
  std::thread blocker([&] {
    auto res = w->http()->Post("/v2/models/iris_mlp/infer", irisJson(irisRow(), "blocker"),
                               "application/json");
    blocker_status = res ? res->status : -1;
  });
  hold.waitHeld();

  const std::string body = irisJson(irisRow(), "reset");
  const std::string http_request = "POST /v2/models/iris_mlp/infer HTTP/1.1\r\nHost: t\r\n"
                                   "Content-Type: application/json\r\nContent-Length: " +
                                   std::to_string(body.size()) + "\r\n\r\n" + body;
  std::vector<int> sockets;
  for (int i = 0; i < 30; ++i) {
    sockets.push_back(sendRaw(w->worker().httpPort(), http_request));
    ASSERT_GE(sockets.back(), 0);
  }
  grpc::CompletionQueue cq;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<ModelInferResponse> replies(30);
  std::vector<grpc::Status> statuses(30);
  std::vector<std::unique_ptr<grpc::ClientAsyncResponseReader<ModelInferResponse>>> calls;
  for (int i = 0; i < 30; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    calls.push_back(
        w->stub().AsyncModelInfer(contexts.back().get(), irisRequest(irisRow(), "cancel"), &cq));
    calls.back()->Finish(&replies[i], &statuses[i], reinterpret_cast<void *>(intptr_t{i}));
  }
  auto queued = [&] {
    std::optional<scheduler::ModelSchedStats> st = w->service().schedulerStats("iris_mlp");
    return st ? st->queue_depth : -1;
  };
  ASSERT_TRUE(eventually([&] { return queued() == 60; })) << queued();

  for (int fd : sockets)
    resetConnection(fd);
  for (auto &ctx : contexts)
    ctx->TryCancel();
  for (int i = 0; i < 30; ++i) {
    void *tag = nullptr;
    bool ok = false;
    ASSERT_TRUE(cq.Next(&tag, &ok));
    EXPECT_EQ(statuses[reinterpret_cast<intptr_t>(tag)].error_code(), grpc::StatusCode::CANCELLED);
  }
  // The front-ends raise each request's flag as they see the reset or the cancellation.
  auto waiting_cancelled = [&] {
    return w->service().schedulerStats("iris_mlp")->queued_cancelled;
  };
  ASSERT_TRUE(eventually([&] { return waiting_cancelled() == 60; })) << waiting_cancelled();

  LogCapture capture;
  hold.release();
  blocker.join();
  EXPECT_EQ(blocker_status, 200);
  const std::string cancelled =
      "worker_requests_total{" + kIrisLabels + ",status=\"CANCELLED\"} 60";
  ASSERT_TRUE(eventually([&] { return hasSample(w->scrape(), cancelled); })) << w->scrape();
  std::optional<scheduler::ModelSchedStats> st = w->service().schedulerStats("iris_mlp");
  EXPECT_EQ(st->requests_cancelled, 60);
  EXPECT_EQ(st->requests_served, 1); // the blocker alone ran
  EXPECT_EQ(st->dispatch_count, 1);
  EXPECT_EQ(st->queue_depth, 0);
  EXPECT_EQ(hold.count(), 1);
  const std::string text = w->scrape();
  EXPECT_TRUE(hasSample(text, "worker_requests_total{" + kIrisLabels + ",status=\"OK\"} 1"))
      << text;
  // Each cancelled request has its log line (the log's burst is 50 lines; the rest are
  // counted in the next line's suppressed=N).
  // Each cancelled request is logged, within the request log's rate: a burst of 50 lines,
  // then 20 per second (the rest are counted in the next line's suppressed=N).
  const std::vector<std::string> lines = capture.lines("code=CANCELLED");
  EXPECT_GE(lines.size(), 50u);
  EXPECT_LE(lines.size(), 60u);
  for (const std::string &line : lines)
    EXPECT_NE(line.find("the client cancelled the request before it ran\""), std::string::npos)
        << line;
  cq.Shutdown();
}

} // namespace
} // namespace rs::testing
