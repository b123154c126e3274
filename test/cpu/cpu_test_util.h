//===- test/cpu/cpu_test_util.h - Helpers for the CPU executor tests -------===//
//
// Shared by the cpu tests: cached contexts per thread count, cached fixture bundles,
// compiling a module from text, and building/reading small tensors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/bundle.h"
#include "cpu/executor.h"
#include "ir/parser.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rs::cpu::testing {

inline std::string fixturesDir() { return std::string(RS_SHARED_DIR) + "/fixtures"; }

/// A context with `threads` threads, created once per count.
inline std::shared_ptr<CpuContext> contextWithThreads(int threads) {
  static std::mutex mu;
  static std::map<int, std::shared_ptr<CpuContext>> contexts;
  std::lock_guard<std::mutex> lock(mu);
  auto &c = contexts[threads];
  if (!c) {
    auto r = createCpuContext(CpuOptions{threads});
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    c = *r;
  }
  return c;
}

/// The fixture bundle `name`, loaded once.
inline const bundle::Bundle &fixtureBundle(const std::string &name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<bundle::Bundle>> bundles;
  std::lock_guard<std::mutex> lock(mu);
  auto &b = bundles[name];
  if (!b) {
    auto r = bundle::loadBundle(fixturesDir() + "/bundles/" + name);
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    b = std::make_unique<bundle::Bundle>(r.isOk() ? std::move(r).value() : bundle::Bundle{});
  }
  return *b;
}

/// Parses `text` and compiles its `main` (or `entry`) on a context of `threads` threads.
inline Result<std::unique_ptr<Program>> compileText(const std::string &text, int threads = 2,
                                                    const std::string &entry = "main") {
  RS_ASSIGN_OR_RETURN(ir::Module m, ir::parseModule(text, "test.mlir"));
  return Program::compile(m, entry, contextWithThreads(threads));
}

template <typename T> DType dtypeOf() {
  if constexpr (std::is_same_v<T, bool>)
    return DType::kBool;
  else if constexpr (std::is_same_v<T, int8_t>)
    return DType::kI8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return DType::kI16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::kI32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::kI64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DType::kU8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return DType::kU16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return DType::kU32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return DType::kU64;
  else if constexpr (std::is_same_v<T, float>)
    return DType::kF32;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return DType::kComplex64;
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return DType::kComplex128;
  else
    return DType::kF64;
}

template <typename T> Tensor makeTensor(Shape shape, const std::vector<T> &values) {
  Tensor t = Tensor::zeros(dtypeOf<T>(), std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numElements()), values.size());
  for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t.numElements()); ++i) {
    const T v = values[i]; // also for std::vector<bool>
    std::memcpy(t.mutableData() + i * sizeof(T), &v, sizeof(T));
  }
  return t;
}

template <typename T> std::vector<T> valuesOf(const Tensor &t) {
  std::vector<T> out(static_cast<size_t>(t.numElements()));
  EXPECT_EQ(t.dtype(), dtypeOf<T>());
  if (t.dtype() == dtypeOf<T>())
    for (size_t i = 0; i < out.size(); ++i) {
      T v;
      std::memcpy(&v, t.data() + i * sizeof(T), sizeof(T));
      out[i] = v;
    }
  return out;
}

} // namespace rs::cpu::testing

namespace rs::cpu::testing {

/// Compiles `text` and runs `main` on `args`; fails the test (and returns {}) on error.
inline std::vector<Tensor> runText(const std::string &text, const std::vector<Tensor> &args = {},
                                   int threads = 2) {
  auto program = compileText(text, threads);
  EXPECT_TRUE(program.isOk()) << program.status().toString();
  if (!program.isOk())
    return {};
  auto out = (*program)->run(args);
  EXPECT_TRUE(out.isOk()) << out.status().toString();
  if (!out.isOk())
    return {};
  return std::move(out).value();
}

/// A module whose main applies the generic op `op` (with `props`, e.g. "<{...}>") to
/// arguments of `arg_types` giving `result_type`.
inline std::string opModule(const std::string &op, const std::vector<std::string> &arg_types,
                            const std::string &result_type, const std::string &props = "") {
  std::string params, operands, types;
  for (size_t i = 0; i < arg_types.size(); ++i) {
    std::string sep = i ? ", " : "";
    params += sep + "%a" + std::to_string(i) + ": " + arg_types[i];
    operands += sep + "%a" + std::to_string(i);
    types += sep + arg_types[i];
  }
  return "func.func @main(" + params + ") -> " + result_type + " {\n  %0 = \"" + op + "\"(" +
         operands + ") " + props + " : (" + types + ") -> " + result_type +
         "\n  return %0 : " + result_type + "\n}\n";
}

/// Bit pattern of a float (to check -0 and NaN exactly).
inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// Runs `op` elementwise on two rank-1 operands of `type` (e.g. "tensor<3xf32>") and
/// returns the result's values; empty when the run failed (runText reported it).
template <typename T>
std::vector<T> binary(const std::string &op, const std::string &type, const std::vector<T> &a,
                      const std::vector<T> &b) {
  auto out = runText(opModule(op, {type, type}, type),
                     {makeTensor<T>({static_cast<int64_t>(a.size())}, a),
                      makeTensor<T>({static_cast<int64_t>(b.size())}, b)});
  return out.empty() ? std::vector<T>{} : valuesOf<T>(out[0]);
}

/// Runs `op` on one rank-1 operand of `type`, giving `result_type` with element type R.
template <typename T, typename R = T>
std::vector<R> unary(const std::string &op, const std::string &type, const std::string &result_type,
                     const std::vector<T> &a) {
  auto out = runText(opModule(op, {type}, result_type),
                     {makeTensor<T>({static_cast<int64_t>(a.size())}, a)});
  return out.empty() ? std::vector<R>{} : valuesOf<R>(out[0]);
}

} // namespace rs::cpu::testing
