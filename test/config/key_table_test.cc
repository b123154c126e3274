//===- test/config/key_table_test.cc - the key table engine on its own ----===//
#include "config/key_reader.h"

#include <gtest/gtest.h>

// A test table names only the fields each row sets, as the real tables do.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace rs::config {
namespace {

struct Sample {
  int64_t port = 0;
  std::vector<std::string> origins;
  bool flag = false;
};

const KeyTable<Sample> &sampleKeys() {
  static const KeyTable<Sample> table{
      .env_prefix = "SAMPLE_",
      .list_separator = ':',
      .rows = {
          {{.path = "net.port",
            .type = ValueType::kInteger,
            .fallback = "80",
            .ints = {1, 65535},
            .doc = "a port"},
           [](Sample &s) { return field(s.port); }},
          {{.path = "net.origins",
            .type = ValueType::kTextList,
            .list_separator = ',',
            .doc = "URLs, which hold ':'"},
           [](Sample &s) { return field(s.origins); }},
          {{.path = "flag", .type = ValueType::kBoolean, .fallback = "false", .doc = "a flag"},
           [](Sample &s) { return field(s.flag); }},
      }};
  return table;
}

Result<Sample> read(const std::string &text, const std::map<std::string, std::string> &env) {
  RS_ASSIGN_OR_RETURN(yaml::Value root, yaml::parse(text, "s.yaml"));
  if (!root.isMap())
    root.kind = yaml::Value::Kind::kMap;
  RS_RETURN_IF_ERROR(checkKeys(sampleKeys(), KeyReader(root, "s.yaml"), root));
  EnvApplied applied;
  RS_RETURN_IF_ERROR(applyEnvironment(sampleKeys(), env, root, applied));
  Sample s;
  RS_RETURN_IF_ERROR(readKeys(sampleKeys(), KeyReader(root, "s.yaml"), s));
  return s;
}

TEST(KeyTable, DefaultsFileAndEnvironmentFromTheRows) {
  Result<Sample> defaults = read("{}", {});
  ASSERT_TRUE(defaults.isOk()) << defaults.status().toString();
  EXPECT_EQ(defaults->port, 80);
  EXPECT_FALSE(defaults->flag);

  Result<Sample> s = read("net: {port: 8080}\nflag: on\n",
                          {{"SAMPLE_NET_ORIGINS", "https://a.example:443, http://b:80"}});
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(s->port, 8080);
  EXPECT_TRUE(s->flag);
  // The row's own separator: the table's ':' would split the URLs.
  EXPECT_EQ(s->origins, (std::vector<std::string>{"https://a.example:443", "http://b:80"}));
}

TEST(KeyTable, OneErrorTextPerKind) {
  auto error = [](const std::string &yaml, const std::map<std::string, std::string> &env = {}) {
    Result<Sample> s = read(yaml, env);
    return s.isOk() ? std::string("(no error)") : s.status().message();
  };
  EXPECT_EQ(error("net: {prt: 1}\n"), "s.yaml:1:7: unknown key 'net.prt'");
  EXPECT_EQ(error("net: 3\n"), "s.yaml:1:1: net: expected a map, got a scalar");
  EXPECT_EQ(error("net: {port: x}\n"),
            "s.yaml:1:7: net.port: expected an integer, got 'x' (range [1, 65535])");
  EXPECT_EQ(error("net: {port: 0}\n"), "s.yaml:1:7: net.port: 0 is out of range [1, 65535]");
  EXPECT_EQ(error("flag: maybe\n"),
            "s.yaml:1:1: flag: expected a boolean (true or false), got 'maybe'");
  EXPECT_EQ(
      error("{}", {{"SAMPLE_NET_PORT", "x"}}),
      "environment override SAMPLE_NET_PORT: expected an integer, got 'x' (range [1, 65535])");
  EXPECT_EQ(error("{}", {{"SAMPLE_FLAG", "maybe"}}),
            "environment override SAMPLE_FLAG: expected a boolean (true or false), got 'maybe'");
  EXPECT_EQ(error("{}", {{"SAMPLE_FLAGG", "1"}}),
            "environment: unknown variable SAMPLE_FLAGG (not a configuration key)");
}

} // namespace
} // namespace rs::config
