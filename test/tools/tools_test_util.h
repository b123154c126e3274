//===- test/tools/tools_test_util.h - Running reactant-server on bundles ---===//
//
// The real binary run with arguments (stdout and stderr kept apart), a temporary
// directory per test, and copies of fixture bundles whose programs are the fixtures'
// portable artifacts (portable/model.b{N}.mlirbc renamed model.b{N}.mlir; the manifest
// and weights are symbolic links to the fixture's).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/files.h"
#include "common/temp_dir.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace rs::testing {

namespace fs = std::filesystem;

inline const fs::path kBundles = fs::path(RS_SHARED_DIR) / "fixtures" / "bundles";

/// Every fixture bundle.
inline const std::vector<std::string> kModels = {"bert_bench", "digits_cnn",   "iris_mlp",
                                                 "op_zoo",     "resnet_bench", "resnet_mini",
                                                 "tf32_algo",  "tiny_bert"};

struct RunResult {
  int status = -1; // exit status, -1 when it did not exit
  std::string out;
  std::string err;
};

/// `s` as one word of a shell command line.
inline std::string shellQuote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Runs `reactant-server args...` and waits for it.
inline RunResult runServer(const std::vector<std::string> &args) {
  static int counter = 0;
  const fs::path err_file =
      fs::temp_directory_path() /
      ("rs_tools_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::string command = shellQuote(RS_SERVER_BINARY);
  for (const std::string &a : args)
    command += " " + shellQuote(a);
  command += " 2>" + shellQuote(err_file.string());
  RunResult r;
  FILE *p = ::popen(command.c_str(), "r");
  if (!p)
    return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
    r.out.append(buf, n);
  const int status = ::pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = readFile(err_file);
  fs::remove(err_file);
  return r;
}

/// The lines of `text` (without their newlines).
inline std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

/// `parent`/`model`: the fixture's manifest and weights (linked) and its portable
/// artifacts as model.b{N}.mlir. Returns the bundle directory.
inline fs::path makePortableBundle(const std::string &model, const fs::path &parent) {
  const fs::path src = kBundles / model;
  const fs::path dir = parent / model;
  fs::create_directories(dir);
  fs::create_symlink(src / "manifest.yaml", dir / "manifest.yaml");
  if (fs::exists(src / "weights.safetensors"))
    fs::create_symlink(src / "weights.safetensors", dir / "weights.safetensors");
  for (const auto &e : fs::directory_iterator(src / "portable")) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".mlirbc"))
      fs::copy_file(e.path(), dir / (name.substr(0, name.size() - 2)));
  }
  return dir;
}

} // namespace rs::testing
