//===- hooks/hook_warmup.h - The determinism warm-up of a model's hooks ------===//
//
// Under `runtime.profile: regulated` the same request must give the same bytes
// (seed/reproducibility.md), and a hook is code the server cannot inspect. So at load
// each registered hook runs twice on one fixed input and its two results are compared
// byte for byte: preprocess on the wire-facing inputs (zeros; every BYTES element the
// text "reactant"; batch and variable axes of size 1), postprocess on the executable
// outputs (zeros, at the smallest compiled batch size). A difference fails the load
// (FailedPrecondition naming the hook and the tensor); a hook that refuses the fixed
// input (raises) is logged as a warning and not compared.
//
// A meta model's run is checked the same way (checkRunDeterministic), on zeros of its
// client_inputs (batch and variable axes of 1), once every model it calls is served: its
// calls go to those models as its requests' calls do, so the check covers the whole chain.
//
// Thread safety: runs the pool's calls one after another; call it before serving.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/manifest.h"
#include "hooks/hook_pool.h"

namespace rs::hooks {

/// Runs the warm-up of the file comment on `pool` (model.py of bundle `dir`).
Status checkHooksDeterministic(const HookPool &pool, const bundle::Manifest &manifest,
                               const std::string &dir);

/// Runs a meta model's run (`pool`, bundle `dir`) twice on the fixed input of the file
/// comment, its calls answered by `call`, and compares the two results byte for byte.
/// Errors: FailedPrecondition `<dir>/model.py: run gave different results for the same
/// input on two runs (tensor 'x' differs); ...` on a difference; the pool's errors other
/// than the run raising (which is logged as `hook warm-up not compared`). OK when the pool
/// has no run.
Status checkRunDeterministic(const HookPool &pool, const bundle::Manifest &manifest,
                             const std::string &dir, const HookPool::SubCall &call);

} // namespace rs::hooks
