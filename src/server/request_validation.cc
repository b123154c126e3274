//===- server/request_validation.cc - Check a request against a manifest --===//
#include "server/request_validation.h"

#include "bundle/shape_variant.h"
#include "protocol/wire_tensor.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace rs::server {
namespace {

std::string declaredNames(const std::vector<bundle::TensorSpec> &specs) {
  std::ostringstream os;
  for (size_t i = 0; i < specs.size(); ++i)
    os << (i ? ", " : "") << "'" << specs[i].name << "'";
  return os.str();
}

/// "[-1,8] {s=8}, [-1,16] {s=16}": `spec`'s wire shape in each variant, then its sizes.
std::string variantsServed(const bundle::TensorSpec &spec,
                           const std::vector<bundle::ShapeVariant> &variants) {
  std::ostringstream os;
  for (size_t v = 0; v < variants.size(); ++v)
    os << (v ? ", " : "") << shapeToString(spec.shapeForBatch(-1, variants[v])) << " {"
       << bundle::variantText(variants[v]) << "}";
  return os.str();
}

/// The error for inputs (manifest order, ranks checked) that match no shape variant: it
/// names the first input that matches none on its own, or else the first input that
/// matches none together with the inputs before it.
Status noVariantError(const bundle::Manifest &manifest, const std::vector<Tensor> &inputs) {
  const auto &specs = manifest.executable_inputs;
  const auto &variants = manifest.input_shapes;
  auto describe = [&](size_t k, std::string_view how) {
    return invalidArgument() << "input '" << specs[k].name << "': shape "
                             << shapeToString(inputs[k].shape()) << how
                             << "; variants served: " << variantsServed(specs[k], variants);
  };
  for (size_t k = 0; k < specs.size(); ++k)
    if (std::none_of(variants.begin(), variants.end(), [&](const bundle::ShapeVariant &v) {
          return bundle::variantMatches(specs[k], v, inputs[k].shape());
        }))
      return describe(k, " matches no shape variant of the model");
  for (size_t k = 1; k < specs.size(); ++k)
    if (!bundle::findVariant(manifest, std::span(inputs).first(k + 1)))
      return describe(k, " together with the inputs before it matches no shape variant of the "
                         "model");
  return invalidArgument() << "the inputs match no shape variant of the model";
}

} // namespace

Result<ValidatedInputs> validateRequest(const bundle::Manifest &manifest,
                                        const protocol::InferRequest &request) {
  const auto &specs = manifest.executable_inputs;
  ValidatedInputs out;
  out.inputs.resize(specs.size());
  std::vector<bool> seen(specs.size(), false);
  for (const protocol::NamedTensor &in : request.inputs) {
    size_t k = 0;
    while (k < specs.size() && specs[k].name != in.name)
      ++k;
    if (k == specs.size())
      return invalidArgument() << "unexpected input '" << in.name << "'; the model's inputs are "
                               << declaredNames(specs);
    if (seen[k])
      return invalidArgument() << "input '" << in.name << "' given more than once";
    seen[k] = true;
    const bundle::TensorSpec &spec = specs[k];
    // A BYTES input (protocol/bytes_tensor.h) never matches: executables take numbers.
    if (in.isBytes() || in.tensor.dtype() != spec.dtype)
      return invalidArgument() << "input '" << in.name << "': datatype " << in.datatype()
                               << " does not match the model's " << dtypeWireName(spec.dtype);
    const Shape want = spec.wireShape();
    const Shape &got = in.tensor.shape();
    bool shape_ok = got.size() == want.size();
    for (size_t d = 0; shape_ok && d < want.size(); ++d)
      shape_ok = want[d] < 0 || want[d] == got[d];
    if (!shape_ok)
      return invalidArgument() << "input '" << in.name << "': shape " << shapeToString(got)
                               << " does not match the model's " << shapeToString(want);
    if (spec.batch_axis) {
      const int64_t rows = got[static_cast<size_t>(*spec.batch_axis)];
      if (rows == 0)
        return invalidArgument() << "input '" << in.name << "': batch of 0 rows";
      if (out.rows != 0 && rows != out.rows)
        return invalidArgument() << "input '" << in.name << "': " << rows
                                 << " rows, but other inputs have " << out.rows;
      out.rows = rows;
    }
    out.inputs[k] = in.tensor;
  }
  for (size_t k = 0; k < specs.size(); ++k)
    if (!seen[k])
      return invalidArgument() << "missing input '" << specs[k].name << "'";
  std::optional<size_t> variant = bundle::findVariant(manifest, out.inputs);
  if (!variant)
    return noVariantError(manifest, out.inputs);
  out.variant = *variant;

  RS_ASSIGN_OR_RETURN(out.outputs,
                      selectOutputs(manifest.executable_outputs, request.requested_outputs));
  return out;
}

std::string requestPrefix(const protocol::InferRequest &r) {
  std::string p = "model '" + r.model_name + "'";
  if (!r.id.empty())
    p += ", request '" + r.id + "'";
  return p;
}

Status withRequestPrefix(const Status &s, const std::string &model, const std::string &prefix) {
  const std::string named = "model '" + model + "'";
  if (std::string_view(s.message()).starts_with(named))
    return Status(s.code(), prefix + s.message().substr(named.size()));
  return s.withPrefix(prefix);
}

Status closingError(const std::string &model) {
  return notFound() << "model '" << model
                    << "' was unloaded: new requests are refused while it unloads";
}

Result<std::vector<size_t>> selectOutputs(const std::vector<bundle::TensorSpec> &outputs,
                                          const std::vector<std::string> &requested) {
  std::vector<size_t> out;
  if (requested.empty()) {
    for (size_t o = 0; o < outputs.size(); ++o)
      out.push_back(o);
    return out;
  }
  std::set<std::string> seen;
  for (const std::string &name : requested) {
    size_t o = 0;
    while (o < outputs.size() && outputs[o].name != name)
      ++o;
    if (o == outputs.size())
      return invalidArgument() << "unknown requested output '" << name
                               << "'; the model's outputs are " << declaredNames(outputs);
    if (!seen.insert(name).second)
      return invalidArgument() << "output '" << name << "' requested more than once";
    out.push_back(o);
  }
  return out;
}

Result<std::vector<protocol::NamedTensor>>
checkTensors(const std::vector<bundle::TensorSpec> &specs,
             const std::vector<protocol::NamedTensor> &tensors, std::string_view role,
             StatusCode code) {
  std::vector<protocol::NamedTensor> out(specs.size());
  std::vector<bool> seen(specs.size(), false);
  int64_t rows = -1;
  for (const protocol::NamedTensor &t : tensors) {
    size_t k = 0;
    while (k < specs.size() && specs[k].name != t.name)
      ++k;
    if (k == specs.size())
      return StatusBuilder(code) << "unexpected " << role << " '" << t.name << "'; expected "
                                 << declaredNames(specs);
    if (seen[k])
      return StatusBuilder(code) << role << " '" << t.name << "' given more than once";
    seen[k] = true;
    const bundle::TensorSpec &spec = specs[k];
    const bool dtype_ok = spec.bytes ? t.isBytes() : !t.isBytes() && t.tensor.dtype() == spec.dtype;
    if (!dtype_ok)
      return StatusBuilder(code) << role << " '" << t.name << "': datatype " << t.datatype()
                                 << " does not match the model's "
                                 << (spec.bytes ? std::string(protocol::kBytesDatatype)
                                                : std::string(dtypeWireName(spec.dtype)))
                                 << " (" << spec.toString() << ")";
    const Shape want = spec.wireShape();
    const Shape &got = t.shape();
    bool shape_ok = got.size() == want.size();
    for (size_t d = 0; shape_ok && d < want.size(); ++d)
      shape_ok = want[d] < 0 || want[d] == got[d];
    if (!shape_ok)
      return StatusBuilder(code) << role << " '" << t.name << "': shape " << shapeToString(got)
                                 << " does not match the model's " << shapeToString(want) << " ("
                                 << spec.toString() << ")";
    if (spec.batch_axis) {
      const int64_t n = got[static_cast<size_t>(*spec.batch_axis)];
      if (rows >= 0 && n != rows)
        return StatusBuilder(code)
               << role << " '" << t.name << "': " << n << " rows, but the others have " << rows;
      rows = n;
    }
    out[k] = t;
  }
  for (size_t k = 0; k < specs.size(); ++k)
    if (!seen[k])
      return StatusBuilder(code) << "missing " << role << " '" << specs[k].name << "'";
  return out;
}

} // namespace rs::server
