//===- test/cpu/determinism_test.cc - Bit-exact runs across threads --------===//
//
// For every fixture program with a golden input, the outputs are byte-identical with 1,
// 2, 4 and 16 threads, and on a second run of the same Program (DESIGN.md "cpu/": results
// are deterministic whatever the thread count, on every run). The generic-form text of
// each program (bundles/<model>/generic/) compiles to a program that gives the same bytes
// as the pretty form. Concurrent runs of one Program give the same bytes too.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#include "bundle/safetensors.h"

#include <thread>

namespace rs::cpu::testing {
namespace {

struct ProgramCase {
  const char *model;
  int64_t batch;
};

constexpr ProgramCase kPrograms[] = {
    {"digits_cnn", 1},  {"digits_cnn", 4}, {"digits_cnn", 8},   {"iris_mlp", 1},
    {"iris_mlp", 8},    {"tiny_bert", 1},  {"tiny_bert", 4},    {"resnet_mini", 1},
    {"resnet_mini", 8}, {"op_zoo", 1},     {"tf32_algo", 1},    {"tf32_algo", 4},
    {"bert_bench", 1},  {"bert_bench", 8}, {"resnet_bench", 1}, {"resnet_bench", 8},
};

std::string caseName(const ::testing::TestParamInfo<ProgramCase> &info) {
  return std::string(info.param.model) + "_b" + std::to_string(info.param.batch);
}

std::vector<Tensor> goldenInputs(const bundle::Bundle &b, const Program &program,
                                 const std::string &path) {
  auto golden = bundle::SafetensorsFile::open(path);
  EXPECT_TRUE(golden.isOk()) << golden.status().toString();
  if (!golden.isOk())
    return {};
  std::vector<Tensor> args;
  for (size_t i = 0; i < b.manifest.executable_inputs.size(); ++i) {
    auto t = golden->tensor(b.manifest.executable_inputs[i].name);
    EXPECT_TRUE(t.isOk()) << t.status().toString();
    if (!t.isOk())
      return {};
    args.push_back(t->reshaped(program.inputTypes()[i].shape));
  }
  args.insert(args.end(), b.weights.begin(), b.weights.end());
  return args;
}

void expectSameBytes(const std::vector<Tensor> &a, const std::vector<Tensor> &b,
                     const std::string &what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].dtype(), b[i].dtype()) << what << " output " << i;
    ASSERT_EQ(a[i].shape(), b[i].shape()) << what << " output " << i;
    EXPECT_EQ(0, std::memcmp(a[i].data(), b[i].data(), static_cast<size_t>(a[i].byteSize())))
        << what << ": output " << i << " differs";
  }
}

class DeterminismTest : public ::testing::TestWithParam<ProgramCase> {};

TEST_P(DeterminismTest, BitIdenticalAcrossThreadCountsAndRuns) {
  const ProgramCase &c = GetParam();
  const bundle::Bundle &b = fixtureBundle(c.model);
  ASSERT_TRUE(b.programs.count({0, c.batch}));
  const ir::Module &module = b.programs.at({0, c.batch}).module;
  const std::string golden =
      fixturesDir() + "/golden/" + c.model + "/b" + std::to_string(c.batch) + ".safetensors";

  std::vector<Tensor> reference;
  for (int threads : {1, 2, 4, 16}) {
    auto program = Program::compile(module, "main", contextWithThreads(threads));
    ASSERT_TRUE(program.isOk()) << program.status().toString();
    std::vector<Tensor> args = goldenInputs(b, **program, golden);
    ASSERT_FALSE(args.empty());
    auto out = (*program)->run(args);
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    if (reference.empty()) {
      reference = std::move(out).value();
      continue;
    }
    expectSameBytes(reference, *out, std::to_string(threads) + " threads vs 1 thread");
    if (threads == 4) { // a second run of the same program
      auto again = (*program)->run(args);
      ASSERT_TRUE(again.isOk()) << again.status().toString();
      expectSameBytes(reference, *again, "second run with 4 threads");
    }
  }

  // The generic form of the same program gives the same bytes.
  const std::string generic = fixturesDir() + "/bundles/" + c.model + "/generic/model.b" +
                              std::to_string(c.batch) + ".mlir";
  auto parsed = ir::parseModuleFile(generic);
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  auto program = Program::compile(*parsed, "main", contextWithThreads(2));
  ASSERT_TRUE(program.isOk()) << program.status().toString();
  auto out = (*program)->run(goldenInputs(b, **program, golden));
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectSameBytes(reference, *out, "generic form vs pretty form");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DeterminismTest, ::testing::ValuesIn(kPrograms), caseName);

// run() is thread-safe: four threads running one Program at once (sharing its context's
// pool) all get the single-threaded bytes.
TEST(Concurrency, ConcurrentRunsOfOneProgram) {
  for (const char *model : {"tiny_bert", "resnet_mini", "op_zoo"}) {
    const bundle::Bundle &b = fixtureBundle(model);
    const int64_t batch = b.programs.rbegin()->first.batch_size;
    const std::string golden =
        fixturesDir() + "/golden/" + model + "/b" + std::to_string(batch) + ".safetensors";
    auto serial = Program::compile(b.programs.at({0, batch}).module, "main", contextWithThreads(1));
    auto shared = Program::compile(b.programs.at({0, batch}).module, "main", contextWithThreads(4));
    ASSERT_TRUE(serial.isOk() && shared.isOk());
    std::vector<Tensor> args = goldenInputs(b, **serial, golden);
    auto reference = (*serial)->run(args);
    ASSERT_TRUE(reference.isOk()) << reference.status().toString();
    std::vector<std::vector<Tensor>> results(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < results.size(); ++t)
      threads.emplace_back([&, t] {
        for (int rep = 0; rep < 3; ++rep) {
          auto out = (*shared)->run(args);
          if (out.isOk())
            results[t] = std::move(out).value();
        }
      });
    for (std::thread &t : threads)
      t.join();
    for (const auto &r : results)
      expectSameBytes(*reference, r, std::string(model) + " concurrent run");
  }
}

} // namespace
} // namespace rs::cpu::testing
