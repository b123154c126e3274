//===- config/xla_flags.h - The XLA option names runtime.xla_flags accepts -===//
//
// `runtime.xla_flags` (seed/reproducibility.md "Nondeterministic kernels") is a map of
// XLA debug option names to values, passed to XLA on every compile. XLA rejects or
// aborts on a name it does not know, so the names are checked when the configuration is
// resolved: a typo fails at startup, naming the key and the nearest known name.
//
// The list is the XLA of the PJRT plugin this server is validated with (jax-cuda13-pjrt
// 0.11.2, `xla_cuda_plugin.so`): every `xla_*` field of its DebugOptions proto, 338 names
// (the GPU backend passes the flags as compile-option overrides, which take exactly these
// field names). A newer plugin may know more; add them here.
//
// Thread safety: pure functions over a constant table.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace rs::config {

/// Every known XLA option name (without "--"), sorted.
std::span<const std::string_view> knownXlaFlags();

/// Whether `name` (without "--") is a known XLA option name.
bool isKnownXlaFlag(std::string_view name);

/// The known name closest to `name` by edit distance, when at most 3 edits away (a
/// likely typo); "" otherwise. Ties go to the first name in sorted order.
std::string closestXlaFlag(std::string_view name);

} // namespace rs::config
