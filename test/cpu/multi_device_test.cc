//===- test/cpu/multi_device_test.cc - multi-device and host ops at load ---===//
//
// Ops that exist only with several devices (collectives, replica/partition ids) or with
// a host or peer program (infeed, outfeed, send, recv and their tokens) fail at compile
// time with Unimplemented, naming the op and why the single-device executor lacks it.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

namespace rs::cpu::testing {
namespace {

std::string compileError(const std::string &text) {
  auto program = compileText(text);
  EXPECT_FALSE(program.isOk());
  if (program.isOk())
    return "";
  EXPECT_EQ(program.status().code(), StatusCode::kUnimplemented);
  return program.status().message();
}

constexpr const char *kMultiDevice = "needs a multi-device (replica or partition) setting, and "
                                     "the cpu executor runs a single device";

TEST(MultiDevice, ReplicaAndPartitionIdFailAtLoad) {
  for (const std::string op : {"replica_id", "partition_id"}) {
    std::string msg = compileError("func.func @main() -> tensor<ui32> {\n  %0 = stablehlo." + op +
                                   " : tensor<ui32>\n  func.return %0 : tensor<ui32>\n}\n");
    EXPECT_NE(msg.find("'stablehlo." + op + "' op is not supported by the cpu executor"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find(kMultiDevice), std::string::npos) << msg;
  }
}

TEST(MultiDevice, CollectivesFailAtLoad) {
  const std::string all_reduce = R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.all_reduce"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
)";
  std::string msg = compileError(all_reduce);
  EXPECT_NE(msg.find("'stablehlo.all_reduce' op"), std::string::npos) << msg;
  EXPECT_NE(msg.find(kMultiDevice), std::string::npos) << msg;

  const std::string permute = R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
)";
  msg = compileError(permute);
  EXPECT_NE(msg.find("'stablehlo.collective_permute' op"), std::string::npos) << msg;
  EXPECT_NE(msg.find(kMultiDevice), std::string::npos) << msg;
}

TEST(MultiDevice, HostCommunicationFailsAtLoad) {
  const std::string outfeed = R"(func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %t = stablehlo.after_all : !stablehlo.token
  %t1 = "stablehlo.outfeed"(%x, %t) {outfeed_config = ""} : (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
  func.return %x : tensor<2xi32>
}
)";
  std::string msg = compileError(outfeed);
  EXPECT_NE(msg.find("'stablehlo.after_all' op is not supported by the cpu executor: tokens only "
                     "order host communication (infeed, outfeed, send, recv)"),
            std::string::npos)
      << msg;

  const std::string infeed = R"(func.func @main() -> tensor<2xi32> {
  %t = stablehlo.create_token : !stablehlo.token
  %0:2 = "stablehlo.infeed"(%t) {infeed_config = ""} : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  func.return %0#0 : tensor<2xi32>
}
)";
  msg = compileError(infeed);
  EXPECT_NE(msg.find("'stablehlo.create_token' op is not supported by the cpu executor: tokens"),
            std::string::npos)
      << msg;
}

} // namespace
} // namespace rs::cpu::testing
