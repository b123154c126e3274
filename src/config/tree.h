//===- config/tree.h - YAML values with their origin -----------------------===//
//
// A small owned tree of YAML values (null, scalar text, list, map) in which every value
// remembers where it came from: its dotted key path in the node file ("global.runtime.
// numerics", "workers[1].scheduler") or the environment variable that set it. The node
// file is read into this tree once (yaml-cpp exceptions are caught there), blocks are
// deep-merged on it, and error messages name the origin. Map keys are kept sorted, so
// every walk is in a fixed order.
//
// Thread safety: plain values.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rs::config {

struct ConfigValue {
  enum class Kind : uint8_t { kNull, kScalar, kList, kMap };

  Kind kind = Kind::kNull;
  std::string scalar;                     // kScalar: the text as written (unquoted)
  std::vector<ConfigValue> list;          // kList
  std::map<std::string, ConfigValue> map; // kMap
  std::string origin; // dotted key path in the file, or "environment override VAR"
  bool from_env = false;

  bool isNull() const { return kind == Kind::kNull; }
  bool isScalar() const { return kind == Kind::kScalar; }
  bool isList() const { return kind == Kind::kList; }
  bool isMap() const { return kind == Kind::kMap; }
  /// The child `key` of a map, or nullptr (also for non-maps).
  const ConfigValue *find(std::string_view key) const;
  /// "null", "a scalar", "a list", "a map".
  std::string_view kindName() const;

  static ConfigValue scalarValue(std::string text, std::string origin);
};

/// Parses YAML text into a tree; children's origins are dotted paths below `origin`
/// ("" for the root). InvalidArgument "<file>:<line>:<col>: invalid yaml: ..." on a syntax
/// error; "<file>: <origin>: duplicate key 'k'" for a repeated map key; non-scalar map keys
/// are rejected.
Result<ConfigValue> parseYaml(std::string_view text, std::string_view file);

/// Reads and parses a YAML file (NotFound "<path>: cannot read" if unreadable).
Result<ConfigValue> loadYamlFile(const std::string &path);

/// Deep-merges `over` into `base`: maps merge key by key, anything else replaces (with its
/// origin). A null `over` replaces too.
void deepMerge(ConfigValue &base, const ConfigValue &over);

/// The dotted path of `key` under `parent_origin` ("global" + "runtime" -> "global.runtime").
std::string childOrigin(std::string_view parent_origin, std::string_view key);

/// The value at `dotted_path` ("runtime.numerics") below map `root`, or nullptr when a step
/// is missing or not a map. Keys containing '.' cannot be reached this way (walk `map`).
const ConfigValue *findPath(const ConfigValue &root, std::string_view dotted_path);

/// Stores `value` at `dotted_path` below `root`, turning `root` and missing or non-map
/// intermediate steps into maps (new steps take `value`'s origin).
void setPath(ConfigValue &root, std::string_view dotted_path, ConfigValue value);

} // namespace rs::config
