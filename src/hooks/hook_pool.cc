//===- hooks/hook_pool.cc - The hook processes of one model -----------------===//
#include "hooks/hook_pool.h"

#include "support/digest.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <future>

namespace rs::hooks {
namespace {

namespace fs = std::filesystem;

/// True for files the server reads itself (hashed as the programs' and weights' evidence).
bool servedByServer(const fs::path &relative) {
  const std::string name = relative.string();
  return name == "manifest.yaml" || name == "weights.safetensors" ||
         (relative.parent_path().empty() && relative.extension() == ".mlir");
}

/// SHA-256 of model.py and every other bundle file the hooks may read, by relative path.
Result<std::map<std::string, std::string>> hookFiles(const std::string &dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  if (ec)
    return notFound() << dir << ": cannot list the bundle: " << ec.message();
  for (; it != end; it.increment(ec)) {
    if (ec)
      return notFound() << dir << ": cannot list the bundle: " << ec.message();
    const std::string leaf = it->path().filename().string();
    if (leaf.starts_with(".") || leaf == "__pycache__") {
      if (it->is_directory(ec))
        it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec))
      continue;
    // Lexically: a symlinked program file keeps its name in the bundle.
    const fs::path relative = it->path().lexically_relative(dir);
    if (relative.empty() || servedByServer(relative))
      continue;
    RS_ASSIGN_OR_RETURN(std::string digest, sha256OfFile(it->path().string()));
    files[relative.string()] = std::move(digest);
  }
  return files;
}

/// The identity of the hook environment and files (see the header). hooks.python_path and
/// hooks.allowed_packages enter only when set, so that a bundle served without them keeps
/// its identity (and its executable cache entries).
std::string identityOf(const HookHello &hello, const std::map<std::string, std::string> &files,
                       const HookOptions &options) {
  std::string text =
      "reactant hooks 1\n" + hello.implementation + " " + hello.python_version + "\n";
  for (const std::string &p : hello.packages)
    text += "package " + p + "\n";
  for (const std::string &dir : options.python_path)
    text += "python_path " + dir + "\n";
  for (const std::string &name : options.allowed_packages)
    text += "allowed_package " + name + "\n";
  for (const auto &[name, digest] : files)
    text += "file " + name + " " + digest + "\n";
  return sha256Hex(text);
}

} // namespace

Result<std::shared_ptr<HookPool>> HookPool::start(const std::string &name, const std::string &dir,
                                                  const HookOptions &options) {
  std::shared_ptr<HookPool> pool(new HookPool());
  State &state = *pool->state_;
  state.name = name;
  state.options = options;
  state.process_options = {.python = options.python,
                           .runner = options.runner,
                           .bundle_dir = dir,
                           .python_path = options.python_path,
                           .allowed_packages = options.allowed_packages,
                           .start_timeout = options.start_timeout};
  RS_ASSIGN_OR_RETURN(pool->files_, hookFiles(dir));
  std::vector<std::unique_ptr<HookProcess>> processes;
  for (int64_t i = 0; i < std::max<int64_t>(1, options.processes); ++i) {
    RS_ASSIGN_OR_RETURN(std::unique_ptr<HookProcess> p, HookProcess::start(state.process_options));
    processes.push_back(std::move(p));
  }
  pool->hello_ = processes.front()->hello();
  pool->identity_ = identityOf(pool->hello_, pool->files_, options);
  for (std::unique_ptr<HookProcess> &p : processes)
    pool->threads_.emplace_back([shared = pool->state_, process = std::move(p)]() mutable {
      serve(shared, std::move(process));
    });
  return pool;
}

HookPool::~HookPool() {
  std::deque<Job> left;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
    left.swap(state_->queue);
  }
  state_->cv.notify_all();
  for (std::thread &t : threads_) {
    if (t.get_id() == std::this_thread::get_id())
      t.detach(); // this thread's call let go of the pool; it returns once the call is done
    else
      t.join();
  }
  for (Job &job : left)
    job.done(unavailable() << stageName(job.stage) << ": model '" << state_->name
                           << "' is unloading: its hook processes stopped");
}

void HookPool::run(HookStage stage, Tensors inputs, std::optional<Clock::time_point> deadline,
                   Done done, SubCall sub) const {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->stopping) {
      state_->queue.push_back(
          {stage, std::move(inputs), deadline, std::move(done), std::move(sub)});
      done = nullptr;
    }
  }
  if (done) {
    done(unavailable() << stageName(stage) << ": model '" << state_->name
                       << "' is unloading: its hook processes stopped");
    return;
  }
  state_->cv.notify_one();
}

Result<HookPool::Tensors> HookPool::runNow(HookStage stage, Tensors inputs, SubCall sub) const {
  std::promise<Result<Tensors>> answer;
  run(
      stage, std::move(inputs), std::nullopt,
      [&answer](Result<Tensors> r) { answer.set_value(std::move(r)); }, std::move(sub));
  return answer.get_future().get();
}

HookPool::Batch HookPool::take(State &state, bool wait) {
  Batch batch;
  {
    std::unique_lock<std::mutex> lock(state.mu);
    if (wait)
      state.cv.wait(lock, [&] { return state.stopping || !state.queue.empty(); });
    if (state.stopping || state.queue.empty())
      return batch;
    batch.stage = state.queue.front().stage;
    for (auto it = state.queue.begin();
         it != state.queue.end() && batch.jobs.size() < kMaxCallsPerFrame;) {
      if (it->stage != batch.stage) {
        ++it;
        continue;
      }
      batch.jobs.push_back(std::move(*it));
      it = state.queue.erase(it);
    }
  }
  // Calls whose request deadline has passed fail without running; the frame's limit is
  // hooks.timeout_ms from now or the earliest request deadline of its calls.
  const std::string_view stage = stageName(batch.stage);
  const Clock::time_point now = Clock::now();
  batch.limit = now + state.options.timeout;
  batch.limit_text = "hooks.timeout_ms " + std::to_string(state.options.timeout.count());
  std::vector<Job> running;
  for (Job &job : batch.jobs) {
    if (job.deadline && *job.deadline <= now) {
      job.done(deadlineExceeded() << stage << ": the request's deadline passed while it "
                                  << "waited for a hook process");
      continue;
    }
    if (job.deadline && *job.deadline < batch.limit) {
      batch.limit = *job.deadline;
      batch.limit_text = "the request's deadline";
    }
    running.push_back(std::move(job));
  }
  batch.jobs = std::move(running);
  return batch;
}

std::string HookPool::overMemoryLimit(const State &state, const HookProcess &process) {
  const int64_t limit = state.options.max_memory_mb;
  if (limit <= 0)
    return {};
  const int64_t resident = process.residentBytes();
  if (resident <= limit * (int64_t{1} << 20))
    return {};
  return "hook process of model '" + state.name + "' used " + std::to_string(resident >> 20) +
         " MiB, above hooks.max_memory_mb " + std::to_string(limit) + ": restarted";
}

void HookPool::serve(const std::shared_ptr<State> &state, std::unique_ptr<HookProcess> process) {
  const std::string &model = state->name;
  Batch next;
  for (;;) {
    Batch batch = std::move(next);
    next = Batch();
    if (batch.jobs.empty()) {
      batch = take(*state, true);
      if (batch.jobs.empty()) {
        {
          std::lock_guard<std::mutex> lock(state->mu);
          if (state->stopping)
            return;
        }
        continue; // every call taken had passed its deadline
      }
    }
    const std::string_view stage = stageName(batch.stage);
    auto fail = [&](const Status &status) {
      for (Job &job : batch.jobs)
        job.done(status);
    };
    std::vector<const Tensors *> calls;
    for (const Job &job : batch.jobs)
      calls.push_back(&job.inputs);
    if (!batch.sent) {
      if (!process || !process->alive()) {
        Result<std::unique_ptr<HookProcess>> started = HookProcess::start(state->process_options);
        if (!started.isOk()) {
          spdlog::error("hook process restart failed model={} reason={}", model,
                        started.status().message());
          process.reset();
          fail(unavailable() << stage << ": the hook process could not be restarted: "
                             << started.status().message());
          continue;
        }
        process = std::move(*started);
        spdlog::info("hook process started model={} pid={}", model, process->pid());
      }
      batch.send_status = process->send(batch.stage, calls);
    }
    const pid_t pid = process->pid();
    const HookProcess::SubCall sub = [&batch](size_t index, const std::string &callee,
                                              Tensors inputs) -> Result<Tensors> {
      if (!batch.jobs[index].sub)
        return failedPrecondition()
               << "call of model '" << callee << "': only a meta model's run may call";
      return batch.jobs[index].sub(callee, std::move(inputs));
    };
    Result<std::vector<Result<Tensors>>> results =
        !batch.send_status.isOk()
            ? Result<std::vector<Result<Tensors>>>(batch.send_status)
            : process->receive(batch.stage, calls.size(), batch.limit, batch.limit_text, sub);
    if (!process->alive()) {
      spdlog::warn("hook process lost model={} pid={} stage={} calls={} reason={}", model, pid,
                   stage, batch.jobs.size(),
                   results.isOk() ? std::string("unknown") : results.status().message());
    } else if (const std::string over = overMemoryLimit(*state, *process); !over.empty()) {
      // Before the next frame is sent: the calls answered keep their results, none is lost.
      spdlog::warn("hook process over its memory limit model={} pid={} reason={}", model, pid,
                   over);
      process->kill();
    } else if (batch.stage != HookStage::kRun) {
      // The results are copied out: the process may start on the next frame meanwhile.
      next = take(*state, false);
      if (!next.jobs.empty() && next.stage != HookStage::kRun) {
        std::vector<const Tensors *> next_calls;
        for (const Job &job : next.jobs)
          next_calls.push_back(&job.inputs);
        next.send_status = process->send(next.stage, next_calls);
        next.sent = true;
      }
    }
    for (size_t k = 0; k < batch.jobs.size(); ++k)
      batch.jobs[k].done(results.isOk() ? std::move((*results)[k])
                                        : Result<Tensors>(results.status()));
  }
}

std::string HookPool::describe() const {
  std::string hooks;
  if (hello_.preprocess)
    hooks = "preprocess";
  if (hello_.postprocess)
    hooks += hooks.empty() ? "postprocess" : ",postprocess";
  if (hello_.meta)
    hooks = "run";
  if (hooks.empty())
    hooks = "none";
  std::string numpy = "none";
  for (const std::string &p : hello_.packages)
    if (p.starts_with("numpy=="))
      numpy = p.substr(7);
  return "hooks=" + hooks + " hook_env=" + hello_.implementation + "-" + hello_.python_version +
         " hook_python=" + state_->options.python + " hook_numpy=" + numpy +
         " hook_packages=" + std::to_string(hello_.packages.size()) +
         " hook_processes=" + std::to_string(threads_.size()) +
         " hook_sha256=" + identity_.substr(0, 16);
}

} // namespace rs::hooks
