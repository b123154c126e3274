//===- support/yaml.cc - YAML values that remember where they were written -===//
#include "support/yaml.h"
#include "support/file.h"
#include "support/text.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>

namespace rs::yaml {

const Value *Value::find(std::string_view key) const {
  if (kind != Kind::kMap)
    return nullptr;
  auto it = map.find(std::string(key));
  return it == map.end() ? nullptr : &it->second;
}

std::string_view Value::kindName() const {
  switch (kind) {
  case Kind::kNull: return "null";
  case Kind::kScalar: return "a scalar";
  case Kind::kList: return "a list";
  case Kind::kMap: return "a map";
  }
  return "null";
}

Value Value::scalarValue(std::string text, std::string origin, Mark mark) {
  Value v;
  v.kind = Kind::kScalar;
  v.scalar = std::move(text);
  v.origin = std::move(origin);
  v.mark = mark;
  return v;
}

Value Value::mapValue(std::string origin, Mark mark) {
  Value v;
  v.kind = Kind::kMap;
  v.origin = std::move(origin);
  v.mark = mark;
  return v;
}

std::string childOrigin(std::string_view parent_origin, std::string_view key) {
  if (parent_origin.empty())
    return std::string(key);
  return std::string(parent_origin) + "." + std::string(key);
}

// --- reading ---------------------------------------------------------------------------

namespace {

Mark markOf(const YAML::Mark &m) {
  if (m.is_null())
    return {};
  return {m.line + 1, m.column + 1};
}

std::string locationText(std::string_view file, Mark m) {
  std::string out(file);
  if (m.known())
    out += ":" + std::to_string(m.line) + ":" + std::to_string(m.column);
  return out;
}

Status convert(const YAML::Node &node, const std::string &origin, Mark mark, std::string_view file,
               Value &out) {
  out.origin = origin;
  out.mark = mark;
  switch (node.Type()) {
  case YAML::NodeType::Undefined:
  case YAML::NodeType::Null: out.kind = Value::Kind::kNull; return Status::ok();
  case YAML::NodeType::Scalar:
    out.kind = Value::Kind::kScalar;
    out.scalar = node.Scalar();
    return Status::ok();
  case YAML::NodeType::Sequence:
    out.kind = Value::Kind::kList;
    for (size_t i = 0; i < node.size(); ++i) {
      Value item;
      RS_RETURN_IF_ERROR(convert(node[i], origin + "[" + std::to_string(i) + "]",
                                 markOf(node[i].Mark()), file, item));
      out.list.push_back(std::move(item));
    }
    return Status::ok();
  case YAML::NodeType::Map:
    out.kind = Value::Kind::kMap;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const Mark key_mark = markOf(it->first.Mark());
      if (!it->first.IsScalar())
        return invalidArgument() << locationText(file, key_mark) << ": "
                                 << (origin.empty() ? "top level" : origin)
                                 << ": map keys must be scalars";
      const std::string key = it->first.Scalar();
      if (out.map.count(key))
        return invalidArgument() << locationText(file, key_mark) << ": duplicate key '"
                                 << childOrigin(origin, key) << "'";
      Value child;
      RS_RETURN_IF_ERROR(convert(it->second, childOrigin(origin, key), key_mark, file, child));
      out.map.emplace(key, std::move(child));
    }
    return Status::ok();
  }
  return Status::ok();
}

} // namespace

Result<Value> parse(std::string_view text, std::string_view file) {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    Value out;
    RS_RETURN_IF_ERROR(convert(root, "", markOf(root.Mark()), file, out));
    return out;
  } catch (const YAML::Exception &e) {
    return invalidArgument() << locationText(file, markOf(e.mark)) << ": invalid yaml: " << e.msg;
  } catch (const std::exception &e) {
    return invalidArgument() << file << ": invalid yaml: " << e.what();
  }
}

Result<Value> loadFile(const std::string &path) {
  RS_ASSIGN_OR_RETURN(std::string text, readWholeFile(path));
  return parse(text, path);
}

// --- the tree --------------------------------------------------------------------------

const Value *findPath(const Value &root, std::string_view dotted_path) {
  const Value *cur = &root;
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

void setPath(Value &root, std::string_view dotted_path, Value value) {
  Value *cur = &root;
  size_t start = 0;
  while (true) {
    if (!cur->isMap()) {
      cur->kind = Value::Kind::kMap;
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
    Value &child = cur->map[key];
    if (child.origin.empty()) {
      child.origin = value.origin;
      child.mark = value.mark;
    }
    cur = &child;
    start = dot + 1;
  }
}

void deepMerge(Value &base, const Value &over) {
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

namespace {

void emit(YAML::Emitter &out, const Value &v) {
  switch (v.kind) {
  case Value::Kind::kNull: out << YAML::Null; return;
  case Value::Kind::kScalar: out << v.scalar; return;
  case Value::Kind::kList:
    out << YAML::BeginSeq;
    for (const Value &item : v.list)
      emit(out, item);
    out << YAML::EndSeq;
    return;
  case Value::Kind::kMap:
    out << YAML::BeginMap;
    for (const auto &[key, item] : v.map) {
      out << YAML::Key << key << YAML::Value;
      emit(out, item);
    }
    out << YAML::EndMap;
    return;
  }
}

} // namespace

std::string flowText(const Value &v) {
  if (v.isScalar())
    return v.scalar;
  if (v.isNull())
    return "";
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  emit(out, v);
  return out.c_str();
}

// --- the grammar -------------------------------------------------------------------------

std::optional<int64_t> parseInteger(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '+')
    text.remove_prefix(1);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    return std::nullopt;
  return v;
}

std::optional<double> parseNumber(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '+')
    text.remove_prefix(1);
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

std::optional<bool> parseBoolean(std::string_view text) {
  const std::string s = lower(trim(text));
  if (s == "true" || s == "yes" || s == "on" || s == "1")
    return true;
  if (s == "false" || s == "no" || s == "off" || s == "0")
    return false;
  return std::nullopt;
}

std::string numberText(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

// --- messages ----------------------------------------------------------------------------

std::string location(const Value &v, std::string_view file) { return locationText(file, v.mark); }

std::string where(const Value &v, std::string_view file) {
  if (v.outside)
    return v.origin;
  std::string out = location(v, file);
  if (!v.origin.empty())
    out += ": " + v.origin;
  return out;
}

StatusBuilder errorAt(const Value &v, std::string_view file) {
  StatusBuilder b = invalidArgument();
  b << where(v, file) << ": ";
  return b;
}

std::string wrongKind(std::string_view what, const Value &v) {
  return "expected " + std::string(what) + ", got " + std::string(v.kindName());
}

std::string wrongText(std::string_view what, std::string_view text) {
  return "expected " + std::string(what) + ", got '" + std::string(text) + "'";
}

Result<std::string> scalarOf(const Value &v, std::string_view file) {
  if (!v.isScalar())
    return Status(errorAt(v, file) << wrongKind(kSingleValue, v));
  return v.scalar;
}

Result<int64_t> integerOf(const Value &v, std::string_view file) {
  RS_ASSIGN_OR_RETURN(std::string text, scalarOf(v, file));
  std::optional<int64_t> x = parseInteger(text);
  if (!x)
    return Status(errorAt(v, file) << wrongText(kInteger, text));
  return *x;
}

Status unknownKey(const Value &v, std::string_view file) {
  return invalidArgument() << location(v, file) << ": unknown key '" << v.origin << "'";
}

} // namespace rs::yaml
