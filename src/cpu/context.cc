//===- cpu/context.cc - Thread pool of the CPU executor --------------------===//
#include "cpu/context.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/ThreadPool>

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <cstring>
#include <thread>

namespace rs::cpu {

struct CpuContext::Pool {
  explicit Pool(int threads) : pool(threads) {}
  Eigen::ThreadPool pool;
};

CpuContext::CpuContext(int num_threads) : num_threads_(num_threads) {
  // The calling thread works too, so the pool holds one thread fewer.
  if (num_threads_ > 1)
    pool_ = std::make_unique<Pool>(num_threads_ - 1);
}

CpuContext::~CpuContext() = default;

void CpuContext::parallelFor(int64_t num_tiles, TileFn fn) const {
  if (num_tiles <= 0)
    return;
  if (!pool_ || num_tiles == 1 || pool_->pool.CurrentThreadId() >= 0) {
    for (int64_t t = 0; t < num_tiles; ++t)
      fn(t);
    return;
  }
  const int64_t helpers = std::min<int64_t>(num_threads_, num_tiles) - 1;
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t t = next.fetch_add(1, std::memory_order_relaxed); t < num_tiles;
         t = next.fetch_add(1, std::memory_order_relaxed))
      fn(t);
  };
  Eigen::Barrier done(static_cast<unsigned>(helpers));
  for (int64_t h = 0; h < helpers; ++h)
    pool_->pool.Schedule([&] {
      work();
      done.Notify();
    });
  work();
  done.Wait();
}

static_assert(sizeof(std::fenv_t) <= 64, "DefaultFpEnvironment::saved_ is too small");

DefaultFpEnvironment::DefaultFpEnvironment() {
  std::fenv_t env;
  std::fegetenv(&env);
  std::memcpy(saved_, &env, sizeof(env));
  std::fesetenv(FE_DFL_ENV);
}

DefaultFpEnvironment::~DefaultFpEnvironment() {
  std::fenv_t env;
  std::memcpy(&env, saved_, sizeof(env));
  std::fesetenv(&env);
}

Result<std::shared_ptr<CpuContext>> createCpuContext(const CpuOptions &options) {
  if (options.num_threads < 0 || options.num_threads > 1024)
    return invalidArgument() << "cpu options: num_threads " << options.num_threads
                             << " not in [0, 1024]";
  int threads = options.num_threads;
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  // Pool threads inherit the creating thread's floating-point environment: the default.
  DefaultFpEnvironment fp;
  return std::shared_ptr<CpuContext>(new CpuContext(threads));
}

} // namespace rs::cpu
