//===- support/lifo_pool.cc - A thread pool that wakes its most recently idle thread ===//
#include "support/lifo_pool.h"

#include <algorithm>
#include <system_error>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace rs {

LifoThreadPool::LifoThreadPool(int max_threads, std::string name)
    : max_threads_(std::max(1, max_threads)), name_(std::move(name)) {}

LifoThreadPool::~LifoThreadPool() { join(); }

void LifoThreadPool::post(std::function<void()> task) {
  std::unique_lock lock(mu_);
  if (stopping_)
    return;
  if (!idle_.empty()) {
    Worker *w = idle_.back();
    idle_.pop_back();
    w->task = std::move(task);
    w->wake.notify_one();
    return;
  }
  if (static_cast<int>(workers_.size()) < max_threads_) {
    auto w = std::make_unique<Worker>();
    Worker *self = w.get();
    self->task = std::move(task);
    try {
      // The new thread takes mu_ first thing, so it starts once this call returns.
      self->thread = std::thread([this, self] { run(self); });
    } catch (const std::system_error &) {
      // No thread to be had: the task waits for a running one, if there is any.
      if (workers_.empty())
        throw;
      waiting_.push_back(std::move(self->task));
      return;
    }
    workers_.push_back(std::move(w));
    return;
  }
  waiting_.push_back(std::move(task));
}

void LifoThreadPool::run(Worker *self) {
#if defined(__linux__)
  const std::string short_name = name_.substr(0, 15);
  pthread_setname_np(pthread_self(), short_name.c_str());
#endif
  std::unique_lock lock(mu_);
  for (;;) {
    if (!self->task) {
      if (!waiting_.empty()) {
        self->task = std::move(waiting_.front());
        waiting_.pop_front();
      } else if (stopping_) {
        return;
      } else {
        idle_.push_back(self);
        self->wake.wait(lock, [&] { return self->task || stopping_; });
        if (!self->task)
          return; // stopping: join() hands out no more tasks.
      }
    }
    std::function<void()> task = std::move(self->task);
    self->task = nullptr;
    lock.unlock();
    task();
    task = nullptr; // what the task holds is released before the lock is taken again
    lock.lock();
  }
}

void LifoThreadPool::join() {
  std::lock_guard join_lock(join_mu_);
  if (joined_)
    return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (Worker *w : idle_)
      w->wake.notify_one();
    idle_.clear();
  }
  // No thread is added once stopping_ is set, so workers_ is read without mu_ from here.
  for (auto &w : workers_)
    if (w->thread.joinable())
      w->thread.join();
  joined_ = true;
}

int LifoThreadPool::threadsStarted() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(workers_.size());
}

int LifoThreadPool::threadsIdle() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(idle_.size());
}

size_t LifoThreadPool::tasksWaiting() const {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

} // namespace rs
