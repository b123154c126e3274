//===- config/worker_config.cc - One worker's resolved configuration -------===//
#include "config/worker_config.h"

#include "config/key_reader.h"
#include "config/keys.h"

#include <algorithm>

namespace rs::config {

std::string_view backendName(Backend v) { return v == Backend::kCpu ? "cpu" : "cuda"; }

std::string_view modelControlModeName(ModelControlMode v) {
  switch (v) {
  case ModelControlMode::kStatic: return "static";
  case ModelControlMode::kDynamic: return "dynamic";
  case ModelControlMode::kExplicit: return "explicit";
  }
  return "dynamic";
}

std::string_view numericsName(Numerics v) {
  switch (v) {
  case Numerics::kF32: return "f32";
  case Numerics::kAuto: return "auto";
  case Numerics::kTf32: return "tf32";
  }
  return "auto";
}

std::string_view profileName(Profile v) { return v == Profile::kNone ? "none" : "regulated"; }

std::string_view batchSizesName(BatchSizes v) { return v == BatchSizes::kAll ? "all" : "largest"; }

std::string_view disciplineName(Discipline v) {
  switch (v) {
  case Discipline::kFair: return "fair";
  case Discipline::kFifo: return "fifo";
  case Discipline::kEdf: return "edf";
  }
  return "fair";
}

std::string_view residencyName(Residency v) {
  switch (v) {
  case Residency::kUnpinned: return "unpinned";
  case Residency::kPinnedSystem: return "pinned_system";
  case Residency::kPinnedDevice: return "pinned_device";
  }
  return "unpinned";
}

std::vector<std::pair<std::string, std::string>> effectiveSettings(const WorkerConfig &c) {
  Settings s;
  appendSettings(workerKeys(), c, "", s);
  std::stable_sort(s.begin(), s.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  return s;
}

} // namespace rs::config
