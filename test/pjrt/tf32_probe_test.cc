//===- test/pjrt/tf32_probe_test.cc - The TF32 probe's data and verdicts ---===//
#include "pjrt/tf32_probe.h"

#include "ir/parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace rs::pjrt {
namespace {

TEST(Tf32Probe, MatrixEntriesAreExactF32ThatTf32RoundsToOne) {
  const Tensor a = tf32ProbeMatrix();
  ASSERT_EQ(a.dtype(), DType::kF32);
  ASSERT_EQ(a.shape(), (Shape{512, 512}));
  const float *p = a.dataAs<float>();
  for (int64_t i = 0; i < a.numElements(); ++i) {
    const double k = (static_cast<double>(p[i]) - 1.0) * 1048576.0; // (A - 1) * 2^20
    ASSERT_EQ(k, std::floor(k)) << i;
    ASSERT_GE(k, 1.0) << i;
    ASSERT_LE(k, 511.0) << i; // < 2^-11: rounds (and truncates) to 1.0 in TF32
  }
  EXPECT_EQ(p[0], 1.0f + std::ldexp(1.0f, -20));
  EXPECT_EQ(p[1], 1.0f + std::ldexp(2.0f, -20));
  EXPECT_EQ(p[510], 1.0f + std::ldexp(511.0f, -20));
  EXPECT_EQ(p[511], 1.0f + std::ldexp(1.0f, -20)); // k wraps: 1 + 511 mod 511
}

TEST(Tf32Probe, IdentityHasOnesOnTheDiagonalOnly) {
  const Tensor eye = tf32ProbeIdentity();
  const float *p = eye.dataAs<float>();
  double sum = 0;
  for (int64_t i = 0; i < eye.numElements(); ++i)
    sum += p[i];
  EXPECT_EQ(sum, 512.0);
  EXPECT_EQ(p[0], 1.0f);
  EXPECT_EQ(p[513], 1.0f);
  EXPECT_EQ(p[1], 0.0f);
}

TEST(Tf32Probe, ClassifiesExactTf32AndOther) {
  const Tensor a = tf32ProbeMatrix();
  int64_t mismatches = -1;
  EXPECT_EQ(classifyProbeOutput(a, a, &mismatches), ProbeVerdict::kExact);
  EXPECT_EQ(mismatches, 0);

  Tensor ones = Tensor::zeros(DType::kF32, {512, 512});
  for (int64_t i = 0; i < ones.numElements(); ++i)
    ones.mutableDataAs<float>()[i] = 1.0f;
  EXPECT_EQ(classifyProbeOutput(a, ones, &mismatches), ProbeVerdict::kTf32);
  EXPECT_EQ(mismatches, 512 * 512);

  Tensor off = Tensor::copyOf(DType::kF32, {512, 512}, a.bytes());
  off.mutableDataAs<float>()[7] = 2.0f;
  EXPECT_EQ(classifyProbeOutput(a, off, &mismatches), ProbeVerdict::kOther);
  EXPECT_EQ(mismatches, 1);
}

TEST(Tf32Probe, ProgramParsesWithTheRequestedPrecision) {
  const std::string text = tf32ProbeProgram("HIGHEST");
  EXPECT_NE(text.find("precision = [HIGHEST, HIGHEST]"), std::string::npos);
  auto m = ir::parseModule(text, "tf32_probe.mlir");
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  const ir::Operation *main_fn = m->lookupFunction("main");
  ASSERT_NE(main_fn, nullptr);
  EXPECT_EQ(ir::functionType(*main_fn).toString(),
            "(tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>");
}

TEST(Tf32Probe, LogFields) {
  Tf32ProbeResult r;
  EXPECT_EQ(r.logFields(), "tf32_active=unknown pinned_exact=skipped");
  r.tf32_active = true;
  r.pinned_ran = true;
  r.pinned_exact = true;
  EXPECT_EQ(r.logFields(), "tf32_active=true pinned_exact=true");
  r.tf32_active = false;
  r.pinned_exact = false;
  EXPECT_EQ(r.logFields(), "tf32_active=false pinned_exact=false");
}

} // namespace
} // namespace rs::pjrt
