//===- cpu/executor.cc - The built-in CPU executor for StableHLO -----------===//
#include "cpu/executor.h"

#include "cpu/compiler.h"
#include "ir/verify.h"

#include <algorithm>
#include <new>
#include <sstream>

namespace rs::cpu {

std::string TensorType::toString() const {
  std::ostringstream os;
  os << "tensor<";
  for (int64_t d : shape)
    os << d << 'x';
  os << dtypeMlirName(dtype) << '>';
  return os.str();
}

Result<std::unique_ptr<Program>> Program::compile(const ir::Module &module, std::string_view entry,
                                                  std::shared_ptr<CpuContext> ctx) {
  if (!ctx)
    return invalidArgument() << "cpu program @" << entry << ": no cpu context";
  // The kernel plans rely on the op constraints of ir/verify.h, and a module may have been
  // built or rewritten since it was read.
  RS_RETURN_IF_ERROR(ir::verifyModule(module));
  Compiler compiler(module, kernelRegistry(), ctx->memoryLimitBytes());
  RS_ASSIGN_OR_RETURN(std::shared_ptr<const Callable> callable, compiler.function(entry));
  if (const int64_t peak = plannedPeakBytes(*callable); peak > ctx->memoryLimitBytes())
    return resourceExhausted() << (module.file.empty() ? std::string("module") : module.file)
                               << ": function @" << entry << " holds " << peak
                               << " bytes of intermediate buffers at once, more than the cpu "
                                  "executor's memory limit of "
                               << ctx->memoryLimitBytes() << " bytes";
  std::unique_ptr<Program> p(new Program());
  p->ctx_ = std::move(ctx);
  p->name_ = std::string(entry);
  p->file_ = module.file;
  for (size_t i = 0; i < callable->num_block_args; ++i)
    p->input_types_.push_back(callable->paramType(i));
  for (size_t i = 0; i < callable->results.size(); ++i)
    p->output_types_.push_back(callable->resultType(i));
  p->constant_ranges_ = compiler.constantRanges();
  std::sort(p->constant_ranges_.begin(), p->constant_ranges_.end());
  p->peak_bytes_ = plannedPeakBytes(*callable);
  p->entry_ = std::move(callable);
  return p;
}

Result<std::vector<Tensor>> Program::run(std::span<const Tensor> args) const {
  if (args.size() != input_types_.size())
    return invalidArgument() << "cpu program @" << name_ << ": expected " << input_types_.size()
                             << " arguments, got " << args.size();
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorType &t = input_types_[i];
    if (args[i].dtype() != t.dtype || args[i].shape() != t.shape)
      return invalidArgument() << "cpu program @" << name_ << ": argument " << i << " is "
                               << TensorType{args[i].dtype(), args[i].shape()}.toString()
                               << ", expected " << t.toString();
  }
  RunContext rc{ctx_.get()};
  std::vector<Tensor> results;
  {
    DefaultFpEnvironment fp; // the caller's thread computes tiles too
    // compile() refuses plans over the memory limit, but less memory can be free when the
    // call runs (other programs, other processes). A failed allocation of the call's buffers
    // (BufferPool::take, on this thread) throws std::bad_alloc; this is the one place cpu/
    // catches an exception, so that the failure ends this request and not the process.
    // runCallable() owns its buffers through destructors, which release them as the
    // exception passes. (An allocation inside a kernel on a pool thread, such as a region
    // body's frame, is small and not covered.)
    try {
      results = runCallable(*entry_, args, {}, rc);
    } catch (const std::bad_alloc &) {
      return resourceExhausted() << (file_.empty() ? std::string("module") : file_)
                                 << ": function @" << name_
                                 << ": out of memory while allocating its buffers (it plans "
                                 << peak_bytes_ << " bytes of intermediate buffers at once)";
    }
  }

  // Outputs are owned by the caller: copy any that shares storage with an argument, a
  // constant of the program or an earlier output.
  auto inside = [](const uint8_t *p, const uint8_t *begin, const uint8_t *end) {
    return p >= begin && p < end;
  };
  std::vector<const uint8_t *> seen;
  for (Tensor &r : results) {
    const uint8_t *p = r.data();
    bool shared = std::find(seen.begin(), seen.end(), p) != seen.end();
    for (const Tensor &a : args)
      shared = shared || inside(p, a.data(), a.data() + a.byteSize());
    for (const auto &[begin, end] : constant_ranges_)
      shared = shared || inside(p, begin, end);
    if (shared && r.byteSize() > 0)
      r = Tensor::copyOf(r.dtype(), r.shape(), r.bytes());
    seen.push_back(r.data());
  }
  return results;
}

} // namespace rs::cpu
