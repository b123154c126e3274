//===- config/tree.cc - YAML values with their origin ----------------------===//
#include "config/tree.h"
#include "support/file.h"

#include <yaml-cpp/yaml.h>

#include <iterator>

namespace rs::config {

const ConfigValue *ConfigValue::find(std::string_view key) const {
  if (kind != Kind::kMap)
    return nullptr;
  auto it = map.find(std::string(key));
  return it == map.end() ? nullptr : &it->second;
}

std::string_view ConfigValue::kindName() const {
  switch (kind) {
  case Kind::kNull: return "null";
  case Kind::kScalar: return "a scalar";
  case Kind::kList: return "a list";
  case Kind::kMap: return "a map";
  }
  return "null";
}

ConfigValue ConfigValue::scalarValue(std::string text, std::string origin) {
  ConfigValue v;
  v.kind = Kind::kScalar;
  v.scalar = std::move(text);
  v.origin = std::move(origin);
  return v;
}

std::string childOrigin(std::string_view parent_origin, std::string_view key) {
  if (parent_origin.empty())
    return std::string(key);
  return std::string(parent_origin) + "." + std::string(key);
}

namespace {

Status convert(const YAML::Node &node, const std::string &origin, std::string_view file,
               ConfigValue &out) {
  out.origin = origin;
  switch (node.Type()) {
  case YAML::NodeType::Undefined:
  case YAML::NodeType::Null: out.kind = ConfigValue::Kind::kNull; return Status::ok();
  case YAML::NodeType::Scalar:
    out.kind = ConfigValue::Kind::kScalar;
    out.scalar = node.Scalar();
    return Status::ok();
  case YAML::NodeType::Sequence:
    out.kind = ConfigValue::Kind::kList;
    for (size_t i = 0; i < node.size(); ++i) {
      ConfigValue item;
      RS_RETURN_IF_ERROR(convert(node[i], origin + "[" + std::to_string(i) + "]", file, item));
      out.list.push_back(std::move(item));
    }
    return Status::ok();
  case YAML::NodeType::Map:
    out.kind = ConfigValue::Kind::kMap;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar())
        return invalidArgument() << file << ": " << (origin.empty() ? "top level" : origin)
                                 << ": map keys must be scalars";
      const std::string key = it->first.Scalar();
      if (out.map.count(key))
        return invalidArgument() << file << ": duplicate key '" << childOrigin(origin, key) << "'";
      ConfigValue child;
      RS_RETURN_IF_ERROR(convert(it->second, childOrigin(origin, key), file, child));
      out.map.emplace(key, std::move(child));
    }
    return Status::ok();
  }
  return Status::ok();
}

} // namespace

Result<ConfigValue> parseYaml(std::string_view text, std::string_view file) {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    ConfigValue out;
    RS_RETURN_IF_ERROR(convert(root, "", file, out));
    return out;
  } catch (const YAML::Exception &e) {
    if (e.mark.is_null())
      return invalidArgument() << file << ": invalid yaml: " << e.msg;
    return invalidArgument() << file << ":" << e.mark.line + 1 << ":" << e.mark.column + 1
                             << ": invalid yaml: " << e.msg;
  } catch (const std::exception &e) {
    return invalidArgument() << file << ": invalid yaml: " << e.what();
  }
}

Result<ConfigValue> loadYamlFile(const std::string &path) {
  RS_ASSIGN_OR_RETURN(std::string text, readWholeFile(path));
  return parseYaml(text, path);
}

const ConfigValue *findPath(const ConfigValue &root, std::string_view dotted_path) {
  const ConfigValue *cur = &root;
  size_t start = 0;
  while (cur) {
    size_t dot = dotted_path.find('.', start);
    cur = cur->find(dotted_path.substr(start, dot == std::string_view::npos ? std::string_view::npos
                                                                            : dot - start));
    if (dot == std::string_view::npos)
      break;
    start = dot + 1;
  }
  return cur;
}

void setPath(ConfigValue &root, std::string_view dotted_path, ConfigValue value) {
  ConfigValue *cur = &root;
  size_t start = 0;
  while (true) {
    if (!cur->isMap()) {
      cur->kind = ConfigValue::Kind::kMap;
      cur->scalar.clear();
      cur->list.clear();
    }
    size_t dot = dotted_path.find('.', start);
    std::string key(dotted_path.substr(start, dot == std::string_view::npos ? std::string_view::npos
                                                                            : dot - start));
    if (dot == std::string_view::npos) {
      cur->map[key] = std::move(value);
      return;
    }
    ConfigValue &child = cur->map[key];
    if (child.origin.empty())
      child.origin = value.origin;
    cur = &child;
    start = dot + 1;
  }
}

void deepMerge(ConfigValue &base, const ConfigValue &over) {
  if (base.isMap() && over.isMap()) {
    for (const auto &[key, value] : over.map) {
      auto it = base.map.find(key);
      if (it == base.map.end())
        base.map.emplace(key, value);
      else
        deepMerge(it->second, value);
    }
    return;
  }
  base = over;
}

} // namespace rs::config
