//===- test/hardening/log_capture.h - The default logger's lines in a test ----===//
#pragma once

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace rs::testing {

/// Captures the default logger's lines ("<level> <message>") while alive.
class LogCapture {
public:
  LogCapture() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    sink->set_pattern("%l %v");
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  LogCapture(const LogCapture &) = delete;
  LogCapture &operator=(const LogCapture &) = delete;
  /// The captured lines that contain `containing`, in order.
  std::vector<std::string> lines(const std::string &containing) {
    std::vector<std::string> out;
    std::istringstream in(out_.str());
    std::string line;
    while (std::getline(in, line))
      if (line.find(containing) != std::string::npos)
        out.push_back(line);
    return out;
  }

private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

} // namespace rs::testing
