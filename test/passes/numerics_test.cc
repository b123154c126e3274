//===- test/passes/numerics_test.cc - The numerics pass on the fixtures ----===//
//
// Every fixture program in each text form (pretty, generic, and the portable export's
// text, which has no precision_config at all) goes through pinNumerics in each mode; the
// counts are checked against a table, the rewritten module is printed in generic form and
// parsed again, and the reparsed module must be equal and carry the attributes.
//
//===----------------------------------------------------------------------===//
#include "passes/numerics.h"

#include "ir/parser.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

namespace rs::passes {
namespace {

namespace fs = std::filesystem;

const fs::path kBundles = fs::path(RS_SHARED_DIR) / "fixtures" / "bundles";

constexpr std::string_view kHighest =
    "precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]";
constexpr std::string_view kF32Algorithm =
    "algorithm = #stablehlo.dot_algorithm<lhs_precision_type = f32, rhs_precision_type = f32, "
    "accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, "
    "num_primitive_operations = 1, allow_imprecise_accumulation = false>";
constexpr std::string_view kTf32Algorithm =
    "#stablehlo.dot_algorithm<lhs_precision_type = tf32, rhs_precision_type = tf32";

/// Expected f32-mode counts per model (every batch size and text form alike): the
/// fixtures' f32 dot_general and convolution ops, all at DEFAULT precision.
struct Expected {
  int64_t dot_general;
  int64_t convolution;
  int64_t rewritten;
};
const std::map<std::string, Expected> kExpected = {
    {"bert_bench", {25, 0, 0}}, {"digits_cnn", {1, 2, 0}},    {"iris_mlp", {2, 0, 0}},
    {"op_zoo", {1, 0, 0}},      {"resnet_bench", {1, 12, 0}}, {"resnet_mini", {1, 6, 0}},
    {"tf32_algo", {1, 0, 1}},   {"tiny_bert", {13, 0, 0}},
};

struct Fixture {
  std::string model;
  fs::path path;
};

/// Every fixture program: model.b{N}.mlir, generic/model.b{N}.mlir and
/// portable/model.b{N}.export.mlir of every bundle, sorted.
std::vector<Fixture> fixtures() {
  std::vector<Fixture> out;
  for (const auto &b : fs::directory_iterator(kBundles)) {
    if (!b.is_directory())
      continue;
    const std::string model = b.path().filename().string();
    for (const fs::path &dir : {b.path(), b.path() / "generic", b.path() / "portable"}) {
      if (!fs::is_directory(dir))
        continue;
      for (const auto &f : fs::directory_iterator(dir)) {
        const std::string name = f.path().filename().string();
        const bool text =
            dir.filename() == "portable" ? name.ends_with(".export.mlir") : name.ends_with(".mlir");
        if (f.is_regular_file() && name.starts_with("model") && text)
          out.push_back({model, f.path()});
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Fixture &a, const Fixture &b) { return a.path < b.path; });
  return out;
}

ir::Module parseOk(const fs::path &p) {
  Result<ir::Module> m = ir::parseModuleFile(p.string());
  EXPECT_TRUE(m.isOk()) << m.status().toString();
  return m.isOk() ? std::move(m).value() : ir::Module{};
}

size_t count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string_view::npos;
       pos = text.find(what, pos + what.size()))
    ++n;
  return n;
}

TEST(NumericsFixtures, FixtureListIsComplete) {
  // 8 bundles, 19 programs, three text forms each.
  EXPECT_EQ(fixtures().size(), 57u);
}

TEST(NumericsFixtures, F32PinsEveryMatmulAndRoundTrips) {
  for (const Fixture &f : fixtures()) {
    SCOPED_TRACE(f.path.string());
    ir::Module m = parseOk(f.path);
    // Before the pass the check fails: the fixtures are at DEFAULT precision.
    Status before = verifyF32Pinned(m);
    EXPECT_EQ(before.code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(before.message().find("op numerics f32: f32 operands left at"), std::string::npos)
        << before.message();

    Result<NumericsReport> r = pinNumerics(m, {NumericsMode::kF32, false});
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    const Expected &e = kExpected.at(f.model);
    EXPECT_EQ(r->ops_pinned.dot_general, e.dot_general);
    EXPECT_EQ(r->ops_pinned.convolution, e.convolution);
    EXPECT_EQ(r->algorithms_rewritten, e.rewritten);
    EXPECT_EQ(r->algorithms_stripped, 0);
    EXPECT_TRUE(r->opaque_ops.empty());
    EXPECT_TRUE(verifyF32Pinned(m).isOk());

    const std::string printed = ir::printGeneric(m);
    EXPECT_EQ(count(printed, kHighest), static_cast<size_t>(e.dot_general + e.convolution));
    EXPECT_EQ(count(printed, kF32Algorithm), static_cast<size_t>(e.rewritten));
    EXPECT_EQ(count(printed, kTf32Algorithm), 0u);

    Result<ir::Module> again = ir::parseModule(printed, "printed");
    ASSERT_TRUE(again.isOk()) << again.status().toString();
    EXPECT_TRUE(*again == m);
    EXPECT_TRUE(verifyF32Pinned(*again).isOk());
    EXPECT_EQ(ir::printGeneric(*again), printed);

    // Idempotent: a second run finds nothing to do.
    Result<NumericsReport> second = pinNumerics(*again, {NumericsMode::kF32, false});
    ASSERT_TRUE(second.isOk());
    EXPECT_EQ(second->outcome(), "f32 (nothing to pin)");
    EXPECT_TRUE(*again == m);
  }
}

TEST(NumericsFixtures, F32GivesTheSameModuleFromEveryTextForm) {
  for (const std::string pretty : {"digits_cnn/model.b4.mlir", "tf32_algo/model.b1.mlir",
                                   "tiny_bert/model.b1.mlir", "resnet_mini/model.b8.mlir"}) {
    SCOPED_TRACE(pretty);
    const fs::path p = kBundles / pretty;
    ir::Module a = parseOk(p);
    ir::Module b = parseOk(p.parent_path() / "generic" / p.filename());
    ASSERT_TRUE(pinNumerics(a, {NumericsMode::kF32, false}).isOk());
    ASSERT_TRUE(pinNumerics(b, {NumericsMode::kF32, false}).isOk());
    EXPECT_EQ(ir::printGeneric(a), ir::printGeneric(b));
  }
}

TEST(NumericsFixtures, AutoWithoutTf32StripsOnlyTheAlgorithm) {
  for (const Fixture &f : fixtures()) {
    SCOPED_TRACE(f.path.string());
    ir::Module m = parseOk(f.path);
    const ir::Module original = m;
    Result<NumericsReport> r = pinNumerics(m, {NumericsMode::kAuto, false});
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    const int64_t algorithms = f.model == "tf32_algo" ? 1 : 0;
    EXPECT_EQ(r->algorithms_stripped, algorithms);
    EXPECT_EQ(r->ops_pinned.total(), 0);
    EXPECT_EQ(r->algorithms_rewritten, 0);
    EXPECT_EQ(r->outcome(), algorithms ? "auto (stripped 1 tf32 algorithm(s): target lacks TF32)"
                                       : "auto (f32: target lacks TF32)");
    const std::string printed = ir::printGeneric(m);
    EXPECT_EQ(count(printed, "dot_algorithm"), 0u);
    EXPECT_EQ(count(printed, "HIGHEST"), 0u);
    if (!algorithms) {
      EXPECT_TRUE(m == original);
    }
    Result<ir::Module> again = ir::parseModule(printed, "printed");
    ASSERT_TRUE(again.isOk()) << again.status().toString();
    EXPECT_TRUE(*again == m);
  }
}

TEST(NumericsFixtures, AutoAndTf32OnATf32TargetLeaveTheModuleAlone) {
  for (const Fixture &f : fixtures()) {
    SCOPED_TRACE(f.path.string());
    ir::Module m = parseOk(f.path);
    const ir::Module original = m;
    Result<NumericsReport> a = pinNumerics(m, {NumericsMode::kAuto, true});
    ASSERT_TRUE(a.isOk());
    EXPECT_EQ(a->outcome(), "auto (tf32 active)");
    Result<NumericsReport> t = pinNumerics(m, {NumericsMode::kTf32, true});
    ASSERT_TRUE(t.isOk());
    EXPECT_EQ(t->outcome(), "tf32");
    EXPECT_TRUE(m == original);
  }
}

TEST(NumericsFixtures, Tf32AlgoF32Outcome) {
  ir::Module m = parseOk(kBundles / "tf32_algo" / "model.b4.mlir");
  Result<NumericsReport> r = pinNumerics(m, {NumericsMode::kF32, false});
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->outcome(), "f32 (rewrote 1 tf32 algorithm(s), pinned 1 dot_general)");
  // The rewritten op keeps its precision_config (an algorithm overrides it); the other
  // dot is pinned.
  const ir::Operation *main = m.lookupFunction("main");
  ASSERT_NE(main, nullptr);
  const auto &ops = main->regions[0].blocks[0].ops;
  ASSERT_GE(ops.size(), 2u);
  EXPECT_EQ(ir::printAttribute(*ops[0].attr("algorithm")),
            std::string(kF32Algorithm.substr(std::string_view("algorithm = ").size())));
  EXPECT_EQ(ir::printAttribute(*ops[0].attr("precision_config")),
            "[#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]");
  EXPECT_EQ(ops[1].attr("algorithm"), nullptr);
  EXPECT_EQ(ir::printAttribute(*ops[1].attr("precision_config")),
            "[#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]");
}

TEST(NumericsFixtures, Tf32ModeFailsWithoutTf32) {
  ir::Module m = parseOk(kBundles / "tf32_algo" / "model.b1.mlir");
  Result<NumericsReport> r = pinNumerics(m, {NumericsMode::kTf32, false});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("numerics tf32: the compile target has no TF32"),
            std::string::npos)
      << r.status().message();
}

TEST(NumericsFixtures, VerifyNamesTheFirstUnpinnedOp) {
  ir::Module m = parseOk(kBundles / "iris_mlp" / "model.b8.mlir");
  Status s = verifyF32Pinned(m);
  ASSERT_FALSE(s.isOk());
  // model.b8.mlir line 4 holds the first dot_general; both are counted.
  EXPECT_NE(s.message().find("model.b8.mlir:4:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'stablehlo.dot_general' op numerics f32: f32 operands left at "
                             "precision DEFAULT (2 f32 matmul-class op(s) not pinned"),
            std::string::npos)
      << s.message();
}

TEST(NumericsReport, OutcomeWording) {
  NumericsReport r;
  r.mode = NumericsMode::kF32;
  EXPECT_EQ(r.outcome(), "f32 (nothing to pin)");
  r.algorithms_rewritten = 2;
  r.ops_pinned.dot_general = 3;
  r.ops_pinned.convolution = 4;
  r.opaque_ops = {"stablehlo.custom_call", "stablehlo.cholesky", "stablehlo.custom_call"};
  EXPECT_EQ(r.outcome(), "f32 (rewrote 2 tf32 algorithm(s), pinned 3 dot_general, pinned 4 "
                         "convolution, UNGOVERNED opaque ops: stablehlo.cholesky, "
                         "stablehlo.custom_call)");
  NumericsReport other = r;
  r.merge(other);
  EXPECT_EQ(r.ops_pinned.total(), 14);
  EXPECT_EQ(r.algorithms_rewritten, 4);
  EXPECT_EQ(r.opaque_ops.size(), 6u);

  NumericsReport a;
  a.mode = NumericsMode::kAuto;
  EXPECT_EQ(a.outcome(), "auto (f32: target lacks TF32)");
  a.target_has_tf32 = true;
  EXPECT_EQ(a.outcome(), "auto (tf32 active)");
  a.target_has_tf32 = false;
  a.algorithms_stripped = 3;
  EXPECT_EQ(a.outcome(), "auto (stripped 3 tf32 algorithm(s): target lacks TF32)");
  NumericsReport t;
  t.mode = NumericsMode::kTf32;
  EXPECT_EQ(t.outcome(), "tf32");
}

} // namespace
} // namespace rs::passes
