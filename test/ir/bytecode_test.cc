//===- test/ir/bytecode_test.cc - StableHLO portable artifacts -------------===//
//
// The VHLO bytecode reader (ir/bytecode.h) against three references:
//   - every fixture's portable/model.b{N}.mlirbc (jax.export, bytecode 6, VHLO 1.18.0)
//     decodes to the same Module as its portable/model.b{N}.export.mlir text;
//   - test/ir/data/vhlo_targets: artifacts written by jaxlib for VHLO targets 0.9.0,
//     1.0.0, 1.5.0, 1.10.0 and 1.20.0 (bytecode 0 and 6) decode to what jaxlib's own
//     deserializer gives back (<name>.<target>.roundtrip.mlir);
//   - the StableHLO project's VHLO test vectors (shared/conformance/vhlo, targets 0.9.0 to
//     1.20.0, bytecode 0, 1, 3, 4 and 6): each function decodes to its source function
//     (what their RUN lines assert), up to the spelling of types and attributes that the
//     IR keeps as text, with the explicit defaults listed in vhlo_expected.txt; every VHLO
//     op their CHECK lines name is in the artifact's op table.
// Then hostile input: a future version, an unknown op, truncation at every byte, flipped
// bytes and a wrong section length are each a clean error naming the file.
//
//===----------------------------------------------------------------------===//
#include "ir_test_util.h"

#include "ir/bytecode.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "support/file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace rs::ir {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = fs::path(RS_SHARED_DIR);
const fs::path kTargets = fs::path(RS_SOURCE_DIR) / "test/ir/data/vhlo_targets";

std::vector<fs::path> filesEndingWith(const fs::path &dir, std::string_view suffix) {
  std::vector<fs::path> out;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().string().ends_with(suffix))
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string readBytes(const fs::path &p) {
  Result<std::string> s = readWholeFile(p.string());
  EXPECT_TRUE(s.isOk()) << s.status().toString();
  return s.isOk() ? *s : std::string();
}

using testing::firstDifference;

/// Expects `decoded` to be `expected`, structurally and in generic print.
void expectSameModule(const Module &decoded, const Module &expected, const fs::path &what) {
  std::string a = printGeneric(decoded), b = printGeneric(expected);
  EXPECT_TRUE(decoded == expected) << what << "\n" << firstDifference(a, b);
  EXPECT_EQ(a, b) << what;
}

TEST(Bytecode, EveryFixtureDecodesToItsExportText) {
  int pairs = 0;
  for (const fs::path &bc : filesEndingWith(kShared / "fixtures/bundles", ".mlirbc")) {
    fs::path text = bc;
    text.replace_extension(".export.mlir");
    Result<Module> decoded = parseModuleFile(bc.string());
    Result<Module> parsed = parseModuleFile(text.string());
    ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
    ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
    expectSameModule(*decoded, *parsed, bc);
    Result<PortableArtifactInfo> info = readPortableArtifactInfo(readBytes(bc), bc.string());
    ASSERT_TRUE(info.isOk()) << info.status().toString();
    EXPECT_EQ(info->bytecode_version, 6u);
    EXPECT_EQ(info->producer, "StableHLO_v1.18.0");
    EXPECT_EQ(info->vhlo_version, "1.18.0");
    ++pairs;
  }
  EXPECT_EQ(pairs, 19);
}

TEST(Bytecode, TheExtensionDoesNotMatterOnlyTheMagic) {
  fs::path src = kShared / "fixtures/bundles/iris_mlp/portable/model.b1.mlirbc";
  fs::path dir = fs::temp_directory_path() / ("rs_bc_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path copy = dir / "model.b1.mlir";
  fs::copy_file(src, copy, fs::copy_options::overwrite_existing);
  Result<Module> a = parseModuleFile(copy.string());
  Result<Module> b = parseModuleFile(src.string());
  ASSERT_TRUE(a.isOk()) << a.status().toString();
  ASSERT_TRUE(b.isOk());
  EXPECT_TRUE(*a == *b);
  EXPECT_EQ(a->file, copy.string());
  fs::remove_all(dir);
}

TEST(Bytecode, OpsCarryTheArtifactOffsetAndTheirSourcePosition) {
  fs::path bc = kShared / "fixtures/bundles/iris_mlp/portable/model.b1.mlirbc";
  Result<Module> m = parseModuleFile(bc.string());
  ASSERT_TRUE(m.isOk());
  const Operation &main = *m->lookupFunction("main");
  const Operation &dot = main.regions[0].blocks[0].ops[0];
  EXPECT_EQ(dot.name, "stablehlo.dot_general");
  // 0x206: the dot_general's first byte (reference/vhlo-bytecode.md 5.2).
  EXPECT_EQ(dot.loc.toString(),
            bc.string() + ": byte 518 (/work/steering/scratch/gen_fixtures.py:234:25)");
}

TEST(Bytecode, EveryVhloTargetDecodesAsJaxlibDeserializesIt) {
  std::set<uint64_t> bytecode_versions;
  std::set<std::string> targets;
  int files = 0;
  for (const fs::path &bc : filesEndingWith(kTargets, ".mlirbc")) {
    std::string stem = bc.filename().string();
    stem = stem.substr(0, stem.size() - std::string(".mlirbc").size());
    fs::path expected = bc.parent_path() / (stem + ".roundtrip.mlir");
    Result<Module> decoded = parseModuleFile(bc.string());
    Result<Module> parsed = parseModuleFile(expected.string());
    ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
    ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
    expectSameModule(*decoded, *parsed, bc);
    Result<PortableArtifactInfo> info = readPortableArtifactInfo(readBytes(bc), bc.string());
    ASSERT_TRUE(info.isOk());
    // <name>.<a.b.c>: the producer names the target the file was written for.
    std::string target = stem.substr(stem.find('.') + 1);
    EXPECT_EQ(info->vhlo_version, target) << bc;
    targets.insert(target);
    bytecode_versions.insert(info->bytecode_version);
    ++files;
  }
  EXPECT_EQ(files, 36);
  EXPECT_EQ(targets, (std::set<std::string>{"0.9.0", "1.0.0", "1.5.0", "1.10.0", "1.20.0"}));
  EXPECT_EQ(bytecode_versions, (std::set<uint64_t>{0, 6}));
}

//===----------------------------------------------------------------------===//
// The StableHLO project's VHLO test vectors
//===----------------------------------------------------------------------===//

/// Spelling that the IR keeps verbatim (quantized types, bounds, result accuracy,
/// replica-group meshes) made comparable: MLIR's `#stablehlo.bounds<...>` for the
/// long-hand type_extensions, no whitespace, every decimal number in one spelling.
std::string normaliseSpelling(std::string s) {
  static const std::regex kBounds(R"(#stablehlo\.type_extensions<bounds = \[([^\]]*)\]>)");
  s = std::regex_replace(s, kBounds, "#stablehlo.bounds<$1>");
  s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\n'; }),
          s.end());
  static const std::regex kDecimal(R"([0-9]+\.[0-9]*e[-+]?[0-9]+|[0-9]+\.[0-9]+)");
  std::string out;
  auto begin = std::sregex_iterator(s.begin(), s.end(), kDecimal);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    out += s.substr(last, static_cast<size_t>(it->position()) - last);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", std::stod(it->str()));
    out += buf;
    last = static_cast<size_t>(it->position() + it->length());
  }
  return out + s.substr(last);
}

/// One function of `m` printed on its own (values keep the module's numbering).
std::string printFunction(const Module &m, const Operation &func) {
  Module one;
  one.value_types = m.value_types;
  one.ops = {func};
  return printGeneric(one);
}

void removeAttribute(std::vector<Region> &regions, const std::string &name) {
  for (Region &r : regions)
    for (Block &b : r.blocks)
      for (Operation &op : b.ops) {
        for (auto *list : {&op.properties, &op.attributes})
          list->erase(std::remove_if(list->begin(), list->end(),
                                     [&](const NamedAttribute &a) { return a.name == name; }),
                      list->end());
        removeAttribute(op.regions, name);
      }
}

/// vhlo_expected.txt: function -> attribute spelled at its default in the source.
std::map<std::string, std::string> expectedDefaults() {
  std::map<std::string, std::string> out;
  std::istringstream in(readBytes(fs::path(RS_SOURCE_DIR) / "test/ir/vhlo_expected.txt"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    std::string func, attr;
    fields >> func >> attr;
    out[func] = attr;
  }
  return out;
}

/// The VHLO op names (`"vhlo.add_v1"`) that a test vector's CHECK lines name.
std::set<std::string> checkedOpNames(const std::string &source) {
  std::set<std::string> out;
  static const std::regex kOp(R"re("(vhlo\.[a-z_\-0-9]+_v[0-9]+)")re");
  std::istringstream in(source);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("// CHECK") == std::string::npos)
      continue;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), kOp);
         it != std::sregex_iterator(); ++it)
      out.insert((*it)[1].str());
  }
  return out;
}

TEST(Bytecode, StableHloCompatibilitySuiteDecodesToItsSources) {
  std::map<std::string, std::string> defaults = expectedDefaults();
  std::set<std::string> defaults_seen;
  std::set<uint64_t> bytecode_versions;
  int files = 0, functions = 0, equal = 0, equal_after_default = 0, checked_ops = 0;
  for (const fs::path &bc : filesEndingWith(kShared / "conformance/vhlo", ".mlir.bc")) {
    if (bc.filename() == "invalid_vhlo_future.mlir.bc")
      continue;
    fs::path source = bc;
    source.replace_extension(); // drop ".bc"
    Result<Module> decoded = parseModuleFile(bc.string());
    Result<Module> parsed = parseModuleFile(source.string());
    ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
    ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
    ++files;
    std::string bytes = readBytes(bc);
    Result<PortableArtifactInfo> info = readPortableArtifactInfo(bytes, bc.string());
    ASSERT_TRUE(info.isOk());
    bytecode_versions.insert(info->bytecode_version);
    for (const std::string &op : checkedOpNames(readBytes(source))) {
      EXPECT_NE(std::find(info->op_names.begin(), info->op_names.end(), op), info->op_names.end())
          << bc << ": its CHECK lines name " << op << ", which the artifact does not hold";
      ++checked_ops;
    }
    ASSERT_EQ(decoded->ops.size(), parsed->ops.size()) << bc;
    for (size_t i = 0; i < decoded->ops.size(); ++i) {
      const Operation &d = decoded->ops[i];
      Operation p = parsed->ops[i];
      ASSERT_EQ(d.name, p.name) << bc;
      if (d.name != "func.func")
        continue;
      ++functions;
      std::string name(functionName(d));
      ASSERT_EQ(name, functionName(p)) << bc;
      std::string a = normaliseSpelling(printFunction(*decoded, d));
      if (a == normaliseSpelling(printFunction(*parsed, p))) {
        EXPECT_EQ(defaults.count(name), 0u) << bc << ": " << name << " is listed in "
                                            << "vhlo_expected.txt but decodes as its source";
        ++equal;
        continue;
      }
      auto it = defaults.find(name);
      ASSERT_NE(it, defaults.end())
          << bc << ": function " << name << " differs from its source:\n"
          << firstDifference(printFunction(*decoded, d), printFunction(*parsed, p));
      removeAttribute(p.regions, it->second);
      EXPECT_EQ(a, normaliseSpelling(printFunction(*parsed, p)))
          << bc << ": " << name << " differs by more than its default '" << it->second << "'";
      defaults_seen.insert(name);
      ++equal_after_default;
    }
  }
  EXPECT_EQ(files, 33);
  EXPECT_EQ(bytecode_versions, (std::set<uint64_t>{0, 1, 3, 4, 6}));
  EXPECT_EQ(functions, 6968);
  EXPECT_EQ(equal + equal_after_default, functions);
  EXPECT_EQ(defaults_seen.size(), defaults.size());
  EXPECT_EQ(checked_ops, 2032);
  std::cout << "VHLO test vectors: " << files << " files, " << functions << " functions, " << equal
            << " equal to their source, " << equal_after_default
            << " equal after dropping an explicit default; " << checked_ops
            << " CHECKed op names found\n";
}

//===----------------------------------------------------------------------===//
// Hostile input
//===----------------------------------------------------------------------===//

const fs::path kIris = kShared / "fixtures/bundles/iris_mlp/portable/model.b1.mlirbc";

/// Decodes `bytes` as "<dir>/model.b1.mlir": OK, or an InvalidArgument naming the file.
Status decodeAs(const std::string &bytes) {
  Result<Module> m = readPortableArtifact(bytes, "bad/model.b1.mlir");
  if (m.isOk())
    return Status::ok();
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << m.status().toString();
  EXPECT_TRUE(m.status().message().starts_with("bad/model.b1.mlir: ")) << m.status().toString();
  return m.status();
}

std::string patched(std::string bytes, std::string_view from, std::string_view to) {
  size_t at = bytes.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    bytes.replace(at, from.size(), to);
  return bytes;
}

TEST(Bytecode, AFutureVersionIsRefusedByVersion) {
  fs::path bc = kShared / "conformance/vhlo/invalid_vhlo_future.mlir.bc";
  Result<Module> m = parseModuleFile(bc.string());
  ASSERT_FALSE(m.isOk());
  EXPECT_EQ(m.status().message(),
            bc.string() + ": invalid portable artifact: byte 5 (header section): written for "
                          "StableHLO 2.0.0, newer than the newest version this server reads "
                          "(1.20.0)");
  Status s = decodeAs(patched(readBytes(kIris), "StableHLO_v1.18.0", "StableHLO_v1.99.0"));
  EXPECT_NE(s.message().find("written for StableHLO 1.99.0"), std::string::npos) << s.message();
  s = decodeAs(patched(readBytes(kIris), "StableHLO_v1.18.0", "StableHLO_v0.8.9"));
  EXPECT_NE(s.message().find("older than the oldest"), std::string::npos) << s.message();
}

TEST(Bytecode, AnUnknownOpIsRefusedByName) {
  // Same length, so every offset stays valid: only the op's name changes.
  Status s =
      decodeAs(patched(readBytes(kIris), std::string("add_v1\0", 7), std::string("add_v9\0", 7)));
  EXPECT_NE(s.message().find("'vhlo.add_v9': unknown VHLO op: not an op of StableHLO 0.9.0 to "
                             "1.20.0 (the file was written for StableHLO 1.18.0)"),
            std::string::npos)
      << s.message();
}

TEST(Bytecode, AWrongSectionLengthIsAnError) {
  std::string bytes = readBytes(kIris);
  // The IR section header: id 4 at 0x1e2, length 97 (0xc3) (vhlo-bytecode.md 5.2).
  ASSERT_EQ(static_cast<uint8_t>(bytes[0x1e2]), 0x04);
  ASSERT_EQ(static_cast<uint8_t>(bytes[0x1e3]), 0xc3);
  for (uint8_t length : {0xc1, 0xc5, 0x01}) {
    bytes[0x1e3] = static_cast<char>(length);
    Status s = decodeAs(bytes);
    EXPECT_FALSE(s.isOk()) << "length byte " << int(length);
  }
}

TEST(Bytecode, ATruncatedFileIsAnErrorAtEveryLength) {
  std::string bytes = readBytes(kIris);
  ASSERT_EQ(bytes.size(), 1054u);
  for (size_t n = 0; n < bytes.size(); ++n) {
    Status s = decodeAs(bytes.substr(0, n));
    EXPECT_FALSE(s.isOk()) << "decoded a file cut at " << n << " bytes";
    EXPECT_NE(s.message().find(" section): "), std::string::npos) << s.message();
  }
  EXPECT_TRUE(decodeAs(bytes).isOk());
}

TEST(Bytecode, FlippedBytesNeverCrash) {
  std::string bytes = readBytes(kIris);
  int errors = 0, decoded = 0;
  for (size_t i = 0; i < bytes.size(); ++i)
    for (uint8_t mask : {0x01, 0x80, 0xFF}) {
      std::string b = bytes;
      b[i] = static_cast<char>(b[i] ^ mask);
      (decodeAs(b).isOk() ? decoded : errors) += 1;
    }
  // About half the flips break the file; one inside a string, a location or a number
  // can still decode (the format has no checksum).
  EXPECT_GT(errors, 1000);
  EXPECT_EQ(errors + decoded, 3 * 1054);
}

// jax.export artifacts with Shardy's own binary encodings (test/ir/data/shardy): an sdy.mesh op
// (jit with in_shardings) and an #sdy.op_sharding_rule attribute (jnp.linalg.cholesky). The
// reader refuses them and says what to do instead.
TEST(Bytecode, ShardyEncodingsAreRefusedWithAdvice) {
  const std::string advice =
      "; Shardy (sdy) sharding ops and attributes in a portable artifact are not supported: "
      "export without shardings (no in_shardings/out_shardings), or serve the module's text "
      "(jax.export: exported.mlir_module()) as the program file";
  for (const char *name : {"sdy_mesh.mlirbc", "sdy_op_sharding_rule.mlirbc"}) {
    SCOPED_TRACE(name);
    const fs::path path = fs::path(RS_SOURCE_DIR) / "test/ir/data/shardy" / name;
    Result<Module> m = readPortableArtifact(readBytes(path), path.string());
    ASSERT_FALSE(m.isOk());
    EXPECT_TRUE(m.status().message().ends_with(advice)) << m.status().message();
    EXPECT_EQ(m.status().message().find(advice), m.status().message().rfind(advice));
  }
}

} // namespace
} // namespace rs::ir
