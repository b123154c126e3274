//===- test/common/test_worker.cc - A real worker on loopback for tests ----===//
#include "common/test_worker.h"

namespace rs::testing {

Result<config::WorkerConfig> firstWorker(const std::string &yaml, const std::string &file,
                                         const config::Environment &env) {
  RS_ASSIGN_OR_RETURN(config::NodeConfig node, config::parseNodeFile(yaml, file, env));
  return config::resolveWorker(node, 0);
}

Result<std::unique_ptr<server::Worker>>
startWorker(const config::WorkerConfig &config, int64_t weight_arena_bytes,
            std::function<void(const std::string &)> before_dispatch) {
  auto worker = std::make_unique<server::Worker>(server::WorkerOptions{
      .config = config, .ephemeral_ports = true, .before_dispatch = std::move(before_dispatch)});
  if (weight_arena_bytes > 0)
    worker->setWeightArenaBytes(weight_arena_bytes);
  RS_RETURN_IF_ERROR(worker->start());
  return worker;
}

Result<std::unique_ptr<TestWorker>>
TestWorker::start(const config::WorkerConfig &config, int64_t weight_arena_bytes,
                  std::function<void(const std::string &)> before_dispatch) {
  auto t = std::unique_ptr<TestWorker>(new TestWorker());
  RS_ASSIGN_OR_RETURN(t->worker_,
                      startWorker(config, weight_arena_bytes, std::move(before_dispatch)));
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  t->channel_ =
      grpc::CreateCustomChannel(t->grpcTarget(), grpc::InsecureChannelCredentials(), args);
  t->stub_ = inference::GRPCInferenceService::NewStub(t->channel_);
  return t;
}

TestWorker::~TestWorker() {
  if (worker_)
    worker_->shutdown();
}

std::string TestWorker::grpcTarget() const {
  return "127.0.0.1:" + std::to_string(worker_->grpcPort());
}

std::unique_ptr<httplib::Client> TestWorker::http() const {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", worker_->httpPort());
  c->set_read_timeout(60, 0);
  return c;
}

std::unique_ptr<httplib::Client> TestWorker::metrics() const {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", worker_->metricsPort());
  c->set_read_timeout(60, 0);
  return c;
}

std::string TestWorker::scrape() const {
  auto r = metrics()->Get("/metrics");
  return r && r->status == 200 ? r->body : std::string();
}

grpc::Status TestWorker::infer(const inference::ModelInferRequest &msg,
                               inference::ModelInferResponse *reply) {
  grpc::ClientContext ctx;
  return stub_->ModelInfer(&ctx, msg, reply);
}

} // namespace rs::testing
