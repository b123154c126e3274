//===- runtime/repository_watcher.cc - model_control_mode: dynamic polling --===//
#include "runtime/repository_watcher.h"

#include "bundle/program_files.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <set>
#include <sys/stat.h>

namespace rs::runtime {
namespace {

namespace fs = std::filesystem;

bool isSignatureFile(const std::string &name) {
  return name == "manifest.yaml" || name == "weights.safetensors" || name == "model.jl" ||
         name == "model.py" || bundle::parseProgramFileName(name).has_value();
}

} // namespace

std::string_view watcherActionName(WatcherChange::Action action) {
  switch (action) {
  case WatcherChange::Action::kLoad: return "load";
  case WatcherChange::Action::kReload: return "reload";
  case WatcherChange::Action::kUnload: return "unload";
  case WatcherChange::Action::kRename: return "rename";
  }
  return "unknown";
}

std::map<std::string, BundleSignature> scanRepository(const std::string &root,
                                                      const std::vector<std::string> &include) {
  std::map<std::string, BundleSignature> out;
  std::error_code ec;
  fs::directory_iterator it(root, ec);
  if (ec)
    return out;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec)
      break;
    const fs::path dir = it->path();
    const std::string name = dir.filename().string();
    if (name.empty() || name[0] == '.' || !it->is_directory(ec))
      continue;
    if (!include.empty() && std::find(include.begin(), include.end(), name) == include.end())
      continue;
    struct stat dst {};
    if (::stat(dir.c_str(), &dst) != 0)
      continue;
    BundleSignature sig;
    sig.dir = dir.string();
    sig.device = static_cast<uint64_t>(dst.st_dev);
    sig.inode = static_cast<uint64_t>(dst.st_ino);
    std::error_code fec;
    for (fs::directory_iterator f(dir, fec); !fec && f != fs::directory_iterator();
         f.increment(fec)) {
      const std::string fname = f->path().filename().string();
      if (!isSignatureFile(fname))
        continue;
      struct stat st {};
      if (::stat(f->path().c_str(), &st) != 0)
        continue;
      const int64_t mtime_ns =
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
      sig.files[fname] = {mtime_ns, static_cast<int64_t>(st.st_size)};
    }
    out[name] = std::move(sig);
  }
  return out;
}

RepositoryWatcher::RepositoryWatcher(std::string root, std::vector<std::string> include,
                                     double poll_seconds, Actions actions)
    : root_(std::move(root)), include_(std::move(include)), poll_seconds_(poll_seconds),
      actions_(std::move(actions)) {}

RepositoryWatcher::~RepositoryWatcher() { stop(); }

void RepositoryWatcher::markCurrentApplied() {
  applied_ = scanRepository(root_, include_);
  previous_ = applied_;
}

std::vector<WatcherChange> RepositoryWatcher::poll() {
  std::map<std::string, BundleSignature> current = scanRepository(root_, include_);
  // Stable: the same signature on this poll and the previous one.
  auto stable = [&](const std::string &name) {
    auto p = previous_.find(name);
    auto c = current.find(name);
    if (p == previous_.end() || c == current.end())
      return p == previous_.end() && c == current.end();
    return p->second.sameFiles(c->second) && p->second.inode == c->second.inode &&
           p->second.device == c->second.device;
  };
  std::vector<WatcherChange> planned;
  std::set<std::string> renamed_to;
  // Vanished names: rename or unload.
  for (const auto &[name, sig] : applied_) {
    if (current.count(name) != 0 || !stable(name))
      continue;
    WatcherChange change;
    change.name = name;
    change.action = WatcherChange::Action::kUnload;
    for (const auto &[to, csig] : current) {
      if (applied_.count(to) != 0 || renamed_to.count(to) != 0 || !stable(to))
        continue;
      if (csig.device == sig.device && csig.inode == sig.inode && csig.sameFiles(sig)) {
        change.action = WatcherChange::Action::kRename;
        change.from = name;
        change.name = to;
        change.dir = csig.dir;
        renamed_to.insert(to);
        break;
      }
    }
    planned.push_back(change);
  }
  for (const auto &[name, sig] : failed_)
    if (current.count(name) == 0 && stable(name) && applied_.count(name) == 0)
      planned.push_back({WatcherChange::Action::kUnload, name, "", ""});
  // New and changed names.
  for (const auto &[name, sig] : current) {
    if (renamed_to.count(name) != 0 || !stable(name))
      continue;
    auto a = applied_.find(name);
    if (a != applied_.end() && a->second.sameFiles(sig))
      continue;
    planned.push_back(
        {a == applied_.end() ? WatcherChange::Action::kLoad : WatcherChange::Action::kReload, name,
         "", sig.dir});
  }
  previous_ = current;

  std::vector<WatcherChange> applied;
  for (const WatcherChange &c : planned) {
    spdlog::info("watcher: change detected action={} name={}{}", watcherActionName(c.action),
                 c.name, c.from.empty() ? "" : " from=" + c.from);
    Status s;
    try { // whatever a bundle holds, a failed action must not end the server
      switch (c.action) {
      case WatcherChange::Action::kLoad:
      case WatcherChange::Action::kReload: s = actions_.load(c.name, c.dir); break;
      case WatcherChange::Action::kUnload: s = actions_.unload(c.name); break;
      case WatcherChange::Action::kRename: s = actions_.rename(c.from, c.name, c.dir); break;
      }
    } catch (const std::exception &e) {
      s = internalError() << "unexpected error: " << e.what();
    }
    if (!s.isOk()) {
      spdlog::warn("watcher: action failed action={} name={} reason={}",
                   watcherActionName(c.action), c.name, s.toString());
      if (c.action == WatcherChange::Action::kLoad)
        failed_[c.name] = current.at(c.name);
      else if (c.action == WatcherChange::Action::kUnload)
        failed_.erase(c.name); // tried once; the repository did not hold it
      continue;
    }
    failed_.erase(c.name);
    if (c.action == WatcherChange::Action::kRename || c.action == WatcherChange::Action::kUnload)
      applied_.erase(c.action == WatcherChange::Action::kRename ? c.from : c.name);
    if (c.action != WatcherChange::Action::kUnload)
      applied_[c.name] = current.at(c.name);
    applied.push_back(c);
  }
  return applied;
}

void RepositoryWatcher::start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stopping_ || !(poll_seconds_ > 0))
    return;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::duration<double>(poll_seconds_),
                   [this] { return stopping_; });
      if (stopping_)
        break;
      lock.unlock();
      (void)poll();
      lock.lock();
    }
  });
}

void RepositoryWatcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

} // namespace rs::runtime
