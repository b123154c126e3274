//===- support/lifo_pool.h - A thread pool that wakes its most recently idle thread ===//
//
// A pool of up to `max_threads` threads for tasks that may block (an HTTP handler holds its
// thread until the inference it asked for is answered). Threads start on demand, when a task
// arrives and every started thread is busy, and a task goes to the thread that became idle
// last (a stack, not a queue). So a server that needs 10 threads at its busiest runs its
// tasks on those 10, however large the pool's limit:
//   - idle capacity costs nothing: a thread that never ran has no stack pages touched and
//     no allocator state;
//   - memory stays flat under a steady load: each thread that has run keeps its own malloc
//     caches (glibc's tcache holds up to 7 freed chunks per size class per thread), so a
//     FIFO pool that spreads tasks over all its threads makes the process's resident memory
//     creep upwards for as long as new threads take their first turns;
//   - the thread that runs a task is the one whose stack and caches are warm.
// With every thread busy, tasks wait in arrival order and run as threads free up.
//
// Thread safety: post() and the accessors may be called from any thread, join() from any
// thread but one of the pool's own.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rs {

class LifoThreadPool {
public:
  /// A pool of at most `max_threads` threads (at least 1), none started yet. `name` names
  /// the threads for `top -H` and debuggers (Linux keeps the first 15 bytes).
  LifoThreadPool(int max_threads, std::string name);
  /// join().
  ~LifoThreadPool();
  LifoThreadPool(const LifoThreadPool &) = delete;
  LifoThreadPool &operator=(const LifoThreadPool &) = delete;

  /// Runs `task` on the most recently idle thread, on a new thread when none is idle and
  /// fewer than max_threads run, or else once a thread frees up (tasks in arrival order).
  /// A task posted after join() began is dropped (destroyed without running). Throws
  /// std::system_error when no thread runs and none can be started.
  void post(std::function<void()> task);

  /// Runs every task already posted, then stops and joins the threads. Idempotent.
  void join();

  /// Threads started so far (never more than max_threads).
  int threadsStarted() const;
  /// Started threads waiting for a task.
  int threadsIdle() const;
  /// Tasks waiting for a thread.
  size_t tasksWaiting() const;

private:
  struct Worker {
    std::condition_variable wake;
    std::function<void()> task; // GUARDED_BY(mu_)
    std::thread thread;
  };

  void run(Worker *self);

  const int max_threads_;
  const std::string name_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Worker>> workers_; // GUARDED_BY(mu_)
  std::vector<Worker *> idle_;                   // GUARDED_BY(mu_); back() idled last
  std::deque<std::function<void()>> waiting_;    // GUARDED_BY(mu_)
  bool stopping_ = false;                        // GUARDED_BY(mu_)
  bool joined_ = false;                          // GUARDED_BY(join_mu_)
  std::mutex join_mu_;
};

} // namespace rs
