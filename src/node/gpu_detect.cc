//===- node/gpu_detect.cc - Which GPUs a node has ----------------------------===//
#include "node/gpu_detect.h"
#include "support/text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
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

GpuProbes systemGpuProbes(const pjrt::VendorProfile *vendor) {
  GpuProbes p;
  p.vendor = vendor;
  if (vendor == nullptr)
    return p;
  p.tool_count = [vendor] { return vendor->countDevicesWithTool(); };
  p.device_file_count = [vendor] { return vendor->countDeviceFiles(); };
  return p;
}

const pjrt::VendorProfile *gpuVendorOf(const config::NodeConfig &node) {
  const size_t workers = std::max<size_t>(node.workers.size(), 1);
  for (size_t i = 0; i < workers; ++i) {
    Result<config::WorkerConfig> w = config::resolveWorker(node, static_cast<int64_t>(i));
    if (!w.isOk())
      continue; // planNode reports it
    if (const pjrt::VendorProfile *v =
            pjrt::findVendorProfile(config::backendName(w->runtime.backend)))
      return v;
  }
  const auto all = pjrt::vendorProfiles();
  return all.empty() ? nullptr : all.front();
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
  if (probes.vendor == nullptr)
    return std::vector<std::string>{};
  const std::string variable(probes.vendor->visibleDevicesVariable());
  if (auto it = env.find(variable); it != env.end()) {
    const std::string v(trim(it->second));
    if (probes.vendor->hidesAllDevices(v))
      return std::vector<std::string>{};
    return deviceList(v, variable);
  }
  if (probes.tool_count)
    if (std::optional<int> n = probes.tool_count())
      return ordinals(*n);
  if (probes.device_file_count)
    return ordinals(probes.device_file_count());
  return std::vector<std::string>{};
}

} // namespace rs::node
