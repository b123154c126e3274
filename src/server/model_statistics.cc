//===- server/model_statistics.cc - Triton ModelStatistics per model --------===//
#include "server/model_statistics.h"

#include <chrono>

namespace rs::server {

void ModelStatisticsTable::observeDispatch(const scheduler::DispatchStats &s) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry &e = entries_[s.model];
  protocol::ModelStatistics &m = e.stats;
  for (double wait : s.queue_wait_seconds) {
    m.queue.add(wait);
    m.compute_input.add(s.input_seconds);
    m.compute_infer.add(s.compute_seconds);
    m.compute_output.add(s.output_seconds);
  }
  if (!s.ok)
    return;
  ++m.execution_count;
  m.inference_count += static_cast<uint64_t>(s.rows);
  protocol::BatchStatistics &b = e.batches[s.batch_size];
  b.batch_size = static_cast<uint64_t>(s.batch_size);
  b.compute_input.add(s.input_seconds);
  b.compute_infer.add(s.compute_seconds);
  b.compute_output.add(s.output_seconds);
}

void ModelStatisticsTable::requestFinished(const std::string &model, bool ok, double seconds) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  std::lock_guard<std::mutex> lock(mu_);
  protocol::ModelStatistics &m = entries_[model].stats;
  (ok ? m.success : m.fail).add(seconds);
  m.last_inference_ms =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

void ModelStatisticsTable::rename(const std::string &from, const std::string &to) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(from);
  if (it == entries_.end())
    return;
  Entry moved = std::move(it->second);
  entries_.erase(it);
  entries_[to] = std::move(moved);
}

void ModelStatisticsTable::erase(const std::string &model) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.erase(model);
}

protocol::ModelStatistics ModelStatisticsTable::get(const std::string &model) const {
  std::lock_guard<std::mutex> lock(mu_);
  protocol::ModelStatistics out;
  auto it = entries_.find(model);
  if (it != entries_.end()) {
    out = it->second.stats;
    for (const auto &[size, b] : it->second.batches)
      out.batch_stats.push_back(b);
  }
  out.name = model;
  out.version = std::string(std::string_view(protocol::kModelVersion));
  return out;
}

} // namespace rs::server
