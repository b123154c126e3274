//===- test/hardening/shared_memory_test.cc - System shared memory registry --===//
#include "protocol/shared_memory.h"
#include "shm_util.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>

#include <unistd.h>

namespace rs::protocol {
namespace {

using rs::testing::kPeer;
using rs::testing::ShmObject;

SharedMemoryRegionInfo info(std::string name, std::string key, uint64_t offset,
                            uint64_t byte_size) {
  return {std::move(name), std::move(key), offset, byte_size};
}

/// The one answer for a key the registry may not use (no existence or size oracle).
std::string refused(const std::string &key) {
  return "shared memory region \"r\": cannot use key \"" + key +
         "\" (it must name a POSIX shared memory object under \"/rs_\" owned by an allowed "
         "user that holds offset + byte_size)";
}

TEST(SharedMemoryRegistry, RegisterStatusUnregister) {
  ShmObject a(64), b(4096);
  ASSERT_TRUE(a.ok() && b.ok());
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.registerRegion(kPeer, info("b_region", b.key(), 100, 200)).isOk());
  ASSERT_TRUE(registry.registerRegion(kPeer, info("a_region", a.key(), 0, 64)).isOk());
  EXPECT_EQ(registry.regionCount(), 2u);
  EXPECT_EQ(registry.registeredBytes(), 264u);

  Result<std::vector<SharedMemoryRegionInfo>> all = registry.status(kPeer, "");
  ASSERT_TRUE(all.isOk());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "a_region"); // sorted by name
  EXPECT_EQ((*all)[0].key, a.key());
  EXPECT_EQ((*all)[1].name, "b_region");
  EXPECT_EQ((*all)[1].offset, 100u);
  EXPECT_EQ((*all)[1].byte_size, 200u);
  EXPECT_EQ(sharedMemoryStatusJson({(*all)[1]}),
            R"([{"byte_size":200,"key":")" + b.key() + R"(","name":"b_region","offset":100}])");

  Result<std::vector<SharedMemoryRegionInfo>> one = registry.status(kPeer, "a_region");
  ASSERT_TRUE(one.isOk());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].byte_size, 64u);
  Result<std::vector<SharedMemoryRegionInfo>> missing = registry.status(kPeer, "nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "shared memory region \"nope\" is not registered");

  Status again = registry.registerRegion(kPeer, info("a_region", b.key(), 0, 8));
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(again.message(), "shared memory region \"a_region\" is already registered");

  registry.unregisterRegion(kPeer, "a_region");
  registry.unregisterRegion(kPeer, "a_region"); // unknown: not an error
  EXPECT_EQ(registry.regionCount(), 1u);
  Result<std::shared_ptr<const SharedMemoryRegion>> gone = registry.find(kPeer, "a_region");
  EXPECT_EQ(gone.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(gone.status().message(), "shared memory region \"a_region\" is not registered");
  registry.unregisterRegion(kPeer, ""); // all
  EXPECT_EQ(registry.regionCount(), 0u);
  Result<std::vector<SharedMemoryRegionInfo>> none = registry.status(kPeer, "");
  ASSERT_TRUE(none.isOk());
  EXPECT_TRUE(none->empty());
}

TEST(SharedMemoryRegistry, OnlyPosixSharedMemoryObjects) {
  ShmObject a(64);
  ASSERT_TRUE(a.ok());
  SharedMemoryRegistry registry;
  // Paths, traversal and names with more than the leading '/' never reach shm_open.
  for (const char *key : {"/etc/passwd", "etc", "", "/", "/.", "/..", "/../../etc/passwd",
                          "/dev/shm/x", "relative/name"}) {
    Status s = registry.registerRegion(kPeer, info("r", key, 0, 1));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << key;
    EXPECT_NE(s.message().find("is not a POSIX shared memory object name"), std::string::npos)
        << s.message();
  }
  Status s = registry.registerRegion(kPeer, info("r", "/" + std::string(300, 'x'), 0, 1));
  EXPECT_EQ(s.message(), "shared memory region \"r\": key has 301 characters, at most 255 are "
                         "allowed");
  s = registry.registerRegion(kPeer, info("r", "/rs_hardening_does_not_exist", 0, 1));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), refused("/rs_hardening_does_not_exist")); // the cause is logged
  EXPECT_EQ(registry.regionCount(), 0u);
}

TEST(SharedMemoryRegistry, RegistrationBounds) {
  ShmObject a(64);
  ASSERT_TRUE(a.ok());
  SharedMemoryRegistry registry;
  Status s = registry.registerRegion(kPeer, info("r", a.key(), 0, 0));
  EXPECT_EQ(s.message(), "shared memory region \"r\": byte_size must be positive");
  s = registry.registerRegion(kPeer, info("r", a.key(), 60, 8));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), refused(a.key())); // no size oracle
  s = registry.registerRegion(kPeer, info("r", a.key(), std::numeric_limits<uint64_t>::max(), 2));
  EXPECT_EQ(s.message(), "shared memory region \"r\": offset 18446744073709551615 + byte_size 2 "
                         "overflows");
  s = registry.registerRegion(kPeer, info("", a.key(), 0, 1));
  EXPECT_EQ(s.message(), "shared memory region name is empty");
  EXPECT_TRUE(registry.registerRegion(kPeer, info("r", a.key(), 60, 4)).isOk());
}

TEST(SharedMemoryRegistry, RegionLimit) {
  ShmObject a(64);
  ASSERT_TRUE(a.ok());
  SharedMemoryRegistryOptions two;
  two.max_regions = 2;
  SharedMemoryRegistry registry(two);
  ASSERT_TRUE(registry.registerRegion(kPeer, info("r0", a.key(), 0, 1)).isOk());
  ASSERT_TRUE(registry.registerRegion(kPeer, info("r1", a.key(), 0, 1)).isOk());
  Status s = registry.registerRegion(kPeer, info("r2", a.key(), 0, 1));
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "shared memory region \"r2\": 2 regions are registered, the most allowed");
}

TEST(SharedMemoryRegion, WindowsAreBoundsChecked) {
  ShmObject a(256);
  ASSERT_TRUE(a.ok());
  a.writeValues<float>(16, {1.5f, -2.0f, 3.25f, 4.0f});
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.registerRegion(kPeer, info("r", a.key(), 16, 32)).isOk());
  auto region = registry.find(kPeer, "r");
  ASSERT_TRUE(region.isOk());

  std::vector<uint8_t> out(16);
  ASSERT_TRUE((*region)->read(0, out).isOk());
  std::vector<float> values(4);
  std::memcpy(values.data(), out.data(), 16);
  EXPECT_EQ(values, (std::vector<float>{1.5f, -2.0f, 3.25f, 4.0f}));

  EXPECT_TRUE((*region)->read(16, out).isOk()); // exactly the last 16 bytes
  Status s = (*region)->read(17, out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "shared memory region \"r\": 16 bytes at offset 17 run past the region's 32 bytes");
  s = (*region)->read(std::numeric_limits<uint64_t>::max() - 4, out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  const std::vector<uint8_t> payload = {9, 8, 7, 6};
  s = (*region)->write(30, payload);
  EXPECT_EQ(s.message(),
            "shared memory region \"r\": 4 bytes at offset 30 run past the region's 32 bytes");
  ASSERT_TRUE((*region)->write(28, payload).isOk());
  EXPECT_EQ(a.read(16 + 28, 4), payload);
  EXPECT_EQ(a.read(16 + 32, 4), (std::vector<uint8_t>{0, 0, 0, 0})); // nothing past the window
}

TEST(SharedMemoryRegion, ShrunkObjectFailsTheRequestNotTheServer) {
  // A client that truncates its object after registering must not crash the server
  // (a mapping would raise SIGBUS): the read fails with a clear error.
  ShmObject a(4096);
  ASSERT_TRUE(a.ok());
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.registerRegion(kPeer, info("r", a.key(), 0, 4096)).isOk());
  a.truncate(100);
  auto region = registry.find(kPeer, "r");
  ASSERT_TRUE(region.isOk());
  std::vector<uint8_t> out(512);
  Status s = (*region)->read(0, out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "shared memory region \"r\": object \"" + a.key() +
                             "\" ends before byte 512 (it was shrunk after registration)");
}

TEST(SharedMemoryRegion, UnregisterWhileInUseKeepsTheRegionAlive) {
  ShmObject a(64);
  ASSERT_TRUE(a.ok());
  a.writeValues<int32_t>(0, {42});
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.registerRegion(kPeer, info("r", a.key(), 0, 64)).isOk());
  // An in-flight request resolved the region (input read or output bound) ...
  auto held = registry.find(kPeer, "r");
  ASSERT_TRUE(held.isOk());
  // ... then the client unregisters everything.
  registry.unregisterRegion(kPeer, "");
  EXPECT_EQ(registry.find(kPeer, "r").status().code(), StatusCode::kFailedPrecondition);
  // The request still reads and writes its region.
  std::vector<uint8_t> out(4);
  ASSERT_TRUE((*held)->read(0, out).isOk());
  int32_t v = 0;
  std::memcpy(&v, out.data(), 4);
  EXPECT_EQ(v, 42);
  const std::vector<uint8_t> payload = {1, 2, 3, 4};
  ASSERT_TRUE((*held)->write(8, payload).isOk());
  EXPECT_EQ(a.read(8, 4), payload);
  // And a new registration under the same name is independent.
  ASSERT_TRUE(registry.registerRegion(kPeer, info("r", a.key(), 32, 32)).isOk());
  EXPECT_EQ((*registry.find(kPeer, "r"))->info().offset, 32u);
  EXPECT_EQ((*held)->info().offset, 0u);
}

TEST(SharedMemoryTensors, InputsAndOutputs) {
  ShmObject a(128);
  ASSERT_TRUE(a.ok());
  a.writeValues<float>(8, {1, 2, 3, 4, 5, 6});
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.registerRegion(kPeer, info("in", a.key(), 0, 64)).isOk());
  ASSERT_TRUE(registry.registerRegion(kPeer, info("out", a.key(), 64, 64)).isOk());
  Result<WireTensorLayout> layout = checkWireTensor("input 'x'", "FP32", Shape{2, 3});
  ASSERT_TRUE(layout.isOk());

  Result<Tensor> t = readSharedMemoryInput(registry, kPeer, "input 'x'", *layout, {"in", 8, 24});
  ASSERT_TRUE(t.isOk()) << t.status().message();
  EXPECT_EQ(t->shape(), (Shape{2, 3}));
  EXPECT_EQ(t->dataAs<float>()[5], 6.0f);

  Result<Tensor> wrong =
      readSharedMemoryInput(registry, kPeer, "input 'x'", *layout, {"in", 8, 20});
  EXPECT_EQ(wrong.status().message(), "input 'x': shared_memory_byte_size is 20 bytes but shape "
                                      "[2,3] of FP32 needs 24 bytes");
  Result<Tensor> past =
      readSharedMemoryInput(registry, kPeer, "input 'x'", *layout, {"in", 48, 24});
  EXPECT_EQ(past.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(past.status().message(), "input 'x': shared memory region \"in\": 24 bytes at "
                                     "offset 48 run past the region's 64 bytes");
  Result<Tensor> unknown =
      readSharedMemoryInput(registry, kPeer, "input 'x'", *layout, {"zz", 0, 24});
  EXPECT_EQ(unknown.status().code(), StatusCode::kFailedPrecondition);

  Result<SharedMemoryOutput> bound = bindSharedMemoryOutput(registry, kPeer, "y", {"out", 4, 16});
  ASSERT_TRUE(bound.isOk());
  Result<SharedMemoryOutput> outside =
      bindSharedMemoryOutput(registry, kPeer, "y", {"out", 60, 16});
  EXPECT_EQ(outside.status().message(), "output 'y': shared memory region \"out\": 16 bytes at "
                                        "offset 60 run past the region's 64 bytes");

  protocol::InferResponse response;
  std::vector<int32_t> y = {7, 8, 9};
  response.outputs.push_back(
      {"y", Tensor::copyOf(DType::kI32, {3}, {reinterpret_cast<uint8_t *>(y.data()), 12})});
  std::vector<SharedMemoryOutput> outputs = {*bound};
  ASSERT_TRUE(writeSharedMemoryOutputs(outputs, response).isOk());
  EXPECT_EQ(a.readValues<int32_t>(64 + 4, 3), y);

  // An output larger than its window is refused and nothing of it is written.
  std::vector<int32_t> big(5, 1);
  response.outputs[0].tensor =
      Tensor::copyOf(DType::kI32, {5}, {reinterpret_cast<uint8_t *>(big.data()), 20});
  a.writeValues<int32_t>(64 + 4, {0, 0, 0, 0});
  Status s = writeSharedMemoryOutputs(outputs, response);
  EXPECT_EQ(s.message(), "output 'y': shared_memory_byte_size is 16 bytes but the output has 20 "
                         "bytes");
  EXPECT_EQ(a.readValues<int32_t>(64 + 4, 4), (std::vector<int32_t>{0, 0, 0, 0}));
}

TEST(SharedMemoryJson, RegisterBody) {
  Result<SharedMemoryRegionInfo> r =
      parseSharedMemoryRegisterJson("r", R"({"key":"/k","offset":8,"byte_size":16})");
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->name, "r");
  EXPECT_EQ(r->key, "/k");
  EXPECT_EQ(r->offset, 8u);
  EXPECT_EQ(r->byte_size, 16u);
  r = parseSharedMemoryRegisterJson("r", R"({"key":"/k","byte_size":16})");
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->offset, 0u);
  EXPECT_EQ(parseSharedMemoryRegisterJson("r", R"({"key":"/k"})").status().message(),
            "shared memory register body has no 'byte_size'");
  EXPECT_EQ(parseSharedMemoryRegisterJson("r", R"({"key":"/k","byte_size":-1})").status().message(),
            "shared memory register body: 'byte_size' must be a non-negative integer, got -1");
  EXPECT_EQ(parseSharedMemoryRegisterJson("r", R"({"key":7,"byte_size":1})").status().message(),
            "shared memory register body: 'key' must be a string");
  EXPECT_EQ(parseSharedMemoryRegisterJson("r", "[1]").status().message(),
            "shared memory register body must be a JSON object");
  EXPECT_EQ(parseSharedMemoryRegisterJson("r", "{").status().code(), StatusCode::kInvalidArgument);
}

TEST(SharedMemoryTenancy, EveryUnusableObjectGetsTheSameAnswer) {
  auto a = std::make_unique<ShmObject>(64);
  ASSERT_TRUE(a->ok());
  const std::string key = a->key();
  SharedMemoryRegistry registry;
  std::string cause;
  // Too small, then missing: the same error for the same key, the cause only in `cause`.
  Status small = registry.registerRegion(kPeer, info("r", key, 0, 128), &cause);
  EXPECT_EQ(small.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(small.message(), refused(key));
  EXPECT_EQ(cause, "object of 64 bytes, the window needs 128");
  a.reset(); // unlinked
  Status missing = registry.registerRegion(kPeer, info("r", key, 0, 128), &cause);
  EXPECT_EQ(missing.message(), small.message());
  EXPECT_EQ(cause, "cannot open: No such file or directory");
  // Outside the prefix: refused before shm_open.
  Status outside = registry.registerRegion(kPeer, info("r", "/other_object", 0, 1), &cause);
  EXPECT_EQ(outside.message(), refused("/other_object"));
  EXPECT_EQ(cause, "key outside the prefix");
  EXPECT_EQ(registry.regionCount(), 0u);
}

TEST(SharedMemoryTenancy, AnObjectOfAUserNotAllowedIsRefused) {
  ShmObject a(64);
  ASSERT_TRUE(a.ok());
  SharedMemoryRegistryOptions o;
  o.allowed_uids = {::geteuid() + 1}; // the test's own objects belong to another user here
  SharedMemoryRegistry others(o);
  std::string cause;
  Status s = others.registerRegion(kPeer, info("r", a.key(), 0, 64), &cause);
  EXPECT_EQ(s.message(), refused(a.key()));
  EXPECT_EQ(cause, "owned by uid " + std::to_string(::geteuid()));
  o.allowed_uids = {::geteuid() + 1, ::geteuid()};
  SharedMemoryRegistry mine(o);
  EXPECT_TRUE(mine.registerRegion(kPeer, info("r", a.key(), 0, 64)).isOk());
}

TEST(SharedMemoryTenancy, EachPeerSeesUsesAndUnregistersOnlyItsOwnRegions) {
  ShmObject a(64);
  ASSERT_TRUE(a.ok());
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.registerRegion("127.0.0.1", info("r", a.key(), 0, 8)).isOk());
  ASSERT_TRUE(registry.registerRegion("::1", info("r", a.key(), 8, 16)).isOk());
  ASSERT_TRUE(registry.registerRegion("::1", info("s", a.key(), 0, 4)).isOk());
  auto mine = registry.status("127.0.0.1", "");
  ASSERT_TRUE(mine.isOk());
  ASSERT_EQ(mine->size(), 1u);
  EXPECT_EQ((*mine)[0].byte_size, 8u);
  EXPECT_EQ(registry.status("127.0.0.1", "s").status().code(), StatusCode::kNotFound);
  EXPECT_EQ((*registry.find("::1", "r"))->info().offset, 8u);
  EXPECT_EQ(registry.find("127.0.0.2", "r").status().code(), StatusCode::kFailedPrecondition);
  registry.unregisterRegion("::1", "");
  EXPECT_EQ(registry.regionCount(), 1u);
  EXPECT_TRUE(registry.find("127.0.0.1", "r").isOk());
}

} // namespace
} // namespace rs::protocol
