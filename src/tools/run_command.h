//===- tools/run_command.h - `reactant-server run` --------------------------===//
//
// Executes one StableHLO module on the built-in CPU executor, or prints it after passes:
//
//   reactant-server run FILE.mlir [--input N=FILE.npy|FILE.json]... [--entry main]
//       [--threads N] [--pass numerics [--numerics-mode f32|auto|tf32] [--target-tf32]]
//       [--pass refine-shapes [--refine-size N]]
//       [--print-ir [--print-outcome]] [--split-input-file] [--verify-diagnostics]
//       [--verify-roundtrip]
//
// FILE is StableHLO text or a portable artifact (ir/parser.h); it is parsed and verified
// (ir/verify.h), then each --pass runs in order, each followed by the verifier. Then:
//
//  - without --print-ir the entry function runs on the CPU executor (cpu/executor.h, on
//    --threads threads, 0 = every core). Argument N (0-based, in the order of the entry
//    function's parameters) comes from --input N=FILE (tools/run_inputs.h: .npy, or .json
//    as a KServe V2 tensor or its data array); every argument needs one. Each result is
//    printed on its own line, `resultK DTYPE [shape] = [v, ...]`, every value shown.
//  - with --print-ir the module is printed in generic form (ir/printer.h); --print-outcome
//    puts one `// numerics: <outcome>` line (passes::NumericsReport::outcome()) or
//    `// refine-shapes: <outcome>` line (passes::RefineReport::outcome()) per pass before it.
//
// --split-input-file treats FILE as test cases split on `// -----` lines (MLIR's option of
// that name); each chunk is processed alone, keeping the file's line numbers, and the
// outputs are separated by `// -----` lines, so a FileCheck `-LABEL: // -----` directive
// starts the checks of a case (docs/contributing.md). --verify-diagnostics checks the
// `expected-error` directives of each chunk (tools/run_diagnostics.h): a chunk with one must fail
// with that error and prints nothing; a chunk without one must succeed. --verify-roundtrip also
// prints each module, parses the text again and requires the same module (ir::Module::operator==).
// The passes: `numerics` (passes/numerics.h; --numerics-mode, default f32, and
// --target-tf32 for a compile target that has TF32) and `refine-shapes`
// (passes/refine_shapes.h; every `?` of the entry's arguments and each leading integer
// scalar argument get --refine-size, default 3: passes::uniformRefinement()).
//
// This is the driver of the IR and pass tests (test/ir/*.mlir, test/passes/*.mlir, run by
// LLVM's lit and FileCheck) and a debugging tool for one program.
// Exit status: 0 on success; 1 when reading, a pass, a directive, the round trip, an input
// file, compiling or running fails (the reason on stderr, naming the file and line);
// 2 for bad command-line use (CLI11).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/numerics.h"
#include "passes/refine_shapes.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace rs::tools {

struct RunCommandOptions {
  std::string file;
  std::vector<std::string> inputs; // "N=path", argument N from path
  std::string entry = "main";
  int threads = 0;                 // 0: every core
  std::vector<std::string> passes; // names, in order: "numerics", "refine-shapes"
  passes::NumericsOptions numerics{passes::NumericsMode::kF32, false};
  int64_t refine_size = 3; // refine-shapes: every `?` and dimension argument
  bool print_ir = false;
  bool print_outcome = false; // with print_ir: the passes' outcome lines first
  bool split_input_file = false;
  bool verify_diagnostics = false;
  bool verify_roundtrip = false;
};

/// Registers the `run` subcommand on `app`.
void addRunCommand(CLI::App &app);

/// Runs the command (see the file comment); returns the exit status.
int runRunCommand(const RunCommandOptions &options);

} // namespace rs::tools
