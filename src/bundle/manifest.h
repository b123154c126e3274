//===- bundle/manifest.h - manifest.yaml (bundle format 2.0) ---------------===//
//
// Parses and validates a bundle's manifest.yaml, format 2.0 (reference-system.md §1,
// "manifest.yaml schema"). Axis letters in the manifest are Julia column-major, batch last
// by convention; every shape this API returns is row-major (the letters reversed), which is
// the MLIR argument order and the KServe V2 wire order.
//
//   executable_inputs:
//     - {name: image, dtype: f32, shape: "edcn", dims: {c: 8, d: 8, e: 1}}
//   -> letters "edcn", row-major axes n,c,d,e, batch_axis 0, wireShape() [-1,8,8,1],
//      shapeForBatch(4) [4,8,8,1].
//
// Letters `n` and `b` mark the batch axis (at most one per tensor). Every other letter has
// a dims entry: a size > 0, or -1 for a variable axis whose sizes come from the
// `input_shapes` variants. Dtype tokens are the manifest's (f32, i32, u8, bool, ...);
// f8_e5m2/f8_e4m3 are valid reference tokens this server does not support. `bytes` (KServe
// BYTES strings) is this server's token for wire-facing specs that model.py hooks consume or
// produce; an executable never takes it.
//
// Errors: InvalidArgument whose message names the file, the line and column and the field
// (support/yaml.h), e.g.
// `manifest.yaml:3:46: executable_inputs[0].dims: letter 'q' is not in shape 'edcn'`; an
// unsupported dtype is Unimplemented. Unknown and duplicate keys (top level, batching, meta,
// tensor specs) are errors naming the key. Integers follow support/yaml.h's grammar.
//
// Thread safety: plain values.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/dtype.h"
#include "support/status.h"
#include "support/tensor.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rs::bundle {

/// The kind of one axis.
enum class DimKind : uint8_t {
  kFixed,    // a size > 0 from `dims`
  kBatch,    // letter n or b
  kVariable, // dims entry -1: the size comes from an input_shapes variant
};

/// One axis of a tensor spec, in row-major order.
struct Dim {
  char letter = 0;
  DimKind kind = DimKind::kFixed;
  int64_t size = -1; // kFixed: the size; otherwise -1
};

/// One compiled variant of the variable axes: letter -> size (> 0).
using ShapeVariant = std::map<char, int64_t>;

/// A tensor spec `{name, dtype, shape, dims}` with its derived row-major form.
struct TensorSpec {
  std::string name;
  DType dtype = DType::kInvalid; // kInvalid when `bytes`
  /// dtype `bytes`: KServe BYTES, variable-length strings (client_inputs/client_outputs only).
  bool bytes = false;
  std::string letters;           // the manifest's `shape` string, column-major
  std::map<char, int64_t> dims;  // the manifest's `dims` (sizes > 0 or -1)
  std::vector<Dim> axes;         // row-major: letters reversed
  std::optional<int> batch_axis; // 0-based row-major axis of n/b, if any

  int64_t rank() const { return static_cast<int64_t>(axes.size()); }
  bool hasVariableDims() const;
  /// Row-major wire shape: fixed sizes, -1 for the batch axis and variable axes
  /// (what ModelMetadata reports).
  Shape wireShape() const;
  /// Row-major shape at `batch_size` (the batch axis set to it; ignored without one).
  /// Variable axes take their size from `variant`, or stay -1 when it lacks the letter.
  Shape shapeForBatch(int64_t batch_size, const ShapeVariant &variant = {}) const;
  /// Dtype token and wire shape, e.g. "f32[-1,8,8,1]" ("bytes[-1]").
  std::string toString() const;
};

enum class BundleKind : uint8_t { kModel, kMeta };

struct Manifest {
  std::string format_version; // "2.0" or "2"
  /// The manifest's `name` (empty when absent). Informational: a bundle is served under
  /// its directory's name.
  std::string name;
  std::string description;
  BundleKind kind = BundleKind::kModel;
  std::vector<TensorSpec> executable_inputs;
  std::vector<TensorSpec> executable_outputs;
  /// The wire-facing specs (see parseManifest); empty: the wire is the executable's.
  std::vector<TensorSpec> client_inputs;
  std::vector<TensorSpec> client_outputs;
  /// batching.compiled_batch_sizes, each > 0, sorted ascending, no duplicates; empty when
  /// the manifest has no `batching` block.
  std::vector<int64_t> compiled_batch_sizes;
  /// input_shapes: the compiled variants of the variable executable-input axes.
  std::vector<ShapeVariant> input_shapes;
  std::vector<std::string> meta_calls; // meta.calls
  /// provenance: scalar values as their text, nested values as flow-style YAML (keys sorted).
  std::map<std::string, std::string> provenance;
  /// 0-based row-major batch axis of the first batched executable input (reference:
  /// input_batch_dim), or none when the executable inputs have no batch axis.
  std::optional<int> input_batch_dim;

  /// True when the executable inputs carry a batch axis (all of them do, or none).
  bool batched() const { return input_batch_dim.has_value(); }
  /// The largest compiled batch size (0 when none are listed).
  int64_t maxBatchSize() const;
  /// The tensors clients send and receive: client_inputs (client_outputs) when declared,
  /// else the executable's.
  const std::vector<TensorSpec> &wireInputs() const {
    return client_inputs.empty() ? executable_inputs : client_inputs;
  }
  const std::vector<TensorSpec> &wireOutputs() const {
    return client_outputs.empty() ? executable_outputs : client_outputs;
  }
};

/// Parses manifest YAML `text`. `file` names the source in messages (e.g. the path of
/// manifest.yaml). `model_name` (the bundle directory's basename) is used to reject a meta
/// bundle that calls itself; may be empty. client_inputs/client_outputs (the wire-facing
/// specs, which may use dtype `bytes`) are allowed on `kind: model` only when `has_hooks`
/// (the bundle has model.py, docs/hooks.md) and are required, non-empty for `kind: meta`.
Result<Manifest> parseManifest(std::string_view text, std::string_view file,
                               std::string_view model_name = "", bool has_hooks = false);

/// Reads and parses the file at `path` (NotFound if it cannot be read); messages name
/// the path.
Result<Manifest> loadManifest(const std::string &path, std::string_view model_name = "",
                              bool has_hooks = false);

} // namespace rs::bundle
