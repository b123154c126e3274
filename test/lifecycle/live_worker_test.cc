//===- test/lifecycle/live_worker_test.cc - model_control_mode dynamic, end to end ===//
//
// A real worker (server::Worker, gRPC on a free loopback port) under `model_control_mode:
// dynamic` polling a temporary repository every 0.1 s, while client threads send
// requests: a weight reload under load, a rename, a bundle copied over seconds, a removal.
// Old and new weights are told apart by exact output values (coalescing off, so every
// request runs alone at batch size 1).
//
//===----------------------------------------------------------------------===//
#include "bundle_files.h"
#include "client/load_generator.h"
#include "live_worker.h"
#include "server/model_metadata.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

namespace rs {
namespace {

using namespace lifecycle_test;

const char *kDynamic = "  model_control_mode: dynamic\n"
                       "  model_poll_seconds: 0.1\n"
                       "  scheduler: {coalescing: false, discipline: fifo}\n";

/// The SHA-256 of `name`'s weights as loaded now ("" when not loaded).
std::string loadedWeightsSha(server::Worker &w, const std::string &name) {
  auto s = w.repository().state(name);
  if (!s || !s->model)
    return "";
  auto it = s->model->file_sha256.find("weights.safetensors");
  return it == s->model->file_sha256.end() ? "" : it->second;
}

TEST(LiveWorker, ReplacingWeightsUnderLoadFromEightClientsFailsNothingAndNeverMixes) {
  TempRepo tmp;
  const fs::path dir = tmp.copyBundle("iris_mlp", "iris");
  tmp.copyBundle("iris_mlp", "other"); // serves throughout
  auto live = LiveWorker::start(tmp.root.string(), kDynamic);
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;
  const Tensor input = irisInput();
  auto old_out = w.infer("iris", input);
  ASSERT_TRUE(old_out.isOk()) << old_out.status().toString();
  const std::string old_sha = loadedWeightsSha(*w.worker, "iris");

  std::atomic<bool> done{false};
  std::atomic<int64_t> failures{0}, ok{0}, other_ok{0};
  std::mutex mu;
  std::vector<std::vector<float>> seen;
  std::vector<std::string> errors;
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c)
    clients.emplace_back([&, c] {
      const std::string model = c == 7 ? "other" : "iris"; // one client on the other model
      while (!done.load()) {
        auto r = w.infer(model, input);
        std::lock_guard<std::mutex> lock(mu);
        if (!r.isOk()) {
          ++failures;
          errors.push_back(r.status().toString());
          continue;
        }
        if (model == "other") {
          ++other_ok;
          continue;
        }
        ++ok;
        seen.push_back(std::move(r).value());
      }
    });
  ASSERT_TRUE(waitUntil([&] { return ok.load() >= 50; }));
  scaleWeights(dir, 2.0f);
  // The watcher sees the change, debounces it for one poll and reloads.
  ASSERT_TRUE(waitUntil([&] {
    const std::string sha = loadedWeightsSha(*w.worker, "iris");
    return !sha.empty() && sha != old_sha;
  }));
  const int64_t after_reload = ok.load();
  ASSERT_TRUE(waitUntil([&] { return ok.load() >= after_reload + 50; }));
  done = true;
  for (auto &t : clients)
    t.join();

  auto new_out = w.infer("iris", input);
  ASSERT_TRUE(new_out.isOk()) << new_out.status().toString();
  ASSERT_NE(*new_out, *old_out);
  int64_t n_old = 0, n_new = 0, mixed = 0;
  for (const auto &v : seen) {
    if (v == *old_out)
      ++n_old;
    else if (v == *new_out)
      ++n_new;
    else
      ++mixed;
  }
  std::printf("reload under 8 clients (7 on iris, 1 on other): %lld ok (%lld old, %lld new, "
              "%lld neither), other model %lld ok, %lld failed\n",
              static_cast<long long>(ok.load()), static_cast<long long>(n_old),
              static_cast<long long>(n_new), static_cast<long long>(mixed),
              static_cast<long long>(other_ok.load()), static_cast<long long>(failures.load()));
  EXPECT_EQ(failures.load(), 0) << (errors.empty() ? "" : errors.front());
  EXPECT_EQ(mixed, 0);
  EXPECT_GT(n_old, 0);
  EXPECT_GE(n_new, 50);
  EXPECT_GT(other_ok.load(), 0);
  // The reload compiled nothing: the programs did not change, so the cache served them.
  EXPECT_EQ(w.worker->repository().executableCacheMisses(), 6); // 3 programs x 2 models
}

TEST(LiveWorker, RenamedDirectoryRenamesTheModelWithoutRecompiling) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "staging");
  auto live = LiveWorker::start(tmp.root.string(), kDynamic);
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;
  auto before = w.infer("staging", irisInput());
  ASSERT_TRUE(before.isOk()) << before.status().toString();
  runtime::ModelRepository &repo = w.worker->repository();
  const int64_t misses = repo.executableCacheMisses();
  const int64_t hits = repo.executableCacheHits();
  EXPECT_EQ(misses, 3); // b1, b8, b32 compiled at startup
  std::shared_ptr<const runtime::LoadedModel> old_model = repo.state("staging")->model;

  fs::rename(tmp.root / "staging", tmp.root / "production");
  ASSERT_TRUE(waitUntil([&] { return repo.state("production").has_value(); }));
  EXPECT_FALSE(repo.state("staging").has_value());
  // Neither compiled nor loaded from the cache: the same executables, renamed in place.
  EXPECT_EQ(repo.executableCacheMisses(), misses);
  EXPECT_EQ(repo.executableCacheHits(), hits);
  std::shared_ptr<const runtime::LoadedModel> renamed = repo.state("production")->model;
  ASSERT_NE(renamed, nullptr);
  EXPECT_EQ(renamed->dir, (tmp.root / "production").string());
  EXPECT_EQ(server::modelMetadataOf(*renamed).name, "production");
  for (const auto &[key, exe] : old_model->programs)
    EXPECT_EQ(renamed->programs.at(key).get(), exe.get()) << "batch size " << key.batch_size;

  auto after = w.infer("production", irisInput());
  ASSERT_TRUE(after.isOk()) << after.status().toString();
  EXPECT_EQ(*after, *before);
  EXPECT_EQ(w.infer("staging", irisInput()).status().code(), StatusCode::kNotFound);
  // /metrics lists the new name only, and its executable cache counters did not move.
  httplib::Client metrics("127.0.0.1", w.worker->metricsPort());
  auto res = metrics.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body.find("model=\"staging\""), std::string::npos);
  EXPECT_NE(
      res->body.find("worker_dispatch_total{gpu=\"\",worker=\"worker0\",model=\"production\"} 1"),
      std::string::npos);
  EXPECT_EQ(client::scrapeValue(res->body, "worker_executable_cache_misses_total"), 3.0);
  EXPECT_EQ(client::scrapeValue(res->body, "worker_executable_cache_hits_total"), 0.0);
}

TEST(LiveWorker, BundleCopiedOverSecondsNeverLoadsBroken) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "iris");
  // The test polls the repository itself (Worker::pollRepositories), after each step of the
  // copy; the watcher's own thread never polls during the test.
  auto live = LiveWorker::start(tmp.root.string(), "  model_control_mode: dynamic\n"
                                                   "  model_poll_seconds: 86400\n"
                                                   "  scheduler: {coalescing: false, "
                                                   "discipline: fifo}\n");
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;
  auto reference = w.infer("iris", irisInput());
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();

  // A client asks for the model being copied the whole time.
  std::atomic<bool> copied{false}, stop{false};
  std::atomic<int64_t> ok_before_copied{0}, wrong{0}, ok_after{0}, not_found{0}, unavailable{0},
      other_errors{0};
  std::thread checker([&] {
    while (!stop.load()) {
      const bool complete = copied.load();
      auto r = w.infer("late", irisInput());
      if (r.isOk()) {
        if (*r != *reference)
          ++wrong;
        ++(complete ? ok_after : ok_before_copied);
      } else if (r.status().code() == StatusCode::kNotFound) {
        ++not_found;
      } else if (r.status().code() == StatusCode::kUnavailable) {
        ++unavailable; // a poll saw a stable, incomplete bundle: load failed, not served
      } else {
        ++other_errors;
      }
    }
  });
  ASSERT_TRUE(waitUntil([&] { return not_found.load() > 0; })); // the client is asking
  // Files appear one at a time, the weights in two halves, each step seen by two polls (the
  // second finds it stable), so polls do see stable incomplete bundles.
  const fs::path late = tmp.root / "late";
  fs::create_directories(late);
  auto pause = [&] {
    w.worker->pollRepositories();
    w.worker->pollRepositories();
  };
  for (const char *f : {"manifest.yaml", "model.b1.mlir", "model.b8.mlir", "model.b32.mlir"}) {
    fs::copy_file(kFixtures / "iris_mlp" / f, late / f);
    pause();
  }
  {
    std::ifstream in(kFixtures / "iris_mlp" / "weights.safetensors", std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream out(late / "weights.safetensors", std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
    out.flush();
    pause();
    EXPECT_FALSE(w.worker->repository().state("late") &&
                 w.worker->repository().state("late")->model)
        << "loaded with half its weights";
    out.write(bytes.data() + bytes.size() / 2,
              static_cast<std::streamsize>(bytes.size() - bytes.size() / 2));
  }
  copied = true;
  pause();
  ASSERT_TRUE(waitUntil([&] { return ok_after.load() >= 20; }));
  stop = true;
  checker.join();
  std::printf("bundle copied in steps: %lld not found, %lld unavailable (incomplete load "
              "refused), %lld ok before the copy ended, %lld ok after, %lld wrong, %lld other\n",
              static_cast<long long>(not_found.load()), static_cast<long long>(unavailable.load()),
              static_cast<long long>(ok_before_copied.load()),
              static_cast<long long>(ok_after.load()), static_cast<long long>(wrong.load()),
              static_cast<long long>(other_errors.load()));
  EXPECT_EQ(ok_before_copied.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(other_errors.load(), 0);
  EXPECT_GT(not_found.load(), 0);
  auto state = w.worker->repository().state("late");
  ASSERT_TRUE(state.has_value());
  EXPECT_TRUE(state->status.isOk()) << state->status.toString();
}

TEST(LiveWorker, RemovedBundleUnloadsAfterAdmittedRequestsFinish) {
  TempRepo tmp;
  tmp.copyBundle("iris_mlp", "a");
  tmp.copyBundle("iris_mlp", "b");
  auto live = LiveWorker::start(tmp.root.string(), kDynamic);
  ASSERT_TRUE(live.isOk()) << live.status().toString();
  LiveWorker &w = **live;
  auto reference = w.infer("a", irisInput());
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();

  std::atomic<bool> stop{false};
  std::atomic<int64_t> ok{0}, refused{0}, dropped{0}, other{0}, b_failed{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c)
    clients.emplace_back([&, c] {
      while (!stop.load()) {
        if (c == 7) { // the other model serves on
          if (!w.infer("b", irisInput()).isOk())
            ++b_failed;
          continue;
        }
        auto r = w.infer("a", irisInput());
        if (r.isOk()) {
          ++(*r == *reference ? ok : other);
          continue;
        }
        const std::string m = r.status().message();
        if (r.status().code() != StatusCode::kNotFound)
          ++other;
        else if (m.find("was unloaded") != std::string::npos &&
                 m.find("new requests are refused") == std::string::npos)
          ++dropped; // admitted, then failed by the unload: must not happen
        else
          ++refused; // refused at admission, or unknown by then
      }
    });
  ASSERT_TRUE(waitUntil([&] { return ok.load() >= 50; }));
  fs::remove_all(tmp.root / "a");
  // The unloaded model stays known, as unloaded (the index lists it UNAVAILABLE).
  ASSERT_TRUE(waitUntil([&] {
    const auto a = w.worker->repository().state("a");
    return a && a->unloaded;
  }));
  ASSERT_TRUE(waitUntil([&] { return refused.load() >= 20; }));
  stop = true;
  for (auto &t : clients)
    t.join();
  std::printf("removal under 7 clients: %lld ok, %lld refused with NOT_FOUND, %lld admitted "
              "then dropped, %lld other; model b failures %lld\n",
              static_cast<long long>(ok.load()), static_cast<long long>(refused.load()),
              static_cast<long long>(dropped.load()), static_cast<long long>(other.load()),
              static_cast<long long>(b_failed.load()));
  EXPECT_EQ(dropped.load(), 0);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(b_failed.load(), 0);
  EXPECT_TRUE(w.worker->repository().state("b").has_value());
  // The unloaded model's serving series are gone from /metrics, b's remain; only its state
  // gauge stays (it is still in the index, as UNAVAILABLE).
  httplib::Client metrics("127.0.0.1", w.worker->metricsPort());
  auto res = metrics.Get("/metrics");
  ASSERT_TRUE(res);
  std::istringstream lines(res->body);
  std::vector<std::string> of_a;
  for (std::string line; std::getline(lines, line);)
    if (line.find("model=\"a\"") != std::string::npos)
      of_a.push_back(line);
  std::sort(of_a.begin(), of_a.end()); // the exposition's order of series is not fixed
  EXPECT_EQ(of_a,
            (std::vector<std::string>{
                "worker_model_state{gpu=\"\",worker=\"worker0\",model=\"a\",state=\"READY\"} 0",
                "worker_model_state{gpu=\"\",worker=\"worker0\",model=\"a\",state="
                "\"UNAVAILABLE\"} 1"}));
  EXPECT_NE(res->body.find("model=\"b\""), std::string::npos);
}

} // namespace
} // namespace rs
