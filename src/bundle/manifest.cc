//===- bundle/manifest.cc - manifest.yaml (bundle format 2.0) --------------===//
#include "bundle/manifest.h"
#include "support/file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <iterator>
#include <set>

namespace rs::bundle {

bool TensorSpec::hasVariableDims() const {
  return std::any_of(axes.begin(), axes.end(),
                     [](const Dim &d) { return d.kind == DimKind::kVariable; });
}

Shape TensorSpec::wireShape() const {
  Shape shape;
  for (const Dim &d : axes)
    shape.push_back(d.kind == DimKind::kFixed ? d.size : -1);
  return shape;
}

Shape TensorSpec::shapeForBatch(int64_t batch_size, const ShapeVariant &variant) const {
  Shape shape;
  for (const Dim &d : axes) {
    switch (d.kind) {
    case DimKind::kFixed: shape.push_back(d.size); break;
    case DimKind::kBatch: shape.push_back(batch_size); break;
    case DimKind::kVariable: {
      auto it = variant.find(d.letter);
      shape.push_back(it == variant.end() ? -1 : it->second);
      break;
    }
    }
  }
  return shape;
}

std::string TensorSpec::toString() const {
  return std::string(dtypeManifestName(dtype)) + shapeToString(wireShape());
}

int64_t Manifest::maxBatchSize() const {
  return compiled_batch_sizes.empty() ? 0 : compiled_batch_sizes.back();
}

namespace {

bool isBatchLetter(char c) { return c == 'n' || c == 'b'; }
bool isAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

const char *nodeTypeName(const YAML::Node &n) {
  switch (n.Type()) {
  case YAML::NodeType::Null: return "null";
  case YAML::NodeType::Scalar: return "a scalar";
  case YAML::NodeType::Sequence: return "a list";
  case YAML::NodeType::Map: return "a map";
  case YAML::NodeType::Undefined: return "nothing";
  }
  return "unknown";
}

/// Parses one manifest; every error names `file_` and the field.
class ManifestParser {
public:
  ManifestParser(std::string_view file, std::string_view model_name)
      : file_(file), model_name_(model_name) {}

  Result<Manifest> parse(const YAML::Node &root);

private:
  StatusBuilder error(std::string_view field) const {
    StatusBuilder b = invalidArgument();
    b << file_ << ": ";
    if (!field.empty())
      b << field << ": ";
    return b;
  }
  static std::string join(std::string_view a, std::string_view b) {
    return a.empty() ? std::string(b) : std::string(a) + "." + std::string(b);
  }

  /// Rejects duplicate and unknown keys of map `node` (at `field`, "" = top level).
  Status checkKeys(const YAML::Node &node, std::string_view field,
                   const std::set<std::string> &allowed) const;
  Result<std::string> scalar(const YAML::Node &node, std::string_view field) const;
  Result<int64_t> integer(const YAML::Node &node, std::string_view field) const;
  Result<TensorSpec> parseSpec(const YAML::Node &node, const std::string &field) const;
  Result<std::vector<TensorSpec>> parseSection(const YAML::Node &root, const char *key) const;
  Status parseBatching(const YAML::Node &node, Manifest &m) const;
  Status parseInputShapes(const YAML::Node &node, Manifest &m) const;
  Status parseMeta(const YAML::Node &node, Manifest &m) const;
  Status checkBatchability(Manifest &m) const;

  std::string file_;
  std::string model_name_;
};

Status ManifestParser::checkKeys(const YAML::Node &node, std::string_view field,
                                 const std::set<std::string> &allowed) const {
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar())
      return error(field) << "map keys must be scalars";
    const std::string key = it->first.Scalar();
    if (!seen.insert(key).second)
      return error(field) << "duplicate key '" << join(field, key) << "'";
    if (!allowed.count(key))
      return error("") << "unknown key '" << join(field, key) << "'";
  }
  return Status::ok();
}

Result<std::string> ManifestParser::scalar(const YAML::Node &node, std::string_view field) const {
  if (!node.IsScalar())
    return error(field) << "expected a string, got " << nodeTypeName(node);
  return node.Scalar();
}

Result<int64_t> ManifestParser::integer(const YAML::Node &node, std::string_view field) const {
  int64_t v = 0;
  if (!node.IsScalar() || !YAML::convert<int64_t>::decode(node, v))
    return error(field) << "expected an integer, got "
                        << (node.IsScalar() ? "'" + node.Scalar() + "'" : nodeTypeName(node));
  return v;
}

Result<TensorSpec> ManifestParser::parseSpec(const YAML::Node &node,
                                             const std::string &field) const {
  if (!node.IsMap())
    return error(field) << "expected a tensor spec map {name, dtype, shape, dims}, got "
                        << nodeTypeName(node);
  RS_RETURN_IF_ERROR(checkKeys(node, field, {"name", "dtype", "shape", "dims"}));
  TensorSpec spec;
  for (const char *required : {"name", "dtype", "shape"})
    if (!node[required])
      return error(field) << "missing required field '" << required << "'";

  RS_ASSIGN_OR_RETURN(spec.name, scalar(node["name"], field + ".name"));
  if (spec.name.empty())
    return error(field + ".name") << "must not be empty";

  RS_ASSIGN_OR_RETURN(std::string dtype, scalar(node["dtype"], field + ".dtype"));
  std::optional<DType> parsed = dtypeFromManifestName(dtype);
  if (!parsed) {
    if (dtype == "f8_e5m2" || dtype == "f8_e4m3")
      return unimplemented() << file_ << ": " << field << ".dtype: dtype '" << dtype
                             << "' is not supported by this server";
    return error(field + ".dtype")
           << "unknown dtype '" << dtype
           << "' (expected one of f16 f32 f64 bf16 i8 i16 i32 i64 u8 u16 u32 u64 bool)";
  }
  spec.dtype = *parsed;

  RS_ASSIGN_OR_RETURN(spec.letters, scalar(node["shape"], field + ".shape"));
  std::set<char> letters;
  char batch_letter = 0;
  for (char c : spec.letters) {
    if (!isAsciiLetter(c))
      return error(field + ".shape")
             << "'" << spec.letters << "' must be ASCII letters, one per axis";
    if (!letters.insert(c).second)
      return error(field + ".shape")
             << "letter '" << c << "' appears twice in '" << spec.letters << "'";
    if (isBatchLetter(c)) {
      if (batch_letter)
        return error(field + ".shape") << "'" << spec.letters << "' has two batch markers '"
                                       << batch_letter << "' and '" << c << "'";
      batch_letter = c;
    }
  }

  const YAML::Node dims = node["dims"];
  if (dims && !dims.IsNull()) {
    if (!dims.IsMap())
      return error(field + ".dims") << "expected a map {letter: size}, got " << nodeTypeName(dims);
    for (auto it = dims.begin(); it != dims.end(); ++it) {
      RS_ASSIGN_OR_RETURN(std::string key, scalar(it->first, field + ".dims"));
      if (key.size() != 1 || !isAsciiLetter(key[0]))
        return error(field + ".dims") << "key '" << key << "' is not a single letter";
      const char letter = key[0];
      if (isBatchLetter(letter))
        return error(field + ".dims")
               << "letter '" << letter << "' is a batch marker and cannot have a size";
      if (!letters.count(letter))
        return error(field + ".dims")
               << "letter '" << letter << "' is not in shape '" << spec.letters << "'";
      if (spec.dims.count(letter))
        return error(field + ".dims") << "duplicate letter '" << letter << "'";
      RS_ASSIGN_OR_RETURN(int64_t size, integer(it->second, field + ".dims." + key));
      if (size <= 0 && size != -1)
        return error(field + ".dims." + key) << "size " << size << " must be > 0 or -1 (variable)";
      spec.dims[letter] = size;
    }
  }

  for (auto it = spec.letters.rbegin(); it != spec.letters.rend(); ++it) {
    const char c = *it;
    Dim d;
    d.letter = c;
    if (isBatchLetter(c)) {
      d.kind = DimKind::kBatch;
      spec.batch_axis = static_cast<int>(spec.axes.size());
    } else {
      auto size = spec.dims.find(c);
      if (size == spec.dims.end())
        return error(field + ".dims")
               << "letter '" << c << "' of shape '" << spec.letters << "' has no size";
      d.kind = size->second == -1 ? DimKind::kVariable : DimKind::kFixed;
      d.size = size->second;
    }
    spec.axes.push_back(d);
  }
  return spec;
}

Result<std::vector<TensorSpec>> ManifestParser::parseSection(const YAML::Node &root,
                                                             const char *key) const {
  std::vector<TensorSpec> specs;
  const YAML::Node list = root[key];
  if (!list || list.IsNull())
    return specs;
  if (!list.IsSequence())
    return error(key) << "expected a list of tensor specs, got " << nodeTypeName(list);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string field = std::string(key) + "[" + std::to_string(i) + "]";
    RS_ASSIGN_OR_RETURN(TensorSpec spec, parseSpec(list[i], field));
    for (size_t j = 0; j < specs.size(); ++j)
      if (specs[j].name == spec.name)
        return error(field + ".name")
               << "duplicate name '" << spec.name << "' (also " << key << "[" << j << "])";
    specs.push_back(std::move(spec));
  }
  return specs;
}

Status ManifestParser::parseBatching(const YAML::Node &node, Manifest &m) const {
  if (!node || node.IsNull())
    return Status::ok();
  if (!node.IsMap())
    return error("batching") << "expected a map {compiled_batch_sizes: [..]}, got "
                             << nodeTypeName(node);
  RS_RETURN_IF_ERROR(checkKeys(node, "batching", {"compiled_batch_sizes"}));
  const YAML::Node sizes = node["compiled_batch_sizes"];
  if (!sizes || sizes.IsNull())
    return Status::ok();
  if (!sizes.IsSequence())
    return error("batching.compiled_batch_sizes")
           << "expected a list of integers, got " << nodeTypeName(sizes);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string field = "batching.compiled_batch_sizes[" + std::to_string(i) + "]";
    RS_ASSIGN_OR_RETURN(int64_t size, integer(sizes[i], field));
    if (size <= 0)
      return error(field) << "batch size " << size << " must be > 0";
    if (std::find(m.compiled_batch_sizes.begin(), m.compiled_batch_sizes.end(), size) !=
        m.compiled_batch_sizes.end())
      return error(field) << "duplicate batch size " << size;
    m.compiled_batch_sizes.push_back(size);
  }
  std::sort(m.compiled_batch_sizes.begin(), m.compiled_batch_sizes.end());
  return Status::ok();
}

Status ManifestParser::parseInputShapes(const YAML::Node &node, Manifest &m) const {
  std::set<char> variable;
  for (const TensorSpec &spec : m.executable_inputs)
    for (const Dim &d : spec.axes)
      if (d.kind == DimKind::kVariable)
        variable.insert(d.letter);

  const bool present = node && !node.IsNull();
  if (m.kind == BundleKind::kMeta) {
    if (present)
      return error("input_shapes") << "not allowed for kind: meta";
    return Status::ok();
  }
  if (!present) {
    if (!variable.empty())
      return error("input_shapes") << "required: executable inputs have variable (-1) axes '"
                                   << std::string(variable.begin(), variable.end()) << "'";
    return Status::ok();
  }
  if (!node.IsSequence())
    return error("input_shapes") << "expected a list of {letter: size} maps, got "
                                 << nodeTypeName(node);
  if (node.size() == 0)
    return error("input_shapes") << "must list at least one shape variant, got an empty list";
  if (variable.empty())
    return error("input_shapes") << "given but no executable input has a variable (-1) axis";
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string field = "input_shapes[" + std::to_string(i) + "]";
    const YAML::Node entry = node[i];
    if (!entry.IsMap())
      return error(field) << "expected a map {letter: size}, got " << nodeTypeName(entry);
    ShapeVariant variant;
    for (auto it = entry.begin(); it != entry.end(); ++it) {
      RS_ASSIGN_OR_RETURN(std::string key, scalar(it->first, field));
      if (key.size() != 1 || !variable.count(key[0]))
        return error(field) << "letter '" << key
                            << "' is not a variable (-1) axis of the executable inputs";
      if (variant.count(key[0]))
        return error(field) << "duplicate letter '" << key << "'";
      RS_ASSIGN_OR_RETURN(int64_t size, integer(it->second, field + "." + key));
      if (size <= 0)
        return error(field + "." + key) << "size " << size << " must be > 0";
      variant[key[0]] = size;
    }
    for (char c : variable)
      if (!variant.count(c))
        return error(field) << "variable letter '" << c << "' has no size";
    for (size_t j = 0; j < m.input_shapes.size(); ++j)
      if (m.input_shapes[j] == variant)
        return error(field) << "duplicates input_shapes[" << j << "]";
    m.input_shapes.push_back(std::move(variant));
  }
  return Status::ok();
}

Status ManifestParser::parseMeta(const YAML::Node &node, Manifest &m) const {
  const bool present = node && !node.IsNull();
  if (m.kind == BundleKind::kModel) {
    if (present)
      return error("meta") << "only allowed with kind: meta";
    return Status::ok();
  }
  if (!present)
    return error("meta") << "required for kind: meta";
  if (!node.IsMap())
    return error("meta") << "expected a map {calls: [..]}, got " << nodeTypeName(node);
  RS_RETURN_IF_ERROR(checkKeys(node, "meta", {"calls"}));
  const YAML::Node calls = node["calls"];
  if (!calls)
    return error("meta") << "missing required field 'calls'";
  if (calls.IsNull())
    return Status::ok(); // compute-only meta
  if (!calls.IsSequence())
    return error("meta.calls") << "expected a list of model names, got " << nodeTypeName(calls);
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string field = "meta.calls[" + std::to_string(i) + "]";
    RS_ASSIGN_OR_RETURN(std::string callee, scalar(calls[i], field));
    if (callee.empty())
      return error(field) << "must not be empty";
    if (!model_name_.empty() && callee == model_name_)
      return error(field) << "meta model '" << model_name_ << "' cannot call itself";
    if (std::find(m.meta_calls.begin(), m.meta_calls.end(), callee) != m.meta_calls.end())
      return error(field) << "duplicate model '" << callee << "'";
    m.meta_calls.push_back(callee);
  }
  return Status::ok();
}

Status ManifestParser::checkBatchability(Manifest &m) const {
  const TensorSpec *first_batched = nullptr;
  size_t first_index = 0;
  for (size_t i = 0; i < m.executable_inputs.size(); ++i)
    if (m.executable_inputs[i].batch_axis) {
      first_batched = &m.executable_inputs[i];
      first_index = i;
      break;
    }
  if (first_batched) {
    for (size_t i = 0; i < m.executable_inputs.size(); ++i)
      if (!m.executable_inputs[i].batch_axis)
        return error("executable_inputs[" + std::to_string(i) + "]")
               << "'" << m.executable_inputs[i].name << "' has no batch axis but executable_inputs["
               << first_index << "] '" << first_batched->name
               << "' does (batchability is all-or-nothing)";
    m.input_batch_dim = *first_batched->batch_axis;
  } else if (m.compiled_batch_sizes.size() > 1) {
    return error("batching.compiled_batch_sizes")
           << m.compiled_batch_sizes.size()
           << " compiled batch sizes need a batch axis (n or b) on the executable inputs";
  }
  return Status::ok();
}

std::string provenanceText(const YAML::Node &node) {
  if (node.IsScalar())
    return node.Scalar();
  if (node.IsNull())
    return "";
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

Result<Manifest> ManifestParser::parse(const YAML::Node &root) {
  if (!root.IsMap())
    return error("") << "expected a map at the top level, got " << nodeTypeName(root);
  RS_RETURN_IF_ERROR(checkKeys(
      root, "",
      {"format_version", "name", "description", "kind", "executable_inputs", "executable_outputs",
       "client_inputs", "client_outputs", "batching", "input_shapes", "meta", "provenance"}));
  Manifest m;
  if (!root["format_version"])
    return error("") << "missing required field 'format_version'";
  RS_ASSIGN_OR_RETURN(m.format_version, scalar(root["format_version"], "format_version"));
  if (m.format_version != "2.0" && m.format_version != "2")
    return error("format_version")
           << "unsupported version '" << m.format_version << "' (expected \"2.0\")";
  if (root["name"] && !root["name"].IsNull()) {
    RS_ASSIGN_OR_RETURN(m.name, scalar(root["name"], "name"));
  }
  if (root["description"] && !root["description"].IsNull()) {
    RS_ASSIGN_OR_RETURN(m.description, scalar(root["description"], "description"));
  }
  if (root["kind"]) {
    RS_ASSIGN_OR_RETURN(std::string kind, scalar(root["kind"], "kind"));
    if (kind == "meta")
      m.kind = BundleKind::kMeta;
    else if (kind != "model")
      return error("kind") << "unknown kind '" << kind << "' (expected model or meta)";
  }

  const bool is_model = m.kind == BundleKind::kModel;
  for (const char *key : {"executable_inputs", "executable_outputs"})
    if (is_model && !root[key])
      return error("") << "missing required field '" << key << "'";
  RS_ASSIGN_OR_RETURN(m.executable_inputs, parseSection(root, "executable_inputs"));
  RS_ASSIGN_OR_RETURN(m.executable_outputs, parseSection(root, "executable_outputs"));
  for (const char *key : {"client_inputs", "client_outputs"}) {
    if (is_model && root[key])
      return error(key) << "only allowed with model.jl pre/post-processing hooks, which this "
                           "server does not run";
  }
  RS_ASSIGN_OR_RETURN(m.client_inputs, parseSection(root, "client_inputs"));
  RS_ASSIGN_OR_RETURN(m.client_outputs, parseSection(root, "client_outputs"));
  if (!is_model) {
    if (m.client_inputs.empty())
      return error("client_inputs") << "required and non-empty for kind: meta";
    if (m.client_outputs.empty())
      return error("client_outputs") << "required and non-empty for kind: meta";
  }

  RS_RETURN_IF_ERROR(parseBatching(root["batching"], m));
  RS_RETURN_IF_ERROR(checkBatchability(m));
  RS_RETURN_IF_ERROR(parseInputShapes(root["input_shapes"], m));
  RS_RETURN_IF_ERROR(parseMeta(root["meta"], m));

  const YAML::Node provenance = root["provenance"];
  if (provenance && !provenance.IsNull()) {
    if (!provenance.IsMap())
      return error("provenance") << "expected a map, got " << nodeTypeName(provenance);
    for (auto it = provenance.begin(); it != provenance.end(); ++it) {
      RS_ASSIGN_OR_RETURN(std::string key, scalar(it->first, "provenance"));
      m.provenance[key] = provenanceText(it->second);
    }
  }
  return m;
}

} // namespace

Result<Manifest> parseManifest(std::string_view yaml, std::string_view file,
                               std::string_view model_name) {
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    ManifestParser parser(file, model_name);
    return parser.parse(root);
  } catch (const YAML::Exception &e) {
    if (e.mark.is_null())
      return invalidArgument() << file << ": invalid yaml: " << e.msg;
    return invalidArgument() << file << ":" << e.mark.line + 1 << ":" << e.mark.column + 1
                             << ": invalid yaml: " << e.msg;
  } catch (const std::exception &e) {
    return invalidArgument() << file << ": invalid yaml: " << e.what();
  }
}

Result<Manifest> loadManifest(const std::string &path, std::string_view model_name) {
  RS_ASSIGN_OR_RETURN(std::string text, readWholeFile(path));
  return parseManifest(text, path, model_name);
}

} // namespace rs::bundle
