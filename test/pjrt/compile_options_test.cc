//===- test/pjrt/compile_options_test.cc - CompileOptionsProto bytes, XLA flags -===//
#include "pjrt/compile_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rs::pjrt {
namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b)
    s.push_back(static_cast<char>(v));
  return s;
}

// The 17-byte single-device blob of reference/pjrt.md section 2.
const std::string kMinimal = bytes({0x1A, 0x0F, 0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                    0xFF, 0xFF, 0x01, 0x20, 0x01, 0x28, 0x01});

TEST(CompileOptions, DefaultsAreTheMinimalSingleDeviceBlob) {
  EXPECT_EQ(encodeCompileOptions(CompileOptionsSpec{}), kMinimal);
}

TEST(CompileOptions, StringOverrideMatchesReferenceBytes) {
  CompileOptionsSpec spec;
  spec.env_option_overrides["xla_gpu_autotune_level"] = "0";
  const std::string key = "xla_gpu_autotune_level";
  ASSERT_EQ(key.size(), 22u);
  std::string want =
      kMinimal + bytes({0x3A, 0x1D, 0x0A, 0x16}) + key + bytes({0x12, 0x03, 0x0A, 0x01, 0x30});
  EXPECT_EQ(encodeCompileOptions(spec), want);
}

TEST(CompileOptions, BoolOverridesUseBoolFieldEvenWhenFalse) {
  CompileOptionsSpec spec;
  spec.env_option_overrides["b"] = "True";
  spec.env_option_overrides["a"] = "false";
  // Entries in key order: a, then b. Entry = 0A 01 <key> 12 02 10 <0|1>.
  std::string want = kMinimal + bytes({0x3A, 0x07, 0x0A, 0x01, 'a', 0x12, 0x02, 0x10, 0x00}) +
                     bytes({0x3A, 0x07, 0x0A, 0x01, 'b', 0x12, 0x02, 0x10, 0x01});
  EXPECT_EQ(encodeCompileOptions(spec), want);
}

TEST(CompileOptions, DeviceOrdinalAndCounts) {
  CompileOptionsSpec spec;
  spec.device_ordinal = 2;
  spec.num_replicas = 1;
  spec.num_partitions = 300; // two-byte varint AC 02
  EXPECT_EQ(encodeCompileOptions(spec),
            bytes({0x1A, 0x07, 0x08, 0x02, 0x20, 0x01, 0x28, 0xAC, 0x02}));
}

TEST(CompileOptions, LongValueGetsMultiByteLength) {
  CompileOptionsSpec spec;
  const std::string dir(200, 'd');
  spec.env_option_overrides["k"] = dir;
  const std::string out = encodeCompileOptions(spec);
  // value msg = 0A C8 01 <200> (203 bytes); entry = 0A 01 k 12 CB 01 <203> (209 bytes).
  std::string want =
      kMinimal + bytes({0x3A, 0xD1, 0x01, 0x0A, 0x01, 'k', 0x12, 0xCB, 0x01, 0x0A, 0xC8, 0x01}) +
      dir;
  EXPECT_EQ(out, want);
}

TEST(XlaFlags, ParsesTokens) {
  auto flags = parseXlaFlags("  --xla_gpu_autotune_level=0\t--xla_b --xla_c=x=y "
                             "--xla_gpu_autotune_level=2 ");
  ASSERT_TRUE(flags.isOk()) << flags.status().toString();
  std::map<std::string, std::string> want = {
      {"xla_gpu_autotune_level", "2"}, {"xla_b", "true"}, {"xla_c", "x=y"}};
  EXPECT_EQ(*flags, want);
  EXPECT_EQ(formatXlaFlags(*flags), "--xla_b=true --xla_c=x=y --xla_gpu_autotune_level=2");
}

TEST(XlaFlags, EmptyTextIsNoFlags) {
  auto flags = parseXlaFlags("");
  ASSERT_TRUE(flags.isOk());
  EXPECT_TRUE(flags->empty());
}

TEST(XlaFlags, RejectsMalformedTokens) {
  auto no_dashes = parseXlaFlags("xla_gpu_autotune_level=0");
  ASSERT_FALSE(no_dashes.isOk());
  EXPECT_EQ(no_dashes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(no_dashes.status().message(),
            "xla flag 'xla_gpu_autotune_level=0' does not start with '--'");

  auto empty = parseXlaFlags("--=1");
  ASSERT_FALSE(empty.isOk());
  EXPECT_EQ(empty.status().message(), "xla flag '--=1' has an empty name");

  auto upper = parseXlaFlags("--XLA_Flag=1");
  ASSERT_FALSE(upper.isOk());
  EXPECT_EQ(upper.status().message(),
            "xla flag '--XLA_Flag=1': name may only hold [a-z0-9_], got 'XLA_Flag'");
}

} // namespace
} // namespace rs::pjrt
