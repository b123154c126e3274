//===- bundle/manifest.cc - manifest.yaml (bundle format 2.0) --------------===//
//
// The manifest's top level: format_version, name, description, kind, the four tensor-spec
// sections (read by manifest_tensors.cc), batching, input_shapes, meta and provenance,
// and the all-or-nothing batch-axis check; then parseManifest and loadManifest.
//
//===----------------------------------------------------------------------===//
#include "bundle/manifest.h"
#include "bundle/manifest_impl.h"
#include "support/yaml.h"

#include <algorithm>
#include <iterator>
#include <set>

namespace rs::bundle {

int64_t Manifest::maxBatchSize() const {
  return compiled_batch_sizes.empty() ? 0 : compiled_batch_sizes.back();
}

namespace detail {

using yaml::Value;

const Value *present(const Value &v, std::string_view key) {
  const Value *child = v.find(key);
  return child && !child->isNull() ? child : nullptr;
}

Status ManifestParser::checkKeys(const Value &v, const std::set<std::string> &allowed) const {
  for (const auto &[key, child] : v.map)
    if (!allowed.count(key))
      return yaml::unknownKey(child, file_);
  return Status::ok();
}

Status ManifestParser::parseBatching(const Value &root, Manifest &m) const {
  const Value *batching = present(root, "batching");
  if (!batching)
    return Status::ok();
  if (!batching->isMap())
    return error(*batching) << yaml::wrongKind("a map {compiled_batch_sizes: [..]}", *batching);
  RS_RETURN_IF_ERROR(checkKeys(*batching, {"compiled_batch_sizes"}));
  const Value *sizes = present(*batching, "compiled_batch_sizes");
  if (!sizes)
    return Status::ok();
  if (!sizes->isList())
    return error(*sizes) << yaml::wrongKind("a list of integers", *sizes);
  for (const Value &item : sizes->list) {
    RS_ASSIGN_OR_RETURN(int64_t size, integer(item));
    if (size <= 0)
      return error(item) << "batch size " << size << " must be > 0";
    if (std::find(m.compiled_batch_sizes.begin(), m.compiled_batch_sizes.end(), size) !=
        m.compiled_batch_sizes.end())
      return error(item) << "duplicate batch size " << size;
    m.compiled_batch_sizes.push_back(size);
  }
  std::sort(m.compiled_batch_sizes.begin(), m.compiled_batch_sizes.end());
  return Status::ok();
}

Status ManifestParser::parseInputShapes(const Value &root, Manifest &m) const {
  std::set<char> variable;
  for (const TensorSpec &spec : m.executable_inputs)
    for (const Dim &d : spec.axes)
      if (d.kind == DimKind::kVariable)
        variable.insert(d.letter);

  const Value *shapes = present(root, "input_shapes");
  if (m.kind == BundleKind::kMeta) {
    if (shapes)
      return error(*shapes) << "not allowed for kind: meta";
    return Status::ok();
  }
  if (!shapes) {
    if (!variable.empty())
      return error(Value::mapValue("input_shapes", root.mark))
             << "required: executable inputs have variable (-1) axes '"
             << std::string(variable.begin(), variable.end()) << "'";
    return Status::ok();
  }
  if (!shapes->isList())
    return error(*shapes) << yaml::wrongKind("a list of {letter: size} maps", *shapes);
  if (shapes->list.empty())
    return error(*shapes) << "must list at least one shape variant, got an empty list";
  if (variable.empty())
    return error(*shapes) << "given but no executable input has a variable (-1) axis";
  for (const Value &entry : shapes->list) {
    if (!entry.isMap())
      return error(entry) << yaml::wrongKind("a map {letter: size}", entry);
    ShapeVariant variant;
    for (const auto &[key, size_value] : entry.map) {
      if (key.size() != 1 || !variable.count(key[0]))
        return error(entry) << "letter '" << key
                            << "' is not a variable (-1) axis of the executable inputs";
      RS_ASSIGN_OR_RETURN(int64_t size, integer(size_value));
      if (size <= 0)
        return error(size_value) << "size " << size << " must be > 0";
      variant[key[0]] = size;
    }
    for (char c : variable)
      if (!variant.count(c))
        return error(entry) << "variable letter '" << c << "' has no size";
    for (size_t j = 0; j < m.input_shapes.size(); ++j)
      if (m.input_shapes[j] == variant)
        return error(entry) << "duplicates input_shapes[" << j << "]";
    m.input_shapes.push_back(std::move(variant));
  }
  return Status::ok();
}

Status ManifestParser::parseMeta(const Value &root, Manifest &m) const {
  const Value *meta = present(root, "meta");
  if (m.kind == BundleKind::kModel) {
    if (meta)
      return error(*meta) << "only allowed with kind: meta";
    return Status::ok();
  }
  if (!meta)
    return error(Value::mapValue("meta", root.mark)) << "required for kind: meta";
  if (!meta->isMap())
    return error(*meta) << yaml::wrongKind("a map {calls: [..]}", *meta);
  RS_RETURN_IF_ERROR(checkKeys(*meta, {"calls"}));
  const Value *calls = meta->find("calls");
  if (!calls)
    return error(*meta) << "missing required field 'calls'";
  if (calls->isNull())
    return Status::ok(); // compute-only meta
  if (!calls->isList())
    return error(*calls) << yaml::wrongKind("a list of model names", *calls);
  for (const Value &item : calls->list) {
    RS_ASSIGN_OR_RETURN(std::string callee, scalar(item));
    if (callee.empty())
      return error(item) << "must not be empty";
    if (!model_name_.empty() && callee == model_name_)
      return error(item) << "meta model '" << model_name_ << "' cannot call itself";
    if (std::find(m.meta_calls.begin(), m.meta_calls.end(), callee) != m.meta_calls.end())
      return error(item) << "duplicate model '" << callee << "'";
    m.meta_calls.push_back(callee);
  }
  return Status::ok();
}

Status ManifestParser::checkBatchability(const Value &root, Manifest &m) const {
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
        return error(root.find("executable_inputs")->list[i])
               << "'" << m.executable_inputs[i].name << "' has no batch axis but executable_inputs["
               << first_index << "] '" << first_batched->name
               << "' does (batchability is all-or-nothing)";
    m.input_batch_dim = *first_batched->batch_axis;
  } else if (m.compiled_batch_sizes.size() > 1) {
    return error(*yaml::findPath(root, "batching.compiled_batch_sizes"))
           << m.compiled_batch_sizes.size()
           << " compiled batch sizes need a batch axis (n or b) on the executable inputs";
  }
  return Status::ok();
}

Result<Manifest> ManifestParser::parse(const Value &root) {
  if (!root.isMap())
    return error(root) << yaml::wrongKind("a map at the top level", root);
  RS_RETURN_IF_ERROR(
      checkKeys(root, {"format_version", "name", "description", "kind", "executable_inputs",
                       "executable_outputs", "client_inputs", "client_outputs", "batching",
                       "input_shapes", "meta", "provenance"}));
  Manifest m;
  const Value *version = root.find("format_version");
  if (!version)
    return error(root) << "missing required field 'format_version'";
  RS_ASSIGN_OR_RETURN(m.format_version, scalar(*version));
  if (m.format_version != "2.0" && m.format_version != "2")
    return error(*version) << "unsupported version '" << m.format_version << "' (expected \"2.0\")";
  if (const Value *name = present(root, "name")) {
    RS_ASSIGN_OR_RETURN(m.name, scalar(*name));
  }
  if (const Value *description = present(root, "description")) {
    RS_ASSIGN_OR_RETURN(m.description, scalar(*description));
  }
  if (const Value *kind_value = root.find("kind")) {
    RS_ASSIGN_OR_RETURN(std::string kind, scalar(*kind_value));
    if (kind == "meta")
      m.kind = BundleKind::kMeta;
    else if (kind != "model")
      return error(*kind_value) << "unknown kind '" << kind << "' (expected model or meta)";
  }

  const bool is_model = m.kind == BundleKind::kModel;
  for (const char *key : {"executable_inputs", "executable_outputs"})
    if (is_model && !root.find(key))
      return error(root) << "missing required field '" << key << "'";
  RS_ASSIGN_OR_RETURN(m.executable_inputs, parseSection(root, "executable_inputs"));
  RS_ASSIGN_OR_RETURN(m.executable_outputs, parseSection(root, "executable_outputs"));
  // A program without results answers nothing: every request would return no outputs.
  if (is_model && m.executable_outputs.empty())
    return error(*root.find("executable_outputs"))
           << "must list at least one output (the program's results), got none";
  for (const char *key : {"client_inputs", "client_outputs"}) {
    if (const Value *client = root.find(key); is_model && client && !has_hooks_)
      return error(*client) << "only allowed with model.py pre/post-processing hooks (the "
                               "bundle has no model.py; docs/hooks.md)";
  }
  RS_ASSIGN_OR_RETURN(m.client_inputs, parseSection(root, "client_inputs"));
  RS_ASSIGN_OR_RETURN(m.client_outputs, parseSection(root, "client_outputs"));
  if (!is_model) {
    auto required = [&](const char *key, const std::vector<TensorSpec> &specs) -> Status {
      if (!specs.empty())
        return Status::ok();
      const Value *given = root.find(key);
      return error(given ? *given : Value::mapValue(key, root.mark))
             << "required and non-empty for kind: meta";
    };
    RS_RETURN_IF_ERROR(required("client_inputs", m.client_inputs));
    RS_RETURN_IF_ERROR(required("client_outputs", m.client_outputs));
  }

  RS_RETURN_IF_ERROR(parseBatching(root, m));
  RS_RETURN_IF_ERROR(checkBatchability(root, m));
  RS_RETURN_IF_ERROR(parseInputShapes(root, m));
  RS_RETURN_IF_ERROR(parseMeta(root, m));

  if (const Value *provenance = present(root, "provenance")) {
    if (!provenance->isMap())
      return error(*provenance) << yaml::wrongKind("a map", *provenance);
    for (const auto &[key, value] : provenance->map)
      m.provenance[key] = yaml::flowText(value);
  }
  return m;
}

} // namespace detail

Result<Manifest> parseManifest(std::string_view text, std::string_view file,
                               std::string_view model_name, bool has_hooks) {
  RS_ASSIGN_OR_RETURN(yaml::Value root, yaml::parse(text, file));
  detail::ManifestParser parser(file, model_name, has_hooks);
  return parser.parse(root);
}

Result<Manifest> loadManifest(const std::string &path, std::string_view model_name,
                              bool has_hooks) {
  RS_ASSIGN_OR_RETURN(yaml::Value root, yaml::loadFile(path));
  detail::ManifestParser parser(path, model_name, has_hooks);
  return parser.parse(root);
}

} // namespace rs::bundle
