//===- bundle/manifest_tensors.cc - manifest.yaml tensor specs -------------===//
//
// One tensor spec `{name, dtype, shape, dims}`: its column-major axis letters (n or b the
// batch marker), their sizes, and the row-major axes derived from them; a section's list
// of specs with unique names; and TensorSpec's shape queries (wire shape, shape for a
// batch size and variant).
//
//===----------------------------------------------------------------------===//
#include "bundle/manifest_impl.h"

#include <algorithm>
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
  return std::string(bytes ? "bytes" : dtypeManifestName(dtype)) + shapeToString(wireShape());
}

namespace detail {
namespace {

bool isBatchLetter(char c) { return c == 'n' || c == 'b'; }
bool isAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

} // namespace

using yaml::Value;

Result<TensorSpec> ManifestParser::parseSpec(const Value &v, bool wire) const {
  if (!v.isMap())
    return error(v) << yaml::wrongKind("a tensor spec map {name, dtype, shape, dims}", v);
  RS_RETURN_IF_ERROR(checkKeys(v, {"name", "dtype", "shape", "dims"}));
  TensorSpec spec;
  for (const char *required : {"name", "dtype", "shape"})
    if (!v.find(required))
      return error(v) << "missing required field '" << required << "'";

  const Value &name = *v.find("name");
  RS_ASSIGN_OR_RETURN(spec.name, scalar(name));
  if (spec.name.empty())
    return error(name) << "must not be empty";

  const Value &dtype_value = *v.find("dtype");
  RS_ASSIGN_OR_RETURN(std::string dtype, scalar(dtype_value));
  std::optional<DType> parsed = dtypeFromManifestName(dtype);
  if (dtype == "bytes") {
    if (!wire)
      return error(dtype_value) << "dtype 'bytes' is only allowed in client_inputs and "
                                   "client_outputs (an executable takes numbers)";
    spec.bytes = true;
  } else if (!parsed) {
    if (dtype == "f8_e5m2" || dtype == "f8_e4m3")
      return unimplemented() << yaml::where(dtype_value, file_) << ": dtype '" << dtype
                             << "' is not supported by this server";
    return error(dtype_value)
           << "unknown dtype '" << dtype
           << "' (expected one of f16 f32 f64 bf16 i8 i16 i32 i64 u8 u16 u32 u64 bool"
           << (wire ? " bytes)" : ")");
  } else {
    spec.dtype = *parsed;
  }

  const Value &shape = *v.find("shape");
  RS_ASSIGN_OR_RETURN(spec.letters, scalar(shape));
  std::set<char> letters;
  char batch_letter = 0;
  for (char c : spec.letters) {
    if (!isAsciiLetter(c))
      return error(shape) << "'" << spec.letters << "' must be ASCII letters, one per axis";
    if (!letters.insert(c).second)
      return error(shape) << "letter '" << c << "' appears twice in '" << spec.letters << "'";
    if (isBatchLetter(c)) {
      if (batch_letter)
        return error(shape) << "'" << spec.letters << "' has two batch markers '" << batch_letter
                            << "' and '" << c << "'";
      batch_letter = c;
    }
  }

  const Value *dims = present(v, "dims");
  if (dims) {
    if (!dims->isMap())
      return error(*dims) << yaml::wrongKind("a map {letter: size}", *dims);
    for (const auto &[key, size_value] : dims->map) {
      if (key.size() != 1 || !isAsciiLetter(key[0]))
        return error(*dims) << "key '" << key << "' is not a single letter";
      const char letter = key[0];
      if (isBatchLetter(letter))
        return error(*dims) << "letter '" << letter << "' is a batch marker and cannot have a size";
      if (!letters.count(letter))
        return error(*dims) << "letter '" << letter << "' is not in shape '" << spec.letters << "'";
      RS_ASSIGN_OR_RETURN(int64_t size, integer(size_value));
      if (size <= 0 && size != -1)
        return error(size_value) << "size " << size << " must be > 0 or -1 (variable)";
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
      if (size == spec.dims.end()) {
        const Value at = dims ? *dims : Value::mapValue(v.origin + ".dims", v.mark);
        return error(at) << "letter '" << c << "' of shape '" << spec.letters << "' has no size";
      }
      d.kind = size->second == -1 ? DimKind::kVariable : DimKind::kFixed;
      d.size = size->second;
    }
    spec.axes.push_back(d);
  }
  return spec;
}

Result<std::vector<TensorSpec>> ManifestParser::parseSection(const Value &root,
                                                             const char *key) const {
  std::vector<TensorSpec> specs;
  const Value *list = present(root, key);
  if (!list)
    return specs;
  if (!list->isList())
    return error(*list) << yaml::wrongKind("a list of tensor specs", *list);
  for (const Value &item : list->list) {
    RS_ASSIGN_OR_RETURN(TensorSpec spec,
                        parseSpec(item, std::string_view(key).starts_with("client")));
    for (size_t j = 0; j < specs.size(); ++j)
      if (specs[j].name == spec.name)
        return error(*item.find("name"))
               << "duplicate name '" << spec.name << "' (also " << key << "[" << j << "])";
    specs.push_back(std::move(spec));
  }
  return specs;
}

} // namespace detail
} // namespace rs::bundle
