//===- test/bundle/multishape_fixture.h - The multi-shape bundle fixture ---===//
//
// Paths and helpers for the checked-in multi-shape fixture under test/data (written by
// test/data/tools/make_multishape_fixture.py): text_encoder_ms, a text encoder with a
// variable sequence axis s compiled at input_shapes [{s: 8}, {s: 16}] and batch sizes 1 and
// 4 (programs model.v{i}.b{N}.mlir as StableHLO text), the same bundle as portable
// artifacts (text_encoder_ms_portable), and JAX's CPU outputs per program
// (golden/text_encoder_ms/v{i}.b{N}.safetensors: inputs input_ids and attention_mask, outputs
// hidden, pooled and logits). Used by the bundle, runtime, validation and e2e tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>

namespace rs::multishape {

inline const std::string kTestData = RS_TEST_DATA_DIR;
inline constexpr const char *kMultiShapeModel = "text_encoder_ms";
/// The sequence length of each shape variant, in input_shapes order.
inline constexpr int64_t kSeqLengths[] = {8, 16};
inline constexpr int64_t kMultiShapeBatchSizes[] = {1, 4};

/// test/data/bundles/text_encoder_ms, or its portable-artifact copy.
inline std::string multiShapeBundle(bool portable = false) {
  return kTestData + "/bundles/" + kMultiShapeModel + (portable ? "_portable" : "");
}

/// The golden file of variant `variant` at batch size `batch`.
inline std::string multiShapeGolden(size_t variant, int64_t batch) {
  return kTestData + "/golden/" + kMultiShapeModel + "/v" + std::to_string(variant) + ".b" +
         std::to_string(batch) + ".safetensors";
}

/// Copies the regular files of directory `from` into a new directory `to` (writable),
/// so that a test may change them or let the executable cache write beside them.
inline void copyBundleDir(const std::filesystem::path &from, const std::filesystem::path &to) {
  namespace fs = std::filesystem;
  fs::create_directories(to);
  for (const auto &e : fs::directory_iterator(from))
    if (e.is_regular_file())
      fs::copy_file(e.path(), to / e.path().filename(), fs::copy_options::overwrite_existing);
}

/// Tolerance of a served f32 output against JAX's golden, per element:
/// |ours - jax| <= kAbsTol + kRelTol * |jax|. The built-in CPU executor and XLA:CPU sum in
/// other orders and use other exp/tanh/rsqrt approximations, so results differ in the last
/// bits; kAbsTol covers elements near zero (layer-norm outputs, pooled means).
inline constexpr double kRelTol = 1e-5;
inline constexpr double kAbsTol = 1e-6;

/// The largest errors of one comparison and the first element outside the tolerance.
struct GoldenDiff {
  double max_abs = 0;
  double max_rel = 0;
  std::string first_bad; // "" when every element is within the tolerance
};

/// Compares f32 tensors `ours` and `want` (same shape) element by element.
inline GoldenDiff compareToGolden(const Tensor &ours, const Tensor &want) {
  GoldenDiff diff;
  if (ours.dtype() != DType::kF32 || want.dtype() != DType::kF32 || ours.shape() != want.shape()) {
    diff.first_bad = "shape " + shapeToString(ours.shape()) + " vs golden " +
                     shapeToString(want.shape()) + " (f32 expected)";
    return diff;
  }
  for (int64_t i = 0; i < ours.numElements(); ++i) {
    const double a = ours.dataAs<float>()[i], b = want.dataAs<float>()[i];
    const double err = std::fabs(a - b);
    diff.max_abs = std::max(diff.max_abs, err);
    if (b != 0)
      diff.max_rel = std::max(diff.max_rel, err / std::fabs(b));
    if (diff.first_bad.empty() && !(err <= kAbsTol + kRelTol * std::fabs(b))) {
      std::ostringstream os;
      os << "element " << i << ": ours " << a << ", jax " << b;
      diff.first_bad = os.str();
    }
  }
  return diff;
}

} // namespace rs::multishape
