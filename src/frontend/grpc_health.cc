//===- frontend/grpc_health.cc - grpc.health.v1.Health from the service --------===//
#include "frontend/grpc_health.h"

#include <grpcpp/health_check_service_interface.h>

#include <map>

namespace rs::frontend {

GrpcHealthPublisher::GrpcHealthPublisher(grpc::HealthCheckServiceInterface &health,
                                         const protocol::InferenceService &service,
                                         const protocol::ModelControl &control,
                                         std::chrono::milliseconds period)
    : health_(health), service_(service), control_(control) {
  refresh();
  if (period.count() > 0)
    thread_ = std::thread([this, period] {
      std::unique_lock<std::mutex> lock(stop_mu_);
      while (!stop_cv_.wait_for(lock, period, [this] { return stop_; })) {
        lock.unlock();
        refresh();
        lock.lock();
      }
    });
}

GrpcHealthPublisher::~GrpcHealthPublisher() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void GrpcHealthPublisher::refresh() {
  std::lock_guard<std::mutex> lock(refresh_mu_);
  std::map<std::string, bool> now;
  for (const protocol::ModelIndexEntry &m : control_.listModels())
    now[m.name] = m.ready;
  for (auto &[name, serving] : published_)
    if (name != "" && !now.count(name))
      now[name] = false; // a model that left the index stops serving
  now[""] = service_.serverReady();
  for (const auto &[name, serving] : now) {
    auto it = published_.find(name);
    if (it != published_.end() && it->second == serving)
      continue;
    health_.SetServingStatus(name, serving);
    published_[name] = serving;
  }
}

} // namespace rs::frontend
