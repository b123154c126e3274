//===- test/tools/bundle_convert_test.cc - `reactant-server bundle convert` ===//
//
// The real binary converts every fixture bundle's portable artifacts: the generic form is
// exactly ir::printGeneric of the decoded module, and both forms parse back to it; the
// text form keeps each op's source position; a converted bundle and a portable bundle
// both pass `bundle validate`. Then the refusals: an existing output, the input itself,
// a directory that is not a bundle, a bundle without -o, an artifact that does not decode.
//
//===----------------------------------------------------------------------===//
#include "ir/parser.h"
#include "ir/printer.h"
#include "tools_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <utility>

namespace rs::testing {
namespace {

ir::Module parsed(const fs::path &p) {
  Result<ir::Module> m = ir::parseModuleFile(p.string());
  EXPECT_TRUE(m.isOk()) << m.status().toString();
  return m.isOk() ? std::move(m).value() : ir::Module();
}

std::vector<std::string> programNames(const fs::path &dir) {
  std::vector<std::string> names;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.path().extension() == ".mlir")
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(BundleConvert, EveryPortableProgramConvertsToTextThatParsesToTheDecodedModule) {
  TempDir tmp;
  int programs = 0;
  for (const std::string &model : kModels) {
    const fs::path portable = makePortableBundle(model, tmp.path() / "portable");
    const fs::path generic = tmp.path() / "generic" / model;
    const fs::path text = tmp.path() / "text" / model;
    fs::create_directories(generic.parent_path());
    fs::create_directories(text.parent_path());
    for (const auto &[form, out] : {std::pair{"generic", generic}, std::pair{"text", text}}) {
      RunResult r =
          runServer({"bundle", "convert", "--to", form, portable.string(), "-o", out.string()});
      ASSERT_EQ(r.status, 0) << model << " " << form << ": " << r.err;
      EXPECT_EQ(r.err, "");
      EXPECT_EQ(readFile(out / "manifest.yaml"), readFile(portable / "manifest.yaml"));
      EXPECT_EQ(fs::file_size(out / "weights.safetensors"),
                fs::file_size(portable / "weights.safetensors"));
      EXPECT_FALSE(fs::is_symlink(out / "weights.safetensors")); // a copy, not the link
    }
    const std::vector<std::string> names = programNames(portable);
    ASSERT_FALSE(names.empty());
    EXPECT_EQ(programNames(generic), names);
    EXPECT_EQ(programNames(text), names);
    for (const std::string &name : names) {
      const ir::Module decoded = parsed(portable / name);
      EXPECT_EQ(readFile(generic / name), ir::printGeneric(decoded)) << model << "/" << name;
      EXPECT_TRUE(parsed(generic / name) == decoded) << model << "/" << name;
      EXPECT_TRUE(parsed(text / name) == decoded) << model << "/" << name;
      EXPECT_NE(readFile(text / name).find(" loc(\""), std::string::npos);
      ++programs;
    }
  }
  EXPECT_EQ(programs, 19);
}

TEST(BundleConvert, TextKeepsEachOpsSourcePosition) {
  // A text program: the file:line:col the parser gave each op.
  const fs::path pretty = kBundles / "iris_mlp/model.b1.mlir";
  RunResult r = runServer({"bundle", "convert", "--to", "text", pretty.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const ir::Module m = parsed(pretty);
  const ir::Operation &main = *m.lookupFunction("main");
  const ir::Operation &first = main.regions[0].blocks[0].ops[0];
  const std::string loc = " loc(\"" + pretty.string() + "\":" + std::to_string(first.loc.line) +
                          ":" + std::to_string(first.loc.col) + ")";
  EXPECT_NE(r.out.find(loc + "\n"), std::string::npos) << loc << "\n" << r.out;

  // A portable artifact: its ops' debug locations, not the artifact's byte offsets.
  const fs::path bc = kBundles / "iris_mlp/portable/model.b1.mlirbc";
  r = runServer({"bundle", "convert", "--to", "text", bc.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"stablehlo.dot_general\""), std::string::npos);
  EXPECT_NE(r.out.find(" loc(\"/work/steering/scratch/gen_fixtures.py\":234:25)\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("byte"), std::string::npos);
  r = runServer({"bundle", "convert", "--to", "generic", bc.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, ir::printGeneric(parsed(bc)));
}

TEST(BundleConvert, ConvertedAndPortableBundlesPassValidate) {
  TempDir tmp;
  for (const std::string model : {"iris_mlp", "digits_cnn", "op_zoo"}) {
    const fs::path portable = makePortableBundle(model, tmp.path() / "portable");
    const fs::path text = tmp.path() / "text" / model;
    fs::create_directories(text.parent_path());
    RunResult r =
        runServer({"bundle", "convert", "--to", "text", portable.string(), "-o", text.string()});
    ASSERT_EQ(r.status, 0) << r.err;
    const size_t programs = programNames(portable).size();
    EXPECT_EQ(r.out, "ok " + text.string() + ": " + std::to_string(programs) +
                         (programs == 1 ? " program" : " programs") +
                         " as text; copied manifest.yaml, weights.safetensors\n");
    for (const fs::path &dir : {portable, text}) {
      r = runServer({"bundle", "validate", dir.string()});
      EXPECT_EQ(r.status, 0) << dir << "\n" << r.out << r.err;
      EXPECT_TRUE(r.out.starts_with("ok " + model + " ")) << r.out;
    }
  }
}

TEST(BundleConvert, RefusesToOverwriteWithoutForce) {
  TempDir tmp;
  const fs::path bc = kBundles / "iris_mlp/portable/model.b8.mlirbc";
  const fs::path out = tmp.path() / "model.b8.mlir";
  RunResult r =
      runServer({"bundle", "convert", "--to", "generic", bc.string(), "-o", out.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "ok " + out.string() + ": 1 program as generic\n");
  const std::string generic = readFile(out);
  r = runServer({"bundle", "convert", "--to", "text", bc.string(), "-o", out.string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "error " + out.string() + ": exists (--force replaces it)\n");
  EXPECT_EQ(readFile(out), generic);
  r = runServer({"bundle", "convert", "--to", "text", bc.string(), "-o", out.string(), "--force"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(readFile(out), generic);
  EXPECT_TRUE(parsed(out) == parsed(bc));
  // Even with --force: not the input itself, not a directory for a file.
  r = runServer({"bundle", "convert", "--to", "text", out.string(), "-o", out.string(), "--force"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "error " + out.string() + ": is the input " + out.string() +
                       " (write the conversion elsewhere)\n");
  r = runServer(
      {"bundle", "convert", "--to", "text", bc.string(), "-o", tmp.path().string(), "--force"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "error " + tmp.path().string() + ": is a directory, not a file\n");
}

TEST(BundleConvert, ABundleReplacesOnlyABundleOrAnEmptyDirectory) {
  TempDir tmp;
  const fs::path portable = makePortableBundle("iris_mlp", tmp.path());
  const fs::path out = tmp.path() / "out";
  fs::create_directories(out);
  std::ofstream(out / "notes.txt") << "keep me\n";
  RunResult r = runServer(
      {"bundle", "convert", "--to", "generic", portable.string(), "-o", out.string(), "--force"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "error " + out.string() +
                       ": is not a bundle directory (no manifest.yaml) and is not empty; not "
                       "replaced\n");
  EXPECT_EQ(readFile(out / "notes.txt"), "keep me\n");
  fs::remove(out / "notes.txt");
  r = runServer(
      {"bundle", "convert", "--to", "generic", portable.string(), "-o", out.string(), "--force"});
  ASSERT_EQ(r.status, 0) << r.err;
  // OUTPUT holds a bundle: --force replaces it whole (a stale program does not survive).
  std::ofstream(out / "model.b64.mlir") << "stale\n";
  r = runServer({"bundle", "convert", "--to", "text", portable.string(), "-o", out.string()});
  EXPECT_EQ(r.status, 1);
  r = runServer(
      {"bundle", "convert", "--to", "text", portable.string(), "-o", out.string(), "--force"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(programNames(out), programNames(portable));
  r = runServer({"bundle", "convert", "--to", "text", portable.string(), "-o",
                 portable.string() + "/", "--force"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(": is the input "), std::string::npos) << r.err;
  EXPECT_EQ(programNames(portable).size(), 3u);
}

TEST(BundleConvert, ErrorsAndUsage) {
  TempDir tmp;
  const fs::path portable = makePortableBundle("iris_mlp", tmp.path());
  // A bundle needs -o; --to is required and is text or generic.
  RunResult r = runServer({"bundle", "convert", "--to", "text", portable.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("-o OUTPUT"), std::string::npos) << r.err;
  EXPECT_EQ(runServer({"bundle", "convert", portable.string()}).status, 2);
  EXPECT_EQ(runServer({"bundle", "convert", "--to", "pretty", portable.string()}).status, 2);
  // An artifact cut short: nothing is written.
  const fs::path cut = portable / "model.b8.mlir";
  const std::string bytes = readFile(cut);
  std::ofstream(cut, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  const fs::path out = tmp.path() / "out";
  r = runServer({"bundle", "convert", "--to", "text", portable.string(), "-o", out.string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(r.err.starts_with("error " + cut.string() + ": invalid portable artifact: byte "))
      << r.err;
  EXPECT_EQ(lines(r.err).size(), 1u);
  EXPECT_FALSE(fs::exists(out));
  r = runServer({"bundle", "convert", "--to", "text", (tmp.path() / "missing.mlir").string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(
      r.err.starts_with("error " + (tmp.path() / "missing.mlir").string() + ": cannot open: "))
      << r.err;
  EXPECT_EQ(r.out, "");
  // An empty file is no program (the text parser alone would read it as an empty module).
  const fs::path empty = tmp.path() / "empty.mlir";
  std::ofstream(empty).flush();
  r = runServer({"bundle", "convert", "--to", "text", empty.string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "error " + empty.string() +
                       ": is empty (expected StableHLO text or a portable artifact)\n");
  EXPECT_EQ(r.out, "");
}

} // namespace
} // namespace rs::testing
