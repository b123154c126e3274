//===- tools/bench_command.h - `reactant-server bench` ----------------------===//
//
// Times the built-in CPU executor on one bundle:
//
//   reactant-server bench BUNDLE_DIR [--golden DIR] [--threads N] [--batch N]...
//       [--iterations N] [--min-seconds S] [--warmup N] [--check-threads 1,2,4,16]
//
// Every compiled batch size (or only those named by --batch) is compiled once on a
// context of --threads threads (0 = every core) and run on its golden inputs
// (DIR/b{N}.safetensors, tensors named as the manifest's executable_inputs, reshaped to
// the program's argument shapes) or, without --golden or a file for that size, on zeros.
// Timing only: the outputs are not compared with the golden outputs (the golden tests of
// the test suite do that; docs/accuracy.md).
// After --warmup untimed runs it runs --iterations times, or when that is 0 until
// --min-seconds have passed (at least 5 runs), and prints one line per batch size: the
// median and min milliseconds per execute (Program::run wall time, weights as zero-copy
// views of the mapped safetensors), the iteration and thread counts. The first lines name
// the CPU model (/proc/cpuinfo "model name") and the bundle.
//
// --check-threads runs each program once per listed thread count and compares every
// output byte for byte with the first count's; a difference is reported (output index,
// first differing byte) and makes the exit status 1.
//
// Exit status: 0 on success; 1 when the bundle, a golden file, a compile or a run fails,
// or outputs differ across thread counts; 2 for bad command-line use (CLI11).
// A measuring tool: never run as a timed test.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace rs::tools {

struct BenchCommandOptions {
  std::string bundle_dir;
  std::string golden_dir;
  int threads = 0;
  std::vector<int64_t> batches; // empty: every compiled batch size
  int64_t iterations = 0;       // 0: until min_seconds
  double min_seconds = 2.0;
  int64_t warmup = 2;
  std::vector<int> check_threads;
};

/// Registers the `bench` subcommand on `app`.
void addBenchCommand(CLI::App &app);

/// Runs the benchmark (see the file comment); returns the exit status.
int runBenchCommand(const BenchCommandOptions &options);

} // namespace rs::tools
