//===- test/hardening/metrics_test.cc - /metrics: names, labels, promtool, Prometheus
//
// The exposition is checked three ways: every series of docs/metrics.md with its type and
// labels and the values one request leaves; `promtool check metrics` (Debian package
// `prometheus`, unpacked by scripts/setup.sh) accepts it with no lint message; and a real
// Prometheus server started on loopback scrapes it with target health "up" and no error.
//
//===----------------------------------------------------------------------===//
#include "client/load_generator.h"
#include "process_util.h"
#include "shm_util.h"
#include "worker_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace rs::testing {
namespace {

namespace fs = std::filesystem;

/// scripts/setup.sh unpacks Debian's prometheus package into .tools/prometheus; an
/// installed package is used otherwise.
std::string tool(const std::string &name) {
  const std::string unpacked = std::string(RS_SOURCE_DIR) + "/.tools/prometheus/usr/bin/" + name;
  return fs::exists(unpacked) ? unpacked : "/usr/bin/" + name;
}
const std::string kPromtool = tool("promtool");
const std::string kPrometheus = tool("prometheus");

/// A worker after some traffic: one valid request, one for an unknown model, one region.
class MetricsTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    worker_ = startHardeningWorker(kIrisRepo).release();
    ASSERT_TRUE(worker_);
    inference::ModelInferResponse reply;
    ASSERT_TRUE(worker_->infer(irisRequest(irisRow()), &reply).ok());
    inference::ModelInferRequest unknown = irisRequest(irisRow());
    unknown.set_model_name("not_a_model");
    ASSERT_FALSE(worker_->infer(unknown, &reply).ok());
    object_ = new ShmObject(256);
    ASSERT_TRUE(worker_->service()
                    .sharedMemory()
                    .registerRegion(kPeer, {"r", object_->key(), 0, 64})
                    .isOk());
    text_ = new std::string(worker_->scrape());
  }
  static void TearDownTestSuite() {
    delete worker_;
    delete object_;
    delete text_;
  }

  static TestWorker *worker_;
  static ShmObject *object_;
  static std::string *text_;
};
TestWorker *MetricsTest::worker_ = nullptr;
ShmObject *MetricsTest::object_ = nullptr;
std::string *MetricsTest::text_ = nullptr;

/// "# TYPE name type" lines of an exposition.
std::map<std::string, std::string> typesOf(const std::string &text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) != 0)
      continue;
    std::istringstream words(line.substr(7));
    std::string name, type;
    words >> name >> type;
    out[name] = type;
  }
  return out;
}

TEST_F(MetricsTest, EverySeriesWithItsType) {
  const std::map<std::string, std::string> want = {
      {"worker_requests_total", "counter"},
      {"worker_request_latency_seconds", "histogram"},
      {"worker_request_queue_seconds", "histogram"},
      {"worker_request_compute_seconds", "histogram"},
      {"worker_batch_size", "histogram"},
      {"worker_request_stage_seconds_total", "counter"},
      {"worker_queue_depth", "gauge"},
      {"worker_queue_wait_seconds", "summary"},
      {"worker_dispatch_total", "counter"},
      {"worker_compute_seconds_total", "counter"},
      {"worker_requests_served_total", "counter"},
      {"worker_rows_served_total", "counter"},
      {"worker_model_resident", "gauge"},
      {"worker_model_pinned", "gauge"},
      {"worker_model_weight_bytes", "gauge"},
      {"worker_model_max_batch_size", "gauge"},
      {"worker_models_loaded", "gauge"},
      {"worker_models_resident", "gauge"},
      {"worker_resident_weight_bytes", "gauge"},
      // The weight cache (on by default: its pool is 90 % of host memory).
      {"worker_weight_cache_resident_bytes", "gauge"},
      {"worker_weight_cache_max_bytes", "gauge"},
      {"worker_weight_cache_pinned_bytes", "gauge"},
      {"worker_weight_cache_peak_resident_bytes", "gauge"},
      {"worker_weight_pool_bytes", "gauge"},
      {"worker_weight_loads_total", "counter"},
      {"worker_weight_evicts_total", "counter"},
      {"worker_weight_load_seconds_total", "counter"},
      {"worker_info", "gauge"},
      {"worker_inflight_requests", "gauge"},
      {"worker_requests_shed_total", "counter"},
      {"worker_max_concurrent_requests", "gauge"},
      {"worker_executable_cache_misses_total", "counter"},
      {"worker_executable_cache_hits_total", "counter"},
      {"worker_shared_memory_regions", "gauge"},
      {"worker_shared_memory_bytes", "gauge"},
      {"worker_request_log_suppressed_total", "counter"},
      {"worker_model_state", "gauge"},
      {"reactant_server_build_info", "gauge"},
      {"process_cpu_seconds_total", "counter"},
      {"process_resident_memory_bytes", "gauge"},
      {"process_virtual_memory_bytes", "gauge"},
      {"process_open_fds", "gauge"},
      {"process_max_fds", "gauge"},
      {"process_start_time_seconds", "gauge"},
  };
  std::map<std::string, std::string> got = typesOf(*text_);
  for (const auto &[name, type] : want)
    EXPECT_EQ(got[name], type) << name;
  EXPECT_EQ(got.size(), want.size());
}

TEST_F(MetricsTest, EverySampleCarriesWorkerAndGpu) {
  std::istringstream in(*text_);
  std::string line;
  int samples = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    ++samples;
    EXPECT_NE(line.find("worker=\"worker0\""), std::string::npos) << line;
    EXPECT_NE(line.find("gpu=\""), std::string::npos) << line;
  }
  EXPECT_GT(samples, 60);
}

TEST_F(MetricsTest, ValuesAfterOneRequest) {
  auto value = [&](const std::string &series) {
    std::optional<double> v = client::scrapeValue(*text_, series);
    return v ? *v : -1.0;
  };
  // prometheus-cpp writes the constant labels first, then the series' own.
  const std::string w = "gpu=\"\",worker=\"worker0\"";
  const std::string m = w + ",model=\"iris_mlp\"";
  auto has = [&](const std::string &line) { return text_->find(line + "\n") != std::string::npos; };
  EXPECT_TRUE(has("worker_requests_total{" + m + ",status=\"OK\"} 1")) << *text_;
  EXPECT_TRUE(has("worker_requests_total{" + w + ",model=\"\",status=\"NOT_FOUND\"} 1"));
  EXPECT_TRUE(has("worker_dispatch_total{" + m + "} 1"));
  EXPECT_TRUE(has("worker_requests_served_total{" + m + "} 1"));
  EXPECT_TRUE(has("worker_rows_served_total{" + m + "} 1"));
  EXPECT_TRUE(has("worker_batch_size_count{" + m + "} 1"));
  EXPECT_TRUE(has("worker_batch_size_bucket{" + m + ",le=\"1\"} 1"));
  EXPECT_TRUE(has("worker_request_queue_seconds_count{" + m + "} 1"));
  EXPECT_TRUE(has("worker_request_compute_seconds_count{" + m + "} 1"));
  EXPECT_TRUE(has("worker_request_latency_seconds_count{" + m + "} 1"));
  EXPECT_TRUE(has("worker_request_latency_seconds_bucket{" + m + ",le=\"+Inf\"} 1"));
  EXPECT_TRUE(has("worker_request_latency_seconds_bucket{" + m + ",le=\"8.192\"} 1"));
  EXPECT_TRUE(has("worker_queue_depth{" + m + "} 0"));
  EXPECT_TRUE(has("worker_model_resident{" + m + "} 1"));
  EXPECT_TRUE(has("worker_model_pinned{" + m + "} 0"));
  EXPECT_TRUE(has("worker_model_max_batch_size{" + m + "} 32"));
  EXPECT_TRUE(has("worker_model_weight_bytes{" + m + "} 524")); // 4*16 + 16 + 16*3 + 3 floats
  EXPECT_TRUE(has("worker_models_loaded{" + w + "} 1"));
  EXPECT_TRUE(has("worker_models_resident{" + w + "} 1"));
  EXPECT_TRUE(has("worker_resident_weight_bytes{" + w + "} 524"));
  EXPECT_TRUE(has("worker_inflight_requests{" + w + "} 0"));
  EXPECT_TRUE(has("worker_max_concurrent_requests{" + w + "} 64")); // the reference default
  EXPECT_TRUE(has("worker_shared_memory_regions{" + w + "} 1"));
  EXPECT_TRUE(has("worker_shared_memory_bytes{" + w + "} 64"));
  EXPECT_TRUE(has("worker_executable_cache_misses_total{" + w + "} 3")); // cache off: b1 b8 b32
  EXPECT_TRUE(has("worker_info{" + w +
                  ",control_mode=\"dynamic\",device_ordinal=\"0\","
                  "discipline=\"fair\",residency_mode=\"self_managed\"} 1"));
  EXPECT_TRUE(has("worker_queue_wait_seconds_count{" + m + "} 1"));
  // The CPU backend does not split its run: decode, queue, gather, execute, scatter and
  // encode are measured, upload and readback are not exported.
  for (const char *stage : {"decode", "execute", "encode"})
    EXPECT_GT(value("worker_request_stage_seconds_total{" + m + ",stage=\"" + stage + "\"}"), 0)
        << stage;
  EXPECT_EQ(text_->find("stage=\"upload\""), std::string::npos);
  EXPECT_NE(text_->find("reactant_server_build_info{" + w + ",build_type=\""), std::string::npos);
  EXPECT_GT(value("process_resident_memory_bytes"), 1e6);
  EXPECT_GT(value("process_open_fds"), 3);
  EXPECT_GT(value("process_start_time_seconds"), 1.5e9);
  EXPECT_EQ(text_->find("not_a_model"), std::string::npos);
}

TEST_F(MetricsTest, PromtoolAcceptsTheExposition) {
  ASSERT_TRUE(fs::exists(kPromtool)) << "run scripts/setup.sh (it unpacks Debian's prometheus)";
  const fs::path file =
      fs::temp_directory_path() / ("rs_hardening_metrics_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(file) << *text_;
  auto [status, output] = runCommand(kPromtool + " check metrics < " + file.string());
  fs::remove(file);
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output, ""); // no lint message either
}

TEST_F(MetricsTest, PrometheusScrapesIt) {
  ASSERT_TRUE(fs::exists(kPrometheus)) << "run scripts/setup.sh (it unpacks Debian's prometheus)";
  const fs::path dir =
      fs::temp_directory_path() / ("rs_hardening_prometheus_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "data");
  const int port = freePort();
  ASSERT_GT(port, 0);
  std::ofstream(dir / "prometheus.yml")
      << "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
      << "scrape_configs:\n"
      << "  - job_name: worker\n"
      << "    static_configs: [{targets: ['127.0.0.1:" << worker_->worker().metricsPort()
      << "']}]\n";
  pid_t pid = spawnProcess({kPrometheus, "--config.file=" + (dir / "prometheus.yml").string(),
                            "--storage.tsdb.path=" + (dir / "data").string(),
                            "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                           (dir / "prometheus.log").string());
  ASSERT_GT(pid, 0);
  httplib::Client api("127.0.0.1", port);
  api.set_connection_timeout(1, 0);
  // Wait (polling, up to a minute) for a scrape to have happened: Prometheus is another
  // process, and its API is the only way to see its scrapes.
  nlohmann::json target;
  for (int i = 0; i < 600 && target.is_null(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto r = api.Get("/api/v1/targets");
    if (!r || r->status != 200)
      continue;
    nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded())
      continue;
    for (const auto &t : j["data"]["activeTargets"])
      if (t.value("health", "") != "unknown")
        target = t;
  }
  ASSERT_FALSE(target.is_null()) << readFile((dir / "prometheus.log").string());
  EXPECT_EQ(target.value("health", ""), "up") << target.dump();
  EXPECT_EQ(target.value("lastError", "?"), "") << target.dump();
  // The scraped values are queryable.
  auto r = api.Get("/api/v1/query?query=worker_models_loaded");
  ASSERT_TRUE(r);
  nlohmann::json q = nlohmann::json::parse(r->body, nullptr, false);
  ASSERT_FALSE(q.is_discarded()) << r->body;
  ASSERT_EQ(q["data"]["result"].size(), 1u) << r->body;
  EXPECT_EQ(q["data"]["result"][0]["value"][1], "1");
  EXPECT_EQ(q["data"]["result"][0]["metric"]["worker"], "worker0");
  ::kill(pid, SIGTERM);
  EXPECT_EQ(waitProcess(pid), 0);
  fs::remove_all(dir);
}

} // namespace
} // namespace rs::testing
