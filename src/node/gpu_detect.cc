//===- node/gpu_detect.cc - Which GPUs a node has ----------------------------===//
#include "node/gpu_detect.h"
#include "support/text.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <set>

namespace rs::node {
namespace {

std::optional<int64_t> parseCount(const std::string &s) {
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
    return std::nullopt;
  return n;
}

std::vector<std::string> ordinals(int64_t n) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(std::to_string(i));
  return out;
}

/// A comma list of device selectors; `what` names the source in errors.
Result<std::vector<std::string>> deviceList(const std::string &text, const std::string &what) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::string_view rest = text;
  while (true) {
    size_t comma = rest.find(',');
    std::string item(trim(rest.substr(0, comma)));
    if (item.empty())
      return invalidArgument() << what << ": empty device in '" << text << "'";
    if (!seen.insert(item).second)
      return invalidArgument() << what << ": device '" << item << "' is listed twice";
    out.push_back(item);
    if (comma == std::string_view::npos)
      break;
    rest = rest.substr(comma + 1);
  }
  return out;
}

} // namespace

GpuProbes systemGpuProbes() {
  GpuProbes p;
  p.nvidia_smi_count = []() -> std::optional<int> {
    FILE *f = popen("nvidia-smi -L 2>/dev/null", "r");
    if (!f)
      return std::nullopt;
    int count = 0;
    char line[512];
    while (std::fgets(line, sizeof(line), f))
      if (std::string_view(line).starts_with("GPU "))
        ++count;
    const int rc = pclose(f);
    if (rc != 0)
      return std::nullopt;
    return count;
  };
  p.dev_nvidia_count = [] {
    int count = 0;
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator("/dev", ec)) {
      const std::string name = e.path().filename().string();
      if (name.size() > 6 && name.starts_with("nvidia") &&
          std::all_of(name.begin() + 6, name.end(),
                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        ++count;
    }
    return count;
  };
  return p;
}

Result<std::vector<std::string>> detectGpus(const config::GpuSelection &gpus,
                                            const config::Environment &env,
                                            const GpuProbes &probes) {
  if (auto it = env.find("REACTANT_GPUS"); it != env.end()) {
    const std::string v(trim(it->second));
    if (v.empty())
      return invalidArgument() << "REACTANT_GPUS is set but empty: give a count (0 for a CPU "
                                  "node) or a comma list of ordinals or UUIDs";
    if (std::optional<int64_t> n = parseCount(v)) {
      if (*n < 0)
        return invalidArgument() << "REACTANT_GPUS: count " << *n << " must be >= 0";
      return ordinals(*n);
    }
    return deviceList(v, "REACTANT_GPUS");
  }
  switch (gpus.kind) {
  case config::GpuSelection::Kind::kCount: return ordinals(gpus.count);
  case config::GpuSelection::Kind::kList: {
    std::set<std::string> seen;
    for (const std::string &d : gpus.devices)
      if (!seen.insert(d).second)
        return invalidArgument() << "gpus: device '" << d << "' is listed twice";
    return gpus.devices;
  }
  case config::GpuSelection::Kind::kAuto: break;
  }
  if (auto it = env.find("CUDA_VISIBLE_DEVICES"); it != env.end()) {
    const std::string v(trim(it->second));
    if (v.empty() || v == "-1" || v == "none" || v == "NoDevFiles")
      return std::vector<std::string>{};
    return deviceList(v, "CUDA_VISIBLE_DEVICES");
  }
  if (probes.nvidia_smi_count)
    if (std::optional<int> n = probes.nvidia_smi_count())
      return ordinals(*n);
  if (probes.dev_nvidia_count)
    return ordinals(probes.dev_nvidia_count());
  return std::vector<std::string>{};
}

} // namespace rs::node
