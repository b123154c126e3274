//===- tools/bin/gpu_check.cc - reactant-gpu-check: the GPU backend's proof -===//
//
// One command that runs the PJRT backend on the GPU machine and prints its figures
// (docs/gpu.md). For every fixture bundle and every batch size with a GPU golden it:
//   - loads the bundle (bundle/), uploads the weights once (Backend::upload),
//   - compiles the module as loaded (printed in generic form, DEFAULT precision) with
//     the regulated XLA flags and compares the outputs on the golden inputs with
//     golden/<model>/b{N}.gpu.safetensors bit for bit ("auto"),
//   - compiles it again after the numerics pass of `runtime.numerics: f32`
//     (passes::pinNumerics, the server's path: every f32 dot_general/convolution without an
//     explicit algorithm at precision [HIGHEST, HIGHEST], TF32 algorithms rewritten to f32)
//     and compares with b{N}.gpu_highest.safetensors ("f32"); for a module whose TF32
//     algorithms the pass rewrote, the golden keeps them, so that comparison is
//     informational (a NOTE line, not a check),
//   - checks that execute() with host weights, and serialize -> deserialize -> execute,
//     give the same bytes as the resident-weights run,
// and prints the TF32 probe, the compile and execute times (with a breakdown of one run
// into upload, execute and read-back through pjrt/ directly), and checks that per-compile
// XLA flags take effect (an unknown flag is refused by name; the per-fusion autotune cache
// directory fills on a cold compile and is reused by the next). The last line is
// "gpu-check: N of M checks passed". Exit status 0 when every check passed.
//
// Usage: reactant-gpu-check --fixtures DIR [--plugin PATH] [--runs N] [--event-spin-us US]
//                           [--model NAME]... [--xla-flags=FLAGS] [--dry-run]
// (CLI11: 2 and a message for bad use; FLAGS start with "--", hence the `=` form.)
// --event-spin-us: as runtime.event_spin_us (default 20000; 0 = sleep on every PJRT event).
// --dry-run needs no GPU: it loads every bundle and golden, runs the f32 numerics pass and
// checks that the printed module parses again, without creating a backend.
//
//===----------------------------------------------------------------------===//
#include "tools/bin/gpu_check_legs.h"

#include "bundle/bundle.h"
#include "bundle/safetensors.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/numerics.h"
#include "pjrt/compile_options.h"
#include "runtime/numerics_gate.h"
#include "runtime/pjrt_backend.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <stdlib.h>

namespace {

using namespace rs;
using gpu_check::Clock;
using gpu_check::msSince;
using gpu_check::Tally;

constexpr char kXlaFlags[] =
    "--xla_gpu_autotune_level=0 --xla_gpu_exclude_nondeterministic_ops=true";

struct Args {
  std::string fixtures;
  std::string plugin;
  int runs = 20;
  int event_spin_us = 20000; // runtime.event_spin_us's default
  std::vector<std::string> models;
  bool dry_run = false;
  /// Per-compile XLA flags; the goldens' flags by default. The bit-identity checks hold
  /// only under those; other flags (e.g. the server's, autotuning on) are for timing.
  std::string xla_flags = kXlaFlags;
};

/// Reads the command line into `args` (CLI11); returns the exit status to end with (0 for
/// --help, 2 for bad use, the message on stderr), or -1 to go on.
int parseArgs(int argc, char **argv, Args *args) {
  CLI::App app{"reactant-gpu-check: the PJRT backend against the fixtures' GPU goldens "
               "(docs/gpu.md)"};
  app.add_option("--fixtures", args->fixtures, "The fixtures directory")->required();
  app.add_option("--plugin", args->plugin, "PJRT plugin (default: found as the server finds it)");
  app.add_option("--runs", args->runs, "Timed runs per program")->check(CLI::PositiveNumber);
  app.add_option("--event-spin-us", args->event_spin_us, "runtime.event_spin_us")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--model", args->models, "Only these fixtures (repeatable)");
  app.add_option("--xla-flags", args->xla_flags,
                 "Per-compile XLA flags (default: the goldens'); give them as --xla-flags=...");
  app.add_flag("--dry-run", args->dry_run, "Check the fixtures without a GPU");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return -1;
}

/// Files under `dir` (recursively).
int countFiles(const std::string &dir) {
  int n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    n += it->is_regular_file() ? 1 : 0;
  return n;
}

/// Per-compile XLA flags take effect: an unknown flag is refused with the plugin's message,
/// and the per-fusion autotune cache directory fills on a cold compile (autotuning on) and
/// is read on the next one.
void flagChecks(const runtime::PjrtBackend &backend, const bundle::Bundle &b, Tally *tally) {
  const pjrt::Client &client = backend.client();
  const std::string text = ir::printGeneric(b.programs.rbegin()->second.module);

  pjrt::CompileOptionsSpec bad;
  bad.env_option_overrides["xla_no_such_flag"] = "1";
  auto refused = client.compile(text, pjrt::encodeCompileOptions(bad));
  const bool named =
      !refused.isOk() && refused.status().message().find("xla_no_such_flag") != std::string::npos;
  tally->add(named);
  std::printf("xla flags: unknown flag refused with its name: %s (%s)\n", named ? "yes" : "NO",
              refused.isOk() ? "compiled" : refused.status().toString().c_str());

  char tmpl[] = "/tmp/rs_autotune_XXXXXX";
  const char *dir = ::mkdtemp(tmpl);
  if (dir == nullptr) {
    std::printf("xla flags: cannot create a temporary directory\n");
    tally->add(false);
    return;
  }
  pjrt::CompileOptionsSpec tuned;
  tuned.env_option_overrides["xla_gpu_per_fusion_autotune_cache_dir"] = dir;
  auto t0 = Clock::now();
  auto cold = client.compile(text, pjrt::encodeCompileOptions(tuned));
  const double cold_ms = msSince(t0);
  const int cold_files = countFiles(dir);
  t0 = Clock::now();
  auto warm = client.compile(text, pjrt::encodeCompileOptions(tuned));
  const double warm_ms = msSince(t0);
  const int warm_files = countFiles(dir);
  const bool ok = cold.isOk() && warm.isOk() && cold_files > 0 && warm_files == cold_files;
  tally->add(ok);
  std::printf("xla flags: %s b%lld with autotuning on and "
              "--xla_gpu_per_fusion_autotune_cache_dir=%s: cold compile %.0f ms wrote %d "
              "file(s), warm compile %.0f ms, %d file(s) after: %s%s\n",
              b.name.c_str(), static_cast<long long>(b.programs.rbegin()->first.batch_size), dir,
              cold_ms, cold_files, warm_ms, warm_files, ok ? "ok" : "FAILED",
              cold.isOk() ? "" : (" " + cold.status().toString()).c_str());
}

/// --dry-run: everything but the device for one (model, batch).
void dryRunProgram(const bundle::Bundle &b, int64_t batch, const bundle::Program &program,
                   const std::string &golden_dir, Tally *tally) {
  const std::string tag = b.name + " b" + std::to_string(batch);
  const std::string gpath = golden_dir + "/b" + std::to_string(batch);
  bool ok = true;
  std::string detail;
  for (const char *suffix : {".safetensors", ".gpu.safetensors", ".gpu_highest.safetensors"}) {
    auto f = bundle::SafetensorsFile::open(gpath + suffix);
    if (!f.isOk()) {
      ok = false;
      detail += " " + f.status().toString();
      continue;
    }
    const auto &specs = std::string(suffix) == ".safetensors" ? b.manifest.executable_inputs
                                                              : b.manifest.executable_outputs;
    for (const bundle::TensorSpec &spec : specs) {
      auto t = f->tensor(spec.name);
      const Shape want = spec.shapeForBatch(batch);
      if (!t.isOk() || t->numElements() != elementCount(want)) {
        ok = false;
        detail += " " + spec.name + " missing or wrong size in " + suffix;
      }
    }
  }
  ir::Module pinned = program.module;
  // The GPU the goldens come from has TF32 (compute capability 9.0).
  auto report = passes::pinNumerics(pinned, {passes::NumericsMode::kF32, true});
  if (!report.isOk()) {
    ok = false;
    detail += " numerics pass: " + report.status().toString();
  }
  const std::string text = ir::printGeneric(pinned);
  auto reparsed = ir::parseModule(text, "printed");
  if (!reparsed.isOk()) {
    ok = false;
    detail += " printed module does not parse: " + reparsed.status().toString();
  }
  tally->add(ok);
  std::printf("%s dry-run: %s (numerics %s, printed module %zu bytes)%s\n", tag.c_str(),
              ok ? "ok" : "FAILED", report.isOk() ? report->outcome().c_str() : "failed",
              text.size(), detail.c_str());
}

/// --dry-run over every bundle.
int dryRun(const Args &args) {
  Tally tally;
  for (const std::string &dir : bundle::discoverBundles(args.fixtures + "/bundles")) {
    const std::string name = std::filesystem::path(dir).filename().string();
    if (!args.models.empty() &&
        std::find(args.models.begin(), args.models.end(), name) == args.models.end())
      continue;
    auto b = bundle::loadBundle(dir);
    if (!b.isOk()) {
      std::printf("%s: BUNDLE ERROR %s\n", name.c_str(), b.status().toString().c_str());
      tally.add(false);
      continue;
    }
    for (const auto &[key, program] : b->programs) {
      const int64_t n = key.batch_size == 0 ? 1 : key.batch_size;
      const std::string golden_dir = args.fixtures + "/golden/" + name;
      if (!std::filesystem::exists(golden_dir + "/b" + std::to_string(n) + ".gpu.safetensors"))
        continue;
      dryRunProgram(*b, n, program, golden_dir, &tally);
    }
  }
  std::printf("gpu-check (dry run): %d of %d checks passed\n", tally.passed, tally.total);
  return tally.passed == tally.total ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Args args;
  if (int status = parseArgs(argc, argv, &args); status >= 0)
    return status;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Tally tally;
  if (args.dry_run)
    return dryRun(args);

  runtime::PjrtBackendOptions options;
  options.plugin_path = args.plugin;
  options.client.device_ordinal = 0;
  options.client.memory_fraction = 0.5;
  options.client.preallocate = true;
  options.client.event_spin = std::chrono::microseconds(args.event_spin_us);
  options.xla_flags = args.xla_flags;
  auto t0 = Clock::now();
  auto backend_or = runtime::createPjrtBackend(options);
  if (!backend_or.isOk()) {
    std::printf("gpu-check: backend creation failed: %s\n", backend_or.status().toString().c_str());
    return 1;
  }
  runtime::PjrtBackend &backend = **backend_or;
  const pjrt::DeviceDescription &dev = backend.client().device();
  std::printf("backend: created in %.0f ms\n", msSince(t0));
  std::printf("backend: %s\n", backend.deviceInfo().backend_version.c_str());
  std::printf("completion: %s\n", backend.deviceInfo().completion.c_str());
  std::printf("device: platform=%s kind=%s ordinal=%d id=%d compute_capability=%s\n",
              dev.platform_name.c_str(), dev.device_kind.c_str(), dev.local_hardware_id,
              dev.device_id, dev.compute_capability.c_str());
  for (const pjrt::NamedValue &a : dev.attributes)
    std::printf("device attribute: %s\n", a.toString().c_str());
  std::printf("xla flags (per compile): %s\n", backend.xlaFlags().c_str());

  auto probe = backend.tf32Probe(/*run_pinned=*/true);
  if (!probe.isOk()) {
    std::printf("TF32 probe FAILED: %s\n", probe.status().toString().c_str());
    tally.add(false);
  } else {
    std::printf("TF32 probe numerics=f32 %s (default leg %.0f ms, pinned leg %.0f ms, pinned "
                "mismatches %lld)%s%s\n",
                probe->logFields().c_str(), probe->default_ms, probe->pinned_ms,
                static_cast<long long>(probe->pinned_mismatches),
                probe->default_error.empty() ? "" : " default leg: ", probe->default_error.c_str());
    tally.add(probe->tf32_active.value_or(false));
    tally.add(probe->pinned_exact);
  }

  const std::string bundles_dir = args.fixtures + "/bundles";
  for (const std::string &dir : bundle::discoverBundles(bundles_dir)) {
    const std::string name = std::filesystem::path(dir).filename().string();
    if (!args.models.empty() &&
        std::find(args.models.begin(), args.models.end(), name) == args.models.end())
      continue;
    auto t_load = Clock::now();
    auto b = bundle::loadBundle(dir);
    if (!b.isOk()) {
      std::printf("%s: BUNDLE ERROR %s\n", name.c_str(), b.status().toString().c_str());
      tally.add(false);
      continue;
    }
    const double load_ms = msSince(t_load);
    t0 = Clock::now();
    auto weights = backend.upload(b->weights);
    if (!weights.isOk()) {
      std::printf("%s: WEIGHT UPLOAD ERROR %s\n", name.c_str(),
                  weights.status().toString().c_str());
      tally.add(false);
      continue;
    }
    int64_t weight_bytes = 0;
    for (const Tensor &w : b->weights)
      weight_bytes += w.byteSize();
    std::printf("%s: bundle loaded in %.0f ms; %zu weights (%lld bytes) uploaded once in %.1f "
                "ms\n",
                name.c_str(), load_ms, b->weights.size(), static_cast<long long>(weight_bytes),
                msSince(t0));
    const std::string golden_dir = args.fixtures + "/golden/" + name;
    for (const auto &[key, program] : b->programs) {
      const int64_t n = key.batch_size == 0 ? 1 : key.batch_size;
      if (!std::filesystem::exists(golden_dir + "/b" + std::to_string(n) + ".gpu.safetensors")) {
        std::printf("%s b%lld: no GPU golden, skipped\n", name.c_str(), static_cast<long long>(n));
        continue;
      }
      gpu_check::checkProgram(backend, *b, n, program, **weights, golden_dir, args.runs, &tally);
    }
  }
  if (args.models.empty() ||
      std::find(args.models.begin(), args.models.end(), "tiny_bert") != args.models.end()) {
    auto tb = bundle::loadBundle(bundles_dir + "/tiny_bert");
    if (tb.isOk())
      flagChecks(backend, *tb, &tally);
  }
  std::printf("gpu-check: %d of %d checks passed\n", tally.passed, tally.total);
  return tally.passed == tally.total ? 0 : 1;
}
