//===- tools/bin/gpu_check_legs.cc - reactant-gpu-check: one program's legs -===//
#include "tools/bin/gpu_check_legs.h"

#include "bundle/safetensors.h"
#include "ir/printer.h"
#include "passes/numerics.h"
#include "runtime/numerics_gate.h"
#include "support/run_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

namespace rs::gpu_check {

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

namespace {

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

/// The golden inputs and outputs of one (model, batch).
struct GoldenCase {
  std::string tag; // "<model> b<N>"
  int64_t batch = 0;
  std::vector<Tensor> inputs; // shaped for the batch
  std::vector<std::string> out_names;
  std::optional<bundle::SafetensorsFile> gpu;     // b<N>.gpu.safetensors: the auto leg's
  std::optional<bundle::SafetensorsFile> highest; // b<N>.gpu_highest.safetensors: f32's
};

/// The golden files of `batch` under `golden_dir`; the error is the text after "ERROR ".
Result<GoldenCase> loadGoldenCase(const bundle::Bundle &b, int64_t batch,
                                  const std::string &golden_dir) {
  GoldenCase c;
  c.tag = b.name + " b" + std::to_string(batch);
  c.batch = batch;
  const std::string gpath = golden_dir + "/b" + std::to_string(batch);
  auto inputs_file = bundle::SafetensorsFile::open(gpath + ".safetensors");
  auto gpu = bundle::SafetensorsFile::open(gpath + ".gpu.safetensors");
  auto highest = bundle::SafetensorsFile::open(gpath + ".gpu_highest.safetensors");
  if (!inputs_file.isOk() || !gpu.isOk() || !highest.isOk())
    return notFound() << "reading goldens under " << gpath;
  for (const bundle::TensorSpec &spec : b.manifest.executable_inputs) {
    auto t = inputs_file->tensor(spec.name);
    if (!t.isOk())
      return Status(invalidArgument() << t.status().toString());
    c.inputs.push_back(t->reshaped(spec.shapeForBatch(batch)));
  }
  for (const bundle::TensorSpec &spec : b.manifest.executable_outputs)
    c.out_names.push_back(spec.name);
  c.gpu.emplace(std::move(gpu).value());
  c.highest.emplace(std::move(highest).value());
  return c;
}

/// When the auto leg differs: compiles the generic file as shipped instead of the printed
/// module, to tell a printer problem from a backend one.
void compareShippedText(runtime::PjrtBackend &backend, const bundle::Bundle &b, const GoldenCase &c,
                        const runtime::ResidentTensors &weights) {
  std::ifstream in(b.dir + "/generic/model.b" + std::to_string(c.batch) + ".mlir");
  std::stringstream text;
  text << in.rdbuf();
  auto file_exe = backend.compileText(text.str(), nullptr);
  if (!file_exe.isOk())
    return;
  auto file_out = (*file_exe)->executeWithResident(c.inputs, weights);
  bool identical = false;
  std::printf("%s auto (generic file text instead of printed module): %s\n", c.tag.c_str(),
              file_out.isOk() ? compareOutputs(c.out_names, *file_out, *c.gpu, &identical).c_str()
                              : file_out.status().toString().c_str());
}

/// auto: the module as loaded, DEFAULT precision, against b<N>.gpu bit for bit, and the
/// same bytes on every timed run. The executable and its outputs (into `out`), or nullptr
/// when it did not compile or run.
std::unique_ptr<runtime::Executable> autoLeg(runtime::PjrtBackend &backend, const bundle::Bundle &b,
                                             const bundle::Program &program, const GoldenCase &c,
                                             const runtime::ResidentTensors &weights, int runs,
                                             std::vector<Tensor> *out, Tally *tally) {
  auto t0 = Clock::now();
  auto exe = backend.compile(program.module, runtime::CompileOptions{});
  const double compile_ms = msSince(t0);
  if (!exe.isOk()) {
    std::printf("%s auto: COMPILE ERROR %s\n", c.tag.c_str(), exe.status().toString().c_str());
    tally->add(false);
    return nullptr;
  }
  t0 = Clock::now();
  auto first = (*exe)->executeWithResident(c.inputs, weights);
  const double first_ms = msSince(t0);
  if (!first.isOk()) {
    std::printf("%s auto: EXECUTE ERROR %s\n", c.tag.c_str(), first.status().toString().c_str());
    tally->add(false);
    return nullptr;
  }
  *out = std::move(first).value();
  bool identical = false;
  std::string verdict = compareOutputs(c.out_names, *out, *c.gpu, &identical);
  tally->add(identical);
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    auto ts = Clock::now();
    auto again = (*exe)->executeWithResident(c.inputs, weights);
    times.push_back(msSince(ts) * 1000.0);
    if (!again.isOk() || !sameBytes(*again, *out)) {
      verdict += " (run " + std::to_string(r) + " gave different bytes)";
      identical = false;
    }
  }
  std::printf("%s auto vs b%lld.gpu: %s | compile %.1f ms, first run %.2f ms, "
              "run p50 %.1f us (resident weights, %d runs)\n",
              c.tag.c_str(), static_cast<long long>(c.batch), verdict.c_str(), compile_ms, first_ms,
              median(times), runs);
  if (!identical)
    compareShippedText(backend, b, c, weights);
  return std::move(exe).value();
}

/// execute() with host weights gives the bytes of the resident-weights run.
void hostWeightsLeg(runtime::Executable &exe, const bundle::Bundle &b, const GoldenCase &c,
                    const std::vector<Tensor> &expected, Tally *tally) {
  std::vector<Tensor> all = c.inputs;
  all.insert(all.end(), b.weights.begin(), b.weights.end());
  auto ts = Clock::now();
  auto host = exe.execute(all);
  const double host_us = msSince(ts) * 1000.0;
  const bool same = host.isOk() && sameBytes(*host, expected);
  tally->add(same);
  std::printf("%s execute(host weights) == executeWithResident: %s (%.1f us incl. weight "
              "upload)%s\n",
              c.tag.c_str(), same ? "yes" : "NO", host_us,
              host.isOk() ? "" : (" " + host.status().toString()).c_str());
}

/// The executable cache's path: serialize -> deserialize -> execute gives the same bytes.
void serializeLeg(runtime::PjrtBackend &backend, runtime::Executable &exe, const GoldenCase &c,
                  const runtime::ResidentTensors &weights, const std::vector<Tensor> &expected,
                  Tally *tally) {
  auto ts = Clock::now();
  auto bytes = exe.serialize();
  const double serialize_ms = msSince(ts);
  bool same = false;
  std::string detail;
  if (bytes.isOk()) {
    ts = Clock::now();
    auto loaded = backend.deserialize(*bytes, runtime::CompileOptions{});
    const double deserialize_ms = msSince(ts);
    if (loaded.isOk()) {
      auto loaded_out = (*loaded)->executeWithResident(c.inputs, weights);
      same = loaded_out.isOk() && sameBytes(*loaded_out, expected);
      char buf[160];
      std::snprintf(buf, sizeof buf, "%zu bytes, serialize %.1f ms, deserialize %.1f ms",
                    bytes->size(), serialize_ms, deserialize_ms);
      detail = buf;
      if (!loaded_out.isOk())
        detail += " " + loaded_out.status().toString();
    } else {
      detail = loaded.status().toString();
    }
  } else {
    detail = bytes.status().toString();
  }
  tally->add(same);
  std::printf("%s serialize->deserialize->execute same bytes: %s (%s)\n", c.tag.c_str(),
              same ? "yes" : "NO", detail.c_str());
}

/// f32: the module after the server's f32 numerics pass, against b<N>.gpu_highest. A
/// module whose TF32 algorithms the pass rewrote is informational: the golden keeps them.
void f32Leg(runtime::PjrtBackend &backend, const bundle::Program &program, const GoldenCase &c,
            const runtime::ResidentTensors &weights, Tally *tally) {
  ir::Module pinned = program.module;
  auto report = passes::pinNumerics(
      pinned, runtime::numericsOptionsFor(passes::NumericsMode::kF32, backend.deviceInfo()));
  if (!report.isOk()) {
    std::printf("%s f32: NUMERICS PASS ERROR %s\n", c.tag.c_str(),
                report.status().toString().c_str());
    tally->add(false);
    return;
  }
  const bool counted = report->algorithms_rewritten == 0;
  auto t0 = Clock::now();
  auto f32_exe = backend.compileText(ir::printGeneric(pinned), nullptr);
  const double compile_ms = msSince(t0);
  if (!f32_exe.isOk()) {
    std::printf("%s f32: COMPILE ERROR %s\n", c.tag.c_str(), f32_exe.status().toString().c_str());
    tally->add(false);
    return;
  }
  auto f32_out = (*f32_exe)->executeWithResident(c.inputs, weights);
  bool identical = false;
  const std::string verdict = f32_out.isOk()
                                  ? compareOutputs(c.out_names, *f32_out, *c.highest, &identical)
                                  : "EXECUTE ERROR " + f32_out.status().toString();
  if (counted)
    tally->add(identical);
  std::printf("%s%s f32 (%s) vs b%lld.gpu_highest: %s | compile %.1f ms%s\n",
              counted ? "" : "NOTE ", c.tag.c_str(), report->outcome().c_str(),
              static_cast<long long>(c.batch), verdict.c_str(), compile_ms,
              counted ? "" : " (informational: the golden keeps the TF32 algorithm)");
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

} // namespace

void checkProgram(runtime::PjrtBackend &backend, const bundle::Bundle &b, int64_t batch,
                  const bundle::Program &program, const runtime::ResidentTensors &weights,
                  const std::string &golden_dir, int runs, Tally *tally) {
  auto c = loadGoldenCase(b, batch, golden_dir);
  if (!c.isOk()) {
    std::printf("%s b%lld: ERROR %s\n", b.name.c_str(), static_cast<long long>(batch),
                c.status().message().c_str());
    tally->add(false);
    return;
  }
  std::vector<Tensor> out;
  std::unique_ptr<runtime::Executable> exe =
      autoLeg(backend, b, program, *c, weights, runs, &out, tally);
  if (!exe)
    return;
  timingBreakdown(backend, c->tag, ir::printGeneric(program.module), c->inputs, b.weights, out,
                  runs, tally);
  hostWeightsLeg(*exe, b, *c, out, tally);
  serializeLeg(backend, *exe, *c, weights, out, tally);
  f32Leg(backend, program, *c, weights, tally);
}

} // namespace rs::gpu_check
