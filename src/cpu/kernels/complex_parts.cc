//===- cpu/kernels/complex_parts.cc - real, imag, complex ------------------===//
//
// stablehlo.real and stablehlo.imag: a complex tensor's parts (on a float operand, real
// is the identity and imag gives zeros); stablehlo.complex: real and imaginary parts of
// f32 or f64 -> complex<f32/f64>. The ops are verified (ir/verify_elementwise.cc:
// real_c1, c2, imag_c1, c2, complex_c1..c3). Errors at plan time: Unimplemented for other
// element types. Spec: openxla/stablehlo docs/spec.md "real", "imag", "complex".
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/kernel.h"

namespace rs::cpu {
namespace {

/// real / imag: complex -> its part (`part` 0 or 1); on a float operand, real is the
/// identity and imag gives zeros (spec "real", "imag").
struct PartPlan {
  int64_t n = 0;
  int64_t part_size = 0; // bytes of one part (4 or 8)
  int part = 0;
  bool from_complex = true;
};

Status planPart(OpView &v, PartPlan &p, int part) {
  const TensorType &in = v.operand(0), &out = v.result(0);
  if (!isComplex(in.dtype) && in.dtype != DType::kF32 && in.dtype != DType::kF64 &&
      in.dtype != DType::kF16 && in.dtype != DType::kBF16)
    return v.unsupportedType(in.dtype);
  p.n = in.numElements();
  p.part_size = dtypeSize(out.dtype);
  p.part = part;
  p.from_complex = isComplex(in.dtype);
  return Status::ok();
}

Status planReal(OpView &v, PartPlan &p) { return planPart(v, p, 0); }
Status planImag(OpView &v, PartPlan &p) { return planPart(v, p, 1); }

void runPart(const PartPlan &p, const KernelIo &io) {
  const uint8_t *in = io.in[0]->data();
  uint8_t *out = io.out[0].mutableData();
  const size_t ps = static_cast<size_t>(p.part_size);
  if (!p.from_complex) {
    if (p.part == 0 && p.n > 0)
      std::memcpy(out, in, ps * static_cast<size_t>(p.n));
    return; // imag of a real: the preallocated zeros
  }
  for (int64_t i = 0; i < p.n; ++i)
    std::memcpy(out + static_cast<size_t>(i) * ps, in + (2 * static_cast<size_t>(i) + p.part) * ps,
                ps);
}

/// complex: lhs (real parts), rhs (imaginary parts) of f32 or f64 -> complex<f32/f64>.
struct ComplexPlan {
  int64_t n = 0;
  int64_t part_size = 0;
};

Status planComplex(OpView &v, ComplexPlan &p) {
  const TensorType &re = v.operand(0);
  if (re.dtype != DType::kF32 && re.dtype != DType::kF64)
    return v.unsupportedType(re.dtype);
  p.n = re.numElements();
  p.part_size = dtypeSize(re.dtype);
  return Status::ok();
}

void runComplex(const ComplexPlan &p, const KernelIo &io) {
  const uint8_t *re = io.in[0]->data(), *im = io.in[1]->data();
  uint8_t *out = io.out[0].mutableData();
  const size_t ps = static_cast<size_t>(p.part_size);
  for (int64_t i = 0; i < p.n; ++i) {
    const size_t k = static_cast<size_t>(i);
    std::memcpy(out + 2 * k * ps, re + k * ps, ps);
    std::memcpy(out + (2 * k + 1) * ps, im + k * ps, ps);
  }
}

} // namespace

void registerComplexPartKernels(KernelRegistry &r) {
  r.add("stablehlo.real", &makeKernel<PartPlan, planReal, runPart>);
  r.add("stablehlo.imag", &makeKernel<PartPlan, planImag, runPart>);
  r.add("stablehlo.complex", &makeKernel<ComplexPlan, planComplex, runComplex>);
}

} // namespace rs::cpu
