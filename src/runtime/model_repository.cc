//===- runtime/model_repository.cc - Loaded models of one worker ------------===//
#include "runtime/model_repository.h"

#include "bundle/bundle.h"
#include "bundle/polymorphic.h"
#include "bundle/shape_variant.h"
#include "ir/printer.h"
#include "runtime/numerics_gate.h"
#include "support/digest.h"
#include "support/text.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace rs::runtime {
namespace {

/// Adds the SHA-256 of `<dir>/<file>` to `digests` (LoadedModel::file_sha256).
Status hashBundleFile(const std::string &dir, const std::string &file,
                      std::map<std::string, std::string> &digests) {
  RS_ASSIGN_OR_RETURN(digests[file], sha256OfFile((std::filesystem::path(dir) / file).string()));
  return Status::ok();
}

/// `status` as clients see it: every path inside the bundle directory `dir` relative to
/// it, and `dir` itself as the model's name, so no server path leaves the process.
Status bundleRelative(const Status &status, const std::string &dir, const std::string &name) {
  std::string dir_slash = dir;
  if (!dir_slash.empty() && dir_slash.back() != '/')
    dir_slash += '/';
  const std::string inside = replaceAll(status.message(), dir_slash, "");
  return Status(status.code(), replaceAll(inside, dir, name));
}

/// "image: f32[-1,8,8,1]" for each spec, comma-separated (the `model loaded` line).
std::string specsText(const std::vector<bundle::TensorSpec> &specs) {
  std::ostringstream os;
  for (size_t i = 0; i < specs.size(); ++i)
    os << (i ? ", " : "") << specs[i].name << ": " << specs[i].toString();
  return os.str();
}

std::string batchSizesText(const std::vector<int64_t> &sizes) {
  if (sizes.empty())
    return "unbatched";
  return fmt::format("[{}]", fmt::join(sizes, ", "));
}

} // namespace

Result<std::vector<Tensor>> LoadedModel::run(int64_t batch_size, std::vector<Tensor> inputs) const {
  const std::optional<size_t> variant = bundle::findVariant(manifest, inputs);
  if (!variant)
    return invalidArgument() << "model '" << name << "': the inputs match none of its shape "
                             << "variants " << bundle::variantsText(manifest.input_shapes);
  // An unbatched model (no batch axis) has one program per variant, whatever its file's size
  // key.
  auto it = programs.find({*variant, batch_size});
  auto first = programs.lower_bound({*variant, 0});
  if (it == programs.end() && batch_size == 0 && first != programs.end() &&
      first->first.variant == *variant &&
      (std::next(first) == programs.end() || std::next(first)->first.variant != *variant))
    it = first;
  if (it == programs.end())
    return notFound() << "model '" << name << "': no compiled executable for batch size "
                      << batch_size;
  if (resident_weights) // uploaded once at load (device memory on a GPU backend)
    return it->second->executeWithResident(inputs, *resident_weights);
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  return it->second->execute(inputs);
}

ModelRepository::ModelRepository(std::shared_ptr<Backend> backend, ModelRepositoryOptions options)
    : backend_(std::move(backend)), options_(std::move(options)) {}

Status ModelRepository::loadModel(const std::string &dir) {
  Result<std::shared_ptr<const LoadedModel>> loaded = buildModel(dir, "startup");
  if (!loaded.isOk()) {
    recordFailure(std::filesystem::path(dir).filename().string(), dir, loaded.status());
    return loaded.status();
  }
  publish(std::move(*loaded));
  return Status::ok();
}

Result<std::shared_ptr<const LoadedModel>> ModelRepository::buildModel(const std::string &dir,
                                                                       std::string_view source) {
  const auto start = std::chrono::steady_clock::now();
  const std::string name = std::filesystem::path(dir).filename().string();
  auto load = [&]() -> Result<std::shared_ptr<const LoadedModel>> {
    RS_ASSIGN_OR_RETURN(bundle::Bundle b, bundle::loadBundle(dir));
    for (const std::string &warning : b.warnings)
      spdlog::warn("model bundle warning name={} warning={}", name, warning);
    auto model = std::make_shared<LoadedModel>();
    model->warnings = b.warnings;
    model->name = name;
    model->dir = dir;
    model->manifest = b.manifest;
    model->weights = b.weights;
    RS_RETURN_IF_ERROR(hashBundleFile(dir, "manifest.yaml", model->file_sha256));
    if (std::filesystem::exists(std::filesystem::path(dir) / "weights.safetensors"))
      RS_RETURN_IF_ERROR(hashBundleFile(dir, "weights.safetensors", model->file_sha256));
    std::string compile_settings = options_.compile_settings;
    if (b.hooks) {
      if (!options_.extensions)
        return failedPrecondition() << dir << "/model.py: this process runs no hooks";
      RS_ASSIGN_OR_RETURN(model->extension, options_.extensions(name, dir, b.manifest));
      for (const auto &[file, digest] : model->extension->files())
        model->file_sha256[file] = digest;
      // The hooks decide what the program's inputs are: their identity is the program's too.
      compile_settings += " hooks=" + model->extension->identity();
    }
    const DeviceInfo device = backend_->deviceInfo();
    const passes::NumericsOptions numerics = numericsOptionsFor(options_.numerics, device);
    model->numerics.mode = numerics.mode;
    model->numerics.target_has_tf32 = numerics.target_has_tf32;
    ExecutableCache cache(executableCacheDir(dir, options_.cache_dir), options_.executable_cache,
                          options_.executable_cache_key);
    bool warned = false;
    const std::vector<int64_t> bundle_sizes = b.batchSizes();
    for (auto &[key, program] : b.programs) {
      const int64_t size = key.batch_size;
      // Under `runtime.batch_sizes: largest` only the largest program is loaded.
      if (options_.largest_batch_only && size != bundle_sizes.back())
        continue;
      Result<passes::NumericsReport> report = passes::pinNumerics(program.module, numerics);
      if (!report.isOk()) // its message names the file (and the op's line)
        return report.status();
      model->numerics.merge(*report);
      CacheKeyParts parts;
      parts.compile_settings = compile_settings;
      parts.device = device;
      parts.server_build = options_.server_build;
      const std::string file = std::filesystem::path(program.path).filename().string();
      if (!model->file_sha256.count(file)) // a polymorphic model.mlir serves every key
        RS_RETURN_IF_ERROR(hashBundleFile(dir, file, model->file_sha256));
      model->program_files[key] = file;
      // A refined program has its own name, so that its cache entry and log lines tell the
      // programs of one model.mlir apart ("model.mlir@b8").
      const std::string label =
          program.refined ? bundle::refinedProgramName(key, b.multiShape()) : file;
      if (program.refined)
        model->refined_sha256[key] = sha256Hex(ir::printGeneric(program.module));
      Result<CachedProgram> compiled = cache.loadOrCompile(*backend_, program.module, label, parts);
      if (!compiled.isOk()) { // a compiler message starts with the op's file:line:col already
        const Status &failed = compiled.status();
        return failed.message().rfind(program.path, 0) == 0 ? failed
                                                            : failed.withPrefix(program.path);
      }
      const CacheOutcome &outcome = compiled->outcome;
      if (outcome.hit) {
        ++cache_hits_;
        spdlog::info("executable cache: hit model={} batch_size={} program={} key={}", name, size,
                     label, outcome.key.substr(0, 16));
      } else {
        ++cache_misses_;
        spdlog::info("executable cache: miss model={} batch_size={} program={} reason={}{}", name,
                     size, label, outcome.miss_reason,
                     outcome.key.empty() ? "" : " key=" + outcome.key.substr(0, 16));
      }
      if (!outcome.write_warning.empty() && !warned) {
        warned = true; // once per model: a read-only bundle would repeat it per program
        spdlog::warn("executable cache: entry not written model={} program={} reason={} (the "
                     "program is served; it will be compiled again on the next start)",
                     name, file, outcome.write_warning);
      }
      model->cache[key] = outcome;
      model->programs[key] = std::move(compiled->executable);
      if (b.manifest.batched() && key.variant == 0)
        model->batch_sizes.push_back(size);
    }
    // Weights go where the backend runs once per model; every run reuses them.
    Result<std::shared_ptr<const ResidentTensors>> resident = backend_->upload(model->weights);
    if (!resident.isOk())
      return resident.status().withPrefix("model '" + name + "': uploading its weights");
    model->resident_weights = std::move(*resident);
    model->platform = backend_->deviceInfo().platform;
    return std::shared_ptr<const LoadedModel>(std::move(model));
  };
  Result<std::shared_ptr<const LoadedModel>> loaded = load();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (loaded.isOk()) {
    const LoadedModel &m = **loaded;
    int64_t weight_bytes = 0;
    for (const Tensor &w : m.weights)
      weight_bytes += w.byteSize();
    const std::string variants =
        m.manifest.input_shapes.empty()
            ? ""
            : " shape_variants=" + bundle::variantsText(m.manifest.input_shapes);
    const std::string refined = m.refined_sha256.empty() ? "" : " refined_from=model.mlir";
    std::string wire;
    if (!m.manifest.client_inputs.empty())
      wire += " client_inputs=[" + specsText(m.manifest.client_inputs) + "]";
    if (!m.manifest.client_outputs.empty())
      wire += " client_outputs=[" + specsText(m.manifest.client_outputs) + "]";
    std::string extension = m.extension ? " " + m.extension->describe() : "";
    if (m.manifest.kind == bundle::BundleKind::kMeta)
      extension += fmt::format(" kind=meta calls=[{}]", fmt::join(m.manifest.meta_calls, ", "));
    spdlog::info("model loaded name={} source={} inputs=[{}] outputs=[{}]{} batch_sizes={}{}{} "
                 "weights={} weight_bytes={} platform={} load_seconds={:.3f} numerics={}{}",
                 name, source, specsText(m.manifest.executable_inputs),
                 specsText(m.manifest.executable_outputs), wire, batchSizesText(m.batch_sizes),
                 variants, refined, m.weights.size(), weight_bytes, m.platform, seconds,
                 m.numerics.outcome(), extension);
    return loaded;
  }
  reportLoadFailure(name, dir, source, loaded.status());
  return loaded;
}

void ModelRepository::reportLoadFailure(const std::string &name, const std::string &dir,
                                        std::string_view source, const Status &status) {
  spdlog::error("model load failed name={} dir={} source={} reason={}", name, dir, source,
                status.message());
  std::lock_guard<std::mutex> lock(mu_);
  ++load_failures_[{name, std::string(statusCodeName(status.code()))}];
}

void ModelRepository::publish(std::shared_ptr<const LoadedModel> model) {
  ModelState state{model->name, model->dir, std::move(model), Status::ok(), Status::ok(), false};
  std::lock_guard<std::mutex> lock(mu_);
  models_[state.name] = std::move(state);
}

void ModelRepository::recordFailure(const std::string &name, const std::string &dir,
                                    Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  models_[name] =
      ModelState{name, dir, nullptr, bundleRelative(status, dir, name), Status::ok(), false};
}

void ModelRepository::recordReloadFailure(const std::string &name, Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it != models_.end() && it->second.model)
    it->second.last_failure = bundleRelative(status, it->second.dir, name);
}

void ModelRepository::markUnloaded(const std::string &name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end())
    return;
  ModelState &s = it->second;
  s.model = nullptr;
  s.status = unavailable() << "unloaded";
  s.last_failure = Status::ok();
  s.unloaded = true;
}

std::vector<LoadFailureCount> ModelRepository::loadFailures() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LoadFailureCount> out;
  for (const auto &[key, count] : load_failures_)
    out.push_back({key.first, key.second, count});
  return out;
}

Result<std::shared_ptr<const LoadedModel>>
ModelRepository::renamedCopy(const std::string &from, const std::string &to,
                             const std::string &dir) const {
  std::shared_ptr<const LoadedModel> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(from);
    if (it == models_.end() || !it->second.model)
      return notFound() << "rename '" << from << "' -> '" << to << "': model '" << from
                        << "' is not loaded";
    old = it->second.model;
  }
  auto copy = std::make_shared<LoadedModel>(*old);
  copy->name = to;
  copy->dir = dir;
  return std::shared_ptr<const LoadedModel>(std::move(copy));
}

Status ModelRepository::loadRepository(const std::string &model_repo,
                                       const std::vector<std::string> &include) {
  std::error_code ec;
  if (!std::filesystem::is_directory(model_repo, ec))
    return notFound() << "model repository '" << model_repo << "' is not a directory";
  for (const std::string &dir : bundle::discoverBundles(model_repo)) {
    const std::string name = std::filesystem::path(dir).filename().string();
    if (!include.empty() && std::find(include.begin(), include.end(), name) == include.end())
      continue;
    (void)loadModel(dir); // failures are recorded per model
  }
  return Status::ok();
}

void ModelRepository::removeModel(const std::string &name) {
  std::lock_guard<std::mutex> lock(mu_);
  models_.erase(name);
}

std::optional<ModelState> ModelRepository::state(const std::string &name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end())
    return std::nullopt;
  return it->second;
}

bool ModelRepository::contains(const std::string &name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  return it != models_.end() && !it->second.unloaded;
}

std::vector<ModelState> ModelRepository::states() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ModelState> out;
  for (const auto &[name, s] : models_)
    out.push_back(s);
  return out;
}

} // namespace rs::runtime
