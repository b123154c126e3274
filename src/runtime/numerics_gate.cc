//===- runtime/numerics_gate.cc - runtime.numerics at start-up: probe and pass options -===//
#include "runtime/numerics_gate.h"

#include "ir/parser.h"
#include "pjrt/tf32_probe.h"
#include "runtime/executable_cache.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <optional>

namespace rs::runtime {
namespace {

/// The probe programs' cache (Tf32GateOptions::probe_cache_dir), keyed like every served
/// program.
struct ProbeCache {
  ExecutableCache cache;
  CacheKeyParts parts;
};

ProbeCache probeCache(const Backend &backend, const Tf32GateOptions &options) {
  CacheKeyParts parts;
  parts.compile_settings = options.compile_settings;
  parts.device = backend.deviceInfo();
  parts.server_build = options.server_build;
  return {ExecutableCache(options.probe_cache_dir,
                          options.executable_cache && !options.probe_cache_dir.empty(),
                          options.executable_cache_key),
          std::move(parts)};
}

/// One leg of the TF32 probe: C = A·I with `module`, compiled through the executable cache
/// (so a warm start compiles nothing). Returns C; `ms` gets the leg's time including
/// compile or load.
Result<Tensor> runProbeLeg(Backend &backend, const ir::Module &module, const std::string &name,
                           ProbeCache &cache, double *ms) {
  const auto start = std::chrono::steady_clock::now();
  RS_ASSIGN_OR_RETURN(CachedProgram program,
                      cache.cache.loadOrCompile(backend, module, name, cache.parts));
  const Tensor a = pjrt::tf32ProbeMatrix();
  const std::vector<Tensor> args{a, pjrt::tf32ProbeIdentity()};
  RS_ASSIGN_OR_RETURN(std::vector<Tensor> out, program.executable->execute(args));
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("TF32 probe leg={} executable_cache={} ms={:.1f}", name,
               program.outcome.hit ? "hit" : "miss (" + program.outcome.miss_reason + ")", *ms);
  if (out.size() != 1)
    return internalError() << "TF32 probe leg " << name << ": " << out.size()
                           << " results, expected 1";
  return out.front();
}

} // namespace

passes::NumericsOptions numericsOptionsFor(passes::NumericsMode mode, const DeviceInfo &device) {
  return {mode, device.has_tf32};
}

Status exportF32Environment(const pjrt::VendorProfile &vendor, passes::NumericsMode mode) {
  if (mode != passes::NumericsMode::kF32)
    return Status::ok();
  for (const auto &[name, value] : vendor.f32Environment())
    if (::setenv(name.c_str(), value.c_str(), 1) != 0)
      return internalError() << "cannot set " << name << "=" << value << " for numerics f32";
  return Status::ok();
}

Result<Tf32Facts> runTf32Gate(Backend &backend, const Tf32GateOptions &options) {
  const bool f32 = options.mode == passes::NumericsMode::kF32;
  const std::string_view mode = passes::numericsModeName(options.mode);
  const Tensor a = pjrt::tf32ProbeMatrix();
  double default_ms = 0, pinned_ms = 0;
  std::optional<bool> tf32_active;
  std::string default_error;
  ProbeCache cache = probeCache(backend, options);
  RS_ASSIGN_OR_RETURN(ir::Module probe,
                      ir::parseModule(pjrt::tf32ProbeProgram("DEFAULT"), "tf32_probe.mlir"));
  Result<Tensor> c = runProbeLeg(backend, probe, "tf32_probe.default", cache, &default_ms);
  if (c.isOk()) {
    int64_t mismatches = 0;
    const pjrt::ProbeVerdict verdict = pjrt::classifyProbeOutput(a, *c, &mismatches);
    if (verdict != pjrt::ProbeVerdict::kOther)
      tf32_active = verdict == pjrt::ProbeVerdict::kTf32;
    else
      default_error = std::to_string(mismatches) + " entries differ from A, not all 1.0";
  } else {
    default_error = c.status().toString();
    spdlog::warn("TF32 probe: the DEFAULT leg failed: {}", default_error);
  }
  std::string pinned = "skipped";
  int64_t pinned_mismatches = 0;
  if (f32) {
    // The pinned leg is the probe after the numerics pass: the path every served f32
    // program takes.
    RS_RETURN_IF_ERROR(
        passes::pinNumerics(probe, numericsOptionsFor(options.mode, backend.deviceInfo()))
            .status());
    RS_ASSIGN_OR_RETURN(Tensor pc,
                        runProbeLeg(backend, probe, "tf32_probe.pinned", cache, &pinned_ms));
    const bool exact =
        pjrt::classifyProbeOutput(a, pc, &pinned_mismatches) == pjrt::ProbeVerdict::kExact;
    pinned = exact ? "true" : "false";
  }
  const std::string active = tf32_active ? (*tf32_active ? "true" : "false") : "unknown";
  spdlog::info("TF32 probe numerics={} tf32_active={} pinned_exact={} default_ms={:.1f} "
               "pinned_ms={:.1f}{}",
               mode, active, pinned, default_ms, pinned_ms,
               default_error.empty() ? "" : " default_error=" + default_error);
  if (f32 && pinned != "true")
    return failedPrecondition() << "TF32 probe: numerics f32 but the pinned product is not "
                                   "bit-exact ("
                                << pinned_mismatches << " of "
                                << pjrt::kTf32ProbeSize * pjrt::kTf32ProbeSize
                                << " entries differ); the device does not compute f32 exactly";
  if (options.mode == passes::NumericsMode::kTf32 && tf32_active != true)
    return failedPrecondition() << "TF32 probe: numerics tf32 but the device does not compute "
                                   "in TF32 (tf32_active expected true, got "
                                << active << ")";
  return Tf32Facts{
      {"numerics", std::string(mode)}, {"tf32_active", active}, {"pinned_exact", pinned}};
}

Tf32Facts cpuTf32Facts(passes::NumericsMode mode) {
  const std::string_view name = passes::numericsModeName(mode);
  spdlog::info("TF32 probe numerics={} tf32_active=not applicable (cpu backend computes f32 "
               "exactly) pinned_exact=not applicable",
               name);
  return {{"numerics", std::string(name)},
          {"tf32_active", "not applicable (cpu backend computes f32 exactly)"},
          {"pinned_exact", "not applicable"}};
}

} // namespace rs::runtime
