//===- runtime/pjrt_backend.cc - XLA through a PJRT plugin as a Backend ---===//
#include "runtime/pjrt_backend.h"

#include "ir/printer.h"
#include "pjrt/compile_options.h"
#include "runtime/host_results.h"

#include <spdlog/spdlog.h>

#include <sstream>

namespace rs::runtime {
namespace {

/// Device buffers made by one PjrtBackend's client.
class PjrtResidentTensors final : public ResidentTensors {
public:
  PjrtResidentTensors(const pjrt::Client *owner, std::vector<pjrt::DeviceBuffer> buffers)
      : owner_(owner), buffers_(std::move(buffers)) {}
  size_t size() const override { return buffers_.size(); }
  const void *owner() const override { return owner_; }
  const std::vector<pjrt::DeviceBuffer> &buffers() const { return buffers_; }

private:
  const pjrt::Client *owner_;
  std::vector<pjrt::DeviceBuffer> buffers_;
};

std::string typeText(DType dtype, const Shape &shape) {
  return std::string(dtypeMlirName(dtype)) + shapeToString(shape);
}

class PjrtExecutable final : public Executable {
public:
  PjrtExecutable(std::shared_ptr<const pjrt::Client> client, pjrt::LoadedExecutable exe,
                 std::vector<ir::Type> params)
      : client_(std::move(client)), exe_(std::move(exe)), params_(std::move(params)) {}

  Result<std::vector<Tensor>> execute(std::span<const Tensor> args) const override {
    return run(args, nullptr);
  }

  Result<std::vector<Tensor>> executeWithResident(std::span<const Tensor> inputs,
                                                  const ResidentTensors &resident) const override {
    if (resident.owner() != client_.get())
      return invalidArgument() << "resident tensors were uploaded by another backend";
    return run(inputs, &static_cast<const PjrtResidentTensors &>(resident));
  }

  Result<std::string> serialize() const override { return exe_.serialize(); }
  /// Whether the run writes its results into host memory (pjrt/client.h).
  bool resultsInHostMemory() const { return exe_.resultsInHostMemory(); }

private:
  /// Checks argument `index` against main's parameter (when the signature is known).
  Status checkArg(size_t index, DType dtype, const Shape &shape) const {
    if (params_.empty())
      return Status::ok();
    const ir::Type &p = params_[index];
    if (p.isTensor() && (p.element != dtype || p.shape != shape))
      return invalidArgument() << "argument " << index << ": expected "
                               << typeText(p.element, p.shape) << ", got "
                               << typeText(dtype, shape);
    return Status::ok();
  }

  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs,
                                  const PjrtResidentTensors *resident) const {
    const size_t n_resident = resident ? resident->size() : 0;
    const size_t n_args = inputs.size() + n_resident;
    if (!params_.empty() && n_args != params_.size())
      return invalidArgument() << "main takes " << params_.size() << " arguments, got " << n_args;
    for (size_t i = 0; i < inputs.size(); ++i)
      RS_RETURN_IF_ERROR(checkArg(i, inputs[i].dtype(), inputs[i].shape()));
    std::vector<const pjrt::DeviceBuffer *> device_args;
    device_args.reserve(n_resident);
    for (size_t i = 0; i < n_resident; ++i) {
      const pjrt::DeviceBuffer &b = resident->buffers()[i];
      RS_RETURN_IF_ERROR(checkArg(inputs.size() + i, b.dtype(), b.shape()));
      device_args.push_back(&b);
    }
    // Uploads, run and read-backs queued back to back, one wait (pjrt/client.h).
    return exe_.runHost(inputs, device_args);
  }

  std::shared_ptr<const pjrt::Client> client_;
  pjrt::LoadedExecutable exe_;
  std::vector<ir::Type> params_; // main's parameter types; empty = unknown
};

/// main's function type, or nullptr.
const ir::Type *mainSignature(const ir::Module &module, const std::string &entry) {
  const ir::Operation *fn = module.lookupFunction(entry);
  if (fn == nullptr || fn->attr("function_type") == nullptr)
    return nullptr;
  return &ir::functionType(*fn);
}

} // namespace

PjrtBackend::PjrtBackend(std::shared_ptr<const pjrt::Client> client,
                         const pjrt::VendorProfile &vendor,
                         std::map<std::string, std::string> xla_flags, bool results_in_host_memory)
    : client_(std::move(client)), vendor_(&vendor), xla_flags_(std::move(xla_flags)),
      results_in_host_memory_(results_in_host_memory) {
  pjrt::CompileOptionsSpec spec;
  spec.env_option_overrides = xla_flags_;
  compile_options_ = pjrt::encodeCompileOptions(spec);

  const pjrt::DeviceDescription &d = client_->device();
  info_.platform = d.platform_name;
  info_.device_kind = d.device_kind;
  info_.device_ordinal = d.local_hardware_id;
  info_.compute_capability = d.compute_capability;
  info_.has_tf32 = vendor.hasTf32(d.compute_capability);
  info_.completion = d.completion;
  std::ostringstream version;
  version << "pjrt " << client_->plugin().apiVersion() << " " << client_->plugin().path() << " ("
          << d.platform_version;
  for (const pjrt::NamedValue &a : client_->plugin().attributes())
    version << ", " << a.toString();
  version << ")";
  if (results_in_host_memory_)
    version << " results=pinned_host";
  info_.backend_version = version.str();
}

Result<std::unique_ptr<Executable>> PjrtBackend::compile(const ir::Module &module,
                                                         const CompileOptions &options) {
  if (options.entry != "main")
    return unimplemented() << "pjrt backend: the entry function must be 'main', got '"
                           << options.entry << "'";
  const ir::Type *signature = mainSignature(module, options.entry);
  if (signature == nullptr)
    return invalidArgument() << module.file << ": no function 'main' to compile";
  if (results_in_host_memory_) {
    if (std::optional<ir::Module> placed = withResultsInHostMemory(module, options.entry)) {
      RS_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe,
                          compileText(ir::printGeneric(*placed), signature));
      if (!static_cast<const PjrtExecutable &>(*exe).resultsInHostMemory())
        spdlog::warn("{}: the plugin did not place main's results in pinned host memory; "
                     "they are copied from the device after each run",
                     module.file);
      return exe;
    }
  }
  return compileText(ir::printGeneric(module), signature);
}

Result<std::unique_ptr<Executable>> PjrtBackend::compileText(std::string_view program,
                                                             const ir::Type *signature) const {
  RS_ASSIGN_OR_RETURN(pjrt::LoadedExecutable exe, client_->compile(program, compile_options_));
  std::vector<ir::Type> params;
  if (signature != nullptr)
    params = signature->elements;
  return std::unique_ptr<Executable>(
      std::make_unique<PjrtExecutable>(client_, std::move(exe), std::move(params)));
}

Result<std::shared_ptr<const ResidentTensors>>
PjrtBackend::upload(std::span<const Tensor> tensors) {
  std::vector<pjrt::DeviceBuffer> buffers;
  buffers.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    auto b = client_->upload(tensors[i]);
    if (!b.isOk())
      return b.status().withPrefix("uploading resident tensor " + std::to_string(i));
    buffers.push_back(std::move(b).value());
  }
  return std::shared_ptr<const ResidentTensors>(
      std::make_shared<PjrtResidentTensors>(client_.get(), std::move(buffers)));
}

Result<std::unique_ptr<Executable>> PjrtBackend::deserialize(std::string_view bytes,
                                                             const CompileOptions &options) {
  (void)options;
  RS_ASSIGN_OR_RETURN(pjrt::LoadedExecutable exe, client_->deserialize(bytes));
  return std::unique_ptr<Executable>(
      std::make_unique<PjrtExecutable>(client_, std::move(exe), std::vector<ir::Type>{}));
}

Result<pjrt::Tf32ProbeResult> PjrtBackend::tf32Probe(bool run_pinned,
                                                     std::string pinned_program) const {
  pjrt::Tf32ProbeOptions options;
  options.compile_options = compile_options_;
  options.run_pinned = run_pinned;
  options.pinned_program = std::move(pinned_program);
  return pjrt::runTf32Probe(*client_, options);
}

std::string PjrtBackend::xlaFlags() const { return pjrt::formatXlaFlags(xla_flags_); }

Result<std::unique_ptr<PjrtBackend>> createPjrtBackend(const PjrtBackendOptions &options) {
  using FlagMap = std::map<std::string, std::string>;
  const pjrt::VendorProfile *vendor = pjrt::findVendorProfile(options.vendor);
  if (vendor == nullptr) {
    std::string known;
    for (const pjrt::VendorProfile *p : pjrt::vendorProfiles())
      known += (known.empty() ? "" : ", ") + std::string(p->name());
    return invalidArgument() << "no GPU vendor profile '" << options.vendor << "' (known: " << known
                             << ")";
  }
  RS_ASSIGN_OR_RETURN(FlagMap flags, pjrt::parseXlaFlags(options.xla_flags));
  RS_ASSIGN_OR_RETURN(std::string path,
                      pjrt::discoverPluginPath(pjrt::makePluginSearch(
                          options.plugin_path, std::string(vendor->pluginGlob()))));
  if (options.auto_plugin_flags)
    flags.merge(vendor->pluginXlaFlags(path)); // keeps the flags already set
  RS_ASSIGN_OR_RETURN(std::shared_ptr<const pjrt::Plugin> plugin, pjrt::Plugin::load(path));
  pjrt::ClientOptions client_options = options.client;
  client_options.vendor = vendor;
  RS_ASSIGN_OR_RETURN(std::shared_ptr<const pjrt::Client> client,
                      pjrt::Client::create(std::move(plugin), client_options));
  return std::make_unique<PjrtBackend>(std::move(client), *vendor, std::move(flags),
                                       options.results_in_host_memory);
}

} // namespace rs::runtime
