//===- gateway/gateway_prober.cc - Discovery, health and repacks ------------===//
#include "gateway/gateway_impl.h"

#include "frontend/grpc_health.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

namespace rs::gateway {
namespace {

constexpr auto kProbeTimeout = std::chrono::seconds(5);
constexpr auto kProbeWatchdog = std::chrono::seconds(8);
constexpr auto kRefreshMinInterval = std::chrono::seconds(1);
/// The probe interval while some worker is not ready.
constexpr auto kNotReadyInterval = std::chrono::milliseconds(1000);

} // namespace

// ---- Impl: prober -------------------------------------------------------------------

void Gateway::Impl::probeNow() { probeRound(); }

void Gateway::Impl::proberLoop() {
  const auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(config_.health_interval_seconds));
  while (true) {
    // A worker that is not ready (starting, restarting) is asked again within a second.
    bool all_ready = true;
    for (size_t w = 0; w < links_.size(); ++w)
      all_ready = all_ready && router_.workerReady(w);
    const auto wait = all_ready ? interval : std::min(interval, kNotReadyInterval);
    {
      std::unique_lock lock(probe_mu_);
      probe_cv_.wait_for(lock, wait, [this] { return stopping_ || round_wanted_; });
      if (stopping_)
        return;
      round_wanted_ = false;
      round_running_ = true;
    }
    probeRound();
    std::vector<std::function<void()>> waiters;
    {
      std::lock_guard lock(probe_mu_);
      round_running_ = false;
      ++rounds_done_;
      last_round_end_ = Clock::now();
      waiters.swap(after_round_);
    }
    for (auto &f : waiters)
      f();
  }
}

void Gateway::Impl::probeRound() {
  std::lock_guard round(round_mu_);
  const Clock::time_point started = Clock::now();
  std::set<std::string> have;
  {
    std::lock_guard lock(meta_mu_);
    for (const auto &[name, md] : metadata_)
      have.insert(name);
  }
  std::vector<ProbeResult> results(links_.size());
  {
    std::vector<std::thread> threads;
    for (size_t w = 0; w < links_.size(); ++w)
      threads.emplace_back(
          [&, w] { results[w] = links_[w]->probe(have, kProbeTimeout, kProbeWatchdog); });
    for (auto &t : threads)
      t.join();
  }
  bool any_answered = false, all_timed_out = !links_.empty();
  for (size_t w = 0; w < links_.size(); ++w) {
    ProbeResult &r = results[w];
    any_answered = any_answered || r.snapshot.answered;
    all_timed_out = all_timed_out && r.timed_out && !r.snapshot.answered;
    if (r.timed_out) {
      spdlog::warn("gateway: probe of worker '{}' timed out; reconnecting", links_[w]->name());
      links_[w]->reconnect();
    }
    {
      std::lock_guard lock(meta_mu_);
      for (auto &[name, md] : r.metadata)
        metadata_.emplace(name, std::move(md));
    }
    answered_once_[w] = answered_once_[w] || r.snapshot.answered;
    std::vector<std::string> models;
    for (const auto &[name, info] : r.snapshot.models)
      models.push_back(name);
    const bool ready = r.snapshot.answered && r.snapshot.ready;
    last_errors_[w] = r.error;
    router_.updateWorker(w, std::move(r.snapshot), started);
    if (ready != was_ready_[w]) {
      if (ready)
        spdlog::info("gateway: worker '{}' ({}) ready models={}", links_[w]->name(),
                     links_[w]->endpoint(), fmt::format("[{}]", fmt::join(models, ", ")));
      else
        spdlog::warn("gateway: worker '{}' ({}) not ready: {}", links_[w]->name(),
                     links_[w]->endpoint(), r.error.empty() ? "ServerReady false" : r.error);
      was_ready_[w] = ready;
    }
  }
  if (any_answered) {
    contacted_ = true;
    wedged_rounds_ = 0;
  } else if (all_timed_out) {
    ++wedged_rounds_;
  }
  if (contacted_ && config_.wedge_exit_rounds > 0 && wedged_rounds_ >= config_.wedge_exit_rounds &&
      !fatal_reported_.exchange(true)) {
    Status s = unavailable() << "gateway: every worker probe timed out for " << wedged_rounds_
                             << " consecutive rounds (wedged transport)";
    spdlog::error("{}", s.message());
    if (on_fatal_)
      on_fatal_(s);
  }
  if (health_) // the statuses follow this round's view at once
    health_->refresh();
  if (std::optional<RepackOutcome> outcome = router_.tick(Clock::now()))
    afterRepack(*outcome);
  if (!startup_checked_ &&
      std::all_of(answered_once_.begin(), answered_once_.end(), [](bool b) { return b; })) {
    startup_checked_ = true;
    std::vector<std::string> errors = router_.startupErrors();
    if (!errors.empty() && !fatal_reported_.exchange(true)) {
      const std::string all = fmt::to_string(fmt::join(errors, "; "));
      Status s = failedPrecondition() << all;
      spdlog::error("gateway: {}", all);
      if (on_fatal_)
        on_fatal_(s);
    }
  }
}

void Gateway::Impl::refreshThen(std::function<void()> then) {
  {
    std::lock_guard lock(probe_mu_);
    const bool fresh =
        rounds_done_ > 0 && !round_running_ && Clock::now() - last_round_end_ < kRefreshMinInterval;
    if (!stopping_ && !fresh) {
      after_round_.push_back(std::move(then));
      round_wanted_ = true;
      probe_cv_.notify_all();
      return;
    }
  }
  then();
}

void Gateway::Impl::afterRepack(const RepackOutcome &o) {
  spdlog::info("lpt_packing: repack trigger={} models_placed={} moved={} held_by_hysteresis={} "
               "max_improvement={:.4f} compute_seconds={:.6f} wall_seconds={:.3f}",
               o.trigger, o.models_placed, o.models_moved, o.held_by_hysteresis, o.max_improvement,
               o.compute_seconds, o.wall_seconds);
  for (const std::string &w : o.warnings)
    spdlog::warn("lpt_packing: {}", w);
  for (const auto &[w, reload] : o.compactions) {
    struct Compact {
      grpc::ClientContext ctx;
      reactant_control::CompactMemoryRequest req;
      reactant_control::CompactMemoryResponse resp;
      std::shared_ptr<Connection> conn;
    };
    auto c = std::make_shared<Compact>();
    for (const std::string &m : reload)
      c->req.add_reload_models(m);
    c->ctx.set_deadline(
        std::chrono::system_clock::now() +
        std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::duration<double>(std::max(config_.request_timeout_seconds, 300.0))));
    c->conn = links_[w]->connection();
    const std::string name = links_[w]->name();
    callStarted();
    c->conn->control->async()->CompactMemory(&c->ctx, &c->req, &c->resp,
                                             [this, c, name](grpc::Status s) {
                                               if (s.ok())
                                                 spdlog::info("lpt_packing: CompactMemory on "
                                                              "worker '{}' reloaded {}",
                                                              name, c->resp.reloaded_models());
                                               else
                                                 spdlog::warn("lpt_packing: CompactMemory on "
                                                              "worker '{}' failed: {}",
                                                              name, s.error_message());
                                               callEnded();
                                             });
  }
}

} // namespace rs::gateway
