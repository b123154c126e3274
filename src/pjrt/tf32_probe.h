//===- pjrt/tf32_probe.h - Does this device compute f32 products in TF32? -===//
//
// The TF32 probe (reference-system.md section 3.2, DESIGN.md "Numerics"): the 512x512
// f32 product C = A·I with A[i,j] = 1 + k·2^-20, k = 1 + (512·i + j) mod 511 (so
// 1 <= k <= 511). Every A[i,j] is exact in f32, so an f32 product reproduces A bit for bit;
// TF32 keeps 10 mantissa bits, and since k·2^-20 < 2^-11 (half a TF32 ulp at 1.0) every
// entry rounds or truncates to exactly 1.0.
//
//   DEFAULT leg   precision = [DEFAULT, DEFAULT]: tf32_active = true when every entry of
//                 C is 1.0, false when C == A bit for bit, unknown (nullopt) otherwise or
//                 when the leg fails. Informational.
//   pinned leg    the same dot through the pinned path (by default precision =
//                 [HIGHEST, HIGHEST]; the caller may pass the program its f32 pass made):
//                 pinned_exact = (C == A bit for bit). Under numerics=f32 startup fails
//                 unless it is exact.
//
// Memory: about 3 MB of device memory while it runs (A, I, C). Errors: the leg's PJRT
// errors are recorded in the result (the DEFAULT leg's never fail the probe); runTf32Probe
// returns an error only when the pinned leg was asked for and could not run.
// Thread safety: free functions; the client is used concurrently-safely.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pjrt/client.h"
#include "support/status.h"
#include "support/tensor.h"

#include <optional>
#include <string>
#include <string_view>

namespace rs::pjrt {

inline constexpr int64_t kTf32ProbeSize = 512;

/// What C = A·I looked like.
enum class ProbeVerdict {
  kExact, // C == A bit for bit: f32 arithmetic
  kTf32,  // every entry is exactly 1.0: TF32 (or coarser) operands
  kOther, // neither
};

struct Tf32ProbeResult {
  /// DEFAULT leg; nullopt when it failed or gave neither pattern.
  std::optional<bool> tf32_active;
  std::string default_error; // why the DEFAULT leg gave no answer ("" if it did)
  bool pinned_ran = false;
  bool pinned_exact = false;
  int64_t pinned_mismatches = 0; // entries of C != A in the pinned leg
  double default_ms = 0;         // compile + run time of each leg, milliseconds
  double pinned_ms = 0;
  /// "tf32_active=true pinned_exact=true" (pinned_exact=skipped when not run,
  /// tf32_active=unknown when nullopt): the fields of the `TF32 probe` log line.
  std::string logFields() const;
};

/// The probe's StableHLO program (pretty text, `main(A, B) = dot(A, B)`) with
/// `precision` ("DEFAULT", "HIGH" or "HIGHEST") on both operands.
std::string tf32ProbeProgram(std::string_view precision);
/// A (f32 [512,512]) and the identity.
Tensor tf32ProbeMatrix();
Tensor tf32ProbeIdentity();
/// Classifies a product against A. Number of entries differing from A into `mismatches`.
ProbeVerdict classifyProbeOutput(const Tensor &a, const Tensor &c, int64_t *mismatches);

struct Tf32ProbeOptions {
  /// Serialized CompileOptionsProto for both legs (the backend's XLA flags).
  std::string compile_options;
  /// Run the pinned leg (numerics=f32).
  bool run_pinned = true;
  /// The pinned leg's program; "" = tf32ProbeProgram("HIGHEST").
  std::string pinned_program;
};

/// Runs the probe on `client`'s device. Errors only as described in the file comment.
Result<Tf32ProbeResult> runTf32Probe(const Client &client, const Tf32ProbeOptions &options);

} // namespace rs::pjrt
