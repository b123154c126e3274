//===- test/server/meta_gate_test.cc - At most N meta runs at once ----------===//
//
// server/meta_gate.h: slots handed out at once while free, then in arrival order as they
// are released; a waiter whose deadline passes is shed with DeadlineExceeded. Every wait
// is on a future or the gate's own counters, never a sleep.
//
//===----------------------------------------------------------------------===//
#include "server/meta_gate.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <mutex>
#include <vector>

namespace rs::server {
namespace {

/// What the acquire() callbacks received, in order.
struct Record {
  std::mutex mu;
  std::vector<std::pair<int, StatusCode>> started;
  MetaGate::Start startOf(int id) {
    return [this, id](Status s) {
      std::lock_guard<std::mutex> lock(mu);
      started.emplace_back(id, s.code());
    };
  }
  std::vector<std::pair<int, StatusCode>> get() {
    std::lock_guard<std::mutex> lock(mu);
    return started;
  }
};

TEST(MetaGate, HandsOutCapacitySlotsThenQueuesInArrivalOrder) {
  MetaGate gate(2);
  Record r;
  for (int id = 1; id <= 5; ++id)
    gate.acquire(std::nullopt, r.startOf(id));
  using Got = std::vector<std::pair<int, StatusCode>>;
  EXPECT_EQ(r.get(), (Got{{1, StatusCode::kOk}, {2, StatusCode::kOk}}));
  EXPECT_EQ(gate.running(), 2);
  EXPECT_EQ(gate.waiting(), 3);
  gate.release(); // the slot of 1 goes to 3, on this thread
  EXPECT_EQ(r.get(), (Got{{1, StatusCode::kOk}, {2, StatusCode::kOk}, {3, StatusCode::kOk}}));
  EXPECT_EQ(gate.running(), 2);
  EXPECT_EQ(gate.waiting(), 2);
  gate.release();
  gate.release();
  EXPECT_EQ(gate.running(), 2);
  EXPECT_EQ(gate.waiting(), 0);
  gate.release();
  gate.release();
  EXPECT_EQ(gate.running(), 0);
  EXPECT_EQ(r.get().size(), 5u);
  EXPECT_EQ(r.get().back(), (std::pair<int, StatusCode>{5, StatusCode::kOk}));
}

TEST(MetaGate, AWaiterPastItsDeadlineIsShed) {
  MetaGate gate(1);
  Record r;
  gate.acquire(std::nullopt, r.startOf(1));
  // Already past: answered at once, never queued.
  gate.acquire(protocol::Clock::now() - std::chrono::seconds(1), r.startOf(2));
  EXPECT_EQ(gate.waiting(), 0);
  // Soon past: the timer thread answers it while slot 1 is still held.
  std::promise<Status> shed;
  gate.acquire(protocol::Clock::now() + std::chrono::milliseconds(20),
               [&shed](Status s) { shed.set_value(s); });
  EXPECT_EQ(gate.waiting(), 1);
  const Status s = shed.get_future().get();
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(s.message(), "deadline exceeded while it waited for one of the meta model's 1 runs "
                         "at once (hooks.meta_concurrency)");
  EXPECT_EQ(gate.waiting(), 0);
  EXPECT_EQ(gate.running(), 1);
  using Got = std::vector<std::pair<int, StatusCode>>;
  EXPECT_EQ(r.get(), (Got{{1, StatusCode::kOk}, {2, StatusCode::kDeadlineExceeded}}));
  gate.release();
  EXPECT_EQ(gate.running(), 0);
}

TEST(MetaGate, DestroyingTheGateAnswersItsWaitersUnavailable) {
  Record r;
  {
    MetaGate gate(1);
    gate.acquire(std::nullopt, r.startOf(1));
    gate.acquire(std::nullopt, r.startOf(2));
  }
  using Got = std::vector<std::pair<int, StatusCode>>;
  EXPECT_EQ(r.get(), (Got{{1, StatusCode::kOk}, {2, StatusCode::kUnavailable}}));
}

} // namespace
} // namespace rs::server
