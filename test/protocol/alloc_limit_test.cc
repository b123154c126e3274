//===- test/protocol/alloc_limit_test.cc - No allocation sized by the client ===//
//
// Replaces the global allocation functions of this test binary to record the largest
// single request and the peak of the bytes held while a decode runs, and checks that
// requests declaring a 1 GiB tensor in a small body are rejected without any allocation
// near that size, and that a large JSON body costs at most twice its size to decode.
//
//===----------------------------------------------------------------------===//
#include "protocol/grpc_codec.h"
#include "protocol/http_codec.h"

#include <gtest/gtest.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <new>

#include <malloc.h>

namespace {

std::atomic<bool> g_tracking{false};
std::atomic<size_t> g_largest{0};

void note(size_t n) {
  if (!g_tracking.load(std::memory_order_relaxed))
    return;
  size_t cur = g_largest.load(std::memory_order_relaxed);
  while (n > cur && !g_largest.compare_exchange_weak(cur, n, std::memory_order_relaxed)) {
  }
}

// Bytes held (malloc_usable_size) by blocks allocated while tracking, and their peak.
std::atomic<int64_t> g_held{0};
std::atomic<int64_t> g_peak_held{0};

void *allocate(size_t n, size_t align) {
  note(n);
  void *p = nullptr;
  if (align <= alignof(std::max_align_t))
    p = std::malloc(n ? n : 1);
  else if (posix_memalign(&p, align, n ? n : 1) != 0)
    p = nullptr;
  if (!p)
    throw std::bad_alloc();
  if (g_tracking.load(std::memory_order_relaxed)) {
    const int64_t held = g_held += static_cast<int64_t>(malloc_usable_size(p));
    int64_t peak = g_peak_held.load(std::memory_order_relaxed);
    while (held > peak && !g_peak_held.compare_exchange_weak(peak, held)) {
    }
  }
  return p;
}

void release(void *p) {
  if (p && g_tracking.load(std::memory_order_relaxed))
    g_held -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}

/// The most bytes held at once by allocations made while `fn` runs (frees of older
/// blocks count against it, so this is a lower bound of the peak growth only if `fn`
/// frees nothing it did not allocate).
template <typename Fn> int64_t peakHeldDuring(Fn fn) {
  g_held = 0;
  g_peak_held = 0;
  g_tracking = true;
  fn();
  g_tracking = false;
  return g_peak_held;
}

/// Largest single allocation made while `fn` runs.
template <typename Fn> size_t largestAllocationDuring(Fn fn) {
  g_largest = 0;
  g_tracking = true;
  fn();
  g_tracking = false;
  return g_largest;
}

} // namespace

void *operator new(size_t n) { return allocate(n, alignof(std::max_align_t)); }
void *operator new[](size_t n) { return allocate(n, alignof(std::max_align_t)); }
void *operator new(size_t n, std::align_val_t a) { return allocate(n, static_cast<size_t>(a)); }
void *operator new[](size_t n, std::align_val_t a) { return allocate(n, static_cast<size_t>(a)); }
void operator delete(void *p) noexcept { release(p); }
void operator delete[](void *p) noexcept { release(p); }
void operator delete(void *p, size_t) noexcept { release(p); }
void operator delete[](void *p, size_t) noexcept { release(p); }
void operator delete(void *p, std::align_val_t) noexcept { release(p); }
void operator delete[](void *p, std::align_val_t) noexcept { release(p); }
void operator delete(void *p, size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void *p, size_t, std::align_val_t) noexcept { release(p); }

namespace rs::protocol {
namespace {

constexpr size_t kSmall = 64 * 1024;
const protocol::Clock::time_point kNow{};

TEST(AllocLimit, TrackerSeesTensorAllocations) {
  // The guard itself works: a real 1 MiB tensor is seen.
  size_t largest = largestAllocationDuring([] { (void)Tensor::zeros(DType::kF32, {262144}); });
  EXPECT_GE(largest, size_t{1} << 20);
}

TEST(AllocLimit, HttpBinaryOneGiBDeclared) {
  std::string json = R"({"inputs":[{"name":"x","shape":[268435456],"datatype":"FP32",)"
                     R"("parameters":{"binary_data_size":1073741824}}]})";
  std::string body = json + std::string(16, '\0');
  std::string header = std::to_string(json.size());
  bool ok = true;
  size_t largest = largestAllocationDuring([&] {
    ok = decodeHttpInferRequest({"m", ""}, body, header, kNow).isOk();
  });
  EXPECT_FALSE(ok);
  EXPECT_LT(largest, kSmall);
}

TEST(AllocLimit, HttpJsonOneGiBDeclared) {
  std::string body =
      R"({"inputs":[{"name":"x","shape":[268435456],"datatype":"FP32","data":[1,2]}]})";
  bool ok = true;
  size_t largest = largestAllocationDuring([&] {
    ok = decodeHttpInferRequest({"m", ""}, body, std::nullopt, kNow).isOk();
  });
  EXPECT_FALSE(ok);
  EXPECT_LT(largest, kSmall);
}

TEST(AllocLimit, AJsonBodyCostsAtMostTwiceItsSize) {
  // 16 MiB of FP32 data as JSON text, decoded: the parse must not keep a DOM node per
  // element (16 bytes each, plus their arrays') but at most twice the body in all. The
  // ratio does not depend on the size; 16 MiB keeps the test short.
  std::string body = R"({"id":"big","inputs":[{"name":"x","shape":[)";
  const size_t at_shape = body.size();
  body += R"(],"datatype":"FP32","data":[)";
  int64_t n = 0;
  char buf[32];
  while (body.size() < (size_t{16} << 20)) {
    if (n)
      body.push_back(',');
    const float v = static_cast<float>(n % 1000) * 0.001f + 1.0f;
    body.append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
    ++n;
  }
  body += "]}]}";
  body.insert(at_shape, std::to_string(n));
  bool ok = false;
  const int64_t peak = peakHeldDuring([&] {
    Result<HttpInferRequest> r = decodeHttpInferRequest({"m", ""}, body, std::nullopt, kNow);
    ok = r.isOk() && r->request.inputs.size() == 1 &&
         r->request.inputs[0].tensor.numElements() == n &&
         r->request.inputs[0].tensor.dataAs<float>()[1] == 1.001f;
  });
  EXPECT_TRUE(ok);
  std::printf("json body of %zu bytes: %lld bytes held at the peak of its decoding (%.2fx)\n",
              body.size(), static_cast<long long>(peak),
              static_cast<double>(peak) / static_cast<double>(body.size()));
  EXPECT_LT(peak, 2 * static_cast<int64_t>(body.size()))
      << "decoding a " << body.size() << "-byte body held " << peak << " bytes at its peak";
}

TEST(AllocLimit, GrpcRawOneGiBDeclared) {
  inference::ModelInferRequest msg;
  msg.set_model_name("m");
  auto *in = msg.add_inputs();
  in->set_name("x");
  in->set_datatype("FP32");
  in->add_shape(268435456);
  msg.add_raw_input_contents(std::string(16, '\0'));
  bool ok = true;
  size_t largest = largestAllocationDuring([&] { ok = decodeModelInferRequest(msg, kNow).isOk(); });
  EXPECT_FALSE(ok);
  EXPECT_LT(largest, kSmall);
}

TEST(AllocLimit, GrpcTypedOneGiBDeclared) {
  inference::ModelInferRequest msg;
  msg.set_model_name("m");
  auto *in = msg.add_inputs();
  in->set_name("x");
  in->set_datatype("FP64");
  in->add_shape(134217728);
  in->mutable_contents()->add_fp64_contents(1.0);
  bool ok = true;
  size_t largest = largestAllocationDuring([&] { ok = decodeModelInferRequest(msg, kNow).isOk(); });
  EXPECT_FALSE(ok);
  EXPECT_LT(largest, kSmall);
}

} // namespace
} // namespace rs::protocol
