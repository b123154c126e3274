//===- pjrt/vendor_profiles.cc - The registered GPU vendor profiles ----------===//
//
// The registration of every vendor profile (pjrt/vendor_profile.h): a new vendor adds its
// factory's declaration and one entry of `kProfiles` in vendorProfiles(), in the order lookups
// try them.
//
//===----------------------------------------------------------------------===//
#include "pjrt/vendor_profile.h"
#include "support/file.h"

namespace rs::pjrt {

const VendorProfile &cudaProfile(); // pjrt/cuda_profile.cc

std::span<const VendorProfile *const> vendorProfiles() {
  // Function-local, so that a lookup during another file's static initialisation finds it.
  static const VendorProfile *const kProfiles[] = {&cudaProfile()};
  return kProfiles;
}

const VendorProfile *findVendorProfile(std::string_view backend) {
  for (const VendorProfile *p : vendorProfiles())
    if (p->name() == backend)
      return p;
  return nullptr;
}

const VendorProfile *vendorProfileForPlatform(std::string_view platform) {
  for (const VendorProfile *p : vendorProfiles())
    if (p->platform() == platform)
      return p;
  return nullptr;
}

bool deviceHasTf32(std::string_view platform, std::string_view capability) {
  const VendorProfile *p = vendorProfileForPlatform(platform);
  return p != nullptr && p->hasTf32(capability);
}

std::string probeDriverVersion(const VendorProfile &profile) {
  const std::string file(profile.driverVersionFile());
  Result<std::string> text = readWholeFile(file);
  const std::string version = text.isOk() ? profile.parseDriverVersion(*text) : "";
  if (!version.empty())
    return version;
  return "unknown (no " + std::string(profile.driverName()) + " version in " + file + ")";
}

} // namespace rs::pjrt
