//===- config/key_reader.h - Reading a config tree through a key table ----===//
//
// The one reader of typed configuration values (config/key_table.h gives the grammar):
// the unknown-key check of a file block, environment overrides, typing with defaults and
// ranges, and the effective settings, each driven by a KeyTable's rows.
//
// Error texts, one per kind (support/yaml.h's where the kind is YAML's), prefixed
// "<file>:<line>:<column>: <key path>: " (or "environment override VAR: " for a value a
// variable set; "<file>: <key path>: " for a value the node file implies, such as a port
// from base_port, without a line):
//   unknown key               <file>: unknown key 'global.runtime.numercs'
//   unknown variable          environment: unknown variable VAR (not a configuration key)
//   not a single value        expected a single value, got a list
//   not a map                 expected a map, got a scalar
//   integer                   expected an integer, got 'x' (range [1, 65535])
//   number                    expected a number, got 'x'
//   boolean                   expected a boolean (true or false), got 'x'
//   choice                    'x' is not one of a, b, c
//   integer out of range      70000 is out of range [1, 65535]  |  0 must be >= 1
//   number out of range       1.5 is out of range (0, 1]  |  0 must be > 0
//   list                      expected a list of strings, got a scalar
//   removed key               the table's migration message
//
// Thread safety: plain values and free functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/key_table.h"
#include "support/status.h"
#include "support/yaml.h"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rs::config {

// --- the grammar: support/yaml.h's parseInteger, parseNumber, parseBoolean, numberText --
// and the range texts of the table.

/// "[lo, hi]", or ">= lo" when hi is unbounded.
std::string rangeText(IntRange r);
/// "(lo, hi]" and the like, or "> lo" / ">= lo" when hi is unbounded.
std::string rangeText(const NumberRange &r);

// --- reading one tree -------------------------------------------------------------------

/// Typed reads below one tree (a worker's merged block, gateway.yml, a model's entry).
class KeyReader {
public:
  /// `file` names the file in messages; `label` prefixes key paths in messages (e.g.
  /// "scheduler.models.bert." for a model's block); `lenient_env_booleans`: see key_table.h.
  KeyReader(const yaml::Value &root, std::string file, std::string label = "",
            bool lenient_env_booleans = false);

  /// The value at `path`, or nullptr when absent or null.
  const yaml::Value *lookup(std::string_view path) const;

  /// An InvalidArgument builder "<file>:<line>:<col>: <origin>: [<key> ]" about value `v` of
  /// key `path` (the key is named when the origin does not end with it, e.g. a value from
  /// base_port), or "environment override VAR: " for a value from the environment.
  StatusBuilder error(const yaml::Value &v, std::string_view path) const;

  /// Parses `v` by `spec`'s grammar and range into `f`.
  Status read(const KeySpec &spec, const yaml::Value &v, FieldRef f) const;
  /// Stores `spec.fallback` into `f` (nothing when it is empty).
  Status setDefault(const KeySpec &spec, FieldRef f) const;

  /// A reader over `block`, a map below this one, whose keys are labelled `label`.
  KeyReader below(const yaml::Value &block, std::string label) const;

  const std::string &file() const { return file_; }
  const std::string &label() const { return label_; }

private:
  const yaml::Value &root_;
  std::string file_;
  std::string label_;
  bool lenient_env_booleans_;
};

/// Checks the CORS origins read from key `key` (a list): each is `*` or a serialized origin
/// (RFC 6454 section 6.1: scheme "://" host [":" port], no path, no trailing '/'), else
/// InvalidArgument at the key naming the origin.
Status checkOrigins(const KeyReader &r, std::string_view key,
                    const std::vector<std::string> &origins);

/// The effective-settings text of field `f`: lists "[a, b]", maps "{k: v}", booleans
/// "true"/"false", numbers as numberText, unset optionals `spec.unset_text`.
std::string fieldText(const KeySpec &spec, FieldRef f);

/// "INFERENCE_SERVER_RUNTIME_NUMERICS" for "runtime.numerics" under that prefix; the row's
/// own name when it gives one; "" for kNoEnv or a table without variables.
std::string envVarOf(const KeySpec &spec, std::string_view prefix);

/// What the environment changed: (VAR, value) sorted by VAR, and the dotted keys it set.
struct EnvApplied {
  std::vector<std::pair<std::string, std::string>> overrides;
  std::set<std::string> keys;
};

/// A row of the docs: the full dotted path and the spec.
struct DocRow {
  std::string path;
  KeySpec spec;
};

namespace detail {

/// The specs of a table's rows, a model map's entries expanded as "<path>.<name>.<key>".
template <typename C> std::vector<DocRow> specsOf(const KeyTable<C> &table);

/// Non-template steps shared by every table (key_reader.cc).
struct TableView {
  std::vector<const KeySpec *> specs;
  std::string_view env_prefix;
  char list_separator;
  const std::vector<RemovedKey> *removed;
};
const KeySpec *findSpec(const TableView &t, std::string_view path);
bool isSectionOf(const TableView &t, std::string_view path);
Status removedKeyError(const TableView &t, const KeyReader &r, std::string_view path,
                       const yaml::Value &v);
Status applyEnv(const TableView &t, const std::map<std::string, std::string> &env,
                yaml::Value &root, EnvApplied &out);

template <typename C> TableView viewOf(const KeyTable<C> &table) {
  TableView t{{}, table.env_prefix, table.list_separator, &table.removed};
  for (const Key<C> &row : table.rows)
    t.specs.push_back(&row.spec);
  return t;
}

template <typename C>
Status checkLevel(const KeyTable<C> &table, const TableView &t, const KeyReader &r,
                  const yaml::Value &block, const std::string &prefix) {
  for (const auto &[key, value] : block.map) {
    const std::string path = prefix + key;
    RS_RETURN_IF_ERROR(removedKeyError(t, r, path, value));
    if (const KeySpec *spec = findSpec(t, path); spec && spec->in_file) {
      if (spec->type == ValueType::kModelMap)
        for (const Key<C> &row : table.rows)
          if (&row.spec == spec && !value.isNull())
            RS_RETURN_IF_ERROR(row.map.check(r, value));
      continue;
    }
    if (!isSectionOf(t, path))
      return yaml::unknownKey(value, r.file());
    if (value.isNull())
      continue;
    if (!value.isMap())
      return r.error(value, path) << "expected a map, got " << value.kindName();
    RS_RETURN_IF_ERROR(checkLevel(table, t, r, value, path + "."));
  }
  return Status::ok();
}

} // namespace detail

/// Rejects unknown and removed keys of `block` (a map or null) against `table`; messages
/// name the reader's file and each key's origin.
template <typename C>
Status checkKeys(const KeyTable<C> &table, const KeyReader &r, const yaml::Value &block) {
  if (block.isNull())
    return Status::ok();
  if (!block.isMap())
    return r.error(block, "") << "expected a map, got " << block.kindName();
  return detail::checkLevel(table, detail::viewOf(table), r, block, "");
}

/// Applies the table's variables of `env` onto `root` (each at its key's path, origin
/// "environment override VAR"); an unknown variable with the table's prefix is an error.
template <typename C>
Status applyEnvironment(const KeyTable<C> &table, const std::map<std::string, std::string> &env,
                        yaml::Value &root, EnvApplied &out) {
  return detail::applyEnv(detail::viewOf(table), env, root, out);
}

/// Sets every row of `table` in `c`: its default, then the value below the reader's root.
template <typename C> Status readKeys(const KeyTable<C> &table, const KeyReader &r, C &c) {
  for (const Key<C> &row : table.rows) {
    const KeySpec &spec = row.spec;
    if (spec.type == ValueType::kStructure)
      continue;
    const yaml::Value *v = r.lookup(spec.path);
    if (spec.type == ValueType::kModelMap) {
      if (v)
        RS_RETURN_IF_ERROR(row.map.read(r, *v, c));
      continue;
    }
    const FieldRef f = row.field(c);
    RS_RETURN_IF_ERROR(r.setDefault(spec, f));
    if (v)
      RS_RETURN_IF_ERROR(r.read(spec, *v, f));
  }
  return Status::ok();
}

/// Every setting of `c` as ("<prefix><path>", text) in table order (aliases and kStructure
/// rows left out; model maps as "<path>.<name>.<key>").
template <typename C>
void appendSettings(const KeyTable<C> &table, const C &c, const std::string &prefix,
                    Settings &out) {
  // The rows give mutable fields; reading them here changes nothing.
  C &mutable_c = const_cast<C &>(c);
  for (const Key<C> &row : table.rows) {
    const KeySpec &spec = row.spec;
    if (spec.type == ValueType::kStructure || spec.alias)
      continue;
    if (spec.type == ValueType::kModelMap) {
      row.map.print(c, prefix + std::string(spec.path), out);
      continue;
    }
    out.emplace_back(prefix + std::string(spec.path), fieldText(spec, row.field(mutable_c)));
  }
}

/// The hooks of a kModelMap row at `path` whose entries, `std::map<std::string, M>` at
/// `at(c)`, are rows of `entries`; messages about an entry that is not a map list the
/// entry keys ("expected a map {weight, residency, max_batch_size}").
template <typename C, typename M>
MapHooks<C> modelMapHooks(std::map<std::string, M> &(*at)(C &), const KeyTable<M> *entries,
                          std::string_view path) {
  MapHooks<C> h;
  auto summary = [entries] {
    std::string s = "{";
    for (const Key<M> &row : entries->rows)
      if (!row.spec.alias)
        s += (s.size() > 1 ? ", " : "") + std::string(row.spec.path);
    return s + "}";
  };
  auto forEachEntry = [path, summary](const KeyReader &r, const yaml::Value &map,
                                      const auto &visit) -> Status {
    if (!map.isMap())
      return r.error(map, path) << "expected a map of model name to settings, got "
                                << map.kindName();
    for (const auto &[name, block] : map.map) {
      const std::string key = std::string(path) + "." + name;
      if (!block.isNull() && !block.isMap())
        return r.error(block, key)
               << "expected a map " << summary() << ", got " << block.kindName();
      RS_RETURN_IF_ERROR(visit(name, block, r.below(block, r.label() + key + ".")));
    }
    return Status::ok();
  };
  h.check = [entries, forEachEntry](const KeyReader &r, const yaml::Value &map) {
    return forEachEntry(
        r, map, [&](const std::string &, const yaml::Value &block, const KeyReader &) -> Status {
          if (block.isNull())
            return Status::ok();
          for (const auto &[key, value] : block.map) {
            bool known = false;
            for (const Key<M> &row : entries->rows)
              known = known || row.spec.path == key;
            if (!known)
              return yaml::unknownKey(value, r.file());
          }
          return Status::ok();
        });
  };
  h.read = [at, entries, forEachEntry](const KeyReader &r, const yaml::Value &map, C &c) {
    return forEachEntry(
        r, map,
        [&](const std::string &name, const yaml::Value &, const KeyReader &entry) -> Status {
          M m;
          RS_RETURN_IF_ERROR(readKeys(*entries, entry, m));
          at(c)[name] = std::move(m);
          return Status::ok();
        });
  };
  h.print = [at, entries](const C &c, const std::string &prefix, Settings &out) {
    for (const auto &[name, m] : at(const_cast<C &>(c)))
      appendSettings(*entries, m, prefix + "." + name + ".", out);
  };
  h.entry_specs = [entries] { return detail::specsOf(*entries); };
  return h;
}

namespace detail {
template <typename C> std::vector<DocRow> specsOf(const KeyTable<C> &table) {
  std::vector<DocRow> out;
  for (const Key<C> &row : table.rows) {
    out.push_back({std::string(row.spec.path), row.spec});
    if (row.spec.type != ValueType::kModelMap)
      continue;
    for (DocRow sub : row.map.entry_specs()) {
      sub.path = std::string(row.spec.path) + ".<name>." + sub.path;
      sub.spec.env = kNoEnv;
      out.push_back(std::move(sub));
    }
  }
  return out;
}
} // namespace detail

} // namespace rs::config
