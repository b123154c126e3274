//===- test/support/yaml_test.cc - YAML values with their lines -------------===//
#include "support/yaml.h"

#include <gtest/gtest.h>

namespace rs::yaml {
namespace {

constexpr std::string_view kNode = "model_repo: repo\n"
                                   "global:\n"
                                   "  scheduler:\n"
                                   "    max_queue_depth: abc\n"
                                   "    empty:\n"
                                   "  list: [1, {a: 2}]\n";

TEST(Yaml, EveryValueKnowsItsPathLineAndColumn) {
  auto root = parse(kNode, "node.yaml");
  ASSERT_TRUE(root.isOk()) << root.status().toString();
  EXPECT_EQ(root->mark.line, 1);
  EXPECT_EQ(root->mark.column, 1);
  const Value *depth = findPath(*root, "global.scheduler.max_queue_depth");
  ASSERT_NE(depth, nullptr);
  EXPECT_EQ(depth->scalar, "abc");
  EXPECT_EQ(depth->origin, "global.scheduler.max_queue_depth");
  EXPECT_EQ(depth->mark.line, 4); // a map entry is marked at its key
  EXPECT_EQ(depth->mark.column, 5);
  const Value *empty = findPath(*root, "global.scheduler.empty");
  ASSERT_NE(empty, nullptr);
  EXPECT_TRUE(empty->isNull());
  EXPECT_EQ(empty->mark.line, 5); // its key's line, not the next token's
  const Value *list = findPath(*root, "global.list");
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->list.size(), 2u);
  EXPECT_EQ(list->list[1].origin, "global.list[1]");
  EXPECT_EQ(list->list[1].mark.line, 6);
  EXPECT_EQ(list->list[1].mark.column, 13);
  EXPECT_EQ(list->list[1].find("a")->origin, "global.list[1].a");
}

TEST(Yaml, MessagesNameFileLineColumnAndPath) {
  auto root = parse(kNode, "node.yaml");
  ASSERT_TRUE(root.isOk());
  const Value &depth = *findPath(*root, "global.scheduler.max_queue_depth");
  EXPECT_EQ(where(depth, "node.yaml"), "node.yaml:4:5: global.scheduler.max_queue_depth");
  EXPECT_EQ(location(depth, "node.yaml"), "node.yaml:4:5");
  EXPECT_EQ(where(*root, "node.yaml"), "node.yaml:1:1");
  EXPECT_EQ(integerOf(depth, "node.yaml").status().message(),
            "node.yaml:4:5: global.scheduler.max_queue_depth: expected an integer, got 'abc'");
  EXPECT_EQ(scalarOf(*root->find("global"), "node.yaml").status().message(),
            "node.yaml:2:1: global: expected a single value, got a map");
  EXPECT_EQ(unknownKey(depth, "node.yaml").message(),
            "node.yaml:4:5: unknown key 'global.scheduler.max_queue_depth'");

  Value env = Value::scalarValue("x", "environment override VAR");
  env.outside = true;
  EXPECT_EQ(where(env, "node.yaml"), "environment override VAR");
  EXPECT_EQ(where(Value::scalarValue("1", "base_port"), "node.yaml"), "node.yaml: base_port");
}

TEST(Yaml, SyntaxAndKeyErrorsCarryTheLine) {
  auto bad = parse("a: 1\nb: [1, 2\n", "f.yaml");
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().rfind("f.yaml:3:1: invalid yaml: ", 0), 0u)
      << bad.status().message();
  EXPECT_EQ(parse("a:\n  b: 1\n  b: 2\n", "f.yaml").status().message(),
            "f.yaml:3:3: duplicate key 'a.b'");
  EXPECT_EQ(parse("a: {[1]: 2}\n", "f.yaml").status().message(),
            "f.yaml:1:5: a: map keys must be scalars");
  auto empty = parse("", "f.yaml");
  ASSERT_TRUE(empty.isOk());
  EXPECT_TRUE(empty->isNull());
  EXPECT_EQ(where(*empty, "f.yaml"), "f.yaml");
}

TEST(Yaml, MergeAndSetKeepOrigins) {
  auto base = parse("a: {b: 1, c: 2}\n", "f.yaml");
  auto over = parse("\n\na: {c: 3, d: [x]}\n", "g.yaml");
  ASSERT_TRUE(base.isOk() && over.isOk());
  deepMerge(*base, *over);
  EXPECT_EQ(findPath(*base, "a.b")->scalar, "1");
  EXPECT_EQ(findPath(*base, "a.b")->mark.line, 1);
  EXPECT_EQ(findPath(*base, "a.c")->scalar, "3");
  EXPECT_EQ(findPath(*base, "a.c")->mark.line, 3);
  EXPECT_EQ(flowText(*base->find("a")), "{b: 1, c: 3, d: [x]}");

  setPath(*base, "x.y.z", Value::scalarValue("7", "base_port", Mark{9, 1}));
  const Value *x = base->find("x");
  ASSERT_NE(x, nullptr);
  EXPECT_TRUE(x->isMap());
  EXPECT_EQ(x->origin, "base_port");
  EXPECT_EQ(x->mark.line, 9);
  EXPECT_EQ(findPath(*base, "x.y.z")->scalar, "7");
  EXPECT_EQ(findPath(*base, "x.q"), nullptr);
  EXPECT_EQ(flowText(Value{}), "");
  EXPECT_EQ(flowText(Value::scalarValue("jax 0.11.2", "")), "jax 0.11.2");
}

TEST(Yaml, OneGrammarForScalars) {
  EXPECT_EQ(parseInteger(" +42 "), 42);
  EXPECT_EQ(parseInteger("-7"), -7);
  EXPECT_EQ(parseInteger("0x10"), std::nullopt);
  EXPECT_EQ(parseInteger("2.5"), std::nullopt);
  EXPECT_EQ(parseNumber("2.5"), 2.5);
  EXPECT_EQ(parseNumber("nan"), std::nullopt);
  EXPECT_EQ(parseBoolean("On"), true);
  EXPECT_EQ(parseBoolean("no"), false);
  EXPECT_EQ(parseBoolean("maybe"), std::nullopt);
  EXPECT_EQ(numberText(0.9), "0.9");
  EXPECT_EQ(numberText(1e-5), "1e-05");
  EXPECT_EQ(wrongKind(kSingleValue, Value{}), "expected a single value, got null");
  EXPECT_EQ(wrongText(kBoolean, "2"), "expected a boolean (true or false), got '2'");
}

} // namespace
} // namespace rs::yaml
