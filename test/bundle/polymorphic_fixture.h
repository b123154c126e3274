//===- test/bundle/polymorphic_fixture.h - The shape-polymorphic fixtures ---===//
//
// Paths of the checked-in shape-polymorphic fixtures under test/data (written by
// test/data/tools/make_polymorphic_fixture.py with jax 0.10.2 on the CPU), each a pair of
// bundles with the same manifest and weights:
//   mlp_poly / mlp_sized          x f32 [n, 8] -> y f32 [n, 4]; batch sizes 1, 2, 4, 8;
//                                 one model.mlir (`?x8`) / model.b{N}.mlir
//   encoder_poly / encoder_sized  one transformer encoder layer, x f32 [n, s, 8] -> y;
//                                 input_shapes [{s: 4}, {s: 8}], batch sizes 1 and 3; one
//                                 model.mlir (`?x?x8`, shape_assertion "s <= 16") /
//                                 model.v{i}.b{N}.mlir
// and JAX's CPU outputs per program (golden/<model>_poly/b{N}.safetensors and
// v{i}.b{N}.safetensors: x and y).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rs::polymorphic {

inline const std::string kTestData = RS_TEST_DATA_DIR;

/// One fixture model: its name stem, variants (sequence lengths; empty for single-shape)
/// and compiled batch sizes.
struct FixtureModel {
  std::string stem; // "mlp", "encoder"
  std::vector<int64_t> seq_lengths;
  std::vector<int64_t> batch_sizes;

  std::string polyName() const { return stem + "_poly"; }
  std::string sizedName() const { return stem + "_sized"; }
  std::string polyDir() const { return kTestData + "/bundles/" + polyName(); }
  std::string sizedDir() const { return kTestData + "/bundles/" + sizedName(); }
  size_t variants() const { return seq_lengths.empty() ? 1 : seq_lengths.size(); }
  /// "b4" or "v1.b3": the golden file stem and the evidence key of a program.
  std::string programStem(size_t variant, int64_t batch) const {
    return (seq_lengths.empty() ? "" : "v" + std::to_string(variant) + ".") + "b" +
           std::to_string(batch);
  }
  std::string golden(size_t variant, int64_t batch) const {
    return kTestData + "/golden/" + polyName() + "/" + programStem(variant, batch) + ".safetensors";
  }
};

inline const FixtureModel kMlp{"mlp", {}, {1, 2, 4, 8}};
inline const FixtureModel kEncoder{"encoder", {4, 8}, {1, 3}};

} // namespace rs::polymorphic
