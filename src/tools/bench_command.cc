//===- tools/bench_command.cc - `reactant-server bench` ---------------------===//
#include "tools/bench_command.h"

#include "bundle/bundle.h"
#include "bundle/safetensors.h"
#include "cpu/executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/ranges.h>
#include <fstream>
#include <memory>

namespace rs::tools {
namespace {

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown";
}

/// The arguments of `program` for batch size `batch`: golden inputs when a golden file
/// exists, zeros otherwise, then the bundle's weights.
Result<std::vector<Tensor>> benchArgs(const bundle::Bundle &b, const cpu::Program &program,
                                      const std::string &golden_dir, int64_t batch,
                                      bool &from_golden) {
  std::vector<Tensor> args;
  const size_t num_inputs = b.manifest.executable_inputs.size();
  if (num_inputs + b.weights.size() != program.inputTypes().size())
    return invalidArgument() << "bundle " << b.name << " b" << batch << ": program takes "
                             << program.inputTypes().size() << " arguments, manifest gives "
                             << num_inputs << " inputs and " << b.weights.size() << " weights";
  std::string path = golden_dir.empty()
                         ? std::string()
                         : golden_dir + "/b" + std::to_string(batch) + ".safetensors";
  from_golden = !path.empty() && std::filesystem::exists(path);
  bundle::SafetensorsFile golden;
  if (from_golden) {
    RS_ASSIGN_OR_RETURN(golden, bundle::SafetensorsFile::open(path));
  }
  for (size_t i = 0; i < num_inputs; ++i) {
    const cpu::TensorType &want = program.inputTypes()[i];
    if (!from_golden) {
      args.push_back(Tensor::zeros(want.dtype, want.shape));
      continue;
    }
    RS_ASSIGN_OR_RETURN(Tensor t, golden.tensor(b.manifest.executable_inputs[i].name));
    if (t.dtype() != want.dtype || t.numElements() != want.numElements())
      return invalidArgument() << path << ": input '" << b.manifest.executable_inputs[i].name
                               << "' is " << cpu::TensorType{t.dtype(), t.shape()}.toString()
                               << ", expected " << want.toString();
    args.push_back(t.reshaped(want.shape));
  }
  args.insert(args.end(), b.weights.begin(), b.weights.end());
  return args;
}

Result<std::unique_ptr<cpu::Program>> compileOn(const bundle::Program &p, int threads) {
  RS_ASSIGN_OR_RETURN(auto ctx, cpu::createCpuContext(cpu::CpuOptions{threads}));
  return cpu::Program::compile(p.module, "main", std::move(ctx));
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// Times one program; prints its line. False (after printing the error) on failure.
bool benchOne(const bundle::Bundle &b, const bundle::Program &bp, const BenchCommandOptions &o) {
  auto fail = [&](const Status &s) {
    std::fprintf(stderr, "bench %s b%lld: %s\n", b.name.c_str(),
                 static_cast<long long>(bp.batch_size), s.toString().c_str());
    return false;
  };
  auto compiled = compileOn(bp, o.threads);
  if (!compiled.isOk())
    return fail(compiled.status());
  const cpu::Program &program = **compiled;
  bool from_golden = false;
  auto args = benchArgs(b, program, o.golden_dir, bp.batch_size, from_golden);
  if (!args.isOk())
    return fail(args.status());
  for (int64_t i = 0; i < o.warmup; ++i)
    if (auto r = program.run(*args); !r.isOk())
      return fail(r.status());
  std::vector<double> times;
  const auto start = std::chrono::steady_clock::now();
  while (o.iterations > 0 ? static_cast<int64_t>(times.size()) < o.iterations
                          : (times.size() < 5 || msSince(start) < o.min_seconds * 1000.0)) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = program.run(*args);
    times.push_back(msSince(t0));
    if (!r.isOk())
      return fail(r.status());
  }
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  const double median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  std::printf("%-14s b%-4lld threads %-3d iterations %-6zu median %10.4f ms  min %10.4f ms  "
              "inputs %s\n",
              b.name.c_str(), static_cast<long long>(bp.batch_size), program.context().numThreads(),
              n, median, times.front(), from_golden ? "golden" : "zeros");
  std::fflush(stdout);
  return true;
}

/// Runs one program on every thread count of --check-threads; compares the outputs.
bool checkThreads(const bundle::Bundle &b, const bundle::Program &bp,
                  const BenchCommandOptions &o) {
  auto fail = [&](const Status &s) {
    std::fprintf(stderr, "check-threads %s b%lld: %s\n", b.name.c_str(),
                 static_cast<long long>(bp.batch_size), s.toString().c_str());
    return false;
  };
  std::vector<Tensor> first;
  bool inputs_golden = false;
  for (size_t ti = 0; ti < o.check_threads.size(); ++ti) {
    auto compiled = compileOn(bp, o.check_threads[ti]);
    if (!compiled.isOk())
      return fail(compiled.status());
    bool from_golden = false;
    auto args = benchArgs(b, **compiled, o.golden_dir, bp.batch_size, from_golden);
    if (!args.isOk())
      return fail(args.status());
    inputs_golden = from_golden;
    auto out = (*compiled)->run(*args);
    if (!out.isOk())
      return fail(out.status());
    if (ti == 0) {
      first = std::move(out).value();
      continue;
    }
    for (size_t i = 0; i < first.size(); ++i) {
      auto x = first[i].bytes(), y = (*out)[i].bytes();
      auto mismatch = std::mismatch(x.begin(), x.end(), y.begin(), y.end());
      if (mismatch.first != x.end() || mismatch.second != y.end()) {
        std::printf("%-14s b%-4lld threads %d vs %d: output %zu differs at byte %td\n",
                    b.name.c_str(), static_cast<long long>(bp.batch_size), o.check_threads[0],
                    o.check_threads[ti], i, mismatch.first - x.begin());
        return false;
      }
    }
  }
  std::printf("%-14s b%-4lld bit-identical across threads", b.name.c_str(),
              static_cast<long long>(bp.batch_size));
  for (int t : o.check_threads)
    std::printf(" %d", t);
  // FNV-1a 64 of each output's bytes: compares outputs across builds of the executor.
  std::printf("; output fnv1a64");
  for (const Tensor &t : first) {
    uint64_t h = 1469598103934665603ull;
    for (uint8_t byte : t.bytes())
      h = (h ^ byte) * 1099511628211ull;
    std::printf(" %016llx", static_cast<unsigned long long>(h));
  }
  std::printf("; inputs %s\n", inputs_golden ? "golden" : "zeros");
  std::fflush(stdout);
  return true;
}

} // namespace

int runBenchCommand(const BenchCommandOptions &o) {
  auto loaded = bundle::loadBundle(o.bundle_dir);
  if (!loaded.isOk()) {
    std::fprintf(stderr, "bench: %s\n", loaded.status().toString().c_str());
    return 1;
  }
  const bundle::Bundle &b = *loaded;
  const std::vector<int64_t> sizes = b.batchSizes();
  const std::string compiled = fmt::to_string(fmt::join(sizes, ", "));
  for (int64_t batch : o.batches)
    if (std::find(sizes.begin(), sizes.end(), batch) == sizes.end()) {
      std::fprintf(stderr, "bench: batch size %lld is not compiled in bundle %s (compiled: %s)\n",
                   static_cast<long long>(batch), b.name.c_str(), compiled.c_str());
      return 1;
    }
  if (!o.golden_dir.empty() && !std::filesystem::is_directory(o.golden_dir)) {
    std::fprintf(stderr,
                 "bench: --golden %s is not a directory (expected b{N}.safetensors files)\n",
                 o.golden_dir.c_str());
    return 1;
  }
  std::printf("cpu: %s\nbundle: %s (%s)\n", cpuModel().c_str(), b.name.c_str(),
              o.bundle_dir.c_str());
  bool ok = true;
  for (const auto &[key, program] : b.programs) {
    if (!o.batches.empty() &&
        std::find(o.batches.begin(), o.batches.end(), key.batch_size) == o.batches.end())
      continue;
    if (!o.check_threads.empty())
      ok = checkThreads(b, program, o) && ok;
    else
      ok = benchOne(b, program, o) && ok;
  }
  return ok ? 0 : 1;
}

void addBenchCommand(CLI::App &app) {
  auto opts = std::make_shared<BenchCommandOptions>();
  CLI::App *cmd = app.add_subcommand("bench", "Time the built-in CPU executor on a bundle");
  cmd->add_option("bundle", opts->bundle_dir, "Bundle directory")->required();
  cmd->add_option("--golden", opts->golden_dir,
                  "Directory of golden files b{N}.safetensors: their inputs are used (zeros "
                  "without it); outputs are not compared (docs/accuracy.md)");
  cmd->add_option("--threads", opts->threads, "Executor threads (0 = every core)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--batch", opts->batches, "Only these compiled batch sizes");
  cmd->add_option("--iterations", opts->iterations, "Timed runs (0 = until --min-seconds)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-seconds", opts->min_seconds, "Timing budget per batch size")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--warmup", opts->warmup, "Untimed runs first")->check(CLI::NonNegativeNumber);
  cmd->add_option("--check-threads", opts->check_threads,
                  "Compare outputs across these thread counts instead of timing")
      ->delimiter(',');
  cmd->callback([opts] { std::exit(runBenchCommand(*opts)); });
}

} // namespace rs::tools
