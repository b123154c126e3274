//===- test/server/http_server_test.cc - HttpServer with a real HTTP client -===//
#include "frontend/http_server.h"

#include "../protocol/tensor_text.h"
#include "fake_service.h"
#include "protocol/http_codec.h"
#include "protocol/status_mapping.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <future>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rs::server {
namespace {

using testing::FakeService;

const char *kDoubleBody =
    R"({"id":"a1","inputs":[{"name":"x","shape":[1,2],"datatype":"FP32","data":[1.5,-2]}]})";
const char *kDoubleReply = R"({"model_name":"double","model_version":"","id":"a1","outputs":[)"
                           R"({"name":"y","datatype":"FP32","shape":[1,2],"data":[3,-4]},)"
                           R"({"name":"z","datatype":"FP32","shape":[1,2],"data":[2.5,-1]}]})";

/// Sends `request` bytes on a fresh connection and returns everything the server sends
/// until it closes (a 10 s receive timeout guards against a hang).
std::string rawExchange(int port, const std::string &request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buf[4096];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
      reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

class HttpServerTest : public ::testing::Test {
protected:
  void SetUp() override { startServer({}); }
  void TearDown() override {
    if (server_)
      server_->shutdown();
  }

  void startServer(frontend::HttpServerOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    server_ = std::make_unique<frontend::HttpServer>(options, service_, protocol::noModelControl());
    ASSERT_TRUE(server_->start().isOk());
    ASSERT_GT(server_->port(), 0);
  }

  httplib::Client client() {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(30);
    c.set_tcp_nodelay(true);
    return c;
  }

  httplib::Result post(const std::string &path, const std::string &body,
                       httplib::Headers headers = {}) {
    return client().Post(path.c_str(), headers, body, "application/json");
  }

  void expectGoodRequestWorks() {
    auto r = post("/v2/models/double/infer", kDoubleBody);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, kDoubleReply);
  }

  void expectError(const httplib::Result &r, int status, const std::string &message) {
    ASSERT_TRUE(r) << "no reply";
    EXPECT_EQ(r->status, status);
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    EXPECT_EQ(r->body, protocol::httpErrorBody(message));
    expectGoodRequestWorks();
  }

  FakeService service_;
  std::unique_ptr<frontend::HttpServer> server_;
};

TEST_F(HttpServerTest, Health) {
  auto r = client().Get("/v2/health/live");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"live":true})");
  r = client().Get("/v2/health/ready");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"ready":true})");
  service_.setReady(false);
  r = client().Get("/v2/health/ready");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->body, R"({"ready":false})");
}

TEST_F(HttpServerTest, Metadata) {
  auto r = client().Get("/v2");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body,
            R"({"extensions":["system_shared_memory"],"name":"ReactantServer","version":"0.1.0"})");
  std::string model =
      R"({"inputs":[{"datatype":"FP32","name":"x","shape":[-1,2]}],"name":"double",)"
      R"("outputs":[{"datatype":"FP32","name":"y","shape":[-1,2]},)"
      R"({"datatype":"FP32","name":"z","shape":[-1,2]}],"platform":"cpu","versions":[]})";
  for (const char *path : {"/v2/models/double", "/v2/models/double/versions/1"}) {
    r = client().Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, model);
  }
  // A version other than the one every model has (protocol::kModelVersion).
  r = client().Get("/v2/models/double/versions/3");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body, R"j({"error":"model 'double' has no version '3' (its one version is '1'; )j"
                     R"j(an empty version names it too)"})j");
  r = client().Get("/v2/models/nope");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body, R"({"error":"model 'nope' not found"})");
}

TEST_F(HttpServerTest, ModelReady) {
  auto r = client().Get("/v2/models/double/ready");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"name":"double","ready":true})");
  r = client().Get("/v2/models/broken/versions/1/ready");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->body, R"({"name":"broken","ready":false,"reason":"load failed: bad mlir"})");
  r = client().Get("/v2/models/nope/ready");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body, R"({"error":"model 'nope' not found"})");
}

TEST_F(HttpServerTest, InferJson) {
  expectGoodRequestWorks();
  auto r = post("/v2/models/double/versions/4/infer",
                R"({"inputs":[{"name":"x","shape":[2],"datatype":"INT32","data":[7,-8]}],)"
                R"("outputs":[{"name":"z"}]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(service_.lastVersion(), "4");
  EXPECT_EQ(r->body, R"({"model_name":"double","model_version":"4","outputs":[)"
                     R"({"name":"z","datatype":"INT32","shape":[2],"data":[8,-7]}]})");
}

TEST_F(HttpServerTest, InferBinaryBothWays) {
  std::string json = R"({"inputs":[{"name":"x","shape":[2],"datatype":"FP32",)"
                     R"("parameters":{"binary_data_size":8}}],)"
                     R"("outputs":[{"name":"y","parameters":{"binary_data":true}},{"name":"z"}]})";
  float x[2] = {1.0f, 0.25f};
  std::string body = json + std::string(reinterpret_cast<char *>(x), 8);
  auto r = post("/v2/models/double_async/infer", body,
                {{protocol::kInferenceHeaderContentLength, std::to_string(json.size())}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  std::string reply_json =
      R"({"model_name":"double_async","model_version":"","outputs":[)"
      R"({"name":"y","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}},)"
      R"({"name":"z","datatype":"FP32","shape":[2],"data":[2,1.25]}]})";
  EXPECT_EQ(r->get_header_value(protocol::kInferenceHeaderContentLength),
            std::to_string(reply_json.size()));
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/octet-stream");
  float y[2] = {2.0f, 0.5f};
  EXPECT_EQ(r->body, reply_json + std::string(reinterpret_cast<char *>(y), 8));
}

TEST_F(HttpServerTest, BadRequestsGetClearErrorsAndServingContinues) {
  expectError(post("/v2/models/double/infer", R"({"inputs":[)"), 400,
              "model 'double': invalid JSON: [json.exception.parse_error.101] parse error at line "
              "1, column 12: syntax error while parsing value - unexpected end of input; "
              "expected '[', '{', or a literal");
  std::string json = R"({"inputs":[{"name":"x","shape":[1,2],"datatype":"FP32",)"
                     R"("parameters":{"binary_data_size":8}}]})";
  expectError(post("/v2/models/double/infer", json + "abc",
                   {{protocol::kInferenceHeaderContentLength, std::to_string(json.size())}}),
              400,
              "model 'double': input 'x': binary_data_size 8 runs past the end of the body (3 "
              "bytes after the JSON header)");
  std::string huge = R"({"inputs":[{"name":"x","shape":[268435456],"datatype":"FP32",)"
                     R"("parameters":{"binary_data_size":1073741824}}]})";
  expectError(post("/v2/models/double/infer", huge + "abcd",
                   {{protocol::kInferenceHeaderContentLength, std::to_string(huge.size())}}),
              400,
              "model 'double': input 'x': binary_data_size 1073741824 runs past the end of the "
              "body (4 bytes after the JSON header)");
  expectError(
      post("/v2/models/double/infer", "{}", {{protocol::kInferenceHeaderContentLength, "99"}}), 400,
      "model 'double': Inference-Header-Content-Length 99 exceeds the body size 2");
  expectError(post("/v2/models/double/infer",
                   R"({"inputs":[{"name":"x","shape":[2],"datatype":"INT32","data":[1,1.5]}]})"),
              400, "model 'double': input 'x': element 1 (1.5) is not an integer, as INT32 needs");
  expectError(post("/v2/models/nope/infer", kDoubleBody), 404, "model 'nope' not found");
  // An unknown model is 404 before its body is looked at.
  expectError(post("/v2/models/nope/infer", "{}"), 404, "model 'nope' not found");
  expectError(post("/v2/models/nope/infer", R"({"inputs":[)"), 404, "model 'nope' not found");
  expectError(post("/v2/models/broken/infer", kDoubleBody), 503,
              "model 'broken' is not loaded: load failed: bad mlir");
  expectError(post("/v2/models/double/infer",
                   R"({"inputs":[{"name":"image","shape":[1],"datatype":"FP32","data":[1]}]})"),
              400, "model 'double': unexpected input 'image'");
  expectError(post("/v2/models/double/infer",
                   R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}],)"
                   R"("outputs":[{"name":"y","parameters":{"classification":2}}]})"),
              501, "model 'double': output 'y': the classification extension is not supported");
}

TEST_F(HttpServerTest, UnknownRoutesAre404AndWrongMethods405Json) {
  auto r = client().Get("/v3/nothing");
  expectError(r, 404, "no route for GET /v3/nothing");
  r = client().Delete("/v2/models/double/nothing");
  expectError(r, 404, "no route for DELETE /v2/models/double/nothing");
  // A path this server serves, asked with another method (RFC 9110 section 15.5.6).
  r = client().Get("/v2/models/double/infer");
  expectError(r, 405, "method GET not allowed for /v2/models/double/infer; allowed: POST");
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  r = post("/v2/models/double/ready", "{}");
  expectError(r, 405, "method POST not allowed for /v2/models/double/ready; allowed: GET");
  EXPECT_EQ(r->get_header_value("Allow"), "GET");
  r = client().Put("/v2/health/live", "{}", "application/json");
  expectError(r, 405, "method PUT not allowed for /v2/health/live; allowed: GET");
}

TEST_F(HttpServerTest, PostWithoutContentLengthHasAnEmptyBody) {
  // RFC 9112 section 6.3: no Content-Length and no Transfer-Encoding means no body. Answered
  // at once (the server used to wait for its 5 s read timeout).
  std::string reply = rawExchange(server_->port(), "POST /v2/models/double/infer HTTP/1.1\r\n"
                                                   "Host: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;
  EXPECT_NE(reply.find("\"error\""), std::string::npos) << reply;
  reply = rawExchange(server_->port(),
                      "POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
  expectGoodRequestWorks();
}

TEST_F(HttpServerTest, BodyLimit) {
  server_->shutdown();
  frontend::HttpServerOptions options;
  options.max_body_bytes = 1024;
  startServer(options);
  std::string big = R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}],"pad":")" +
                    std::string(2000, 'p') + "\"}";
  expectError(post("/v2/models/double/infer", big), 413,
              "request body exceeds the limit of 1024 bytes");
  // A chunked body has no Content-Length: it is cut off while being read.
  auto r = client().Post(
      "/v2/models/double/infer",
      [&](size_t offset, httplib::DataSink &sink) {
        if (offset < big.size()) {
          size_t n = std::min<size_t>(256, big.size() - offset);
          sink.write(big.data() + offset, n);
        } else {
          sink.done();
        }
        return true;
      },
      "application/json");
  expectError(r, 413, "request body exceeds the limit of 1024 bytes");
  // Exactly at the limit is fine as far as size goes.
  std::string at_limit =
      R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}],"pad":")";
  at_limit += std::string(1024 - at_limit.size() - 2, 'p') + "\"}";
  ASSERT_EQ(at_limit.size(), 1024u);
  r = post("/v2/models/double/infer", at_limit);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServerTest, OversizedDeclaredBodyRefusedBeforeReading) {
  server_->shutdown();
  frontend::HttpServerOptions options;
  options.max_body_bytes = 1024;
  startServer(options);
  std::string body = protocol::httpErrorBody("request body exceeds the limit of 1024 bytes");
  // 10 GB declared, nothing sent: the reply comes without waiting for the body.
  std::string reply = rawExchange(
      server_->port(), "POST /v2/models/double/infer HTTP/1.1\r\n"
                       "Host: x\r\nConnection: close\r\nContent-Length: 10000000000\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 413 ", 0), 0u) << reply;
  EXPECT_NE(reply.find("Connection: close"), std::string::npos) << reply;
  EXPECT_EQ(reply.substr(reply.size() - body.size()), body);
  // With Expect: 100-continue the client is told before it sends anything.
  reply = rawExchange(server_->port(),
                      "POST /v2/models/double/infer HTTP/1.1\r\nHost: x\r\n"
                      "Connection: close\r\nExpect: 100-continue\r\nContent-Length: 2048\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 413 ", 0), 0u) << reply;
  EXPECT_EQ(reply.substr(reply.size() - body.size()), body);
  expectGoodRequestWorks();
}

TEST_F(HttpServerTest, ConcurrentClients) {
  constexpr int kThreads = 8, kRequests = 20;
  std::vector<std::future<int>> results;
  for (int t = 0; t < kThreads; ++t)
    results.push_back(std::async(std::launch::async, [this, t] {
      httplib::Client c("127.0.0.1", server_->port());
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);
      int good = 0;
      for (int i = 0; i < kRequests; ++i) {
        int v = t * 1000 + i;
        std::string body = R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT64","data":[)" +
                           std::to_string(v) + "]}],\"outputs\":[{\"name\":\"y\"}]}";
        auto r = c.Post(i % 2 ? "/v2/models/double_async/infer" : "/v2/models/double/infer", body,
                        "application/json");
        if (r && r->status == 200 &&
            r->body.find("\"data\":[" + std::to_string(2 * v) + "]") != std::string::npos)
          ++good;
      }
      return good;
    }));
  for (auto &f : results)
    EXPECT_EQ(f.get(), kRequests);
}

TEST_F(HttpServerTest, ShutdownFinishesInFlightRequests) {
  auto pending = std::async(std::launch::async, [this] {
    return post("/v2/models/gate/infer",
                R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[5]}]})");
  });
  service_.waitForHeld(1);
  auto stopped = std::async(std::launch::async, [this] { server_->shutdown(); });
  service_.release();
  stopped.get();
  httplib::Result r = pending.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"model_name":"gate","model_version":"","outputs":[)"
                     R"({"name":"y","datatype":"FP32","shape":[1],"data":[10]},)"
                     R"({"name":"z","datatype":"FP32","shape":[1],"data":[6]}]})");
  EXPECT_FALSE(client().Get("/v2/health/live"));
}

TEST(HttpServer, BindFailureIsUnavailable) {
  FakeService service;
  frontend::HttpServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  frontend::HttpServer first(options, service, protocol::noModelControl());
  ASSERT_TRUE(first.start().isOk());
  options.port = first.port();
  frontend::HttpServer second(options, service, protocol::noModelControl());
  Status s = second.start();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "http server: cannot bind 127.0.0.1:" + std::to_string(first.port()));
}

} // namespace
} // namespace rs::server
