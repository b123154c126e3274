//===- pjrt/tf32_probe.cc - Does this device compute f32 products in TF32? -===//
#include "pjrt/tf32_probe.h"

#include <chrono>
#include <cmath>
#include <cstring>

namespace rs::pjrt {
namespace {

constexpr int64_t kN = kTf32ProbeSize;

double millisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Compiles `program` and runs it on (A, I); returns C.
Result<Tensor> runLeg(const Client &client, const std::string &program,
                      const std::string &compile_options) {
  RS_ASSIGN_OR_RETURN(LoadedExecutable exe, client.compile(program, compile_options));
  RS_ASSIGN_OR_RETURN(DeviceBuffer a, client.upload(tf32ProbeMatrix()));
  RS_ASSIGN_OR_RETURN(DeviceBuffer eye, client.upload(tf32ProbeIdentity()));
  const DeviceBuffer *args[] = {&a, &eye};
  RS_ASSIGN_OR_RETURN(std::vector<Tensor> out, exe.run(args));
  if (out.size() != 1 || out[0].dtype() != DType::kF32 || out[0].numElements() != kN * kN)
    return internalError() << "tf32 probe: expected one f32[512,512] result";
  return out[0];
}

} // namespace

std::string Tf32ProbeResult::logFields() const {
  std::string s = "tf32_active=";
  s += tf32_active ? (*tf32_active ? "true" : "false") : "unknown";
  s += " pinned_exact=";
  s += pinned_ran ? (pinned_exact ? "true" : "false") : "skipped";
  return s;
}

std::string tf32ProbeProgram(std::string_view precision) {
  const std::string p(precision);
  return "module @tf32_probe {\n"
         "  func.func public @main(%arg0: tensor<512x512xf32>, %arg1: tensor<512x512xf32>) -> "
         "tensor<512x512xf32> {\n"
         "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], "
         "precision = [" +
         p + ", " + p +
         "] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>\n"
         "    return %0 : tensor<512x512xf32>\n"
         "  }\n"
         "}\n";
}

Tensor tf32ProbeMatrix() {
  Tensor a = Tensor::zeros(DType::kF32, {kN, kN});
  float *p = a.mutableDataAs<float>();
  for (int64_t i = 0; i < kN; ++i) {
    for (int64_t j = 0; j < kN; ++j) {
      const int64_t k = 1 + (kN * i + j) % 511;
      p[i * kN + j] = 1.0f + std::ldexp(static_cast<float>(k), -20);
    }
  }
  return a;
}

Tensor tf32ProbeIdentity() {
  Tensor eye = Tensor::zeros(DType::kF32, {kN, kN});
  float *p = eye.mutableDataAs<float>();
  for (int64_t i = 0; i < kN; ++i)
    p[i * kN + i] = 1.0f;
  return eye;
}

ProbeVerdict classifyProbeOutput(const Tensor &a, const Tensor &c, int64_t *mismatches) {
  int64_t differ = 0;
  bool all_one = true;
  const int64_t n = a.numElements();
  if (c.numElements() != n || c.dtype() != DType::kF32) {
    if (mismatches)
      *mismatches = n;
    return ProbeVerdict::kOther;
  }
  const float *pa = a.dataAs<float>();
  const float *pc = c.dataAs<float>();
  for (int64_t i = 0; i < n; ++i) {
    if (std::memcmp(&pa[i], &pc[i], sizeof(float)) != 0)
      ++differ;
    if (pc[i] != 1.0f)
      all_one = false;
  }
  if (mismatches)
    *mismatches = differ;
  if (differ == 0)
    return ProbeVerdict::kExact;
  return all_one ? ProbeVerdict::kTf32 : ProbeVerdict::kOther;
}

Result<Tf32ProbeResult> runTf32Probe(const Client &client, const Tf32ProbeOptions &options) {
  Tf32ProbeResult result;
  const Tensor a = tf32ProbeMatrix();

  auto start = std::chrono::steady_clock::now();
  auto def = runLeg(client, tf32ProbeProgram("DEFAULT"), options.compile_options);
  result.default_ms = millisSince(start);
  if (!def.isOk()) {
    result.default_error = def.status().toString();
  } else {
    int64_t mismatches = 0;
    switch (classifyProbeOutput(a, *def, &mismatches)) {
    case ProbeVerdict::kExact: result.tf32_active = false; break;
    case ProbeVerdict::kTf32: result.tf32_active = true; break;
    case ProbeVerdict::kOther:
      result.default_error = "DEFAULT leg matched neither f32 nor tf32 (" +
                             std::to_string(mismatches) + " entries differ from A)";
      break;
    }
  }

  if (options.run_pinned) {
    start = std::chrono::steady_clock::now();
    const std::string program =
        options.pinned_program.empty() ? tf32ProbeProgram("HIGHEST") : options.pinned_program;
    auto pinned = runLeg(client, program, options.compile_options);
    result.pinned_ms = millisSince(start);
    if (!pinned.isOk())
      return pinned.status().withPrefix("tf32 probe (pinned leg)");
    result.pinned_ran = true;
    result.pinned_exact =
        classifyProbeOutput(a, *pinned, &result.pinned_mismatches) == ProbeVerdict::kExact;
  }
  return result;
}

} // namespace rs::pjrt
