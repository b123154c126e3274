//===- test/protocol/alloc_limit_test.cc - No allocation sized by the client ===//
//
// Replaces the global allocation functions of this test binary to record the largest
// single request while a decode runs, and checks that requests declaring a 1 GiB tensor
// in a small body are rejected without any allocation near that size.
//
//===----------------------------------------------------------------------===//
#include "protocol/grpc_codec.h"
#include "protocol/http_codec.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

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

void *allocate(size_t n, size_t align) {
  note(n);
  void *p = nullptr;
  if (align <= alignof(std::max_align_t))
    p = std::malloc(n ? n : 1);
  else if (posix_memalign(&p, align, n ? n : 1) != 0)
    p = nullptr;
  if (!p)
    throw std::bad_alloc();
  return p;
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
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }
void operator delete[](void *p, size_t) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, size_t, std::align_val_t) noexcept { std::free(p); }

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
