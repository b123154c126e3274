//===- test/ir/tools/decode_bench.cc - portable artifact vs text speed ----===//
//
// rs_ir_decode_bench [-n ITERATIONS] [-r REPEATS] [FILE...]: reads each program file
// into memory, then REPEATS times decodes (a portable artifact, ir/bytecode.h) or parses
// (StableHLO text, ir/parser.h) it ITERATIONS times in a row, and prints per file its
// size, the median over the repeats of the time per module (ms) and of the throughput
// (MB/s, 10^6 bytes of the file per second). The default files are bert_bench's
// batch-1 program as a portable artifact, as the text of that artifact
// (portable/model.b1.export.mlir: the same module) and in the pretty text form
// (model.b1.mlir), so that the first two lines compare decoding with parsing the same
// module. Figures only, no verdict: not a test (docs/performance.md records runs).
// Exit status 1 when a file cannot be read or does not decode.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode.h"
#include "ir/parser.h"
#include "support/file.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <malloc.h>
#include <string>
#include <vector>

namespace {

struct Figures {
  double ms_per_module = 0;
  double mb_per_s = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Decodes or parses `bytes` once; false (with the error printed) when it fails.
bool readOnce(const std::string &bytes, const std::string &path, size_t *ops) {
  rs::Result<rs::ir::Module> m = rs::ir::isBytecode(bytes)
                                     ? rs::ir::readPortableArtifact(bytes, path)
                                     : rs::ir::parseModule(bytes, path);
  if (!m.isOk()) {
    std::fprintf(stderr, "%s\n", m.status().toString().c_str());
    return false;
  }
  *ops += m->ops.size() + m->value_types.size(); // keeps the work observable
  return true;
}

bool measure(const std::string &bytes, const std::string &path, int iterations, int repeats,
             Figures *out) {
  std::vector<double> ms, mbs;
  size_t sink = 0;
  if (!readOnce(bytes, path, &sink)) // warm-up, and the error if any
    return false;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i)
      if (!readOnce(bytes, path, &sink))
        return false;
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
    ms.push_back(s.count() * 1e3 / iterations);
    mbs.push_back(static_cast<double>(bytes.size()) * iterations / s.count() / 1e6);
  }
  out->ms_per_module = median(ms);
  out->mb_per_s = median(mbs);
  return sink > 0;
}

} // namespace

int main(int argc, char **argv) {
  // The allocator setting reactant-server's main() makes (blocks of 4 MiB and more from
  // mmap, a fixed threshold): without it glibc moves the threshold after the first large
  // free, and a file measured later would find a warmer heap than the first.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  int iterations = 200;
  int repeats = 7;
  std::vector<std::string> files;
  CLI::App app{"rs_ir_decode_bench: portable artifact decoding vs text parsing speed"};
  app.add_option("-n", iterations, "Decodes or parses per repeat")->check(CLI::PositiveNumber);
  app.add_option("-r", repeats, "Repeats (the median is printed)")->check(CLI::PositiveNumber);
  app.add_option("files", files, "Program files (default: bert_bench's b1 in three forms)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (files.empty()) {
    const std::string bert =
        std::filesystem::path(RS_SHARED_DIR "/fixtures/bundles/bert_bench/").lexically_normal();
    files = {bert + "portable/model.b1.mlirbc", bert + "portable/model.b1.export.mlir",
             bert + "model.b1.mlir"};
  }
  std::printf("median of %d repeats of %d reads each\n", repeats, iterations);
  std::printf("%-10s %9s %12s %9s  %s\n", "form", "bytes", "ms/module", "MB/s", "file");
  int status = 0;
  for (const std::string &path : files) {
    rs::Result<std::string> bytes = rs::readWholeFile(path);
    if (!bytes.isOk()) {
      std::fprintf(stderr, "%s\n", bytes.status().toString().c_str());
      status = 1;
      continue;
    }
    Figures f;
    if (!measure(*bytes, path, iterations, repeats, &f)) {
      status = 1;
      continue;
    }
    std::printf("%-10s %9zu %12.3f %9.2f  %s\n", rs::ir::isBytecode(*bytes) ? "bytecode" : "text",
                bytes->size(), f.ms_per_module, f.mb_per_s, path.c_str());
  }
  return status;
}
