//===- runtime/cpu_backend.cc - The built-in CPU executor as a Backend ------===//
#include "runtime/cpu_backend.h"

#include "cpu/executor.h"

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

class CpuExecutable final : public Executable {
public:
  explicit CpuExecutable(std::unique_ptr<cpu::Program> program) : program_(std::move(program)) {}
  Result<std::vector<Tensor>> execute(std::span<const Tensor> args) const override {
    return program_->run(args);
  }

private:
  std::unique_ptr<cpu::Program> program_;
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
    return std::unique_ptr<Executable>(std::make_unique<CpuExecutable>(std::move(program)));
  }
  DeviceInfo deviceInfo() const override { return info_; }

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
