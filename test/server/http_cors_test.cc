//===- test/server/http_cors_test.cc - CORS on the HTTP front-end ----------===//
//
// endpoints.cors_allowed_origins as HttpServerOptions::cors_allowed_origins: off by
// default; preflights from an allowed origin answered 204 with the allowed methods and
// headers; Access-Control-Allow-Origin on every reply to an allowed origin (errors too);
// nothing for any other origin.
//
//===----------------------------------------------------------------------===//
#include "frontend/http_server.h"

#include "fake_service.h"

#include <gtest/gtest.h>
#include <httplib.h>

namespace rs::server {
namespace {

using testing::FakeService;

const char *kApp = "https://app.example.com";
const char *kBody = R"({"inputs":[{"name":"x","shape":[1,2],"datatype":"FP32","data":[1.5,-2]}]})";

class HttpCorsTest : public ::testing::Test {
protected:
  void TearDown() override {
    if (server_)
      server_->shutdown();
  }

  void start(std::vector<std::string> origins) {
    frontend::HttpServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.cors_allowed_origins = std::move(origins);
    server_ = std::make_unique<frontend::HttpServer>(options, service_, protocol::noModelControl());
    ASSERT_TRUE(server_->start().isOk());
  }

  httplib::Result preflight(const std::string &path, const std::string &origin) {
    httplib::Client c("127.0.0.1", server_->port());
    return c.Options(path, {{"Origin", origin},
                            {"Access-Control-Request-Method", "POST"},
                            {"Access-Control-Request-Headers", "content-type"}});
  }

  httplib::Result infer(const std::string &origin) {
    httplib::Client c("127.0.0.1", server_->port());
    return c.Post("/v2/models/double/infer", {{"Origin", origin}}, kBody, "application/json");
  }

  static void expectNoCors(const httplib::Result &r) {
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin"));
    EXPECT_FALSE(r->has_header("Access-Control-Allow-Methods"));
    EXPECT_FALSE(r->has_header("Vary"));
  }

  FakeService service_;
  std::unique_ptr<frontend::HttpServer> server_;
};

TEST_F(HttpCorsTest, OffByDefault) {
  start({});
  auto p = preflight("/v2/models/double/infer", kApp);
  expectNoCors(p);
  EXPECT_EQ(p->status, 405);
  EXPECT_EQ(p->get_header_value("Allow"), "POST");
  auto r = infer(kApp);
  expectNoCors(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpCorsTest, PreflightFromAnAllowedOriginIsAnswered) {
  start({"http://other.example", kApp});
  auto p = preflight("/v2/models/double/infer", kApp);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 204);
  EXPECT_EQ(p->body, "");
  EXPECT_EQ(p->get_header_value("Access-Control-Allow-Origin"), kApp);
  EXPECT_EQ(p->get_header_value("Access-Control-Allow-Methods"), "POST");
  EXPECT_EQ(p->get_header_value("Access-Control-Allow-Headers"),
            "Content-Type, Content-Encoding, Inference-Header-Content-Length");
  EXPECT_EQ(p->get_header_value("Access-Control-Max-Age"), "600");
  EXPECT_EQ(p->get_header_value("Vary"), "Origin");
  // A GET path names its method; a path no route serves is 404 as without CORS.
  p = preflight("/v2/models/double", kApp);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 204);
  EXPECT_EQ(p->get_header_value("Access-Control-Allow-Methods"), "GET");
  p = preflight("/nowhere", kApp);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 404);
}

TEST_F(HttpCorsTest, RepliesToAnAllowedOriginCarryItErrorsIncluded) {
  start({kApp});
  auto r = infer(kApp);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), kApp);
  EXPECT_EQ(r->get_header_value("Access-Control-Expose-Headers"),
            "Inference-Header-Content-Length");
  EXPECT_EQ(r->get_header_value("Vary"), "Origin");
  httplib::Client c("127.0.0.1", server_->port());
  auto missing = c.Get("/v2/models/nope", {{"Origin", kApp}});
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->get_header_value("Access-Control-Allow-Origin"), kApp);
  auto bad = c.Post("/v2/models/double/infer", {{"Origin", kApp}}, "{", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(bad->get_header_value("Access-Control-Allow-Origin"), kApp);
}

TEST_F(HttpCorsTest, OtherOriginsGetNothing) {
  start({kApp});
  auto p = preflight("/v2/models/double/infer", "https://evil.example");
  expectNoCors(p);
  EXPECT_EQ(p->status, 405);
  auto r = infer("https://app.example.com.evil.example");
  expectNoCors(r);
  EXPECT_EQ(r->status, 200);
  httplib::Client c("127.0.0.1", server_->port());
  auto no_origin = c.Post("/v2/models/double/infer", kBody, "application/json");
  expectNoCors(no_origin);
}

TEST_F(HttpCorsTest, StarAllowsEveryOrigin) {
  start({"*"});
  auto r = infer("http://localhost:3000");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "http://localhost:3000");
  auto p = preflight("/v2/health/ready", "null");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 204);
  EXPECT_EQ(p->get_header_value("Access-Control-Allow-Origin"), "null");
}

} // namespace
} // namespace rs::server
