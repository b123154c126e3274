//===- pjrt/cuda_completion.cc - Completion polling through the CUDA driver --------===//
#include "pjrt/cuda_completion.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>

namespace rs::pjrt {

namespace {

// The CUDA driver API subset used here (cuda.h, driver API; declared, not included, so no
// CUDA header or library is needed to build). CUresult 0 = CUDA_SUCCESS, 600 =
// CUDA_ERROR_NOT_READY.
using CUresult = int;
using CUdevice = int;
struct CUctx_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st *;
using CUstream = CUstream_st *;
using CUevent = CUevent_st *;
constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaNotReady = 600;
constexpr unsigned kStreamNonBlocking = 0x1;  // CU_STREAM_NON_BLOCKING
constexpr unsigned kEventDisableTiming = 0x2; // CU_EVENT_DISABLE_TIMING
/// Spin-wait instructions between two cuEventQuery calls (a pause is tens of cycles).
constexpr int kPausesBetweenQueries = 32;

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventQuery)(CUevent);
};

/// Resolves `name` from `lib` into `*fn`; false when it is missing.
template <typename Fn> bool resolve(void *lib, const char *name, Fn *fn) {
  *fn = reinterpret_cast<Fn>(::dlsym(lib, name));
  return *fn != nullptr;
}

class CudaCompletionPoller final : public CompletionPoller {
public:
  CudaCompletionPoller(const Plugin &plugin, const capi::PJRT_Stream_Extension *stream_ext,
                       Driver driver, CUcontext context)
      : plugin_(plugin), stream_ext_(stream_ext), driver_(driver), context_(context),
        id_(next_id_.fetch_add(1)) {}

  bool waitDefined(std::span<capi::PJRT_Buffer *const> buffers,
                   std::chrono::microseconds spin) const override {
    const ThreadState *state = threadState();
    if (state == nullptr)
      return false;
    for (capi::PJRT_Buffer *b : buffers) {
      capi::PJRT_Wait_Until_Buffer_Ready_On_Stream_Args args{};
      args.struct_size = sizeof args;
      args.stream = reinterpret_cast<intptr_t>(state->stream);
      args.buffer = b;
      if (Status s = plugin_.consumeError(stream_ext_->wait_stream(&args), "wait_stream");
          !s.isOk())
        return false;
    }
    if (driver_.cuEventRecord(state->event, state->stream) != kCudaSuccess)
      return false;
    const auto until = std::chrono::steady_clock::now() + spin;
    for (;;) {
      const CUresult r = driver_.cuEventQuery(state->event);
      if (r == kCudaSuccess)
        return true;
      if (r != kCudaNotReady || std::chrono::steady_clock::now() >= until)
        return false;
      // A query enters the driver, which the threads launching other batches need too:
      // space the queries by about a microsecond instead of asking back to back.
      for (int i = 0; i < kPausesBetweenQueries; ++i) {
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
      }
    }
  }

  std::string describe() const override {
    return "cuda event polling (libcuda.so.1, the plugin's stream extension)";
  }

private:
  struct ThreadState {
    uint64_t owner = 0; // id_ of the poller the stream and event belong to; 0 = none
    CUstream stream = nullptr;
    CUevent event = nullptr;
    bool failed = false;
  };

  /// This thread's stream and event for this poller (made on first use, with the primary
  /// context made current), or nullptr when the driver refused them.
  const ThreadState *threadState() const {
    thread_local ThreadState state;
    if (state.owner != id_) {
      // A thread that served another poller before (another client) keeps that poller's
      // objects (they belong to a context that may be gone) and makes its own.
      state = ThreadState{};
      state.owner = id_;
      state.failed = driver_.cuCtxSetCurrent(context_) != kCudaSuccess ||
                     driver_.cuStreamCreate(&state.stream, kStreamNonBlocking) != kCudaSuccess ||
                     driver_.cuEventCreate(&state.event, kEventDisableTiming) != kCudaSuccess;
    }
    return state.failed ? nullptr : &state;
  }

  static inline std::atomic<uint64_t> next_id_{1};
  const Plugin &plugin_;
  const capi::PJRT_Stream_Extension *stream_ext_;
  Driver driver_;
  CUcontext context_;
  uint64_t id_;
};

} // namespace

std::unique_ptr<CompletionPoller> makeCudaCompletionPoller(const Plugin &plugin, int cuda_ordinal,
                                                           std::string *why) {
  const auto *ext = reinterpret_cast<const capi::PJRT_Stream_Extension *>(
      plugin.extension(capi::kExtensionTypeStream));
  if (ext == nullptr || ext->base.struct_size < sizeof(capi::PJRT_Stream_Extension) ||
      ext->wait_stream == nullptr) {
    *why = "the plugin has no stream extension";
    return nullptr;
  }
  // The plugin has loaded the driver already; this takes another reference to it, kept
  // for the life of the process.
  void *lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    *why = "libcuda.so.1 cannot be loaded";
    return nullptr;
  }
  Driver d{};
  if (!resolve(lib, "cuInit", &d.cuInit) || !resolve(lib, "cuDeviceGet", &d.cuDeviceGet) ||
      !resolve(lib, "cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain) ||
      !resolve(lib, "cuCtxSetCurrent", &d.cuCtxSetCurrent) ||
      !resolve(lib, "cuStreamCreate", &d.cuStreamCreate) ||
      !resolve(lib, "cuEventCreate", &d.cuEventCreate) ||
      !resolve(lib, "cuEventRecord", &d.cuEventRecord) ||
      !resolve(lib, "cuEventQuery", &d.cuEventQuery)) {
    *why = "libcuda.so.1 lacks a driver entry point this needs";
    return nullptr;
  }
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (d.cuInit(0) != kCudaSuccess || d.cuDeviceGet(&device, cuda_ordinal) != kCudaSuccess ||
      d.cuDevicePrimaryCtxRetain(&context, device) != kCudaSuccess) {
    *why = "the driver refused device " + std::to_string(cuda_ordinal) + "'s primary context";
    return nullptr;
  }
  return std::make_unique<CudaCompletionPoller>(plugin, ext, d, context);
}

} // namespace rs::pjrt
