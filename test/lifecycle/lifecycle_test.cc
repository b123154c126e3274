//===- test/lifecycle/lifecycle_test.cc - dynamic model control -----------===//
//
// The live repository on the CPU backend: a ModelRepository, a Scheduler whose RunFn runs
// the repository's current LoadedModel (as server/worker_service does), and a
// RepositoryWatcher whose polls the tests drive by hand (poll() is what the watcher thread
// calls every model_poll_seconds), so no test depends on timing.
//
//===----------------------------------------------------------------------===//
#include "bundle/safetensors.h"
#include "bundle_files.h"
#include "runtime/cpu_backend.h"
#include "runtime/model_repository.h"
#include "runtime/repository_watcher.h"
#include "scheduler/scheduler.h"
#include "server/model_batching.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <thread>

namespace rs {
namespace {

namespace fs = std::filesystem;
using runtime::RepositoryWatcher;
using runtime::WatcherChange;
using Action = WatcherChange::Action;

using lifecycle_test::irisInput;
using lifecycle_test::kFixtures;
using lifecycle_test::scaleWeights;
using lifecycle_test::TempRepo;

using server::batchingOf;

/// Repository + scheduler + watcher, wired like the worker in dynamic mode.
struct LiveRepo {
  runtime::ModelRepository repo;
  scheduler::Scheduler sched;
  RepositoryWatcher watcher;

  explicit LiveRepo(const fs::path &root)
      : repo(backend(), options()),
        sched(schedulerOptions(),
              [this](const std::string &model, int64_t batch_size,
                     std::vector<Tensor> inputs) -> Result<std::vector<Tensor>> {
                auto state = repo.state(model);
                if (!state || !state->model)
                  return notFound() << "model '" << model << "' was unloaded";
                return state->model->run(batch_size, std::move(inputs));
              }),
        watcher(root.string(), {}, 1.0, actions()) {
    EXPECT_TRUE(repo.loadRepository(root.string(), {}).isOk());
    for (const auto &s : repo.states())
      if (s.model)
        sched.addModel(s.name, batchingOf(*s.model));
    watcher.markCurrentApplied();
    sched.start();
  }

  static std::shared_ptr<runtime::Backend> backend() {
    auto b = runtime::createCpuBackend({1});
    EXPECT_TRUE(b.isOk());
    return std::shared_ptr<runtime::Backend>(std::move(b).value());
  }
  static runtime::ModelRepositoryOptions options() {
    runtime::ModelRepositoryOptions o;
    o.compile_settings = "xla_flags=[] autotune=true";
    o.server_build = "version=test";
    return o;
  }
  static scheduler::SchedulerOptions schedulerOptions() {
    scheduler::SchedulerOptions o;
    o.discipline = scheduler::Discipline::kFifo;
    // One request per dispatch, always at b1: b1 and b8 programs may round differently,
    // and the test tells old from new weights by exact output values.
    o.coalescing = false;
    return o;
  }
  RepositoryWatcher::Actions actions() {
    RepositoryWatcher::Actions a;
    a.load = [this](const std::string &name, const std::string &dir) -> Status {
      RS_RETURN_IF_ERROR(repo.loadModel(dir));
      sched.addModel(name, batchingOf(*repo.state(name)->model));
      return Status::ok();
    };
    a.unload = [this](const std::string &name) -> Status {
      sched.removeModel(name);
      repo.removeModel(name);
      return Status::ok();
    };
    a.rename = [this](const std::string &from, const std::string &to,
                      const std::string &dir) -> Status {
      RS_RETURN_IF_ERROR(repo.loadModel(dir));
      RS_RETURN_IF_ERROR(sched.renameModel(from, to));
      repo.removeModel(from);
      return Status::ok();
    };
    return a;
  }

  Result<std::vector<float>> infer(const std::string &model, const Tensor &input) {
    std::promise<Result<std::vector<Tensor>>> p;
    auto f = p.get_future();
    sched.submit(model, {input}, std::nullopt,
                 [&p](Result<std::vector<Tensor>> r) { p.set_value(std::move(r)); });
    auto r = f.get();
    if (!r.isOk())
      return r.status();
    const Tensor &out = (*r)[0];
    return std::vector<float>(out.dataAs<float>(), out.dataAs<float>() + out.numElements());
  }
};

TEST(Lifecycle, ReplacingWeightsUnderLoadFailsNothingAndNeverMixes) {
  TempRepo tmp;
  const fs::path dir = tmp.copyBundle("iris_mlp", "iris");
  LiveRepo live(tmp.root);
  const Tensor input = irisInput();
  auto old_out = live.infer("iris", input);
  ASSERT_TRUE(old_out.isOk()) << old_out.status().toString();

  std::atomic<bool> done{false};
  std::atomic<int64_t> failures{0}, ok{0};
  std::mutex mu;
  std::vector<std::vector<float>> seen;
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c)
    clients.emplace_back([&] {
      while (!done.load()) {
        auto r = live.infer("iris", input);
        if (!r.isOk()) {
          ++failures;
          continue;
        }
        ++ok;
        std::lock_guard<std::mutex> lock(mu);
        seen.push_back(std::move(r).value());
      }
    });
  while (ok.load() < 50)
    std::this_thread::yield();
  scaleWeights(dir, 2.0f);
  EXPECT_TRUE(live.watcher.poll().empty()); // first sight of the change: debounced
  auto changes = live.watcher.poll();       // the same again: reload
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].action, Action::kReload);
  const int64_t after_reload = ok.load();
  while (ok.load() < after_reload + 50)
    std::this_thread::yield();
  done = true;
  for (auto &t : clients)
    t.join();

  auto new_out = live.infer("iris", input);
  ASSERT_TRUE(new_out.isOk());
  ASSERT_NE(*new_out, *old_out);
  int64_t n_old = 0, n_new = 0;
  for (const auto &v : seen) {
    if (v == *old_out)
      ++n_old;
    else if (v == *new_out)
      ++n_new;
    else
      ADD_FAILURE() << "a response matches neither the old nor the new weights";
  }
  std::printf("reload under 8 clients: %lld ok (%lld old, %lld new), %lld failed\n",
              static_cast<long long>(ok.load()), static_cast<long long>(n_old),
              static_cast<long long>(n_new), static_cast<long long>(failures.load()));
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(n_old, 0);
  EXPECT_GT(n_new, 0);
}

TEST(Lifecycle, HalfCopiedBundleNeverLoadsUntilTwoPollsAgree) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "iris");
  LiveRepo live(tmp.root);
  const fs::path late = tmp.root / "late";
  fs::create_directories(late);
  // Files appear one per poll: every poll sees a change, so nothing is loaded.
  for (const char *f : {"manifest.yaml", "model.b1.mlir", "model.b8.mlir", "model.b32.mlir",
                        "weights.safetensors"}) {
    fs::copy_file(kFixtures / "iris_mlp" / f, late / f);
    EXPECT_TRUE(live.watcher.poll().empty()) << "after copying " << f;
    EXPECT_FALSE(live.repo.state("late").has_value()) << "after copying " << f;
  }
  auto changes = live.watcher.poll();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0], (WatcherChange{Action::kLoad, "late", "", late.string()}));
  auto state = live.repo.state("late");
  ASSERT_TRUE(state.has_value());
  EXPECT_TRUE(state->status.isOk()) << state->status.toString();
  auto out = live.infer("late", irisInput());
  auto ref = live.infer("iris", irisInput());
  ASSERT_TRUE(out.isOk());
  EXPECT_EQ(*out, *ref);
}

TEST(Lifecycle, RenamedDirectoryRenamesWithoutRecompiling) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "staging");
  LiveRepo live(tmp.root);
  const int64_t misses = live.repo.executableCacheMisses();
  fs::rename(tmp.root / "staging", tmp.root / "production");
  EXPECT_TRUE(live.watcher.poll().empty());
  auto changes = live.watcher.poll();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0], (WatcherChange{Action::kRename, "production", "staging",
                                       (tmp.root / "production").string()}));
  EXPECT_EQ(live.repo.executableCacheMisses(), misses); // every program from the cache
  EXPECT_FALSE(live.repo.state("staging").has_value());
  EXPECT_EQ(live.infer("staging", irisInput()).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(live.infer("production", irisInput()).isOk());
}

TEST(Lifecycle, RemovedBundleUnloads) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "a");
  tmp.copyBundle("iris_mlp", "b");
  LiveRepo live(tmp.root);
  fs::remove_all(tmp.root / "a");
  EXPECT_TRUE(live.watcher.poll().empty());
  auto changes = live.watcher.poll();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].action, Action::kUnload);
  EXPECT_EQ(changes[0].name, "a");
  EXPECT_FALSE(live.repo.state("a").has_value());
  EXPECT_EQ(live.infer("a", irisInput()).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(live.infer("b", irisInput()).isOk());
  EXPECT_TRUE(live.watcher.poll().empty()); // applied: nothing more to do
}

TEST(Watcher, SignatureCoversBundleFilesOnly) {
  TempRepo tmp;
  const fs::path dir = tmp.copyBundle("iris_mlp", "m");
  fs::create_directories(dir / ".cache");
  std::ofstream(dir / "notes.txt") << "x";
  std::ofstream(dir / "model.v1.x.mlir") << "x";
  fs::create_directories(tmp.root / ".hidden");
  auto scan = runtime::scanRepository(tmp.root.string(), {});
  ASSERT_EQ(scan.size(), 1u);
  std::vector<std::string> names;
  for (const auto &[f, sig] : scan.at("m").files)
    names.push_back(f);
  EXPECT_EQ(names, (std::vector<std::string>{"manifest.yaml", "model.b1.mlir", "model.b32.mlir",
                                             "model.b8.mlir", "weights.safetensors"}));
  EXPECT_TRUE(runtime::scanRepository(tmp.root.string(), {"other"}).empty());
  EXPECT_TRUE(runtime::scanRepository((tmp.root / "missing").string(), {}).empty());
}

// A bundle whose load failed is held as failed (the worker is not ready); once its directory
// is removed, the watcher unloads that name too, so readiness recovers without a restart.
TEST(Lifecycle, RemovedBrokenBundleIsForgotten) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "iris");
  LiveRepo live(tmp.root);
  const fs::path broken = tmp.root / "broken";
  fs::create_directories(broken);
  std::ofstream(broken / "manifest.yaml") << "x: [\n";
  EXPECT_TRUE(live.watcher.poll().empty()); // new: waits one poll
  EXPECT_TRUE(live.watcher.poll().empty()); // the load fails: nothing applied
  auto state = live.repo.state("broken");
  ASSERT_TRUE(state.has_value());
  EXPECT_FALSE(state->status.isOk());
  fs::remove_all(broken);
  EXPECT_TRUE(live.watcher.poll().empty()); // vanished: waits one poll
  auto changes = live.watcher.poll();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0], (WatcherChange{Action::kUnload, "broken", "", ""}));
  EXPECT_FALSE(live.repo.state("broken").has_value());
  EXPECT_TRUE(live.infer("iris", irisInput()).isOk());
  EXPECT_TRUE(live.watcher.poll().empty());
}

} // namespace
} // namespace rs
