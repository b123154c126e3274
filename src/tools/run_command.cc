//===- tools/run_command.cc - `reactant-server run` -------------------------===//
#include "tools/run_command.h"

#include "client/infer_io.h"
#include "cpu/executor.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verify.h"
#include "support/file.h"
#include "tools/run_diagnostics.h"
#include "tools/run_inputs.h"

#include <charconv>
#include <cstdio>
#include <limits>
#include <map>

namespace rs::tools {
namespace {

/// The arguments of `program` from the --input options.
Result<std::vector<Tensor>> readArguments(const cpu::Program &program,
                                          const std::vector<std::string> &inputs) {
  const std::vector<cpu::TensorType> &types = program.inputTypes();
  std::map<size_t, std::string> paths;
  for (const std::string &input : inputs) {
    size_t eq = input.find('=');
    size_t index = 0;
    auto [end, ec] =
        std::from_chars(input.data(), input.data() + std::min(eq, input.size()), index);
    if (eq == std::string::npos || ec != std::errc() || end != input.data() + eq)
      return invalidArgument() << "--input " << input << ": expected N=FILE, N the argument's "
                               << "position (0-based)";
    if (index >= types.size())
      return invalidArgument() << "--input " << input << ": the entry function takes "
                               << types.size() << " arguments";
    if (!paths.emplace(index, input.substr(eq + 1)).second)
      return invalidArgument() << "--input " << input << ": argument " << index
                               << " is given twice";
  }
  std::vector<Tensor> args;
  for (size_t i = 0; i < types.size(); ++i) {
    auto it = paths.find(i);
    if (it == paths.end())
      return invalidArgument() << "argument " << i << " (" << types[i].toString()
                               << ") has no --input " << i << "=FILE";
    RS_ASSIGN_OR_RETURN(Tensor t, readArgumentFile(it->second, types[i].dtype, types[i].shape));
    args.push_back(std::move(t));
  }
  return args;
}

/// Runs the passes of `o` over `m`, each followed by the verifier; returns the lines that
/// --print-ir shows before the module.
Result<std::string> runPasses(ir::Module &m, const RunCommandOptions &o) {
  std::string report;
  for (const std::string &name : o.passes) {
    if (name == "refine-shapes") {
      const ir::Operation *entry = m.lookupFunction(o.entry);
      if (!entry)
        return invalidArgument() << m.file << ": no entry function @" << o.entry;
      RS_ASSIGN_OR_RETURN(
          passes::RefineReport r,
          passes::refineShapes(m, passes::uniformRefinement(*entry, o.refine_size)));
      report += "// refine-shapes: " + r.outcome() + "\n";
    } else if (name == "numerics") {
      RS_ASSIGN_OR_RETURN(passes::NumericsReport r, passes::pinNumerics(m, o.numerics));
      report += "// numerics: " + r.outcome() + "\n";
    } else {
      return invalidArgument() << "unknown pass '" << name << "' (expected numerics or "
                               << "refine-shapes)";
    }
    RS_RETURN_IF_ERROR(ir::verifyModule(m));
  }
  return report;
}

Status checkRoundTrip(const ir::Module &m) {
  const std::string printed = ir::printGeneric(m);
  Result<ir::Module> again = ir::parseModule(printed, "printed");
  if (!again.isOk())
    return invalidArgument() << m.file
                             << ": the printed module does not parse: " << again.status().message()
                             << "\n"
                             << printed;
  if (!(*again == m))
    return invalidArgument() << m.file << ": the printed module parses to a different module:\n"
                             << printed;
  return Status::ok();
}

Status execute(const ir::Module &m, const RunCommandOptions &o, std::string &out) {
  RS_ASSIGN_OR_RETURN(auto ctx, cpu::createCpuContext(cpu::CpuOptions{o.threads}));
  RS_ASSIGN_OR_RETURN(auto program, cpu::Program::compile(m, o.entry, std::move(ctx)));
  RS_ASSIGN_OR_RETURN(std::vector<Tensor> args, readArguments(*program, o.inputs));
  RS_ASSIGN_OR_RETURN(std::vector<Tensor> results, program->run(args));
  for (size_t i = 0; i < results.size(); ++i)
    out += client::describeTensor({"result" + std::to_string(i), std::move(results[i])},
                                  static_cast<size_t>(std::numeric_limits<int64_t>::max())) +
           "\n";
  return Status::ok();
}

/// Passes, checks and then printing or execution of one parsed module; appends what it
/// prints to `out`.
Status processModule(Result<ir::Module> parsed, const RunCommandOptions &o, std::string &out) {
  RS_ASSIGN_OR_RETURN(ir::Module m, std::move(parsed));
  RS_ASSIGN_OR_RETURN(std::string report, runPasses(m, o));
  if (o.verify_roundtrip)
    RS_RETURN_IF_ERROR(checkRoundTrip(m));
  if (!o.print_ir)
    return execute(m, o, out);
  out += (o.print_outcome ? report : std::string()) + ir::printGeneric(m);
  return Status::ok();
}

/// One `// -----` chunk, or the whole file; false (the reason on stderr) on failure.
bool processChunk(std::string_view chunk, int first_line, const RunCommandOptions &o,
                  std::string &out) {
  auto fail = [](const Status &s) {
    std::fprintf(stderr, "%s\n", s.toString().c_str());
    return false;
  };
  std::optional<ExpectedError> expected;
  if (o.verify_diagnostics) {
    auto found = findExpectedError(chunk, first_line, o.file);
    if (!found.isOk())
      return fail(found.status());
    expected = std::move(*found);
  }
  std::string printed;
  Status s = processModule(ir::parseModule(chunk, o.file, first_line), o, printed);
  if (expected) {
    if (Status m = matchExpectedError(*expected, s, o.file); !m.isOk())
      return fail(m);
    return true;
  }
  if (!s.isOk())
    return fail(s);
  out += printed;
  return true;
}

} // namespace

int runRunCommand(const RunCommandOptions &o) {
  if (!o.split_input_file) {
    if (o.verify_diagnostics) {
      auto text = readWholeFile(o.file);
      if (!text.isOk()) {
        std::fprintf(stderr, "%s\n", text.status().toString().c_str());
        return 1;
      }
      std::string out;
      bool ok = processChunk(*text, 1, o, out);
      std::fwrite(out.data(), 1, out.size(), stdout);
      return ok ? 0 : 1;
    }
    std::string out;
    Status s = processModule(ir::parseModuleFile(o.file), o, out);
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (!s.isOk()) {
      std::fprintf(stderr, "%s\n", s.toString().c_str());
      return 1;
    }
    return 0;
  }
  auto text = readWholeFile(o.file);
  if (!text.isOk()) {
    std::fprintf(stderr, "%s\n", text.status().toString().c_str());
    return 1;
  }
  bool ok = true;
  std::string out;
  bool first = true;
  for (const auto &[line, chunk] : ir::splitInputFile(*text)) {
    if (!first)
      out += "// -----\n";
    first = false;
    ok = processChunk(chunk, line, o, out) && ok;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return ok ? 0 : 1;
}

void addRunCommand(CLI::App &app) {
  auto opts = std::make_shared<RunCommandOptions>();
  CLI::App *cmd = app.add_subcommand(
      "run", "Execute one StableHLO file on the CPU executor, or print it after passes");
  cmd->add_option("file", opts->file, "StableHLO text or portable artifact")->required();
  cmd->add_option("--input", opts->inputs,
                  "N=FILE: argument N (0-based) from a .npy or .json file (repeatable)");
  cmd->add_option("--entry", opts->entry, "Entry function")->capture_default_str();
  cmd->add_option("--threads", opts->threads, "Executor threads (0 = every core)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--pass", opts->passes,
                  "Run this pass (repeatable, in order): numerics, refine-shapes")
      ->check(CLI::IsMember({"numerics", "refine-shapes"}));
  cmd->add_option("--refine-size", opts->refine_size,
                  "refine-shapes pass: the size of every `?` of the entry's arguments and the "
                  "value of its leading integer scalar (dimension) arguments")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  std::map<std::string, passes::NumericsMode> modes{{"f32", passes::NumericsMode::kF32},
                                                    {"auto", passes::NumericsMode::kAuto},
                                                    {"tf32", passes::NumericsMode::kTf32}};
  cmd->add_option("--numerics-mode", opts->numerics.mode, "numerics pass: f32, auto or tf32")
      ->transform(CLI::CheckedTransformer(modes, CLI::ignore_case))
      ->default_str("f32");
  cmd->add_flag("--target-tf32", opts->numerics.target_has_tf32,
                "numerics pass: the compile target runs DEFAULT f32 matmuls in TF32");
  cmd->add_flag("--print-ir", opts->print_ir,
                "Print the module in generic form instead of executing it");
  cmd->add_flag("--print-outcome", opts->print_outcome,
                "With --print-ir: a `// <pass>: <outcome>` line per pass before the module");
  cmd->add_flag("--split-input-file", opts->split_input_file,
                "Process each `// -----` chunk of the file on its own");
  cmd->add_flag("--verify-diagnostics", opts->verify_diagnostics,
                "Check the chunks' expected-error directives");
  cmd->add_flag("--verify-roundtrip", opts->verify_roundtrip,
                "Require that the printed module parses back to the same module");
  cmd->callback([opts] { std::exit(runRunCommand(*opts)); });
}

} // namespace rs::tools
