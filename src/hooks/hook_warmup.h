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

} // namespace rs::hooks
