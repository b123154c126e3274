//===- pjrt/cuda_profile.cc - NVIDIA GPUs through XLA's CUDA plugin ----------===//
//
// The vendor profile of `runtime.backend: cuda` (alias `gpu`): the jax-cuda13-pjrt plugin
// (`../shared/reference/pjrt.md` sections 1.6 and 5), CUDA_VISIBLE_DEVICES, nvidia-smi,
// compute capability, TF32 from capability 8.0 (reference-system.md section 3.2) and the
// NVIDIA kernel module's version.
//
//===----------------------------------------------------------------------===//
#include "pjrt/cuda_profile.h"

#include "pjrt/cuda_completion.h"
#include "pjrt/vendor_profile.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace rs::pjrt {
namespace {

class CudaProfile final : public VendorProfile {
public:
  std::unique_ptr<CompletionPoller> completionPoller(const Plugin &plugin, int local_hardware_id,
                                                     std::string *why) const override {
    return makeCudaCompletionPoller(plugin, local_hardware_id, why);
  }

  std::string_view name() const override { return "cuda"; }
  std::string_view platform() const override { return "cuda"; }

  std::string_view pluginGlob() const override {
    return "jax_plugins/xla_cuda*/xla_cuda_plugin.so";
  }

  std::map<std::string, std::string> pluginXlaFlags(const std::string &plugin_path) const override {
    std::string dir = cudaDataDirForPlugin(plugin_path);
    if (dir.empty())
      return {};
    return {{"xla_gpu_cuda_data_dir", std::move(dir)}};
  }

  // cuBLAS and cuDNN read NVIDIA_TF32_OVERRIDE when the client loads them.
  std::vector<std::pair<std::string, std::string>> f32Environment() const override {
    return {{"NVIDIA_TF32_OVERRIDE", "0"}};
  }

  std::string_view visibleDevicesVariable() const override { return "CUDA_VISIBLE_DEVICES"; }

  bool hidesAllDevices(std::string_view value) const override {
    return value.empty() || value == "-1" || value == "none" || value == "NoDevFiles";
  }

  std::optional<int> countDevicesWithTool() const override {
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
  }

  int countDeviceFiles() const override {
    int count = 0;
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator("/dev", ec)) {
      const std::string file = e.path().filename().string();
      if (file.size() > 6 && file.starts_with("nvidia") &&
          std::all_of(file.begin() + 6, file.end(),
                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        ++count;
    }
    return count;
  }

  // compute_capability is a string "9.0" or a list [9, 0], depending on the plugin build.
  std::string deviceCapability(const std::vector<NamedValue> &attributes) const override {
    std::string capability;
    for (const NamedValue &a : attributes) {
      if (a.name != "compute_capability")
        continue;
      if (const auto *s = std::get_if<std::string>(&a.value))
        capability = *s;
      else if (const auto *list = std::get_if<std::vector<int64_t>>(&a.value);
               list != nullptr && list->size() == 2)
        capability = std::to_string((*list)[0]) + "." + std::to_string((*list)[1]);
    }
    return capability;
  }

  bool hasTf32(std::string_view capability) const override {
    return cudaCapabilityHasTf32(capability);
  }

  std::string_view driverName() const override { return "NVIDIA kernel module"; }
  std::string_view driverVersionFile() const override { return "/proc/driver/nvidia/version"; }

  std::string parseDriverVersion(std::string_view text) const override {
    return parseNvidiaDriverVersion(text);
  }
};

} // namespace

const VendorProfile &cudaProfile() {
  static const CudaProfile profile;
  return profile;
}

std::string cudaDataDirForPlugin(const std::string &plugin_path) {
  // <sp>/jax_plugins/xla_cuda13/xla_cuda_plugin.so -> <sp>/nvidia/cu13
  const size_t file_slash = plugin_path.rfind('/');
  if (file_slash == std::string::npos)
    return "";
  const std::string plugin_dir = plugin_path.substr(0, file_slash);
  const size_t dir_slash = plugin_dir.rfind('/');
  if (dir_slash == std::string::npos)
    return "";
  const std::string leaf = plugin_dir.substr(dir_slash + 1); // xla_cuda13
  const std::string jax_plugins = plugin_dir.substr(0, dir_slash);
  const size_t sp_slash = jax_plugins.rfind('/');
  if (leaf.rfind("xla_cuda", 0) != 0 || sp_slash == std::string::npos)
    return "";
  const std::string candidate =
      jax_plugins.substr(0, sp_slash) + "/nvidia/cu" + leaf.substr(std::strlen("xla_cuda"));
  // Only a directory that holds what XLA looks for there (ptxas or libdevice).
  std::error_code ec;
  if (std::filesystem::is_regular_file(candidate + "/bin/ptxas", ec) ||
      std::filesystem::is_directory(candidate + "/nvvm/libdevice", ec))
    return candidate;
  return "";
}

std::string parseNvidiaDriverVersion(std::string_view text) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 ..." or
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build ...":
  // the first word after "Kernel Module" made of digits and at least one dot.
  const size_t at = text.find("Kernel Module");
  if (at == std::string_view::npos)
    return "";
  const size_t line_end = std::min(text.find('\n', at), text.size());
  size_t i = at;
  while (i < line_end) {
    while (i < line_end && text[i] == ' ')
      ++i;
    size_t end = i;
    while (end < line_end && text[end] != ' ')
      ++end;
    const std::string_view word = text.substr(i, end - i);
    const bool version = !word.empty() && std::isdigit(static_cast<unsigned char>(word[0])) &&
                         word.find('.') != std::string_view::npos &&
                         std::all_of(word.begin(), word.end(), [](char c) {
                           return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
                         });
    if (version)
      return std::string(word);
    i = end;
  }
  return "";
}

bool cudaCapabilityHasTf32(std::string_view compute_capability) {
  const std::string_view major_text = compute_capability.substr(0, compute_capability.find('.'));
  int major = 0;
  auto [ptr, ec] = std::from_chars(major_text.data(), major_text.data() + major_text.size(), major);
  if (major_text.empty() || ec != std::errc() || ptr != major_text.data() + major_text.size())
    return false;
  return major >= 8;
}

} // namespace rs::pjrt
