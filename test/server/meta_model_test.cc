//===- test/server/meta_model_test.cc - Meta models in a worker -------------===//
//
// server/worker_service.h "Meta models" on the CPU backend with real hook processes:
// examples/hooks_repo's digits_top3 and its callee digits_probs (internal to it), and
// meta models written here that name a missing callee, call a meta, wait on a FIFO (to
// hold a run slot) or add noise (for the regulated warm-up).
//
//===----------------------------------------------------------------------===//
#include "hooks/hook_paths.h"
#include "hooks/hook_pool.h"
#include "runtime/cpu_backend.h"
#include "server/worker_service.h"

#include "common/files.h"
#include "common/temp_dir.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>

namespace rs::server {
namespace {

namespace fs = std::filesystem;

const std::string kHooksRepo = std::string(RS_SOURCE_DIR) + "/examples/hooks_repo";

/// A meta model's manifest: digits_top3's tensors, calling `calls`.
std::string metaManifest(const std::string &calls) {
  return "format_version: \"2.0\"\nkind: meta\nclient_inputs:\n"
         "  - {name: \"pixels\", dtype: \"u8\", shape: \"edcn\", dims: {c: 8, d: 8, e: 1}}\n"
         "client_outputs:\n"
         "  - {name: \"classes\", dtype: \"i64\", shape: \"kn\", dims: {k: 3}}\n"
         "  - {name: \"scores\", dtype: \"f32\", shape: \"kn\", dims: {k: 3}}\n"
         "meta: {calls: [" +
         calls + "]}\n";
}

/// digits_top3's run with `before` as its first statement and `noise` added to the scores.
std::string metaModel(const std::string &before, const std::string &noise = "0") {
  return "import numpy as np\n"
         "def run(inputs, call):\n"
         "    " +
         before +
         "\n"
         "    probs = call('digits_probs', {'pixels': inputs['pixels']})['probs']\n"
         "    classes = np.argsort(-probs, axis=1, kind='stable')[:, :3]\n"
         "    scores = np.take_along_axis(probs, classes, axis=1) + np.float32(" +
         noise +
         ")\n"
         "    return {'classes': classes.astype(np.int64), 'scores': scores.astype(np.float32)}\n"
         "register_meta_model('m', run=run)\n";
}

/// Starts model.py hooks as the worker's factory does, with the checkout's runner.
/// `timeouts`: hooks.timeout_ms of the models named there (the default elsewhere).
runtime::ModelExtensionFactory
testHooks(int64_t processes, std::map<std::string, std::chrono::milliseconds> timeouts = {}) {
  return [processes, timeouts](
             const std::string &name, const std::string &dir,
             const bundle::Manifest &) -> Result<std::shared_ptr<const runtime::ModelExtension>> {
    hooks::HookOptions o;
    if (auto t = timeouts.find(name); t != timeouts.end())
      o.timeout = t->second;
    RS_ASSIGN_OR_RETURN(o.python, hooks::resolveHookPython(""));
    o.runner = std::string(RS_SOURCE_DIR) + "/python/reactant_hooks/runner.py";
    o.processes = processes;
    RS_ASSIGN_OR_RETURN(std::shared_ptr<hooks::HookPool> pool,
                        hooks::HookPool::start(name, dir, o));
    return std::shared_ptr<const runtime::ModelExtension>(std::move(pool));
  };
}

/// A repository of the example's digits_softmax, digits_probs and digits_top3 plus the
/// bundles `extra` (name -> {manifest, model.py}), loaded and served.
struct MetaWorker {
  rs::testing::TempDir tmp{"rs_meta_"};
  std::unique_ptr<runtime::ModelRepository> repository;
  std::unique_ptr<WorkerService> service;

  /// `programs`: extra bundles that get digits_probs's programs and weights beside their
  /// manifest and model.py; `timeouts` as testHooks takes them.
  MetaWorker(const std::map<std::string, std::pair<std::string, std::string>> &extra,
             ServingOptions serving = {}, int64_t processes = 1,
             const std::vector<std::string> &programs = {},
             std::map<std::string, std::chrono::milliseconds> timeouts = {}) {
    for (const char *name : {"digits_softmax", "digits_probs", "digits_top3"})
      fs::create_directory_symlink(kHooksRepo + "/" + name, tmp.path() / name);
    for (const std::string &name : programs) {
      fs::create_directories(tmp.path() / name);
      for (const char *file :
           {"model.b1.mlir", "model.b4.mlir", "model.b8.mlir", "weights.safetensors"})
        fs::create_symlink(fs::canonical(kHooksRepo + "/digits_probs/" + file),
                           tmp.path() / name / file);
    }
    for (const auto &[name, files] : extra) {
      fs::create_directories(tmp.path() / name);
      rs::testing::writeFile(tmp.path() / name / "manifest.yaml", files.first);
      rs::testing::writeFile(tmp.path() / name / "model.py", files.second);
    }
    Result<std::unique_ptr<runtime::Backend>> backend = runtime::createCpuBackend({});
    EXPECT_TRUE(backend.isOk()) << backend.status().toString();
    runtime::ModelRepositoryOptions options;
    options.executable_cache = false;
    options.extensions = testHooks(processes, std::move(timeouts));
    repository = std::make_unique<runtime::ModelRepository>(
        std::shared_ptr<runtime::Backend>(std::move(*backend)), options);
    EXPECT_TRUE(repository->loadRepository(tmp.str(), {}).isOk());
    service = std::make_unique<WorkerService>(*repository, scheduler::SchedulerOptions{}, "w0",
                                              std::move(serving));
    service->registerLoadedModels();
  }
  ~MetaWorker() {
    // As the server does at shutdown: the requests still in flight (a meta's call can outlive
    // the meta request it came from) finish before the service goes.
    service->beginDrain();
    EXPECT_TRUE(service->waitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(60)));
    service.reset();
    repository.reset();
  }

  /// Starts one request of zero pixels (`rows` rows) to `model`.
  std::future<Result<protocol::InferResponse>>
  send(const std::string &model, int64_t rows = 1,
       std::optional<protocol::Clock::time_point> deadline = std::nullopt) {
    protocol::InferRequest r;
    r.model_name = model;
    r.id = "r1";
    r.deadline = deadline;
    r.inputs.push_back({"pixels", Tensor::zeros(DType::kU8, {rows, 8, 8, 1})});
    auto answer = std::make_shared<std::promise<Result<protocol::InferResponse>>>();
    auto f = answer->get_future();
    service->infer(std::move(r), [answer](Result<protocol::InferResponse> a) {
      answer->set_value(std::move(a));
    });
    return f;
  }
  Result<protocol::InferResponse> ask(const std::string &model, int64_t rows = 1) {
    return send(model, rows).get();
  }
  /// The index entry of `name`, if listed.
  std::optional<protocol::ModelIndexEntry> indexed(const std::string &name) const {
    for (const protocol::ModelIndexEntry &e : service->listModels())
      if (e.name == name)
        return e;
    return std::nullopt;
  }
  /// Why the index lists `name` as not ready; "ready" or "not listed" otherwise.
  std::string failure(const std::string &name) const {
    std::optional<protocol::ModelIndexEntry> e = indexed(name);
    return !e ? "not listed" : e->ready ? "ready" : e->reason;
  }
};

const char *const kInternal =
    "model 'digits_probs' is internal to meta model 'digits_top3' and is not served directly";

TEST(MetaModel, SubModelIsHiddenFromTheIndexControlStatusAndStatistics) {
  MetaWorker w({});
  EXPECT_TRUE(w.indexed("digits_top3").has_value());
  EXPECT_TRUE(w.indexed("digits_softmax").has_value());
  EXPECT_FALSE(w.indexed("digits_probs").has_value());
  Result<protocol::ControlStatus> control = w.service->controlStatus();
  ASSERT_TRUE(control.isOk());
  std::vector<std::string> names;
  for (const protocol::ModelControlInfo &m : control->models)
    names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"digits_softmax", "digits_top3"}));
  // The meta as a group: digits_probs's weights, which are digits_softmax's.
  EXPECT_GT(control->models[0].weight_nbytes, 0);
  EXPECT_EQ(control->models[1].weight_nbytes, control->models[0].weight_nbytes);
  EXPECT_EQ(control->models[1].max_batch_size, 0);
  Result<std::vector<protocol::ModelStatistics>> all = w.service->modelStatistics("");
  ASSERT_TRUE(all.isOk());
  names.clear();
  for (const protocol::ModelStatistics &m : *all)
    names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"digits_softmax", "digits_top3"}));
}

TEST(MetaModel, DirectRequestsOfASubModelAreNotFound) {
  MetaWorker w({});
  Result<protocol::InferResponse> r = w.ask("digits_probs");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), kInternal);
  for (const Status &s : {w.service->modelMetadata("digits_probs").status(),
                          w.service->modelReady("digits_probs").status(),
                          w.service->modelConfig("digits_probs").status(),
                          w.service->modelStatistics("digits_probs").status()}) {
    EXPECT_EQ(s.code(), StatusCode::kNotFound);
    EXPECT_EQ(s.message(), kInternal);
  }
}

TEST(MetaModel, TheMetaReachesItsSubModelAndCountsItsRequests) {
  MetaWorker w({});
  Result<protocol::InferResponse> direct = w.ask("digits_softmax", 2);
  ASSERT_TRUE(direct.isOk()) << direct.status().toString();
  Result<protocol::InferResponse> meta = w.ask("digits_top3", 2);
  ASSERT_TRUE(meta.isOk()) << meta.status().toString();
  ASSERT_EQ(meta->outputs.size(), 2u);
  EXPECT_EQ(meta->outputs[0].name, "classes");
  EXPECT_EQ(meta->outputs[0].shape(), (Shape{2, 3}));
  // The same program and model.py as digits_softmax: the top three of its probabilities.
  const float *probs = direct->outputs[0].tensor.dataAs<float>();
  const int64_t *classes = meta->outputs[0].tensor.dataAs<int64_t>();
  const float *scores = meta->outputs[1].tensor.dataAs<float>();
  for (int64_t row = 0; row < 2; ++row)
    for (int64_t k = 0; k < 3; ++k)
      EXPECT_EQ(scores[row * 3 + k], probs[row * 10 + classes[row * 3 + k]]);
  Result<std::vector<protocol::ModelStatistics>> stats = w.service->modelStatistics("digits_top3");
  ASSERT_TRUE(stats.isOk());
  EXPECT_EQ(stats->front().success.count, 1u);
  EXPECT_EQ(stats->front().execution_count, 1u);
  EXPECT_EQ(stats->front().inference_count, 1u);
  EXPECT_EQ(stats->front().compute_infer.count, 1u);
  EXPECT_GT(stats->front().compute_infer.ns, 0u);
}

TEST(MetaModel, AMissingCalleeOrAMetaCalleeFailsTheMetasLoad) {
  MetaWorker w({{"meta_missing", {metaManifest("no_such_model"), metaModel("pass")}},
                {"meta_of_meta", {metaManifest("digits_top3"), metaModel("pass")}}});
  EXPECT_EQ(w.failure("meta_missing"),
            "meta model 'meta_missing': meta.calls names model 'no_such_model', "
            "which is not in the repository");
  EXPECT_EQ(w.failure("meta_of_meta"),
            "meta model 'meta_of_meta': meta.calls names model 'digits_top3', "
            "which is itself a meta model (a meta model may call only models "
            "with programs)");
  // A meta that failed hides nothing: digits_top3 is listed and served.
  EXPECT_EQ(w.failure("digits_top3"), "ready");
  EXPECT_TRUE(w.ask("digits_top3").isOk());
  Result<protocol::InferResponse> r = w.ask("meta_missing");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  bool counted = false;
  for (const runtime::LoadFailureCount &f : w.repository->loadFailures())
    counted = counted || (f.model == "meta_missing" && f.reason == "FAILED_PRECONDITION");
  EXPECT_TRUE(counted);
}

TEST(MetaModel, ACalleeFollowsTheStrongestResidencyOfItsMetasAndIsNotUnloadedAlone) {
  ServingOptions serving;
  serving.control_mode = "explicit";
  serving.weight_pool_bytes = int64_t{1} << 30;
  // digits_top3 and meta_second both call digits_probs.
  MetaWorker w({{"meta_second", {metaManifest("digits_probs"), metaModel("pass")}}}, serving);
  ASSERT_EQ(w.failure("meta_second"), "ready");
  auto pinned = [&](const std::string &model) {
    const std::string text = w.service->renderMetrics();
    const std::string series =
        "worker_model_pinned{gpu=\"\",worker=\"w0\",model=\"" + model + "\"} ";
    const size_t at = text.find(series);
    return at == std::string::npos ? std::string("absent") : text.substr(at + series.size(), 1);
  };
  EXPECT_EQ(pinned("digits_probs"), "0");
  ASSERT_TRUE(
      w.service->setModelResidency("digits_top3", protocol::Residency::kPinnedDevice).isOk());
  EXPECT_EQ(pinned("digits_probs"), "1");
  ASSERT_TRUE(
      w.service->setModelResidency("meta_second", protocol::Residency::kPinnedDevice).isOk());
  // Unpinning one meta keeps the callee the other still pins.
  ASSERT_TRUE(w.service->setModelResidency("digits_top3", protocol::Residency::kUnpinned).isOk());
  EXPECT_EQ(pinned("digits_probs"), "1");
  ASSERT_TRUE(w.service->setModelResidency("meta_second", protocol::Residency::kUnpinned).isOk());
  EXPECT_EQ(pinned("digits_probs"), "0");
  EXPECT_EQ(pinned("digits_softmax"), "0"); // a model no meta calls keeps its own
  // The callee itself is set through its metas only.
  Result<protocol::Residency> direct =
      w.service->setModelResidency("digits_probs", protocol::Residency::kPinnedDevice);
  ASSERT_FALSE(direct.isOk());
  EXPECT_EQ(direct.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(direct.status().message(),
            "SetModelResidency of 'digits_probs': the model is internal to meta model "
            "'digits_top3'; set the meta model's residency, which its callees follow");
  EXPECT_TRUE(w.ask("digits_top3").isOk());
  // Nor can a client unload it while a meta calls it.
  Status unload = w.service->repositoryUnload("digits_probs");
  EXPECT_EQ(unload.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(unload.message(), "RepositoryModelUnload of 'digits_probs': the model is internal to "
                              "meta model 'digits_top3'; unload the meta model first");
  EXPECT_TRUE(w.ask("digits_top3").isOk());
}

TEST(MetaModel, ACallPastTheRunsTimeoutEndsTheRun) {
  rs::testing::TempDir fifo_dir("rs_meta_fifo_");
  const std::string fifo = fifo_dir.file("go");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // slow_probs's preprocess waits on the FIFO with a long timeout of its own; the meta's run
  // has 300 ms, and its call must end there rather than when the callee gives up.
  std::string callee_manifest = "format_version: \"2.0\"\n";
  {
    std::ifstream in(kHooksRepo + "/digits_probs/manifest.yaml");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("format_version:", 0) != 0 && line.rfind("name:", 0) != 0)
        callee_manifest += line + "\n";
  }
  const std::string callee_model =
      "import numpy as np\n"
      "def preprocess(inputs):\n"
      "    open('" +
      fifo +
      "').read()\n"
      "    return {'image': inputs['pixels'].astype(np.float32)}\n"
      "def postprocess(outputs):\n"
      "    return {'probs': outputs['probs'], 'label': outputs['probs'].argmax(axis=1),\n"
      "            'label_name': np.array([b'x'] * len(outputs['probs']), dtype=object)}\n"
      "register_model('slow_probs', preprocess=preprocess, postprocess=postprocess)\n";
  std::string meta_model = metaModel("pass");
  meta_model.replace(meta_model.find("call('digits_probs'"), 19, "call('slow_probs'");
  MetaWorker w({{"slow_probs", {callee_manifest, callee_model}},
                {"meta_slow", {metaManifest("slow_probs"), meta_model}}},
               {}, 1, {"slow_probs"},
               {{"meta_slow", std::chrono::milliseconds(300)},
                {"slow_probs", std::chrono::milliseconds(600000)}});
  ASSERT_EQ(w.failure("meta_slow"), "ready");
  std::future<Result<protocol::InferResponse>> answer = w.send("meta_slow");
  // Far past the run's 300 ms and far short of the callee's own limit.
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Result<protocol::InferResponse> r = answer.get();
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().toString();
  // Lets the callee's preprocess return if its process still waits (opened read-write, so
  // the open does not wait for a reader the deadline may have killed).
  const int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(::write(fd, "go", 2), 2);
  ::close(fd);
}

TEST(MetaModel, TheGateHoldsARequestPastTheConcurrencyUntilItsDeadline) {
  rs::testing::TempDir fifo_dir("rs_meta_fifo_");
  const std::string fifo = fifo_dir.file("go");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ServingOptions serving;
  serving.meta_concurrency = 1;
  // Two hook processes: only the gate keeps the second run from starting.
  MetaWorker w(
      {{"meta_wait", {metaManifest("digits_probs"), metaModel("open('" + fifo + "').read()")}}},
      serving, 2);
  ASSERT_EQ(w.failure("meta_wait"), "ready");
  // The first run takes the only slot as infer() admits it, and waits on the FIFO.
  std::future<Result<protocol::InferResponse>> first = w.send("meta_wait");
  std::future<Result<protocol::InferResponse>> second =
      w.send("meta_wait", 1, protocol::Clock::now() + std::chrono::milliseconds(300));
  Result<protocol::InferResponse> shed = second.get();
  ASSERT_FALSE(shed.isOk());
  EXPECT_EQ(shed.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(shed.status().message(),
            "model 'meta_wait', request 'r1': deadline exceeded while it waited for one of the "
            "meta model's 1 runs at once (hooks.meta_concurrency)");
  { std::ofstream(fifo) << "go"; } // lets the first run finish
  Result<protocol::InferResponse> done = first.get();
  EXPECT_TRUE(done.isOk()) << done.status().toString();
  Result<std::vector<protocol::ModelStatistics>> stats = w.service->modelStatistics("meta_wait");
  ASSERT_TRUE(stats.isOk());
  EXPECT_EQ(stats->front().success.count, 1u);
  EXPECT_EQ(stats->front().fail.count, 1u);
}

TEST(MetaModel, RegulatedWarmUpPassesAPureRunAndRefusesANoisyOne) {
  ServingOptions serving;
  serving.meta_warmup = true;
  MetaWorker w(
      {{"meta_noisy",
        {metaManifest("digits_probs"), metaModel("pass", "np.random.default_rng().random()")}}},
      serving);
  EXPECT_EQ(w.failure("digits_top3"), "ready");
  EXPECT_TRUE(w.ask("digits_top3").isOk());
  EXPECT_EQ(w.failure("meta_noisy"),
            "model.py: run gave different results for the same input "
            "on two runs (tensor 'scores' differs); runtime.profile regulated "
            "needs hooks whose output is a function of their input");
}

} // namespace
} // namespace rs::server
