//===- test/hardening/cuda_shared_memory_test.cc - Triton's CUDA shm RPCs ----===//
//
// Triton's CUDA shared-memory extension on a worker that offers system shared memory: the
// gRPC RPCs answer as the HTTP routes do (no region, a named region not found,
// unregistering succeeds, registering refused, each with the same message on both
// protocols); without shared memory the RPCs are UNIMPLEMENTED and the routes 404.
//
//===----------------------------------------------------------------------===//
#include "worker_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace rs::testing {
namespace {

/// CudaSharedMemoryStatus of region `name` ("" for all) on `w`.
grpc::Status cudaStatus(TestWorker &w, const std::string &name,
                        inference::CudaSharedMemoryStatusResponse *resp) {
  grpc::ClientContext ctx;
  inference::CudaSharedMemoryStatusRequest req;
  req.set_name(name);
  return w.stub().CudaSharedMemoryStatus(&ctx, req, resp);
}

grpc::Status cudaRegister(TestWorker &w, const std::string &name) {
  grpc::ClientContext ctx;
  inference::CudaSharedMemoryRegisterRequest req;
  req.set_name(name);
  req.set_raw_handle(std::string(64, 'h'));
  req.set_device_id(0);
  req.set_byte_size(64);
  inference::CudaSharedMemoryRegisterResponse resp;
  return w.stub().CudaSharedMemoryRegister(&ctx, req, &resp);
}

grpc::Status cudaUnregister(TestWorker &w, const std::string &name) {
  grpc::ClientContext ctx;
  inference::CudaSharedMemoryUnregisterRequest req;
  req.set_name(name);
  inference::CudaSharedMemoryUnregisterResponse resp;
  return w.stub().CudaSharedMemoryUnregister(&ctx, req, &resp);
}

/// The "error" of an HTTP error body.
std::string httpError(const httplib::Result &r) {
  return nlohmann::json::parse(r->body)["error"].get<std::string>();
}

TEST(WorkerCudaSharedMemory, GrpcAnswersAsHttp) {
  auto w = startHardeningWorker(kIrisRepo);
  ASSERT_TRUE(w);

  inference::CudaSharedMemoryStatusResponse all;
  ASSERT_TRUE(cudaStatus(*w, "", &all).ok());
  EXPECT_TRUE(all.regions().empty());
  auto http_all = w->http()->Get("/v2/cudasharedmemory/status");
  ASSERT_TRUE(http_all);
  EXPECT_EQ(http_all->status, 200);
  EXPECT_EQ(http_all->body, "[]");

  const std::string not_registered = "cuda shared memory region \"gpu0\" is not registered";
  inference::CudaSharedMemoryStatusResponse named;
  grpc::Status s = cudaStatus(*w, "gpu0", &named);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), not_registered);
  auto http_named = w->http()->Get("/v2/cudasharedmemory/region/gpu0/status");
  ASSERT_TRUE(http_named);
  EXPECT_EQ(http_named->status, 404);
  EXPECT_EQ(httpError(http_named), not_registered);

  const std::string refused =
      "cuda shared memory region \"gpu0\": CUDA shared memory is not offered (system shared "
      "memory is)";
  s = cudaRegister(*w, "gpu0");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), refused);
  auto http_register = w->http()->Post("/v2/cudasharedmemory/region/gpu0/register",
                                       R"({"raw_handle":{"b64":"AAAA"},"device_id":0,)"
                                       R"("byte_size":64})",
                                       "application/json");
  ASSERT_TRUE(http_register);
  EXPECT_EQ(http_register->status, 400);
  EXPECT_EQ(httpError(http_register), refused);

  EXPECT_TRUE(cudaUnregister(*w, "").ok());
  EXPECT_TRUE(cudaUnregister(*w, "gpu0").ok());
  for (const char *path :
       {"/v2/cudasharedmemory/unregister", "/v2/cudasharedmemory/region/gpu0/unregister"}) {
    auto r = w->http()->Post(path, "", "application/json");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
  }
  // Still nothing registered, and the worker serves.
  ASSERT_TRUE(cudaStatus(*w, "", &all).ok());
  EXPECT_TRUE(all.regions().empty());
  inference::ModelInferResponse reply;
  EXPECT_TRUE(w->infer(irisRequest(irisRow()), &reply).ok());
}

TEST(WorkerCudaSharedMemory, OffUnlessSharedMemoryIsOffered) {
  WorkerSetup o;
  o.shared_memory = false;
  auto w = startHardeningWorker(kIrisRepo, o);
  ASSERT_TRUE(w);
  inference::CudaSharedMemoryStatusResponse all;
  grpc::Status s = cudaStatus(*w, "", &all);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(s.error_message(), "CudaSharedMemoryStatus is not implemented");
  EXPECT_EQ(cudaRegister(*w, "gpu0").error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(cudaUnregister(*w, "").error_code(), grpc::StatusCode::UNIMPLEMENTED);
  auto r = w->http()->Get("/v2/cudasharedmemory/status");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
}

} // namespace
} // namespace rs::testing
