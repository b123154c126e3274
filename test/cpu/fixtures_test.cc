//===- test/cpu/fixtures_test.cc - CPU executor vs the XLA:CPU goldens -----===//
//
// One table (model, batch size, tolerance) runs every fixture bundle program on the
// golden inputs (shared/fixtures/golden/<model>/b{N}.safetensors) and compares each
// output with XLA:CPU's: f32 within |ours - xla| <= rel_tol * |xla| + abs_scale * max|xla|
// (the two sum in different orders and use different transcendental approximations),
// integer outputs exactly. Max abs/rel errors and run times are printed per case.
// Also: the digits_cnn held-out test set through the b1 and b8 programs (argmax equal to
// XLA's for every image, accuracy 291/297 = 0.9798), and iris_mlp b32, which has no
// golden file, against the b8 golden repeated.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#include "bundle/safetensors.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace rs::cpu::testing {
namespace {

struct GoldenCase {
  const char *model;
  int64_t batch;
  double rel_tol;   // per element, relative to |xla|
  double abs_scale; // absolute floor, as a fraction of the output's largest |xla|
};

// Tolerance: |ours - xla| <= rel_tol * |xla| + abs_scale * max|xla| per output. Both
// executors compute in f32 within a few ulps per op but sum in different orders and use
// different exp/erfc/tanh approximations; near-zero elements (sums of terms that cancel)
// keep only an absolute accuracy relative to the output's scale, hence the floor. The
// observed errors (printed) are well inside: max abs err <= 1.4e-5 on outputs up to 38.
constexpr double kRel = 1e-5, kAbs = 1e-5;
constexpr GoldenCase kGoldenCases[] = {
    {"digits_cnn", 1, kRel, kAbs},   {"digits_cnn", 4, kRel, kAbs},
    {"digits_cnn", 8, kRel, kAbs},   {"iris_mlp", 1, kRel, kAbs},
    {"iris_mlp", 8, kRel, kAbs},     {"tiny_bert", 1, kRel, kAbs},
    {"tiny_bert", 4, kRel, kAbs},    {"resnet_mini", 1, kRel, kAbs},
    {"resnet_mini", 8, kRel, kAbs},  {"op_zoo", 1, kRel, kAbs},
    {"tf32_algo", 1, kRel, kAbs},    {"tf32_algo", 4, kRel, kAbs},
    {"bert_bench", 1, kRel, kAbs},   {"bert_bench", 8, kRel, kAbs},
    {"resnet_bench", 1, kRel, kAbs}, {"resnet_bench", 8, kRel, kAbs},
};

std::string caseName(const ::testing::TestParamInfo<GoldenCase> &info) {
  return std::string(info.param.model) + "_b" + std::to_string(info.param.batch);
}

bundle::SafetensorsFile openGolden(const std::string &model, const std::string &file) {
  auto r = bundle::SafetensorsFile::open(fixturesDir() + "/golden/" + model + "/" + file);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  return r.isOk() ? std::move(r).value() : bundle::SafetensorsFile{};
}

/// Arguments for `program`: the named inputs from `golden` (reshaped to the program's
/// argument shapes: scalars are stored as [1]), then the bundle's weights.
std::vector<Tensor> goldenArgs(const bundle::Bundle &b, const Program &program,
                               const bundle::SafetensorsFile &golden) {
  std::vector<Tensor> args;
  for (size_t i = 0; i < b.manifest.executable_inputs.size(); ++i) {
    auto t = golden.tensor(b.manifest.executable_inputs[i].name);
    EXPECT_TRUE(t.isOk()) << t.status().toString();
    if (!t.isOk())
      return {};
    const TensorType &want = program.inputTypes()[i];
    EXPECT_EQ(t->numElements(), want.numElements());
    args.push_back(t->reshaped(want.shape));
  }
  args.insert(args.end(), b.weights.begin(), b.weights.end());
  return args;
}

struct Errors {
  double max_abs = 0, max_rel = 0, max_golden = 0;
  int64_t mismatches = 0;
};

/// Compares `actual` with `expected` (same element count): f32 within
/// rel_tol * |x| + abs_scale * max|x|, every other type exactly.
Errors compare(const Tensor &actual, const Tensor &expected, double rel_tol, double abs_scale) {
  Errors e;
  EXPECT_EQ(actual.dtype(), expected.dtype());
  EXPECT_EQ(actual.numElements(), expected.numElements());
  if (actual.dtype() != expected.dtype() || actual.numElements() != expected.numElements()) {
    e.mismatches = 1;
    return e;
  }
  if (actual.dtype() != DType::kF32) {
    e.mismatches =
        std::memcmp(actual.data(), expected.data(), static_cast<size_t>(actual.byteSize())) != 0;
    return e;
  }
  const float *a = actual.dataAs<float>(), *x = expected.dataAs<float>();
  for (int64_t i = 0; i < actual.numElements(); ++i)
    e.max_golden = std::max(e.max_golden, std::fabs(static_cast<double>(x[i])));
  const double abs_tol = abs_scale * e.max_golden;
  for (int64_t i = 0; i < actual.numElements(); ++i) {
    double diff = std::fabs(static_cast<double>(a[i]) - x[i]);
    if (std::isnan(a[i]) != std::isnan(x[i]))
      diff = INFINITY;
    else if (std::isnan(a[i]))
      diff = 0;
    e.max_abs = std::max(e.max_abs, diff);
    if (x[i] != 0)
      e.max_rel = std::max(e.max_rel, diff / std::fabs(x[i]));
    if (!(diff <= abs_tol + rel_tol * std::fabs(x[i])))
      ++e.mismatches;
  }
  return e;
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, MatchesXlaCpu) {
  const GoldenCase &c = GetParam();
  const bundle::Bundle &b = fixtureBundle(c.model);
  ASSERT_TRUE(b.programs.count({0, c.batch})) << c.model << " has no b" << c.batch;
  auto program =
      Program::compile(b.programs.at({0, c.batch}).module, "main", contextWithThreads(2));
  ASSERT_TRUE(program.isOk()) << program.status().toString();
  bundle::SafetensorsFile golden =
      openGolden(c.model, "b" + std::to_string(c.batch) + ".safetensors");
  std::vector<Tensor> args = goldenArgs(b, **program, golden);
  ASSERT_FALSE(args.empty());

  auto start = std::chrono::steady_clock::now();
  auto outputs = (*program)->run(args);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  ASSERT_EQ(outputs->size(), b.manifest.executable_outputs.size());

  Errors total;
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string &name = b.manifest.executable_outputs[i].name;
    auto expected = golden.tensor(name);
    ASSERT_TRUE(expected.isOk()) << expected.status().toString();
    Errors e = compare((*outputs)[i], *expected, c.rel_tol, c.abs_scale);
    EXPECT_EQ(e.mismatches, 0) << c.model << " b" << c.batch << " output '" << name
                               << "': max abs err " << e.max_abs << ", max rel err " << e.max_rel;
    std::printf("[ golden   ]   %-18s max|xla| %-8.3g max abs err %-9.3g max rel err %.3g\n",
                name.c_str(), e.max_golden, e.max_abs, e.max_rel);
    total.max_abs = std::max(total.max_abs, e.max_abs);
    total.max_rel = std::max(total.max_rel, e.max_rel);
  }
  std::printf("[ golden   ] %-12s b%-2lld max abs err %.3g  max rel err %.3g  run %.1f ms\n",
              c.model, static_cast<long long>(c.batch), total.max_abs, total.max_rel, ms);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenTest, ::testing::ValuesIn(kGoldenCases), caseName);

// iris_mlp b32 has no golden file: its rows are independent, so the b8 golden input
// repeated four times must give the b8 golden output repeated.
TEST(GoldenTest, IrisB32MatchesRepeatedB8) {
  const bundle::Bundle &b = fixtureBundle("iris_mlp");
  auto program = Program::compile(b.programs.at({0, 32}).module, "main", contextWithThreads(2));
  ASSERT_TRUE(program.isOk()) << program.status().toString();
  bundle::SafetensorsFile golden = openGolden("iris_mlp", "b8.safetensors");
  auto features = golden.tensor("features"), logits = golden.tensor("logits");
  ASSERT_TRUE(features.isOk() && logits.isOk());
  auto repeat4 = [](const Tensor &t) {
    Shape shape = t.shape();
    shape[0] *= 4;
    Tensor r = Tensor::zeros(t.dtype(), shape);
    for (int k = 0; k < 4; ++k)
      std::memcpy(r.mutableData() + k * t.byteSize(), t.data(), static_cast<size_t>(t.byteSize()));
    return r;
  };
  std::vector<Tensor> args = {repeat4(*features)};
  args.insert(args.end(), b.weights.begin(), b.weights.end());
  auto outputs = (*program)->run(args);
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  Errors e = compare((*outputs)[0], repeat4(*logits), kRel, kAbs);
  EXPECT_EQ(e.mismatches, 0) << "max abs err " << e.max_abs << ", max rel err " << e.max_rel;
  std::printf("[ golden   ] iris_mlp     b32 max abs err %.3g  max rel err %.3g (vs b8 x4)\n",
              e.max_abs, e.max_rel);
}

//===----------------------------------------------------------------------===//
// digits_cnn held-out test set
//===----------------------------------------------------------------------===//

int64_t argmax(const float *row, int64_t n) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j)
    if (row[j] > row[best])
      best = j;
  return best;
}

/// Runs the test set through the b`batch` program (the last chunk padded with zeros) and
/// checks every prediction against XLA's logits; returns the number of correct labels.
int64_t runTestSet(int64_t batch) {
  const bundle::Bundle &b = fixtureBundle("digits_cnn");
  auto program = Program::compile(b.programs.at({0, batch}).module, "main", contextWithThreads(2));
  EXPECT_TRUE(program.isOk()) << program.status().toString();
  if (!program.isOk())
    return -1;
  bundle::SafetensorsFile set = openGolden("digits_cnn", "testset.safetensors");
  auto images = set.tensor("image"), logits = set.tensor("logits"), labels = set.tensor("label");
  EXPECT_TRUE(images.isOk() && logits.isOk() && labels.isOk());
  if (!images.isOk() || !logits.isOk() || !labels.isOk())
    return -1;
  const int64_t count = images->shape()[0], classes = logits->shape()[1];
  const int64_t image_bytes = images->byteSize() / count;
  int64_t correct = 0, agree = 0;
  for (int64_t first = 0; first < count; first += batch) {
    const int64_t rows = std::min(batch, count - first);
    Tensor input = Tensor::zeros(DType::kF32, {batch, 8, 8, 1});
    std::memcpy(input.mutableData(), images->data() + first * image_bytes,
                static_cast<size_t>(rows * image_bytes));
    std::vector<Tensor> args = {input};
    args.insert(args.end(), b.weights.begin(), b.weights.end());
    auto out = (*program)->run(args);
    EXPECT_TRUE(out.isOk()) << out.status().toString();
    if (!out.isOk())
      return -1;
    const float *ours = (*out)[0].dataAs<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = first + r;
      const int64_t pred = argmax(ours + r * classes, classes);
      const int64_t xla = argmax(logits->dataAs<float>() + i * classes, classes);
      EXPECT_EQ(pred, xla) << "image " << i << " (b" << batch << ")";
      agree += pred == xla;
      correct += pred == labels->dataAs<int32_t>()[i];
    }
  }
  std::printf("[ testset  ] digits_cnn b%lld: %lld/%lld agree with XLA, accuracy %lld/%lld = "
              "%.4f\n",
              static_cast<long long>(batch), static_cast<long long>(agree),
              static_cast<long long>(count), static_cast<long long>(correct),
              static_cast<long long>(count), static_cast<double>(correct) / count);
  EXPECT_EQ(set.metadata().at("accuracy"), "0.9798");
  return correct;
}

TEST(DigitsTestSet, B1ReproducesXlaAccuracy) { EXPECT_EQ(runTestSet(1), 291); }
TEST(DigitsTestSet, B8ReproducesXlaAccuracy) { EXPECT_EQ(runTestSet(8), 291); }

} // namespace
} // namespace rs::cpu::testing
