//===- fuzz/manifest_fuzz.cc - Bundle manifest parser (YAML) ----------------===//
#include "bundle/manifest.h"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  rs::Result<rs::bundle::Manifest> m = rs::bundle::parseManifest(text, "manifest.yaml", "fuzz");
  if (m.isOk()) {
    // Touch what a load would use.
    size_t n = 0;
    for (const auto &spec : m->executable_inputs)
      n += spec.wireShape().size();
    for (const auto &spec : m->executable_outputs)
      n += spec.wireShape().size();
    (void)n;
  }
  return 0;
}
