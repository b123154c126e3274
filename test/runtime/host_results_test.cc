// runtime/host_results.h: main's results placed in pinned host memory.
#include "runtime/host_results.h"

#include "ir/parser.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

namespace rs::runtime {
namespace {

constexpr char kTwoResults[] = R"(module @m {
  func.func public @main(%arg0: tensor<2xf32>) -> (tensor<2xf32> {jax.result_info = "a"}, tensor<2xf32>) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
    return %0, %arg0 : tensor<2xf32>, tensor<2xf32>
  }
}
)";

ir::Module parse(const char *text) {
  auto m = ir::parseModule(text, "test.mlir");
  EXPECT_TRUE(m.isOk()) << m.status().toString();
  return std::move(m).value();
}

TEST(HostResults, EveryReturnedValueGoesThroughThePlacementCall) {
  const ir::Module m = parse(kTwoResults);
  std::optional<ir::Module> placed = withResultsInHostMemory(m, "main");
  ASSERT_TRUE(placed.has_value());
  const ir::Operation *fn = placed->lookupFunction("main");
  ASSERT_NE(fn, nullptr);
  const std::vector<ir::Operation> &ops = fn->regions[0].blocks[0].ops;
  ASSERT_EQ(ops.size(), 4u); // add, two custom calls, return
  for (size_t i : {1u, 2u}) {
    EXPECT_EQ(ops[i].name, "stablehlo.custom_call");
    ASSERT_NE(ops[i].attr("call_target_name"), nullptr);
    EXPECT_EQ(ops[i].attr("call_target_name")->str, "annotate_device_placement");
    const ir::Attribute *fa = ops[i].attr("mhlo.frontend_attributes");
    ASSERT_NE(fa, nullptr);
    ASSERT_NE(fa->field("_xla_buffer_placement"), nullptr);
    EXPECT_EQ(fa->field("_xla_buffer_placement")->str, "pinned_host");
    EXPECT_EQ(ops[3].operands[i - 1], ops[i].results[0]);
  }
  EXPECT_EQ(ops[1].operands[0], ops[0].results[0]);
  EXPECT_EQ(ops[2].operands[0], fn->regions[0].blocks[0].arguments[0]);
  const ir::Attribute *res = fn->attr("res_attrs");
  ASSERT_NE(res, nullptr);
  ASSERT_EQ(res->elements.size(), 2u);
  EXPECT_EQ(res->elements[0].field("mhlo.memory_kind")->str, "pinned_host");
  EXPECT_EQ(res->elements[0].field("jax.result_info")->str, "a"); // kept
  EXPECT_EQ(res->elements[1].field("mhlo.memory_kind")->str, "pinned_host");
}

TEST(HostResults, PrintedFormParsesBackToTheSameModule) {
  std::optional<ir::Module> placed = withResultsInHostMemory(parse(kTwoResults), "main");
  ASSERT_TRUE(placed.has_value());
  const std::string text = ir::printGeneric(*placed);
  EXPECT_NE(text.find(R"(call_target_name = "annotate_device_placement")"), std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"})"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(mhlo.memory_kind = "pinned_host")"), std::string::npos) << text;
  // The new values are numbered after the old ones; printing numbers them in order.
  EXPECT_EQ(ir::printGeneric(parse(text.c_str())), text);
}

TEST(HostResults, LeavesTupleResultsAndMissingEntriesAlone) {
  const ir::Module tuple = parse(R"(module @m {
  func.func public @main(%arg0: tensor<2xf32>) -> tuple<tensor<2xf32>> {
    %0 = stablehlo.tuple %arg0 : tuple<tensor<2xf32>>
    return %0 : tuple<tensor<2xf32>>
  }
}
)");
  EXPECT_FALSE(withResultsInHostMemory(tuple, "main").has_value());
  EXPECT_FALSE(withResultsInHostMemory(parse(kTwoResults), "other").has_value());
}

} // namespace
} // namespace rs::runtime
