//===- test/config/config_docs_test.cc - the generated docs and the tables -===//
#include "config/key_docs.h"
#include "config/key_reader.h"
#include "config/keys.h"
#include "support/file.h"

#include <gtest/gtest.h>

namespace rs::config {
namespace {

TEST(ConfigDocs, CommittedPageIsWhatTheTablesGenerate) {
  Result<std::string> committed =
      readWholeFile(std::string(RS_SOURCE_DIR) + "/docs/configuration.md");
  ASSERT_TRUE(committed.isOk()) << committed.status().toString();
  EXPECT_TRUE(*committed == configurationDocs())
      << "docs/configuration.md differs from the key tables; regenerate it with\n"
         "  build/src/tools/reactant-server config docs > docs/configuration.md";
}

TEST(ConfigDocs, EveryWorkerAndGatewayKeyHasADescriptionAndAVariableRule) {
  for (const DocRow &r : detail::specsOf(workerKeys())) {
    SCOPED_TRACE(r.path);
    EXPECT_FALSE(r.spec.doc.empty());
  }
  for (const DocRow &r : detail::specsOf(gatewayKeys())) {
    SCOPED_TRACE(r.path);
    EXPECT_FALSE(r.spec.doc.empty());
  }
  EXPECT_EQ(envVarOf(workerKeys().rows.front().spec, workerKeys().env_prefix),
            "INFERENCE_SERVER_MODEL_DIRS");
}

/// The structs' own initializers (used where code builds a config directly) agree with the
/// tables' defaults (used when a file is read).
TEST(KeyTables, StructDefaultsAreTheTableDefaults) {
  const yaml::Value empty = yaml::Value{};
  WorkerConfig from_table;
  ASSERT_TRUE(readKeys(workerKeys(), KeyReader(empty, "test"), from_table).isOk());
  EXPECT_EQ(effectiveSettings(from_table), effectiveSettings(WorkerConfig{}));

  GatewayConfig gateway_from_table;
  ASSERT_TRUE(readKeys(gatewayKeys(), KeyReader(empty, "test"), gateway_from_table).isOk());
  EXPECT_EQ(effectiveGatewaySettings(gateway_from_table),
            effectiveGatewaySettings(GatewayConfig{}));
}

TEST(KeyTables, ModelEntryDefaultsAreTheStructDefaults) {
  Result<yaml::Value> tree = yaml::parse("scheduler: {models: {bert: ~}}\n", "test");
  ASSERT_TRUE(tree.isOk()) << tree.status().toString();
  WorkerConfig from_table;
  ASSERT_TRUE(readKeys(workerKeys(), KeyReader(*tree, "test"), from_table).isOk());
  WorkerConfig direct;
  direct.scheduler.models["bert"] = ModelSchedulerConfig{};
  EXPECT_EQ(effectiveSettings(from_table), effectiveSettings(direct));

  Result<yaml::Value> gateway_tree = yaml::parse("scheduling: {models: {bert: ~}}\n", "test");
  ASSERT_TRUE(gateway_tree.isOk()) << gateway_tree.status().toString();
  GatewayConfig gateway_from_table;
  ASSERT_TRUE(readKeys(gatewayKeys(), KeyReader(*gateway_tree, "test"), gateway_from_table).isOk());
  GatewayConfig gateway_direct;
  gateway_direct.scheduling.models["bert"] = ModelPlacementConfig{};
  EXPECT_EQ(effectiveGatewaySettings(gateway_from_table), effectiveGatewaySettings(gateway_direct));
}

TEST(KeyGrammar, OneGrammarForEveryFile) {
  EXPECT_EQ(yaml::parseInteger(" +42 "), 42);
  EXPECT_EQ(yaml::parseInteger("4.2"), std::nullopt);
  EXPECT_EQ(yaml::parseInteger(""), std::nullopt);
  EXPECT_EQ(yaml::parseNumber("1e-3"), 0.001);
  EXPECT_EQ(yaml::parseNumber("+0.5"), 0.5);
  EXPECT_EQ(yaml::parseNumber("inf"), std::nullopt);
  EXPECT_EQ(yaml::parseNumber("0x10"), std::nullopt);
  EXPECT_EQ(yaml::parseBoolean("Yes"), true);
  EXPECT_EQ(yaml::parseBoolean("0"), false);
  EXPECT_EQ(yaml::parseBoolean(" OFF "), false);
  EXPECT_EQ(yaml::parseBoolean("2"), std::nullopt);
  EXPECT_EQ(rangeText(IntRange{1, 65535}), "[1, 65535]");
  EXPECT_EQ(rangeText(IntRange{0}), ">= 0");
  EXPECT_EQ(rangeText(NumberRange{0, 1, true, false}), "(0, 1]");
  EXPECT_EQ(rangeText(NumberRange{0, std::numeric_limits<double>::infinity(), true, true}), "> 0");
}

} // namespace
} // namespace rs::config
