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
#include "bundle/bundle.h"
#include "bundle/safetensors.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/numerics.h"
#include "pjrt/compile_options.h"
#include "runtime/numerics_gate.h"
#include "runtime/pjrt_backend.h"
#include "support/run_profile.h"

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
using Clock = std::chrono::steady_clock;

constexpr char kXlaFlags[] =
    "--xla_gpu_autotune_level=0 --xla_gpu_exclude_nondeterministic_ops=true";

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct Tally {
  int passed = 0;
  int total = 0;
  void add(bool ok) {
    ++total;
    passed += ok ? 1 : 0;
  }
};

/// "BIT-IDENTICAL" or a description of the first differences.
std::string compareOutputs(const std::vector<std::string> &names, const std::vector<Tensor> &got,
                           const bundle::SafetensorsFile &golden, bool *identical) {
  *identical = false;
  if (got.size() != names.size())
    return "DIFFERS: " + std::to_string(got.size()) + " outputs, expected " +
           std::to_string(names.size());
  std::ostringstream diff;
  bool all = true;
  for (size_t i = 0; i < names.size(); ++i) {
    auto want = golden.tensor(names[i]);
    if (!want.isOk())
      return "ERROR: " + want.status().toString();
    const Tensor &g = got[i];
    if (g.byteSize() == want->byteSize() &&
        std::memcmp(g.data(), want->data(), static_cast<size_t>(g.byteSize())) == 0)
      continue;
    all = false;
    diff << " " << names[i] << ":";
    if (g.byteSize() != want->byteSize()) {
      diff << " size " << g.byteSize() << " vs " << want->byteSize();
      continue;
    }
    int64_t n_diff = 0;
    double max_abs = 0;
    if (g.dtype() == DType::kF32) {
      const float *a = g.dataAs<float>();
      const float *b = want->dataAs<float>();
      for (int64_t k = 0; k < g.numElements(); ++k) {
        if (std::memcmp(&a[k], &b[k], 4) != 0) {
          ++n_diff;
          max_abs = std::max(max_abs, std::fabs(static_cast<double>(a[k]) - b[k]));
        }
      }
      diff << " " << n_diff << "/" << g.numElements() << " elements differ, max abs diff "
           << max_abs;
    } else {
      diff << " bytes differ";
    }
  }
  if (all) {
    *identical = true;
    return "BIT-IDENTICAL";
  }
  return "DIFFERS:" + diff.str();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

bool sameBytes(const std::vector<Tensor> &a, const std::vector<Tensor> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].byteSize() != b[i].byteSize() ||
        std::memcmp(a[i].data(), b[i].data(), static_cast<size_t>(a[i].byteSize())) != 0)
      return false;
  }
  return true;
}

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

/// Times one program through the pjrt layer directly: the sequential path (each upload,
/// the run and each read-back waited for in turn) split into its parts, and runHost()
/// (one wait). Checks both give `expected`.
void timingBreakdown(const runtime::PjrtBackend &backend, const std::string &tag,
                     const std::string &program_text, const std::vector<Tensor> &inputs,
                     const std::vector<Tensor> &weights, const std::vector<Tensor> &expected,
                     int runs, Tally *tally) {
  const pjrt::Client &client = backend.client();
  auto exe = client.compile(program_text, backend.compileOptions());
  if (!exe.isOk()) {
    std::printf("%s timing: COMPILE ERROR %s\n", tag.c_str(), exe.status().toString().c_str());
    tally->add(false);
    return;
  }
  std::vector<pjrt::DeviceBuffer> resident;
  for (const Tensor &w : weights) {
    auto b = client.upload(w);
    if (!b.isOk()) {
      std::printf("%s timing: UPLOAD ERROR %s\n", tag.c_str(), b.status().toString().c_str());
      tally->add(false);
      return;
    }
    resident.push_back(std::move(b).value());
  }
  std::vector<const pjrt::DeviceBuffer *> resident_ptrs;
  for (const pjrt::DeviceBuffer &b : resident)
    resident_ptrs.push_back(&b);

  std::vector<double> up, ex, rb, total, single, host_up, host_ex, host_rb;
  bool same = true;
  for (int r = 0; r < runs + 1; ++r) { // the first run is a warm-up
    auto t0 = Clock::now();
    std::vector<pjrt::DeviceBuffer> in;
    for (const Tensor &t : inputs) {
      auto b = client.upload(t);
      if (!b.isOk()) {
        same = false;
        break;
      }
      in.push_back(std::move(b).value());
    }
    auto t1 = Clock::now();
    std::vector<const pjrt::DeviceBuffer *> args;
    for (const pjrt::DeviceBuffer &b : in)
      args.push_back(&b);
    args.insert(args.end(), resident_ptrs.begin(), resident_ptrs.end());
    auto outs = exe->execute(args);
    auto t2 = Clock::now();
    std::vector<Tensor> host;
    if (outs.isOk()) {
      for (const pjrt::DeviceBuffer &o : *outs) {
        auto t = o.toHost();
        if (t.isOk())
          host.push_back(std::move(t).value());
      }
    }
    auto t3 = Clock::now();
    same = same && sameBytes(host, expected);
    auto t4 = Clock::now();
    RunProfile profile;
    auto one = [&] {
      RunProfileScope scope(&profile);
      return exe->runHost(inputs, resident_ptrs);
    }();
    const double single_us = msSince(t4) * 1000.0;
    same = same && one.isOk() && sameBytes(*one, expected);
    if (r == 0)
      continue;
    using US = std::chrono::duration<double, std::micro>;
    up.push_back(US(t1 - t0).count());
    ex.push_back(US(t2 - t1).count());
    rb.push_back(US(t3 - t2).count());
    total.push_back(US(t3 - t0).count());
    single.push_back(single_us);
    host_up.push_back(profile.upload_seconds * 1e6);
    host_ex.push_back(profile.execute_seconds * 1e6);
    host_rb.push_back(profile.readback_seconds * 1e6);
  }
  tally->add(same);
  std::printf("%s timing p50 (us, %d runs): sequential %.1f (upload %.1f, execute %.1f, read "
              "back %.1f); runHost (one wait) %.1f (upload %.1f, execute %.1f, read back %.1f); "
              "same bytes: %s\n",
              tag.c_str(), runs, median(total), median(up), median(ex), median(rb), median(single),
              median(host_up), median(host_ex), median(host_rb), same ? "yes" : "NO");
}

/// Runs one (model, batch): every leg and check. Prints as it goes.
void checkProgram(runtime::PjrtBackend &backend, const bundle::Bundle &b, int64_t batch,
                  const bundle::Program &program, const runtime::ResidentTensors &weights,
                  const std::string &golden_dir, const Args &args, Tally *tally) {
  const std::string tag = b.name + " b" + std::to_string(batch);
  const std::string gpath = golden_dir + "/b" + std::to_string(batch);
  auto inputs_file = bundle::SafetensorsFile::open(gpath + ".safetensors");
  auto gpu_golden = bundle::SafetensorsFile::open(gpath + ".gpu.safetensors");
  auto highest_golden = bundle::SafetensorsFile::open(gpath + ".gpu_highest.safetensors");
  if (!inputs_file.isOk() || !gpu_golden.isOk() || !highest_golden.isOk()) {
    std::printf("%s: ERROR reading goldens under %s\n", tag.c_str(), gpath.c_str());
    tally->add(false);
    return;
  }
  std::vector<Tensor> inputs;
  for (const bundle::TensorSpec &spec : b.manifest.executable_inputs) {
    auto t = inputs_file->tensor(spec.name);
    if (!t.isOk()) {
      std::printf("%s: ERROR %s\n", tag.c_str(), t.status().toString().c_str());
      tally->add(false);
      return;
    }
    inputs.push_back(t->reshaped(spec.shapeForBatch(batch)));
  }
  std::vector<std::string> out_names;
  for (const bundle::TensorSpec &spec : b.manifest.executable_outputs)
    out_names.push_back(spec.name);

  // --- auto: the module as loaded, DEFAULT precision.
  auto t0 = Clock::now();
  auto exe = backend.compile(program.module, runtime::CompileOptions{});
  const double compile_ms = msSince(t0);
  if (!exe.isOk()) {
    std::printf("%s auto: COMPILE ERROR %s\n", tag.c_str(), exe.status().toString().c_str());
    tally->add(false);
    return;
  }
  t0 = Clock::now();
  auto out = (*exe)->executeWithResident(inputs, weights);
  const double first_ms = msSince(t0);
  if (!out.isOk()) {
    std::printf("%s auto: EXECUTE ERROR %s\n", tag.c_str(), out.status().toString().c_str());
    tally->add(false);
    return;
  }
  bool identical = false;
  std::string verdict = compareOutputs(out_names, *out, *gpu_golden, &identical);
  tally->add(identical);
  std::vector<double> times;
  for (int r = 0; r < args.runs; ++r) {
    auto ts = Clock::now();
    auto again = (*exe)->executeWithResident(inputs, weights);
    times.push_back(msSince(ts) * 1000.0);
    if (!again.isOk() || !sameBytes(*again, *out)) {
      verdict += " (run " + std::to_string(r) + " gave different bytes)";
      identical = false;
    }
  }
  std::printf("%s auto vs b%lld.gpu: %s | compile %.1f ms, first run %.2f ms, "
              "run p50 %.1f us (resident weights, %d runs)\n",
              tag.c_str(), static_cast<long long>(batch), verdict.c_str(), compile_ms, first_ms,
              median(times), args.runs);
  if (!identical) {
    // Tell a printer problem from a backend one: compile the generic file as shipped.
    std::ifstream in(b.dir + "/generic/model.b" + std::to_string(batch) + ".mlir");
    std::stringstream text;
    text << in.rdbuf();
    auto file_exe = backend.compileText(text.str(), nullptr);
    if (file_exe.isOk()) {
      auto fo = (*file_exe)->executeWithResident(inputs, weights);
      bool fid = false;
      std::printf("%s auto (generic file text instead of printed module): %s\n", tag.c_str(),
                  fo.isOk() ? compareOutputs(out_names, *fo, *gpu_golden, &fid).c_str()
                            : fo.status().toString().c_str());
    }
  }

  timingBreakdown(backend, tag, ir::printGeneric(program.module), inputs, b.weights, *out,
                  args.runs, tally);

  // --- host weights through execute(): same bytes as the resident run.
  {
    std::vector<Tensor> all = inputs;
    all.insert(all.end(), b.weights.begin(), b.weights.end());
    auto ts = Clock::now();
    auto host = (*exe)->execute(all);
    const double host_us = msSince(ts) * 1000.0;
    const bool same = host.isOk() && sameBytes(*host, *out);
    tally->add(same);
    std::printf("%s execute(host weights) == executeWithResident: %s (%.1f us incl. weight "
                "upload)%s\n",
                tag.c_str(), same ? "yes" : "NO", host_us,
                host.isOk() ? "" : (" " + host.status().toString()).c_str());
  }

  // --- executable cache: serialize -> deserialize -> execute.
  {
    auto ts = Clock::now();
    auto bytes = (*exe)->serialize();
    const double ser_ms = msSince(ts);
    bool same = false;
    std::string detail;
    if (bytes.isOk()) {
      ts = Clock::now();
      auto loaded = backend.deserialize(*bytes, runtime::CompileOptions{});
      const double de_ms = msSince(ts);
      if (loaded.isOk()) {
        auto lo = (*loaded)->executeWithResident(inputs, weights);
        same = lo.isOk() && sameBytes(*lo, *out);
        char buf[160];
        std::snprintf(buf, sizeof buf, "%zu bytes, serialize %.1f ms, deserialize %.1f ms",
                      bytes->size(), ser_ms, de_ms);
        detail = buf;
        if (!lo.isOk())
          detail += " " + lo.status().toString();
      } else {
        detail = loaded.status().toString();
      }
    } else {
      detail = bytes.status().toString();
    }
    tally->add(same);
    std::printf("%s serialize->deserialize->execute same bytes: %s (%s)\n", tag.c_str(),
                same ? "yes" : "NO", detail.c_str());
  }

  // --- f32: the module after the server's f32 numerics pass.
  ir::Module pinned = program.module;
  auto report = passes::pinNumerics(
      pinned, runtime::numericsOptionsFor(passes::NumericsMode::kF32, backend.deviceInfo()));
  if (!report.isOk()) {
    std::printf("%s f32: NUMERICS PASS ERROR %s\n", tag.c_str(),
                report.status().toString().c_str());
    tally->add(false);
    return;
  }
  // The golden keeps explicit TF32 algorithms, which the pass rewrites to f32.
  const bool counted = report->algorithms_rewritten == 0;
  t0 = Clock::now();
  auto f32_exe = backend.compileText(ir::printGeneric(pinned), nullptr);
  const double f32_compile_ms = msSince(t0);
  if (!f32_exe.isOk()) {
    std::printf("%s f32: COMPILE ERROR %s\n", tag.c_str(), f32_exe.status().toString().c_str());
    tally->add(false);
    return;
  }
  auto f32_out = (*f32_exe)->executeWithResident(inputs, weights);
  bool f32_identical = false;
  const std::string f32_verdict =
      f32_out.isOk() ? compareOutputs(out_names, *f32_out, *highest_golden, &f32_identical)
                     : "EXECUTE ERROR " + f32_out.status().toString();
  if (counted)
    tally->add(f32_identical);
  std::printf("%s%s f32 (%s) vs b%lld.gpu_highest: %s | compile %.1f ms%s\n",
              counted ? "" : "NOTE ", tag.c_str(), report->outcome().c_str(),
              static_cast<long long>(batch), f32_verdict.c_str(), f32_compile_ms,
              counted ? "" : " (informational: the golden keeps the TF32 algorithm)");
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
      checkProgram(backend, *b, n, program, **weights, golden_dir, args, &tally);
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
