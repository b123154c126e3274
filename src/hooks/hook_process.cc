//===- hooks/hook_process.cc - One supervised Python hook process -----------===//
#include "hooks/hook_process.h"

#include "hooks/hook_binary.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

namespace rs::hooks {

std::string_view stageName(HookStage stage) {
  switch (stage) {
  case HookStage::kPreprocess: return "preprocess";
  case HookStage::kPostprocess: return "postprocess";
  case HookStage::kRun: return "run";
  }
  return "run";
}

namespace {

/// The child side of fork(): only async-signal-safe calls until exec.
[[noreturn]] void execRunner(int sock, const std::vector<char *> &argv) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr); // the server blocks SIGTERM/SIGINT for sigwait
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Its own process group, so that killing the hook kills what it forked too.
  setpgid(0, 0);
  const rlimit no_core{0, 0}; // a crashing hook leaves no core file in the server's directory
  setrlimit(RLIMIT_CORE, &no_core);
  if (sock != 3) {
    dup2(sock, 3);
  } else {
    fcntl(3, F_SETFD, 0);
  }
  dup2(2, 1); // a hook's print() goes to the server's stderr, not its stdout
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0)
    dup2(null_fd, 0);
  syscall(SYS_close_range, 4u, ~0u, 0u); // nothing else of the server's reaches the hook
  execv(argv[0], argv.data());
  _exit(127);
}

std::string describeWait(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char *abbrev = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) +
           (abbrev ? " (SIG" + std::string(abbrev) + ")" : std::string());
  }
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

std::string textOf(const nlohmann::json &body, const char *key) {
  auto it = body.find(key);
  return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace

Result<std::unique_ptr<HookProcess>> HookProcess::start(const HookProcessOptions &options) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return internalError() << "socketpair for a hook process: " << std::strerror(errno);
  UniqueFd parent(sv[0]), child(sv[1]);
  std::vector<std::string> args = {options.python,     "-I", "-B", options.runner,
                                   options.bundle_dir, "3"};
  for (const std::string &dir : options.python_path) {
    args.push_back("--path");
    args.push_back(dir);
  }
  for (const std::string &name : options.allowed_packages) {
    args.push_back("--allow");
    args.push_back(name);
  }
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  if (::access(options.python.c_str(), X_OK) != 0)
    return failedPrecondition() << "hooks.python '" << options.python
                                << "' is not an executable file";
  std::unique_ptr<HookProcess> p(new HookProcess());
  p->pid_ = ::fork();
  if (p->pid_ < 0)
    return internalError() << "fork for a hook process: " << std::strerror(errno);
  if (p->pid_ == 0)
    execRunner(child.get(), argv);
  child.reset();
  p->statm_ = UniqueFd(
      ::open(("/proc/" + std::to_string(p->pid_) + "/statm").c_str(), O_RDONLY | O_CLOEXEC));
  p->sock_ = std::move(parent);
  p->alive_ = true;
  Result<Frame> hello = receiveFrame(p->sock_.get(), Clock::now() + options.start_timeout);
  if (!hello.isOk()) {
    if (hello.status().code() == StatusCode::kDeadlineExceeded) {
      p->kill();
      return deadlineExceeded() << options.bundle_dir << "/model.py: the hook process did not "
                                << "start within " << options.start_timeout.count() << " ms";
    }
    return failedPrecondition() << options.bundle_dir << "/model.py: the hook process ("
                                << options.python << " " << options.runner << ") " << p->reap()
                                << " before it started";
  }
  const nlohmann::json &body = hello->body;
  if (!body.value("ok", false)) {
    p->reap();
    return failedPrecondition() << options.bundle_dir << "/model.py: " << textOf(body, "error");
  }
  HookHello &h = p->hello_;
  h.registered_name = textOf(body, "name");
  h.preprocess = body.value("preprocess", false);
  h.postprocess = body.value("postprocess", false);
  h.meta = body.value("meta", false);
  h.python_version = textOf(body, "python");
  h.implementation = textOf(body, "implementation");
  if (auto it = body.find("packages"); it != body.end() && it->is_array())
    for (const nlohmann::json &pkg : *it)
      if (pkg.is_string())
        h.packages.push_back(pkg.get<std::string>());
  return p;
}

HookProcess::~HookProcess() {
  if (pid_ > 0)
    kill();
}

int64_t HookProcess::residentBytes() const {
  if (pid_ <= 0 || statm_.get() < 0)
    return -1;
  // statm: total size, then resident pages; procfs regenerates it on each read from offset 0.
  char text[128];
  const ssize_t n = ::pread(statm_.get(), text, sizeof text - 1, 0);
  if (n <= 0)
    return -1;
  text[n] = '\0';
  long long size = 0, resident = 0;
  if (std::sscanf(text, "%lld %lld", &size, &resident) != 2)
    return -1;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

void HookProcess::kill() {
  alive_ = false;
  sock_.reset();
  if (pid_ <= 0)
    return;
  // The group first (what the hook forked), while the unreaped process still holds its id.
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

std::string HookProcess::reap() {
  alive_ = false;
  sock_.reset();
  if (pid_ <= 0)
    return "exited";
  // The socket closed: the process is exiting. Give it a moment to finish before it is
  // killed, so that the status says why it went.
  int status = 0;
  for (int i = 0; i < 400; ++i) {
    // Seen without reaping it, so that the group of what it forked can be killed while its
    // id still names it.
    siginfo_t info{};
    const int seen = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if (seen == 0 && info.si_pid == pid_) {
      ::kill(-pid_, SIGKILL);
      const pid_t r = ::waitpid(pid_, &status, 0);
      pid_ = -1;
      return r < 0 ? std::string("exited") : describeWait(status);
    }
    if (seen < 0 && errno != EINTR) {
      pid_ = -1;
      return "exited";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill();
  return "closed its socket and was killed";
}

Result<uint8_t> HookProcess::prepareSegment(uint64_t request_bytes) {
  if (segment_.valid() && request_bytes <= segment_.requestBytes() &&
      reply_hint_ <= segment_.replyBytes())
    return uint8_t{0};
  const uint64_t request = std::max(request_bytes, segment_.valid() ? segment_.requestBytes() : 0);
  const uint64_t reply = std::max(reply_hint_, segment_.valid() ? segment_.replyBytes() : 0);
  RS_ASSIGN_OR_RETURN(segment_, HookSegment::create(request, reply));
  return kSegmentAttached;
}

Result<std::vector<Result<HookProcess::Tensors>>>
HookProcess::call(HookStage stage, const std::vector<const Tensors *> &calls,
                  Clock::time_point deadline, std::string_view limit_text, const SubCall &sub) {
  RS_RETURN_IF_ERROR(send(stage, calls));
  return receive(stage, calls.size(), deadline, limit_text, sub);
}

Status HookProcess::send(HookStage stage, const std::vector<const Tensors *> &calls) {
  const std::string_view name = stageName(stage);
  if (!alive_)
    return unavailable() << name << ": the hook process is not running";
  RS_ASSIGN_OR_RETURN(const uint8_t flags, prepareSegment(callsBytes(calls)));
  const std::string request =
      encodeCalls(calls, {static_cast<uint8_t>(stage), flags, segment_.requestArea(),
                          segment_.replyOffset(), segment_.replyBytes()});
  const pid_t pid = pid_;
  if (!sendFrameBytes(sock_.get(), request, flags ? segment_.fd() : -1).isOk()) {
    const std::string how = reap();
    return internalError() << name << ": the hook process (pid " << pid << ") " << how
                           << " while it ran; it is restarted";
  }
  segment_.releaseFd(); // the process holds a descriptor and mapping of its own
  return Status::ok();
}

Result<std::vector<Result<HookProcess::Tensors>>>
HookProcess::receive(HookStage stage, size_t calls, Clock::time_point deadline,
                     std::string_view limit_text, const SubCall &sub) {
  const std::string_view name = stageName(stage);
  if (!alive_)
    return unavailable() << name << ": the hook process is not running";
  const pid_t pid = pid_;
  auto died = [&] {
    const std::string how = reap();
    return internalError() << name << ": the hook process (pid " << pid << ") " << how
                           << " while it ran; it is restarted";
  };
  auto broken = [&](const Status &why) {
    kill();
    return Status(why.code(), std::string(name) + ": " + why.message() +
                                  "; the hook process was killed and is restarted");
  };
  Result<Frame> reply = receiveFrame(sock_.get(), deadline);
  // A meta model's sub-calls come before its answer.
  while (reply.isOk() && reply->json && textOf(reply->body, "op") == "call") {
    const nlohmann::json &ask = reply->body;
    const std::string callee = textOf(ask, "model");
    const size_t index = ask.value("index", size_t{0});
    Result<Tensors> inputs = readSharedTensors(
        reply->fd.get(), ask.contains("tensors") ? ask["tensors"] : nlohmann::json::array(),
        "call of model '" + callee + "'");
    Result<Tensors> outputs =
        !inputs.isOk() ? Result<Tensors>(inputs.status())
        : !sub || index >= calls
            ? Result<Tensors>(failedPrecondition() << "call of model '" << callee
                                                   << "': only a meta model's run may call")
            : sub(index, callee, std::move(*inputs));
    Result<SharedTensors> shared_out =
        outputs.isOk() ? writeSharedTensors(*outputs) : Result<SharedTensors>(outputs.status());
    nlohmann::json answer;
    UniqueFd answer_fd;
    if (shared_out.isOk()) {
      answer = {{"ok", true}, {"tensors", shared_out->descriptors}};
      answer_fd = std::move(shared_out->fd);
    } else {
      answer = {{"ok", false}, {"error", shared_out.status().message()}};
    }
    if (!sendFrame(sock_.get(), answer, answer_fd.get()).isOk())
      return died();
    reply = receiveFrame(sock_.get(), deadline);
  }
  if (!reply.isOk()) {
    switch (reply.status().code()) {
    case StatusCode::kDeadlineExceeded:
      kill();
      return deadlineExceeded() << name << " did not finish within " << limit_text
                                << ": the hook process (pid " << pid
                                << ") was killed and is restarted";
    case StatusCode::kUnavailable: return died();
    default: return broken(reply.status());
    }
  }
  if (reply->json) {
    if (!reply->body.value("ok", false))
      return internalError() << name << ": " << textOf(reply->body, "error");
    return broken(internalError() << "the hook process answered JSON instead of a results frame");
  }
  Result<ResultsFrame> frame = decodeResults(reply->binary);
  if (!frame.isOk())
    return broken(frame.status());
  if (frame->results.size() != calls)
    return broken(internalError() << "the hook process answered " << calls << " calls with "
                                  << frame->results.size() << " results");
  SharedSource source{segment_.replyArea(), segment_.replyBytes(), -1};
  if (frame->in_memfd) {
    struct stat st {};
    if (!reply->fd.valid() || ::fstat(reply->fd.get(), &st) != 0)
      return broken(internalError() << "the hook process's results frame names a memfd "
                                    << "it did not attach");
    source = {nullptr, static_cast<uint64_t>(st.st_size), reply->fd.get()};
    // The next segment makes room for results this large (only as large as the memfd that
    // held them, and never past the limit, whatever the records claim).
    if (frame->extent <= source.size)
      reply_hint_ = std::min(std::max(reply_hint_, frame->extent), HookSegment::kMaxAreaBytes);
  }
  std::vector<Result<Tensors>> out;
  out.reserve(calls);
  const std::string what = std::string(name) + " result";
  for (const ResultRecord &result : frame->results) {
    if (result.status == 1)
      out.push_back(Status(stage == HookStage::kPreprocess ? StatusCode::kInvalidArgument
                                                           : StatusCode::kInternal,
                           std::string(name) + " raised " + result.error));
    else if (result.status == 2)
      out.push_back(internalError() << name << ": " << result.error);
    else
      out.push_back(readTensors(result.tensors, source, what));
  }
  return out;
}

} // namespace rs::hooks
