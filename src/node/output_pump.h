//===- node/output_pump.h - Child output, one prefixed line at a time --------===//
//
// Reads the stdout and stderr pipes of the supervisor's children on one thread and writes
// every line to the supervisor's own stdout or stderr as "[<name>] <line>" (reference-
// system.md section 9). A partial last line is kept until its newline arrives, or
// written when the pipe closes. Each line goes out in one write(2), so lines of different
// children never interleave.
//
// Thread safety: add() may be called from any thread; the pump owns the descriptors it
// is given and closes them at end of file or in stop().
//
//===----------------------------------------------------------------------===//
#pragma once

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rs::node {

class OutputPump {
public:
  OutputPump();
  /// Calls stop().
  ~OutputPump();
  OutputPump(const OutputPump &) = delete;
  OutputPump &operator=(const OutputPump &) = delete;

  /// Pumps `fd` (a pipe's read end) to `out_fd` (1 or 2) with the prefix "[name] ".
  void add(int fd, std::string name, int out_fd);
  /// Drains what is readable now, writes partial lines, closes every pipe, joins. Idempotent.
  void stop();

private:
  struct Source {
    int fd;
    std::string prefix;
    int out_fd;
    std::string partial;
  };
  void loop();
  static void emit(const Source &s, std::string_view line);

  std::mutex mu_;
  std::vector<Source> added_; // GUARDED_BY(mu_): picked up by the loop
  bool stopping_ = false;     // GUARDED_BY(mu_)
  int wake_[2] = {-1, -1};    // self-pipe that interrupts poll()
  std::thread thread_;
};

} // namespace rs::node
