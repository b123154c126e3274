//===- server/request_validation.h - Check a request against a manifest ----===//
//
// Input validation happens before queueing (reference-system.md §5.2): every declared
// input present once, no undeclared input, datatype equal (a BYTES input never is: every
// executable input is numeric), rank equal, fixed dims equal,
// every input with the same row count along its batch axis, at least one row. Requested
// outputs must be declared. Shapes are row-major (the manifest's letters reversed).
// A multi-shape model (manifest input_shapes) routes the request to the shape variant whose
// sizes equal its inputs' variable axes (bundle/shape_variant.h); matching none is an error.
//
// Errors are InvalidArgument and name the tensor and the reason, e.g.
// `input 'image': shape [1,8,8] does not match the model's [-1,8,8,1]`, or for no variant
// `input 'input_ids': shape [1,12] matches no shape variant of the model; variants served:
// [-1,8] {s=8}, [-1,16] {s=16}` (the input's shape in each variant, then its sizes).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/manifest.h"
#include "protocol/inference.h"

#include <vector>

namespace rs::server {

/// A request checked against its model: inputs in manifest order, and the row count
/// along the batch axis (0 for an unbatched model).
struct ValidatedInputs {
  std::vector<Tensor> inputs;
  int64_t rows = 0;
  /// The shape variant the request is routed to (index into the manifest's input_shapes; 0
  /// for a single-shape model).
  size_t variant = 0;
  /// Indices into the manifest's executable_outputs, in the order to return them.
  std::vector<size_t> outputs;
};

/// Checks `request` against `manifest`. See the file comment for the rules.
Result<ValidatedInputs> validateRequest(const bundle::Manifest &manifest,
                                        const protocol::InferRequest &request);

/// Checks `tensors` against `specs` by the rules of the file comment, BYTES allowed where
/// a spec has dtype `bytes` and variable (-1) axes of any size: the wire-facing tensors of a
/// model with hooks (docs/hooks.md), and what its hooks return. `role` names a tensor in
/// messages ("input", "postprocess output"); errors have `code`. The tensors in spec order.
Result<std::vector<protocol::NamedTensor>>
checkTensors(const std::vector<bundle::TensorSpec> &specs,
             const std::vector<protocol::NamedTensor> &tensors, std::string_view role,
             StatusCode code);

/// "model 'digits_cnn', request 'abc'" (without the id when empty): the prefix of a
/// request's errors.
std::string requestPrefix(const protocol::InferRequest &r);

/// A scheduler failure with the request's prefix. The scheduler names the model itself
/// ("model 'm': deadline exceeded ...", "model 'm' was unloaded"): that name is replaced by
/// the prefix (which adds the request id) instead of repeated.
Status withRequestPrefix(const Status &s, const std::string &model, const std::string &prefix);

/// The answer for a request of `model` while it unloads (WorkerService's gate is closed).
Status closingError(const std::string &model);

/// The indices into `outputs` of `requested` (all of them, in order, when empty).
/// InvalidArgument for an unknown name or one requested twice.
Result<std::vector<size_t>> selectOutputs(const std::vector<bundle::TensorSpec> &outputs,
                                          const std::vector<std::string> &requested);

} // namespace rs::server
