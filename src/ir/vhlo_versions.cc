//===- ir/vhlo_versions.cc - StableHLO version numbers of VHLO artifacts --===//
//
// "a.b.c" version strings as the VHLO producer string and the op table give them
// (vhlo-bytecode.md 3.5): the newest version this reader knows, which the op table's
// "current" stands for, a well-formedness check and a numeric comparison.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode_impl.h"

#include <charconv>

namespace rs::ir::bc {
namespace {

/// "a.b.c" as three numbers; false if it is not of that form.
bool parseVersion(std::string_view v, uint64_t out[3]) {
  for (int i = 0; i < 3; ++i) {
    size_t end = i < 2 ? v.find('.') : v.size();
    if (end == std::string_view::npos || end == 0)
      return false;
    std::string_view part = v.substr(0, end);
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), out[i]);
    if (ec != std::errc() || ptr != part.data() + part.size())
      return false;
    v.remove_prefix(i < 2 ? end + 1 : end);
  }
  return true;
}

} // namespace

std::string_view currentVhloVersion() { return "1.20.0"; }

bool isVersion(std::string_view v) {
  uint64_t parts[3];
  return parseVersion(v, parts);
}

int compareVersions(std::string_view a, std::string_view b) {
  uint64_t x[3] = {0, 0, 0}, y[3] = {0, 0, 0};
  if (!parseVersion(a, x))
    x[0] = x[1] = x[2] = 0;
  if (!parseVersion(b, y))
    y[0] = y[1] = y[2] = 0;
  for (int i = 0; i < 3; ++i)
    if (x[i] != y[i])
      return x[i] < y[i] ? -1 : 1;
  return 0;
}

} // namespace rs::ir::bc
