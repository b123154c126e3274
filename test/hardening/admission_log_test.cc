//===- test/hardening/admission_log_test.cc - Admission and request error log --===//
#include "client/load_generator.h"
#include "frontend/request_log.h"
#include "server/admission.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>

namespace rs::server {
namespace {

using namespace std::chrono_literals;

TEST(Admission, CapShedsAndCounts) {
  Admission a(2);
  EXPECT_TRUE(a.acquire().isOk());
  EXPECT_TRUE(a.acquire().isOk());
  Status s = a.acquire();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "server is at its limit of 2 concurrent requests "
                         "(endpoints.max_concurrent_requests)");
  EXPECT_EQ(a.inflight(), 2);
  EXPECT_EQ(a.shed(), 1u);
  a.release();
  EXPECT_TRUE(a.acquire().isOk());
  EXPECT_EQ(a.maxConcurrent(), 2);
}

TEST(Admission, ZeroIsUncapped) {
  Admission a(0);
  for (int i = 0; i < 1000; ++i)
    ASSERT_TRUE(a.acquire().isOk());
  EXPECT_EQ(a.inflight(), 1000);
  EXPECT_EQ(a.shed(), 0u);
}

TEST(Admission, DrainRefusesNewAndWaitsForAdmitted) {
  Admission a(0);
  ASSERT_TRUE(a.acquire().isOk());
  a.beginDrain();
  EXPECT_TRUE(a.draining());
  Status s = a.acquire();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "server is shutting down");
  EXPECT_FALSE(a.waitIdle(std::chrono::steady_clock::now()));
  auto idle = std::async(std::launch::async,
                         [&] { return a.waitIdle(std::chrono::steady_clock::now() + 3600s); });
  a.release();
  EXPECT_TRUE(idle.get());
  EXPECT_EQ(a.inflight(), 0);
}

TEST(RequestErrorLog, FormatQuotesAndCuts) {
  EXPECT_EQ(
      frontend::formatFailedRequest({"http", "m", "7"}, invalidArgument() << "bad \"x\"\nline 2"),
      "request failed protocol=http model=\"m\" id=\"7\" code=INVALID_ARGUMENT "
      "reason=\"bad \\\"x\\\"\\nline 2\"");
  std::string line = frontend::formatFailedRequest({"grpc", std::string(500, 'a'), ""}, Status());
  EXPECT_NE(line.find("model=\"" + std::string(128, 'a') + "...\" id=\"\" code=OK"),
            std::string::npos);
  EXPECT_EQ(
      frontend::formatFailedRequest({"grpc", "m", ""}, internalError() << std::string(2000, 'r'))
          .size(),
      std::string("request failed protocol=grpc model=\"m\" id=\"\" code=INTERNAL reason=\"")
              .size() +
          1024 + 4);
}

TEST(RequestErrorLog, RateLimitCountsWhatItDrops) {
  auto t = std::chrono::steady_clock::time_point() + 1000s;
  frontend::RequestLogOptions o;
  o.lines_per_second = 2;
  o.burst = 3;
  o.now = [&] { return t; };
  frontend::RequestErrorLog log(o);
  const Status err = invalidArgument() << "nope";
  int logged = 0;
  for (int i = 0; i < 10; ++i)
    logged += log.log({"grpc", "m", std::to_string(i)}, err).empty() ? 0 : 1;
  EXPECT_EQ(logged, 3);
  EXPECT_EQ(log.suppressed(), 7u);
  t += 500ms; // one token back
  std::string line = log.log({"grpc", "m", "x"}, err);
  EXPECT_EQ(line, "request failed protocol=grpc model=\"m\" id=\"x\" code=INVALID_ARGUMENT "
                  "reason=\"nope\" suppressed=7");
  EXPECT_EQ(log.log({"grpc", "m", "y"}, err), "");
  t += 3600s; // refills to the burst, not beyond
  for (int i = 0; i < 5; ++i)
    log.log({"grpc", "m", "z"}, err);
  EXPECT_EQ(log.logged(), 4u + 3u);
  EXPECT_EQ(log.suppressed(), 7u + 1u + 2u);
}

TEST(Loadgen, QuantilesAndScrape) {
  std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(client::quantileOf(v, 0.5), 5);
  EXPECT_EQ(client::quantileOf(v, 0.9), 9);
  EXPECT_EQ(client::quantileOf(v, 0.99), 10);
  EXPECT_EQ(client::quantileOf(v, 1.0), 10);
  EXPECT_EQ(client::quantileOf({}, 0.5), 0);
  const std::string text = "# HELP x y\nprocess_resident_memory_bytes_x 7\n"
                           "process_resident_memory_bytes{gpu=\"\",worker=\"w\"} 1.5e+07\n";
  EXPECT_EQ(client::scrapeValue(text, "process_resident_memory_bytes"), 1.5e7);
  EXPECT_EQ(client::scrapeValue(text, "missing"), std::nullopt);
}

} // namespace
} // namespace rs::server
