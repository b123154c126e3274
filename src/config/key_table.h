//===- config/key_table.h - The typed table of configuration keys ---------===//
//
// Every key of the node file and of gateway.yml is one row of a KeyTable: its dotted path,
// its value type, its default, its range or allowed values, its environment variable,
// where it is stored in the typed config struct, and a one-line description. The same rows
// drive the unknown-key check, environment overrides, typing and range validation
// (config/key_reader.h), the `Effective configuration` startup line and the generated
// docs/configuration.md (config/key_docs.h), so a new key is one row plus its use.
//
// Value grammar, the same for every file and every variable (config/key_reader.h):
//   integer  optional '+', decimal digits (surrounding blanks ignored)
//   number   a decimal or exponent literal (std::from_chars), finite
//   boolean  true|yes|on|1 or false|no|off|0, any case; in INFERENCE_SERVER_* variables
//            any other text is false (reference-system.md §2.3), elsewhere an error
//   choice   one of the row's names, any case
//   list     a YAML list; in a variable, items split on the table's separator
//
// Thread safety: the tables are immutable after first use.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace rs::yaml {
struct Value;
} // namespace rs::yaml

namespace rs::config {

struct ListenAddress;

/// The kind of value a key holds; each has one grammar and one error text per failure.
enum class ValueType : uint8_t {
  kText,        // any scalar
  kInteger,     // int64 in `ints`
  kNumber,      // finite double in `numbers`
  kBoolean,     // see the file comment
  kChoice,      // one of `choices`
  kTextList,    // list of scalars
  kXlaFlags,    // map of XLA option name -> scalar, names checked against config/xla_flags.h
  kListen,      // "host:port" or "[v6]:port", port in [0, 65535]; "" turns it off
  kReplicas,    // integer >= 1 or "all"
  kWaitSeconds, // number >= 0, or inf | forever | -1 (wait forever)
  kModelMap,    // map of model name -> a block of the row's sub-table
  kStructure,   // parsed by its own code (node file structure); documented only
};

/// An integer range, both ends closed; hi = max means unbounded.
struct IntRange {
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
};

/// A number range with open or closed ends; hi = +inf means unbounded.
struct NumberRange {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;
};

/// One allowed spelling of a choice and the enum value it stands for. An alias is accepted
/// and documented but never printed (the first non-alias name of a value is).
struct Choice {
  std::string_view name;
  int value;
  bool alias = false;
};

/// Where a row's value lives in the typed struct. Enums travel as int through EnumField.
struct EnumField {
  void *target = nullptr;
  int (*get)(const void *) = nullptr; // -1: an unset optional
  void (*set)(void *, int) = nullptr; // -1: reset an optional
};

using FieldRef =
    std::variant<std::monostate, std::string *, int64_t *, std::optional<int64_t> *, double *,
                 std::optional<double> *, bool *, std::optional<bool> *, std::vector<std::string> *,
                 std::map<std::string, std::string> *, ListenAddress *, EnumField>;

/// Everything of a row but its storage.
struct KeySpec {
  std::string_view path; // dotted, relative to the table's root ("runtime.numerics")
  ValueType type = ValueType::kText;
  /// The default as a value text, parsed by the row's grammar before the file is read;
  /// "" leaves the struct's own value (an unset optional, or one resolved later).
  std::string_view fallback;
  /// The docs' default column when it is not `fallback` ("`20000` with cuda, `0` with cpu").
  std::string_view default_doc;
  IntRange ints;
  NumberRange numbers;
  std::span<const Choice> choices;
  /// The variable: "" derives the table's prefix + the path upper-cased with '.' -> '_';
  /// kNoEnv for none; any other text names the variable (read from the environment only when
  /// `env_only`, or documented for node keys the supervisor reads itself).
  std::string_view env;
  /// Items of a kTextList variable: 0 = the table's separator (':' or ','); a row whose items
  /// may hold the table's separator (URLs) names another.
  char list_separator = 0;
  bool in_file = true;   // may appear in the file
  bool env_only = false; // a process setting: only a variable sets it
  bool alias = false;    // an alias of another key (documented, not in summaries)
  /// Printed by the effective settings for an unset optional ("unset", "inherit").
  std::string_view unset_text = "unset";
  /// The docs' values column when the type's own text is not enough.
  std::string_view values_doc;
  /// One line: what the key does in this build (the docs' description column).
  std::string_view doc;
};

inline constexpr std::string_view kNoEnv = "-";

class KeyReader;
struct DocRow;
using Settings = std::vector<std::pair<std::string, std::string>>;

/// The parts of a kModelMap row that know its entry type (made by modelMapHooks() in
/// config/key_reader.h): check, read and print the entries, and list the entry rows.
template <typename C> struct MapHooks {
  std::function<Status(const KeyReader &, const yaml::Value &map)> check;
  std::function<Status(const KeyReader &, const yaml::Value &map, C &)> read;
  std::function<void(const C &, const std::string &prefix, Settings &)> print;
  std::function<std::vector<DocRow>()> entry_specs;
};

/// One row: the spec and a function giving the row's field in a struct C.
template <typename C> struct Key {
  KeySpec spec;
  FieldRef (*field)(C &) = nullptr; // nullptr: kStructure and kModelMap rows
  MapHooks<C> map;                  // kModelMap only
};

/// A key of the reference that was removed: the file key at `path` (and anything below
/// it), or the variable prefix + `env_suffix` (with `env_prefix_match`, every variable that
/// starts so), fails with `message`.
struct RemovedKey {
  std::string_view path;
  std::string_view env_suffix;
  bool env_prefix_match = false;
  std::string_view message;
};

/// A table: its rows plus the rules of its environment.
template <typename C> struct KeyTable {
  std::string_view env_prefix; // "INFERENCE_SERVER_", "REACTANT_GATEWAY_"; "" = no variables
  char list_separator = ':';   // items of a list variable
  bool lenient_env_booleans = false;
  std::vector<Key<C>> rows;
  std::vector<RemovedKey> removed;
};

// --- field helpers ---------------------------------------------------------------------

/// The FieldRef of a plain member.
template <typename T> FieldRef field(T &member) {
  if constexpr (std::is_enum_v<T>) {
    return EnumField{&member,
                     [](const void *p) { return static_cast<int>(*static_cast<const T *>(p)); },
                     [](void *p, int v) { *static_cast<T *>(p) = static_cast<T>(v); }};
  } else {
    return &member;
  }
}

/// The FieldRef of an optional enum member (-1 = unset).
template <typename E>
requires std::is_enum_v<E> FieldRef field(std::optional<E> &member) {
  return EnumField{&member,
                   [](const void *p) {
                     const auto &o = *static_cast<const std::optional<E> *>(p);
                     return o ? static_cast<int>(*o) : -1;
                   },
                   [](void *p, int v) {
                     auto &o = *static_cast<std::optional<E> *>(p);
                     if (v < 0)
                       o.reset();
                     else
                       o = static_cast<E>(v);
                   }};
}

} // namespace rs::config
