//===- cpu/kernels/sub_byte.cc - i2, ui2, i4, ui4 through 8-bit kernels -----===//
//
// The sub-byte integers are stored one byte per element, sign-extended (i2, i4) or
// zero-extended (ui2, ui4), and kernels see them as int8_t / uint8_t (kernel.h
// visitArithmeticType). Arithmetic modulo 2^8 agrees with arithmetic modulo 2^N in the low N
// bits, so an op computed in 8 bits and then wrapped to N bits (two's complement) gives the
// StableHLO result for add, subtract, multiply, negate, abs, power, the bitwise ops, shifts
// left and arithmetic right, divide and remainder (x / 0 = all ones, INT_MIN / -1 = INT_MIN),
// comparisons, conversions from integers, iota, dot_general and reductions (spec "Types":
// integer element types; each op's section). adaptSubByteKernel() wraps the results of
// every op that writes a sub-byte integer. A conversion from a float or complex type
// saturates to the N-bit range instead, as the 8-bit conversion saturates to its own.
// shift_right_logical, popcnt and count_leading_zeros depend on the bits above N, so they are
// Unimplemented for these types; bitcast_convert refuses them in convert.cc.
// Kernels that assign their outputs (constants, reshapes, control flow) pass values through
// unchanged, already in range.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/kernel.h"

#include <algorithm>

namespace rs::cpu {
namespace {

/// Wraps (or saturates) `n` sub-byte elements of type `t` in place.
void fitToWidth(DType t, uint8_t *data, int64_t n, bool saturate) {
  const int bits = dtypeBitWidth(t);
  if (isSigned(t)) {
    const int lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
    for (int64_t i = 0; i < n; ++i) {
      const int8_t x = static_cast<int8_t>(data[i]);
      const int v = saturate
                        ? std::clamp<int>(x, lo, hi)
                        : static_cast<int8_t>(static_cast<uint8_t>(x << (8 - bits))) >> (8 - bits);
      data[i] = static_cast<uint8_t>(static_cast<int8_t>(v));
    }
  } else {
    const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
    for (int64_t i = 0; i < n; ++i)
      data[i] = saturate ? std::min(data[i], mask) : static_cast<uint8_t>(data[i] & mask);
  }
}

class SubByteKernel final : public Kernel {
public:
  SubByteKernel(std::unique_ptr<Kernel> inner, std::vector<DType> outputs, bool saturate)
      : inner_(std::move(inner)), outputs_(std::move(outputs)), saturate_(saturate) {}

  void run(const KernelIo &io) const override {
    inner_->run(io);
    for (size_t i = 0; i < outputs_.size() && i < io.out.size(); ++i)
      if (isSubByteInt(outputs_[i]))
        fitToWidth(outputs_[i], io.out[i].mutableData(), io.out[i].numElements(), saturate_);
  }

  std::unique_ptr<Kernel> withBroadcastOperand(int operand,
                                               const BroadcastIndex &index) const override {
    std::unique_ptr<Kernel> k = inner_->withBroadcastOperand(operand, index);
    if (!k)
      return nullptr;
    return std::make_unique<SubByteKernel>(std::move(k), outputs_, saturate_);
  }

private:
  std::unique_ptr<Kernel> inner_;
  std::vector<DType> outputs_;
  bool saturate_;
};

} // namespace

Result<std::unique_ptr<Kernel>> adaptSubByteKernel(OpView &v, std::unique_ptr<Kernel> kernel,
                                                   OutputMode mode) {
  const auto sub_byte = [](const TensorType &t) { return isSubByteInt(t.dtype); };
  const bool in = std::any_of(v.operands().begin(), v.operands().end(), sub_byte);
  const bool out = std::any_of(v.results().begin(), v.results().end(), sub_byte);
  if (!in && !out)
    return kernel;
  const std::string &name = v.name();
  if (name == "stablehlo.shift_right_logical" || name == "stablehlo.popcnt" ||
      name == "stablehlo.count_leading_zeros") {
    const auto it = std::find_if(v.operands().begin(), v.operands().end(), sub_byte);
    return v.unsupportedType(it != v.operands().end() ? it->dtype : v.result(0).dtype);
  }
  if (!out || mode == OutputMode::kAssigned)
    return kernel;
  const bool from_float = name == "stablehlo.convert" && !v.operands().empty() &&
                          (isFloat(v.operand(0).dtype) || isComplex(v.operand(0).dtype));
  std::vector<DType> outputs;
  for (const TensorType &t : v.results())
    outputs.push_back(t.dtype);
  return std::unique_ptr<Kernel>(
      std::make_unique<SubByteKernel>(std::move(kernel), std::move(outputs), from_float));
}

} // namespace rs::cpu
