//===- frontend/grpc_call_queue.cc - The gRPC front-end's completion queue -------===//
//
// GrpcCallQueue's polling threads and its shutdown (frontend/grpc_call_queue.h), and the
// error text of an oversized request message.
//
//===----------------------------------------------------------------------===//
#include "frontend/grpc_call_queue.h"

namespace rs::frontend {

std::string oversizeMessage(size_t bytes, int64_t limit) {
  return "request message of " + std::to_string(bytes) +
         " bytes exceeds grpc.max_recv_msg_bytes (" + std::to_string(limit) + ")";
}

void GrpcCallQueue::startThreads(int n, std::chrono::microseconds spin) {
  for (int i = 0; i < n; ++i)
    threads_.emplace_back([this, spin] {
      void *tag = nullptr;
      bool ok = false;
      auto last = std::chrono::steady_clock::now();
      while (true) {
        if (spin.count() > 0) {
          const auto st = cq_->AsyncNext(&tag, &ok, gpr_inf_past(GPR_CLOCK_MONOTONIC));
          if (st == grpc::CompletionQueue::SHUTDOWN)
            break;
          if (st == grpc::CompletionQueue::GOT_EVENT) {
            static_cast<CallStep *>(tag)->proceed(ok);
            last = std::chrono::steady_clock::now();
            continue;
          }
          if (std::chrono::steady_clock::now() - last < spin)
            continue;
        }
        if (!cq_->Next(&tag, &ok))
          break;
        static_cast<CallStep *>(tag)->proceed(ok);
        last = std::chrono::steady_clock::now();
      }
    });
}

void GrpcCallQueue::close() {
  cq_->Shutdown();
  if (threads_.empty()) {
    void *tag = nullptr;
    bool ok = false;
    while (cq_->Next(&tag, &ok))
      static_cast<CallStep *>(tag)->proceed(false);
  }
  for (std::thread &t : threads_)
    t.join();
  threads_.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  retired_.clear();
}

} // namespace rs::frontend
