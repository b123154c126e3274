//===- gateway/statistics_sum.cc - One model's statistics over its workers --===//
#include "gateway/statistics_sum.h"

#include <algorithm>
#include <map>
#include <string>

namespace rs::gateway {
namespace {

void add(protocol::DurationStat &into, const protocol::DurationStat &d) {
  into.count += d.count;
  into.ns += d.ns;
}

void add(protocol::BatchStatistics &into, const protocol::BatchStatistics &b) {
  add(into.compute_input, b.compute_input);
  add(into.compute_infer, b.compute_infer);
  add(into.compute_output, b.compute_output);
}

void add(protocol::ModelStatistics &into, const protocol::ModelStatistics &m) {
  into.last_inference_ms = std::max(into.last_inference_ms, m.last_inference_ms);
  into.inference_count += m.inference_count;
  into.execution_count += m.execution_count;
  add(into.success, m.success);
  add(into.fail, m.fail);
  add(into.queue, m.queue);
  add(into.compute_input, m.compute_input);
  add(into.compute_infer, m.compute_infer);
  add(into.compute_output, m.compute_output);
}

} // namespace

std::vector<protocol::ModelStatistics>
sumModelStatistics(const std::vector<std::vector<protocol::ModelStatistics>> &per_worker) {
  struct Sum {
    protocol::ModelStatistics stats;
    std::map<uint64_t, protocol::BatchStatistics> batches;
  };
  std::map<std::string, Sum> by_model;
  for (const std::vector<protocol::ModelStatistics> &worker : per_worker)
    for (const protocol::ModelStatistics &m : worker) {
      auto [it, first] = by_model.try_emplace(m.name);
      Sum &sum = it->second;
      if (first) {
        sum.stats.name = m.name;
        sum.stats.version = m.version;
      }
      add(sum.stats, m);
      for (const protocol::BatchStatistics &b : m.batch_stats) {
        protocol::BatchStatistics &into = sum.batches[b.batch_size];
        into.batch_size = b.batch_size;
        add(into, b);
      }
    }
  std::vector<protocol::ModelStatistics> out;
  for (auto &[name, sum] : by_model) {
    for (auto &[size, b] : sum.batches)
      sum.stats.batch_stats.push_back(b);
    out.push_back(std::move(sum.stats));
  }
  return out;
}

} // namespace rs::gateway
