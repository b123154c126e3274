//===- test/hardening/process_util.h - Child processes ---------------------===//
//
// Spawning and waiting for child processes; their ports come from common/ports.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/files.h"
#include "common/ports.h"

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace rs::testing {

/// Starts `argv` with stdout and stderr appended to `log_path`; returns the pid or -1.
inline pid_t spawnProcess(const std::vector<std::string> &argv, const std::string &log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) != 0)
    pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

/// Waits for `pid`; returns its exit status, or 128 + signal when a signal ended it.
inline int waitProcess(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid)
    return -1;
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

/// Runs `command` through the shell; returns (exit status, stdout and stderr).
inline std::pair<int, std::string> runCommand(const std::string &command) {
  std::string out;
  FILE *p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p)
    return {-1, ""};
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
    out.append(buf.data(), n);
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

} // namespace rs::testing
