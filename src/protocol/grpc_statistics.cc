//===- protocol/grpc_statistics.cc - ModelStatistics <-> its gRPC message ---===//
//
// encodeModelStatistics and decodeModelStatistics (protocol/grpc_statistics.h): the worker
// answers ModelStatistics with the first, the gateway reads its workers' answers with the
// second.
//
//===----------------------------------------------------------------------===//
#include "protocol/grpc_statistics.h"

namespace rs::protocol {
namespace {

void encodeDuration(const DurationStat &d, inference::StatisticDuration *out) {
  out->set_count(d.count);
  out->set_ns(d.ns);
}

DurationStat decodeDuration(const inference::StatisticDuration &d) { return {d.count(), d.ns()}; }

} // namespace

void encodeModelStatistics(const std::vector<ModelStatistics> &stats,
                           inference::ModelStatisticsResponse *out) {
  out->Clear();
  for (const ModelStatistics &m : stats) {
    inference::ModelStatistics *o = out->add_model_stats();
    o->set_name(m.name);
    o->set_version(m.version);
    o->set_last_inference(m.last_inference_ms);
    o->set_inference_count(m.inference_count);
    o->set_execution_count(m.execution_count);
    inference::InferStatistics *is = o->mutable_inference_stats();
    encodeDuration(m.success, is->mutable_success());
    encodeDuration(m.fail, is->mutable_fail());
    encodeDuration(m.queue, is->mutable_queue());
    encodeDuration(m.compute_input, is->mutable_compute_input());
    encodeDuration(m.compute_infer, is->mutable_compute_infer());
    encodeDuration(m.compute_output, is->mutable_compute_output());
    for (const BatchStatistics &b : m.batch_stats) {
      inference::InferBatchStatistics *bs = o->add_batch_stats();
      bs->set_batch_size(b.batch_size);
      encodeDuration(b.compute_input, bs->mutable_compute_input());
      encodeDuration(b.compute_infer, bs->mutable_compute_infer());
      encodeDuration(b.compute_output, bs->mutable_compute_output());
    }
  }
}

std::vector<ModelStatistics> decodeModelStatistics(const inference::ModelStatisticsResponse &msg) {
  std::vector<ModelStatistics> out;
  for (const inference::ModelStatistics &m : msg.model_stats()) {
    ModelStatistics s;
    s.name = m.name();
    s.version = m.version();
    s.last_inference_ms = m.last_inference();
    s.inference_count = m.inference_count();
    s.execution_count = m.execution_count();
    const inference::InferStatistics &is = m.inference_stats();
    s.success = decodeDuration(is.success());
    s.fail = decodeDuration(is.fail());
    s.queue = decodeDuration(is.queue());
    s.compute_input = decodeDuration(is.compute_input());
    s.compute_infer = decodeDuration(is.compute_infer());
    s.compute_output = decodeDuration(is.compute_output());
    for (const inference::InferBatchStatistics &b : m.batch_stats())
      s.batch_stats.push_back({b.batch_size(), decodeDuration(b.compute_input()),
                               decodeDuration(b.compute_infer()),
                               decodeDuration(b.compute_output())});
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace rs::protocol
