//===- runtime/cpu_backend.cc - The built-in CPU executor as a Backend ------===//
#include "runtime/cpu_backend.h"

#include "cpu/executor.h"
#include "ir/parser.h"
#include "ir/printer.h"

#include <fstream>
#include <thread>

namespace rs::runtime {
namespace {

/// The CPU model name from /proc/cpuinfo ("Intel(R) Xeon(R) Processor"), or "cpu".
std::string cpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size())
        return line.substr(colon + 2);
    }
  }
  return "cpu";
}

/// A compiled plan plus the module it came from: what the executable cache keeps for the
/// CPU backend is that module (verified and through passes) in generic form; loading an
/// entry parses it and plans it again (the plan holds pointers and is not serializable).
class CpuExecutable final : public Executable {
public:
  CpuExecutable(std::unique_ptr<cpu::Program> program, std::shared_ptr<const ir::Module> module)
      : program_(std::move(program)), module_(std::move(module)) {}
  Result<std::vector<Tensor>> execute(std::span<const Tensor> args) const override {
    return program_->run(args);
  }
  Result<std::string> serialize() const override { return ir::printGeneric(*module_); }

private:
  std::unique_ptr<cpu::Program> program_;
  std::shared_ptr<const ir::Module> module_;
};

class CpuBackend final : public Backend {
public:
  explicit CpuBackend(std::shared_ptr<cpu::CpuContext> ctx) : ctx_(std::move(ctx)) {
    info_.platform = "cpu";
    info_.device_kind = cpuModelName();
  }
  Result<std::unique_ptr<Executable>> compile(const ir::Module &module,
                                              const CompileOptions &options) override {
    RS_ASSIGN_OR_RETURN(auto program, cpu::Program::compile(module, options.entry, ctx_));
    return std::unique_ptr<Executable>(std::make_unique<CpuExecutable>(
        std::move(program), std::make_shared<const ir::Module>(module)));
  }
  DeviceInfo deviceInfo() const override { return info_; }
  /// `bytes`: a module in generic form from CpuExecutable::serialize(); errors are the
  /// parser's (a corrupt entry) or compile()'s.
  Result<std::unique_ptr<Executable>> deserialize(std::string_view bytes,
                                                  const CompileOptions &options) override {
    RS_ASSIGN_OR_RETURN(ir::Module module, ir::parseModule(bytes, "executable cache entry"));
    return compile(module, options);
  }

private:
  std::shared_ptr<cpu::CpuContext> ctx_;
  DeviceInfo info_;
};

} // namespace

Result<std::unique_ptr<Backend>> createCpuBackend(const CpuBackendOptions &options) {
  if (options.num_threads < 0)
    return invalidArgument() << "runtime.cpu_threads must be >= 0, got " << options.num_threads;
  cpu::CpuOptions cpu_options;
  cpu_options.num_threads = options.num_threads;
  RS_ASSIGN_OR_RETURN(auto ctx, cpu::createCpuContext(cpu_options));
  return std::unique_ptr<Backend>(std::make_unique<CpuBackend>(std::move(ctx)));
}

} // namespace rs::runtime
