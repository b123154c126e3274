//===- runtime/host_results.h - Results written to pinned host memory -----===//
//
// The program edit that makes XLA's GPU backend write each result of `main` straight into
// page-locked host memory at the end of the run (`../shared/reference/pjrt-fast-path.md`
// 2.3, the edit jax makes for a result placed in memory kind "pinned_host"): every value
// `main` returns goes through
//
//   stablehlo.custom_call @annotate_device_placement(%r) {has_side_effect = true,
//       mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}}
//
// and each result gets the result attribute `mhlo.memory_kind = "pinned_host"`. The
// values are the same; only where the last copy of each lands changes. The server then
// answers from those host buffers once the run has completed, instead of starting one
// device-to-host copy per result after it (pjrt/client.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"

#include <optional>
#include <string_view>

namespace rs::runtime {

/// A copy of `module` with every result of function `entry` placed in pinned host memory
/// (file comment). nullopt when `entry` is missing or returns nothing or a value that is
/// not a tensor (a tuple or token result cannot carry a memory kind): compile the module
/// as it is then.
std::optional<ir::Module> withResultsInHostMemory(const ir::Module &module, std::string_view entry);

} // namespace rs::runtime
