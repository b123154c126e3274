//===- test/hooks/hook_pool_test.cc - Hook processes on a real interpreter ---===//
#include "hooks/hook_paths.h"
#include "hooks/hook_pool.h"

#include "common/files.h"
#include "common/temp_dir.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

namespace rs::hooks {
namespace {

namespace fs = std::filesystem;

HookOptions optionsFor(int64_t processes) {
  HookOptions o;
  Result<std::string> python = resolveHookPython("");
  EXPECT_TRUE(python.isOk()) << python.status().toString();
  o.python = python.isOk() ? *python : "python3";
  o.runner = std::string(RS_SOURCE_DIR) + "/python/reactant_hooks/runner.py";
  o.processes = processes;
  o.timeout = std::chrono::milliseconds(30000);
  return o;
}

using testing::TempDir;
using testing::writeFile;

/// A bundle directory "m" in `tmp` holding `model_py` as its model.py.
std::string bundleWith(const TempDir &tmp, const std::string &model_py) {
  const std::string dir = tmp.file("m");
  fs::create_directories(dir);
  writeFile(dir + "/model.py", model_py);
  return dir;
}

/// The INT64 scalar of a hook's single output.
int64_t scalarOf(const Result<HookPool::Tensors> &r) {
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  if (!r.isOk() || r->size() != 1 || r->front().tensor.dtype() != DType::kI64)
    return -1;
  return *r->front().tensor.dataAs<int64_t>();
}

TEST(HookPool, ReportsTheHooksAndTheirEnvironment) {
  TempDir tmp;
  const std::string dir = bundleWith(tmp, "register_model('m', postprocess=lambda t: t)\n");
  writeFile(dir + "/vocab.txt", "a\nb\n");
  writeFile(dir + "/manifest.yaml", "not read by the pool\n");
  Result<std::shared_ptr<HookPool>> pool = HookPool::start("m", dir, optionsFor(1));
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  EXPECT_FALSE((*pool)->has(HookStage::kPreprocess));
  EXPECT_TRUE((*pool)->has(HookStage::kPostprocess));
  const std::map<std::string, std::string> files = (*pool)->files();
  ASSERT_EQ(files.size(), 2u); // model.py and vocab.txt; the manifest is the server's
  EXPECT_EQ(files.at("vocab.txt"),
            "911169ddaaf146aff539f58c26c489af3b892dff0fe283c1c264c65ae5aa59a2");
  bool numpy = false;
  for (const std::string &p : (*pool)->environment().packages)
    numpy = numpy || p.starts_with("numpy==");
  EXPECT_TRUE(numpy);
  EXPECT_TRUE((*pool)->environment().runtime.starts_with("cpython 3."));
}

TEST(HookPool, AnImportErrorFailsTheStartWithItsLastLine) {
  TempDir tmp;
  const std::string dir = bundleWith(tmp, "import no_such_module_anywhere\n");
  Result<std::shared_ptr<HookPool>> pool = HookPool::start("m", dir, optionsFor(1));
  ASSERT_FALSE(pool.isOk());
  EXPECT_EQ(pool.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(pool.status().message(),
            dir + "/model.py: ModuleNotFoundError: No module named 'no_such_module_anywhere'");
  writeFile(dir + "/model.py", "x = 1\n");
  pool = HookPool::start("m", dir, optionsFor(1));
  ASSERT_FALSE(pool.isOk());
  EXPECT_EQ(pool.status().message(), dir + "/model.py: RuntimeError: model.py did not call "
                                           "register_model");
}

// Two processes serve two calls at once: each hook waits until both have started, which only
// happens when two processes hold one call each.
TEST(HookPool, ProcessesServeCallsInParallel) {
  TempDir tmp;
  const std::string dir = bundleWith(tmp, R"(import os, time
import numpy as np
HERE = os.path.dirname(__file__)

def post(t):
    open(os.path.join(HERE, f"started.{os.getpid()}"), "w").close()
    while len([f for f in os.listdir(HERE) if f.startswith("started.")]) < 2:
        time.sleep(0.01)
    return {"pid": np.array(os.getpid(), np.int64)}

register_model("m", postprocess=post)
)");
  Result<std::shared_ptr<HookPool>> pool = HookPool::start("m", dir, optionsFor(2));
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  std::promise<Result<HookPool::Tensors>> first, second;
  (*pool)->run(HookStage::kPostprocess, {}, std::nullopt,
               [&](Result<HookPool::Tensors> r) { first.set_value(std::move(r)); });
  // The second call is queued once the first runs (queued together, they would share one
  // frame to one process).
  auto started = [&] {
    for (const auto &e : fs::directory_iterator(dir))
      if (e.path().filename().string().starts_with("started."))
        return true;
    return false;
  };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!started() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(started());
  (*pool)->run(HookStage::kPostprocess, {}, std::nullopt,
               [&](Result<HookPool::Tensors> r) { second.set_value(std::move(r)); });
  const int64_t a = scalarOf(first.get_future().get());
  const int64_t b = scalarOf(second.get_future().get());
  EXPECT_GT(a, 0);
  EXPECT_GT(b, 0);
  EXPECT_NE(a, b);
}

/// True once process `pid` is gone or a zombie (killed, and not reaped by its new parent).
bool gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text))
    return true;
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

// What a hook forks is in the hook process's group and goes with it.
TEST(HookPool, WhatAHookForksIsKilledWithItsProcess) {
  TempDir tmp;
  const std::string pid_file = tmp.file("child.pid");
  const std::string dir = bundleWith(tmp, "import os, time\n"
                                          "import numpy as np\n"
                                          "def pre(t):\n"
                                          "    pid = os.fork()\n"
                                          "    if pid == 0:\n"
                                          "        time.sleep(3600)\n"
                                          "        os._exit(0)\n"
                                          "    with open('" +
                                              pid_file +
                                              ".tmp', 'w') as f:\n"
                                              "        f.write(str(pid))\n"
                                              "    os.rename('" +
                                              pid_file + ".tmp', '" + pid_file +
                                              "')\n"
                                              "    return {'n': np.array(pid, dtype=np.int64)}\n"
                                              "register_model('m', preprocess=pre)\n");
  Result<std::shared_ptr<HookPool>> pool = HookPool::start("m", dir, optionsFor(1));
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  const pid_t child = static_cast<pid_t>(scalarOf((*pool)->runNow(HookStage::kPreprocess, {})));
  ASSERT_GT(child, 0);
  EXPECT_FALSE(gone(child));
  pool->reset(); // the pool's processes are killed
  for (int i = 0; i < 1000 && !gone(child); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(gone(child));
  if (!gone(child))
    ::kill(child, SIGKILL);
}

TEST(HookPool, AResultThatIsNotADictIsAnInternalError) {
  TempDir tmp;
  const std::string dir = bundleWith(tmp, "register_model('m', preprocess=lambda t: [1, 2])\n");
  Result<std::shared_ptr<HookPool>> pool = HookPool::start("m", dir, optionsFor(1));
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  Result<HookPool::Tensors> r = (*pool)->runNow(HookStage::kPreprocess, {});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_EQ(r.status().message(), "preprocess: HookResultError: preprocess returned list, "
                                  "expected a dict name -> numpy array");
}

// Calls queued together may share a frame to one process; each gets its own result, a
// call that raised fails alone.
TEST(HookPool, EachQueuedCallGetsItsOwnResult) {
  TempDir tmp;
  const std::string dir = bundleWith(tmp, R"(import numpy as np
def pre(t):
    if t["x"][0] < 0:
        raise ValueError("negative")
    return {"y": t["x"] * 2}
register_model("m", preprocess=pre)
)");
  Result<std::shared_ptr<HookPool>> pool = HookPool::start("m", dir, optionsFor(1));
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  std::vector<std::promise<Result<HookPool::Tensors>>> answers(5);
  for (int k = 0; k < 5; ++k) {
    const int64_t value = k == 3 ? -1 : k;
    Tensor x = Tensor::copyOf(DType::kI64, {1}, {reinterpret_cast<const uint8_t *>(&value), 8});
    (*pool)->run(
        HookStage::kPreprocess, {{"x", x}}, std::nullopt,
        [&answers, k](Result<HookPool::Tensors> r) { answers[k].set_value(std::move(r)); });
  }
  for (int k = 0; k < 5; ++k) {
    Result<HookPool::Tensors> r = answers[k].get_future().get();
    if (k == 3) {
      ASSERT_FALSE(r.isOk());
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(r.status().message(), "preprocess raised ValueError: negative");
      continue;
    }
    EXPECT_EQ(scalarOf(r), 2 * k);
  }
}

// A hostile hook process (its model.py rewrites the runner's results frames): a record
// whose range leaves the reply area fails its call, a frame that is cut short kills the
// process, and the next call runs on a fresh one.
TEST(HookPool, AResultFrameThatLiesIsRefused) {
  TempDir tmp;
  const std::string dir = bundleWith(tmp, R"(import struct, sys
runner = sys.modules["__main__"]
honest = runner._reply
MODE = {"lie": 0}

def lying(results, segment, reply_offset, reply_size):
    body, fd = honest(results, segment, reply_offset, reply_size)
    body = bytearray(body)
    if MODE["lie"] == 1:  # the first record's offset, 8 bytes before the area's end
        struct.pack_into("<Q", body, 8 + 5 + 4, reply_size - 8)
    if MODE["lie"] == 2:
        del body[-1]
    return bytes(body), fd

runner._reply = lying

def post(t):
    MODE["lie"] = int(t["x"][0])
    return {"y": t["x"]}

register_model("m", postprocess=post)
)");
  Result<std::shared_ptr<HookPool>> pool = HookPool::start("m", dir, optionsFor(1));
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  auto call = [&](int64_t mode) {
    Tensor x = Tensor::filled(DType::kI64, {2}, {reinterpret_cast<const uint8_t *>(&mode), 8});
    return (*pool)->runNow(HookStage::kPostprocess, {{"x", x}});
  };
  EXPECT_EQ(scalarOf(call(0)), 0);
  auto internal = [](const Result<HookPool::Tensors> &r) {
    EXPECT_FALSE(r.isOk());
    EXPECT_EQ(r.status().code(), StatusCode::kInternal);
    return r.isOk() ? std::string() : r.status().message();
  };
  EXPECT_EQ(internal(call(1)),
            "postprocess result: tensor 'y': bytes [1048568, 1048584) lie outside its shared "
            "memory of 1048576 bytes");
  EXPECT_EQ(internal(call(2)),
            "postprocess: the hook process sent a malformed results frame: a tensor name is cut "
            "short; the hook process was killed and is restarted");
  EXPECT_EQ(scalarOf(call(0)), 0);
}

// Tensors larger than the segment's areas: results come back in a memfd of their own and the
// next segment makes room for them; a large request gets a larger segment.
TEST(HookPool, LargeTensorsOutgrowTheSegment) {
  TempDir tmp;
  const std::string dir = bundleWith(tmp, R"(import numpy as np
def pre(t):
    return {"y": np.full(int(t["n"][0]), t["pad"].size % 251, np.uint8)}
register_model("m", preprocess=pre)
)");
  Result<std::shared_ptr<HookPool>> pool = HookPool::start("m", dir, optionsFor(1));
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  auto call = [&](int64_t n, int64_t pad) {
    Tensor count = Tensor::copyOf(DType::kI64, {1}, {reinterpret_cast<const uint8_t *>(&n), 8});
    Result<HookPool::Tensors> r = (*pool)->runNow(
        HookStage::kPreprocess, {{"n", count}, {"pad", Tensor::zeros(DType::kU8, {pad})}});
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    if (!r.isOk() || r->size() != 1)
      return;
    const Tensor &y = r->front().tensor;
    ASSERT_EQ(y.shape(), (Shape{n}));
    const uint8_t expected = static_cast<uint8_t>(pad % 251);
    EXPECT_EQ(y.data()[0], expected);
    EXPECT_EQ(y.data()[n - 1], expected);
  };
  call(3 << 20, 1);       // results past the reply area: a memfd
  call(3 << 20, 2);       // the segment made room for them
  call(10, 5 << 20);      // a request past the request area: a larger segment
  call(5 << 20, 5 << 20); // both
}

// A postprocess that keeps 160 MiB more each call under hooks.max_memory_mb 280: the first
// call stays below the limit, the second crosses it (an interpreter with numpy holds well
// under 120 MiB), so that process is restarted before the third call, whose fresh module
// state holds one block again. Every call gets its result.
TEST(HookPool, AProcessAboveTheMemoryLimitIsRestartedBetweenCalls) {
  TempDir tmp;
  const std::string dir = bundleWith(tmp, R"(import numpy as np
HELD = []
def post(t):
    HELD.append(bytearray(b"\x01") * (160 << 20))  # written, so resident
    return {"held": np.array(len(HELD), np.int64)}
register_model("m", postprocess=post)
)");
  HookOptions options = optionsFor(1);
  options.max_memory_mb = 280;
  Result<std::shared_ptr<HookPool>> pool = HookPool::start("m", dir, options);
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  std::vector<int64_t> held;
  for (int k = 0; k < 5; ++k)
    held.push_back(scalarOf((*pool)->runNow(HookStage::kPostprocess, {})));
  EXPECT_EQ(held, (std::vector<int64_t>{1, 2, 1, 2, 1}));
  // Without a limit the same process keeps every block.
  options.max_memory_mb = 0;
  pool = HookPool::start("m", dir, options);
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  held.clear();
  for (int k = 0; k < 3; ++k)
    held.push_back(scalarOf((*pool)->runNow(HookStage::kPostprocess, {})));
  EXPECT_EQ(held, (std::vector<int64_t>{1, 2, 3}));
}

// hooks.python_path puts a directory on sys.path after the bundle's own: model.py imports a
// helper module from it; without it the load fails with the ImportError's last line. The
// path is part of the hooks' identity.
TEST(HookPool, PythonPathFindsHelperModules) {
  TempDir tmp;
  const std::string lib = tmp.file("lib");
  fs::create_directories(lib);
  writeFile(lib + "/rs_test_helper.py", "def seven():\n    return 7\n");
  const std::string dir = bundleWith(tmp, R"(import numpy as np
import rs_test_helper
register_model("m", preprocess=lambda t: {"y": np.array(rs_test_helper.seven(), np.int64)})
)");
  Result<std::shared_ptr<HookPool>> pool = HookPool::start("m", dir, optionsFor(1));
  ASSERT_FALSE(pool.isOk());
  EXPECT_EQ(pool.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(pool.status().message(),
            dir + "/model.py: ModuleNotFoundError: No module named 'rs_test_helper'");
  HookOptions options = optionsFor(1);
  options.python_path = {lib};
  pool = HookPool::start("m", dir, options);
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  EXPECT_EQ(scalarOf((*pool)->runNow(HookStage::kPreprocess, {})), 7);
  const std::string identity = (*pool)->identity();
  fs::create_directories(tmp.file("other"));
  options.python_path = {lib, tmp.file("other")};
  pool = HookPool::start("m", dir, options);
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  EXPECT_NE((*pool)->identity(), identity);
}

// hooks.allowed_packages: the bundle's code may import the listed packages, the standard
// library, numpy and its own modules; any other installed package fails the load (at module
// top level) or the call (inside a hook), naming it. The list is part of the identity.
TEST(HookPool, AllowedPackagesRefuseOtherImports) {
  TempDir tmp;
  const std::string dir = bundleWith(tmp, R"(import numpy as np
import json, socket
import own_helper
def pre(t):
    import yaml
    return {"y": np.array(1, np.int64)}
register_model("m", preprocess=pre, postprocess=lambda t: {"y": np.array(own_helper.X, np.int64)})
)");
  writeFile(dir + "/own_helper.py", "X = 5\n");
  HookOptions options = optionsFor(1);
  options.allowed_packages = {"numpy"};
  Result<std::shared_ptr<HookPool>> pool = HookPool::start("m", dir, options);
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  EXPECT_EQ(scalarOf((*pool)->runNow(HookStage::kPostprocess, {})), 5);
  Result<HookPool::Tensors> r = (*pool)->runNow(HookStage::kPreprocess, {});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "preprocess raised ImportError: module 'yaml' is not in "
                                  "hooks.allowed_packages [numpy]");
  const std::string identity = (*pool)->identity();

  options.allowed_packages = {"numpy", "yaml"};
  pool = HookPool::start("m", dir, options);
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();
  EXPECT_EQ(scalarOf((*pool)->runNow(HookStage::kPreprocess, {})), 1);
  EXPECT_NE((*pool)->identity(), identity);

  writeFile(dir + "/model.py", "import numpy\nimport yaml\nregister_model('m')\n");
  options.allowed_packages = {"numpy"};
  pool = HookPool::start("m", dir, options);
  ASSERT_FALSE(pool.isOk());
  EXPECT_EQ(pool.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(pool.status().message(), dir + "/model.py: ImportError: module 'yaml' is not in "
                                           "hooks.allowed_packages [numpy]");
  options.allowed_packages = {};
  EXPECT_TRUE(HookPool::start("m", dir, options).isOk());
}

} // namespace
} // namespace rs::hooks
