//===- support/yaml.h - YAML values that remember where they were written --===//
//
// The one YAML reader of the server (yaml-cpp underneath): a small owned tree of values
// (null, scalar text, list, map) in which every value keeps its dotted key path and the
// line and column it was written at, so that every message about a node file, a
// gateway.yml or a bundle manifest names the file and the line:
//
//   node.yaml:12:5: global.scheduler.max_queue_depth: expected an integer, got 'abc'
//
// The tree is read once (yaml-cpp's exceptions end here), duplicate map keys are errors,
// map keys are kept sorted so every walk is in a fixed order, and a value set from outside
// a file (an environment variable) says so in its origin instead of a line.
//
// The grammar of scalars is the one of every reader: integers (optional '+', decimal
// digits), finite numbers (std::from_chars' general format), booleans (true|yes|on|1,
// false|no|off|0, any case), blanks around a scalar ignored. A message about a value has
// one text per kind (wrongKind, wrongText with the k* names, scalarOf, integerOf,
// unknownKey).
//
// Thread safety: plain values and free functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rs::yaml {

/// Where a value is written: 1-based line and column; line 0 for a value that was not
/// read from a file (a default, a value derived by code, an environment override).
struct Mark {
  int line = 0;
  int column = 0;

  bool known() const { return line > 0; }
};

/// One YAML value and where it came from.
struct Value {
  enum class Kind : uint8_t { kNull, kScalar, kList, kMap };

  Kind kind = Kind::kNull;
  std::string scalar;               // kScalar: the text as written (unquoted)
  std::vector<Value> list;          // kList
  std::map<std::string, Value> map; // kMap
  /// The dotted key path in its file ("global.runtime.numerics", "workers[1]"; "" for the
  /// root) or, for a value set from outside any file, what set it ("environment override
  /// VAR").
  std::string origin;
  /// A map entry is marked at its key, a list item at the item, the root at its start.
  Mark mark;
  /// `origin` names what set the value outside any file: messages name only the origin.
  bool outside = false;

  bool isNull() const { return kind == Kind::kNull; }
  bool isScalar() const { return kind == Kind::kScalar; }
  bool isList() const { return kind == Kind::kList; }
  bool isMap() const { return kind == Kind::kMap; }
  /// The child `key` of a map, or nullptr (also for non-maps).
  const Value *find(std::string_view key) const;
  /// "null", "a scalar", "a list", "a map".
  std::string_view kindName() const;

  static Value scalarValue(std::string text, std::string origin, Mark mark = {});
  /// An empty map with `origin`.
  static Value mapValue(std::string origin, Mark mark = {});
};

// --- reading ---------------------------------------------------------------------------

/// Parses YAML text into a tree; children's origins are dotted paths below the root.
/// InvalidArgument "<file>:<line>:<col>: invalid yaml: ..." on a syntax error,
/// "<file>:<line>:<col>: duplicate key 'a.b'" for a repeated map key, and "...: map keys
/// must be scalars" for a list or map used as a key. Empty text is a null root.
Result<Value> parse(std::string_view text, std::string_view file);

/// Reads and parses the file at `path` (support/file.h's errors when it cannot be read);
/// messages name `path`.
Result<Value> loadFile(const std::string &path);

// --- the tree --------------------------------------------------------------------------

/// The dotted path of `key` under `parent_origin` ("global" + "runtime" -> "global.runtime").
std::string childOrigin(std::string_view parent_origin, std::string_view key);

/// Deep-merges `over` into `base`: maps merge key by key, anything else replaces (with its
/// origin and mark). A null `over` replaces too.
void deepMerge(Value &base, const Value &over);

/// The value at `dotted_path` ("runtime.numerics") below map `root`, or nullptr when a step
/// is missing or not a map. Keys containing '.' cannot be reached this way (walk `map`).
const Value *findPath(const Value &root, std::string_view dotted_path);

/// Stores `value` at `dotted_path` below `root`, turning `root` and missing or non-map
/// intermediate steps into maps (new steps take `value`'s origin and mark).
void setPath(Value &root, std::string_view dotted_path, Value value);

/// A scalar's text; "" for null; a list or map as flow-style YAML ("{a: 1, b: [x, y]}",
/// keys sorted).
std::string flowText(const Value &v);

// --- the grammar -------------------------------------------------------------------------

/// An integer: optional '+', decimal digits, blanks around ignored; nullopt otherwise.
std::optional<int64_t> parseInteger(std::string_view text);
/// A finite number (std::from_chars general format, optional '+'), blanks around ignored.
std::optional<double> parseNumber(std::string_view text);
/// true|yes|on|1 -> true, false|no|off|0 -> false (any case, blanks ignored), else nullopt.
std::optional<bool> parseBoolean(std::string_view text);
/// Shortest text that reads back as the same double ("0.9", "30", "1e-05", "inf").
std::string numberText(double v);

// --- messages ----------------------------------------------------------------------------

/// "<file>:<line>:<column>" for a value with a mark, else "<file>".
std::string location(const Value &v, std::string_view file);

/// Where `v` is: "<file>:<line>:<column>: <origin>" ("<file>: <origin>" without a mark,
/// no ": <origin>" for the root), or only the origin for a value set outside any file.
std::string where(const Value &v, std::string_view file);

/// An InvalidArgument builder that starts "<where(v, file)>: ".
StatusBuilder errorAt(const Value &v, std::string_view file);

/// The texts of the kinds of error about one value (after errorAt's prefix):
///   "expected <what>, got a list" for a value of the wrong kind;
std::string wrongKind(std::string_view what, const Value &v);
///   "expected <what>, got 'x'" for a scalar outside its grammar.
std::string wrongText(std::string_view what, std::string_view text);

/// The typed reads: the value, or errorAt(v, file) with the one text of its kind:
///   "expected a single value, got a list", "expected an integer, got 'x'".
Result<std::string> scalarOf(const Value &v, std::string_view file);
Result<int64_t> integerOf(const Value &v, std::string_view file);

/// InvalidArgument "<file>:<line>:<col>: unknown key '<v.origin>'" for map entry `v`.
Status unknownKey(const Value &v, std::string_view file);

inline constexpr std::string_view kSingleValue = "a single value";
inline constexpr std::string_view kInteger = "an integer";
inline constexpr std::string_view kNumber = "a number";
inline constexpr std::string_view kBoolean = "a boolean (true or false)";

} // namespace rs::yaml
