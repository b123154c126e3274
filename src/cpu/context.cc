//===- cpu/context.cc - Thread pool of the CPU executor --------------------===//
#include "cpu/context.h"

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RS_CPU_RELAX() _mm_pause()
#else
#define RS_CPU_RELAX() std::this_thread::yield()
#endif

namespace rs::cpu {
namespace {
/// Set on the pool's own threads, and on a caller while it runs tiles: a parallelFor()
/// from inside a tile runs inline (it would otherwise wait for the job it is part of).
thread_local bool t_in_pool = false;
/// How long an idle worker spins before it sleeps: long enough to bridge the gap between
/// two kernels of one run, short enough not to burn a core between requests.
constexpr auto kSpinFor = std::chrono::microseconds(50);

/// Physical memory, lowered to the address-space and data limits when they are set.
int64_t defaultMemoryLimitBytes() {
  int64_t limit = std::numeric_limits<int64_t>::max();
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0 && pages <= std::numeric_limits<int64_t>::max() / page_size)
    limit = static_cast<int64_t>(pages) * page_size;
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit r{};
    if (getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY &&
        r.rlim_cur < static_cast<rlim_t>(limit))
      limit = static_cast<int64_t>(r.rlim_cur);
  }
  return std::max<int64_t>(limit, 1);
}
} // namespace

/// A fixed team of worker threads (OpenMP-style). A parallelFor() publishes a job by
/// setting `ticket` to (job id, next tile 0) and bumping `generation`; workers that spin see
/// it within a fraction of a microsecond, sleeping ones are woken through the condition
/// variable. Tiles are claimed by compare-and-swap on the ticket, so a worker that wakes late
/// can never claim a tile of a finished job; the caller returns when every tile is done, not
/// when every worker has looked (a descheduled worker never holds the caller up unless it
/// holds a tile). One job at a time (`call_mutex`); concurrent callers take turns per kernel.
struct CpuContext::Pool {
  explicit Pool(int workers) {
    threads.reserve(static_cast<size_t>(workers));
    for (int i = 0; i < workers; ++i)
      threads.emplace_back([this] { workerLoop(); });
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop.store(true);
    }
    cv.notify_all();
    for (std::thread &t : threads)
      t.join();
  }

  /// Claims and runs tiles of the current job until none are left.
  void work() {
    uint64_t t = ticket.load(std::memory_order_acquire);
    while (true) {
      const int64_t tile = static_cast<int64_t>(t & 0xFFFFFFFFu);
      if (tile >= num_tiles.load(std::memory_order_acquire))
        return;
      if (!ticket.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel,
                                        std::memory_order_acquire))
        continue; // t reloaded: another thread claimed it, or a new job began
      (*fn)(tile);
      done.fetch_add(1, std::memory_order_release);
      t = ticket.load(std::memory_order_acquire);
    }
  }

  void run(int64_t tiles, const TileFn &f) {
    std::lock_guard<std::mutex> call(call_mutex);
    ++job;
    // First make nothing claimable (a worker holding the previous ticket fails its CAS; one
    // reading this one sees tile 2^32 - 1, past any job), then write the job, then open it.
    ticket.store((job << 32) | 0xFFFFFFFFu, std::memory_order_seq_cst);
    fn = &f;
    done.store(0, std::memory_order_relaxed);
    num_tiles.store(tiles, std::memory_order_relaxed);
    ticket.store(job << 32, std::memory_order_release);
    generation.fetch_add(1); // seq_cst: pairs with a worker's `sleeping` increment
    if (sleeping.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex);
      cv.notify_all();
    }
    t_in_pool = true; // a parallelFor() from a tile this thread runs goes inline
    work();
    t_in_pool = false;
    for (int spins = 0; done.load(std::memory_order_acquire) != tiles; ++spins)
      if (spins < 4096)
        RS_CPU_RELAX();
      else
        std::this_thread::yield();
    // No worker can claim a tile now (every tile is claimed); keep `num_tiles` at its value
    // so a late worker's claim attempt fails until the next job replaces the ticket.
  }

  void workerLoop() {
    std::fesetenv(FE_DFL_ENV);
    t_in_pool = true;
    uint64_t seen = 0;
    while (true) {
      uint64_t g = generation.load(std::memory_order_acquire);
      const auto spin_until = std::chrono::steady_clock::now() + kSpinFor;
      for (int spins = 0; g == seen; g = generation.load(std::memory_order_acquire)) {
        if (stop.load(std::memory_order_relaxed))
          return;
        if (++spins % 256 != 0 || std::chrono::steady_clock::now() < spin_until) {
          RS_CPU_RELAX();
          continue;
        }
        std::unique_lock<std::mutex> lock(mutex);
        sleeping.fetch_add(1);
        cv.wait(lock, [&] { return stop.load() || generation.load() != seen; });
        sleeping.fetch_sub(1);
        if (stop.load())
          return;
      }
      seen = g;
      work();
    }
  }

  std::vector<std::thread> threads;
  std::mutex call_mutex; // one job at a time
  std::mutex mutex;      // with cv: sleeping workers
  std::condition_variable cv;
  std::atomic<uint64_t> generation{0};
  std::atomic<int> sleeping{0};
  std::atomic<bool> stop{false};
  // The current job. `ticket` holds (job id << 32 | next tile); fn and num_tiles are written
  // before the ticket that publishes them and stay until every tile of the job is done.
  uint64_t job = 0; // under call_mutex
  std::atomic<uint64_t> ticket{0};
  std::atomic<int64_t> num_tiles{0};
  std::atomic<int64_t> done{0};
  const TileFn *fn = nullptr;
};

CpuContext::CpuContext(int num_threads, int64_t memory_limit_bytes)
    : num_threads_(num_threads), memory_limit_bytes_(memory_limit_bytes) {
  // The calling thread works too, so the pool holds one thread fewer.
  if (num_threads_ > 1)
    pool_ = std::make_unique<Pool>(num_threads_ - 1);
}

CpuContext::~CpuContext() = default;

void CpuContext::parallelFor(int64_t num_tiles, TileFn fn) const {
  if (num_tiles <= 0)
    return;
  if (!pool_ || num_tiles == 1 || t_in_pool || num_tiles >= (int64_t{1} << 32) - 1) {
    for (int64_t t = 0; t < num_tiles; ++t)
      fn(t);
    return;
  }
  pool_->run(num_tiles, fn);
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
  if (options.memory_limit_bytes < 0)
    return invalidArgument() << "cpu options: memory_limit_bytes " << options.memory_limit_bytes
                             << " is negative";
  int threads = options.num_threads;
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  // Pool threads inherit the creating thread's floating-point environment: the default.
  DefaultFpEnvironment fp;
  const int64_t limit =
      options.memory_limit_bytes > 0 ? options.memory_limit_bytes : defaultMemoryLimitBytes();
  return std::shared_ptr<CpuContext>(new CpuContext(threads, limit));
}

} // namespace rs::cpu
