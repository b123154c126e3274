//===- test/support/lifo_pool_test.cc - The LIFO thread pool ---------------===//
//
// Threads start only when every started one is busy; a task runs on the thread that became
// idle last; with every thread busy tasks wait in arrival order; join() runs what waits and
// drops what is posted after it.
//
//===----------------------------------------------------------------------===//
#include "support/lifo_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rs {
namespace {

/// Waits (up to 10 s) until `done` holds; false when it never did.
bool eventually(const std::function<bool()> &done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::yield();
  }
  return true;
}

/// A gate the tasks wait at until the test opens it.
class Gate {
public:
  void wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }
  void open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(LifoThreadPool, StartsNoThreadUntilATaskArrives) {
  LifoThreadPool pool(8, "t");
  EXPECT_EQ(pool.threadsStarted(), 0);
  EXPECT_EQ(pool.threadsIdle(), 0);
}

TEST(LifoThreadPool, TasksOneAfterAnotherRunOnOneThread) {
  LifoThreadPool pool(64, "t");
  std::vector<std::thread::id> ran(50);
  for (size_t i = 0; i < ran.size(); ++i) {
    std::atomic<bool> done{false};
    pool.post([&, i] {
      ran[i] = std::this_thread::get_id();
      done = true;
    });
    ASSERT_TRUE(eventually([&] { return done.load() && pool.threadsIdle() == 1; }));
  }
  EXPECT_EQ(pool.threadsStarted(), 1);
  for (const std::thread::id &id : ran)
    EXPECT_EQ(id, ran[0]);
}

TEST(LifoThreadPool, TheThreadIdleLastRunsTheNextTask) {
  LifoThreadPool pool(8, "t");
  Gate gates[3];
  std::thread::id ids[3];
  for (int i = 0; i < 3; ++i)
    pool.post([&, i] {
      ids[i] = std::this_thread::get_id();
      gates[i].wait();
    });
  ASSERT_TRUE(eventually([&] { return pool.threadsStarted() == 3; }));
  // Free them in the order 0, 2, 1: thread 1 idles last.
  for (int i : {0, 2, 1}) {
    const int idle = pool.threadsIdle();
    gates[i].open();
    ASSERT_TRUE(eventually([&] { return pool.threadsIdle() == idle + 1; }));
  }
  std::atomic<bool> done{false};
  std::thread::id next;
  pool.post([&] {
    next = std::this_thread::get_id();
    done = true;
  });
  ASSERT_TRUE(eventually([&] { return done.load(); }));
  EXPECT_EQ(next, ids[1]);
  EXPECT_EQ(pool.threadsStarted(), 3);
}

TEST(LifoThreadPool, BusyThreadsAtTheLimitMakeTasksWaitInOrder) {
  LifoThreadPool pool(2, "t");
  Gate gates[2];
  std::mutex mu;
  std::vector<int> order;
  for (Gate &g : gates)
    pool.post([&g] { g.wait(); });
  for (int i = 0; i < 4; ++i)
    pool.post([&, i] {
      std::lock_guard lock(mu);
      order.push_back(i);
    });
  EXPECT_EQ(pool.threadsStarted(), 2);
  EXPECT_EQ(pool.tasksWaiting(), 4u);
  // One thread frees up and takes the waiting tasks one by one, the other stays busy.
  gates[0].open();
  ASSERT_TRUE(eventually([&] { return pool.tasksWaiting() == 0 && pool.threadsIdle() == 1; }));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  }
  gates[1].open();
  ASSERT_TRUE(eventually([&] { return pool.threadsIdle() == 2; }));
  EXPECT_EQ(pool.threadsStarted(), 2);
}

TEST(LifoThreadPool, JoinRunsWaitingTasksAndDropsLaterOnes) {
  LifoThreadPool pool(1, "t");
  Gate gate;
  std::atomic<int> ran{0};
  pool.post([&] { gate.wait(); });
  for (int i = 0; i < 3; ++i)
    pool.post([&] { ++ran; });
  std::thread joiner([&] { pool.join(); });
  gate.open();
  joiner.join();
  EXPECT_EQ(ran.load(), 3);
  auto held = std::make_shared<int>(7);
  pool.post([&, held] { ++ran; });
  EXPECT_EQ(held.use_count(), 1); // the dropped task released what it held
  EXPECT_EQ(ran.load(), 3);
  pool.join(); // idempotent
}

} // namespace
} // namespace rs
