//===- config/key_env.cc - Environment overrides through a key table -------===//
//
// The variables of a key table (INFERENCE_SERVER_*, REACTANT_GATEWAY_*) applied onto a
// configuration tree, each value marked as set outside the file (config/key_reader.h).
//
//===----------------------------------------------------------------------===//
#include "config/key_reader.h"
#include "support/text.h"

#include <algorithm>
#include <cctype>

namespace rs::config {

std::string envVarOf(const KeySpec &spec, std::string_view prefix) {
  if (spec.env == kNoEnv)
    return "";
  if (!spec.env.empty())
    return std::string(spec.env);
  if (prefix.empty())
    return "";
  std::string var(prefix);
  for (char c : spec.path)
    var += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return var;
}

namespace detail {

namespace {

/// INFERENCE_SERVER_RUNTIME_XLA_FLAGS: "name=value" items separated by blanks or commas,
/// a leading "--" optional.
Result<yaml::Value> envFlagMap(const std::string &var, const std::string &value,
                               const std::string &origin) {
  yaml::Value flags;
  flags.kind = yaml::Value::Kind::kMap;
  std::string item;
  auto flush = [&]() -> Status {
    if (item.empty())
      return Status::ok();
    std::string_view s = item;
    if (s.starts_with("--"))
      s.remove_prefix(2);
    size_t eq = s.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == s.size())
      return invalidArgument() << "environment override " << var << ": item '" << item
                               << "' is not name=value";
    yaml::Value v = yaml::Value::scalarValue(std::string(s.substr(eq + 1)), origin);
    v.outside = true;
    flags.map[std::string(s.substr(0, eq))] = std::move(v);
    item.clear();
    return Status::ok();
  };
  for (char c : value) {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      RS_RETURN_IF_ERROR(flush());
    } else {
      item += c;
    }
  }
  RS_RETURN_IF_ERROR(flush());
  return flags;
}

yaml::Value envList(const std::string &value, char separator, const std::string &origin) {
  yaml::Value list;
  list.kind = yaml::Value::Kind::kList;
  std::string_view rest = value;
  while (true) {
    const size_t sep = rest.find(separator);
    const std::string_view item = trim(rest.substr(0, sep));
    if (!item.empty()) {
      yaml::Value s = yaml::Value::scalarValue(std::string(item), origin);
      s.outside = true;
      list.list.push_back(std::move(s));
    }
    if (sep == std::string_view::npos)
      break;
    rest.remove_prefix(sep + 1);
  }
  return list;
}

} // namespace

Status applyEnv(const TableView &t, const std::map<std::string, std::string> &env,
                yaml::Value &root, EnvApplied &out) {
  if (t.env_prefix.empty())
    return Status::ok();
  for (const auto &[var, value] : env) {
    if (!std::string_view(var).starts_with(t.env_prefix))
      continue;
    const std::string_view suffix = std::string_view(var).substr(t.env_prefix.size());
    for (const RemovedKey &removed : *t.removed)
      if (!removed.env_suffix.empty() &&
          (removed.env_prefix_match ? suffix.starts_with(removed.env_suffix)
                                    : suffix == removed.env_suffix))
        return invalidArgument() << "environment override " << var << ": " << removed.message;
    const KeySpec *spec = nullptr;
    for (const KeySpec *s : t.specs)
      if (envVarOf(*s, t.env_prefix) == var)
        spec = s;
    if (!spec)
      return invalidArgument() << "environment: unknown variable " << var
                               << " (not a configuration key)";
    if (spec->type == ValueType::kStructure) // read by its own code (a file path)
      continue;
    const std::string origin = "environment override " + var;
    yaml::Value v;
    if (spec->type == ValueType::kTextList) {
      v = envList(value, spec->list_separator ? spec->list_separator : t.list_separator, origin);
    } else if (spec->type == ValueType::kXlaFlags) {
      RS_ASSIGN_OR_RETURN(v, envFlagMap(var, value, origin));
    } else {
      v = yaml::Value::scalarValue(value, origin);
    }
    v.origin = origin;
    v.outside = true;
    setPath(root, spec->path, std::move(v));
    out.overrides.emplace_back(var, value);
    out.keys.insert(std::string(spec->path));
  }
  std::sort(out.overrides.begin(), out.overrides.end());
  return Status::ok();
}

} // namespace detail
} // namespace rs::config
