//===- tools/bundle_inspect.cc - `reactant-server bundle inspect` ---------===//
#include "tools/bundle_inspect.h"

#include "bundle/manifest.h"
#include "bundle/polymorphic.h"
#include "bundle/safetensors.h"
#include "bundle/shape_variant.h"
#include "tools/bundle_programs.h"

#include <filesystem>
#include <string_view>

namespace rs::tools {
namespace {

using detail::printError;
using detail::ProgramFile;

/// "features f32[-1,4], mask i32[-1,16]", or "none".
std::string specList(const std::vector<bundle::TensorSpec> &specs) {
  std::string out;
  for (const bundle::TensorSpec &spec : specs)
    out += (out.empty() ? "" : ", ") + spec.name + " " + spec.toString();
  return out.empty() ? "none" : out;
}

/// "(a, b) -> (c)" for `types` -> `results`.
std::string signature(const ir::Type &fn) {
  auto list = [](const std::vector<ir::Type> &types) {
    std::string out = "(";
    for (size_t i = 0; i < types.size(); ++i)
      out += (i ? ", " : "") + types[i].toString();
    return out + ")";
  };
  return list(fn.elements) + " -> " + list(fn.results);
}

/// Every op in `ops` and in their regions.
int64_t countOps(const std::vector<ir::Operation> &ops) {
  int64_t n = 0;
  for (const ir::Operation &op : ops) {
    ++n;
    for (const ir::Region &region : op.regions)
      for (const ir::Block &block : region.blocks)
        n += countOps(block.ops);
  }
  return n;
}

std::string formatText(const ProgramFile &p) {
  if (!p.artifact)
    return "text";
  const ir::PortableArtifactInfo &a = *p.artifact;
  return "portable artifact (VHLO " + (a.vhlo_version.empty() ? "unknown" : a.vhlo_version) +
         ", bytecode " + std::to_string(a.bytecode_version) + ", producer " + a.producer + ")";
}

/// The block of one program file, its header line indented by `indent` spaces and its
/// fields by two more; false after an error line.
/// `inputs` (the bundle's executable inputs, empty for a lone file) name the arguments in
/// the `dynamic axes` line of a shape-polymorphic main.
bool describeProgram(const std::string &path, std::string_view label, int indent,
                     const std::vector<bundle::TensorSpec> &inputs, std::ostream &out) {
  Result<ProgramFile> program = detail::readProgramFile(path);
  if (!program.isOk()) {
    printError(out, path, program.status());
    return false;
  }
  const std::string head(static_cast<size_t>(indent), ' ');
  const std::string field = head + "  ";
  const ir::Module &m = program->module;
  int64_t functions = 0;
  for (const ir::Operation &op : m.ops)
    functions += op.name == "func.func" ? 1 : 0;
  const ir::Operation *main = m.lookupFunction("main");
  out << head << "program " << label << "\n";
  out << field << "format: " << formatText(*program) << "\n";
  out << field << "size: " << program->size_bytes << " bytes\n";
  out << field << "main: " << (main ? signature(ir::functionType(*main)) : "none") << "\n";
  const std::vector<bundle::DynamicAxis> dynamic = bundle::dynamicAxes(m, inputs);
  if (!dynamic.empty())
    out << field << "dynamic axes: " << bundle::dynamicAxesText(dynamic)
        << " (shape-polymorphic: refined per compiled batch size and shape variant at load)\n";
  out << field << "functions: " << functions << "\n";
  out << field << "ops: " << countOps(m.ops) << "\n";
  return true;
}

/// The manifest and weights lines of bundle `dir` (with its model.py hooks, client tensors and
/// meta calls); `meta` set for a meta bundle; false after an error line.
bool describeBundleFiles(const std::string &dir, std::vector<bundle::TensorSpec> &inputs,
                         bool &meta, std::ostream &out) {
  bool ok = true;
  const std::string manifest_path = dir + "/manifest.yaml";
  const std::string model_name = std::filesystem::path(dir).filename().string();
  std::error_code hooks_ec;
  const bool hooks = std::filesystem::is_regular_file(dir + "/model.py", hooks_ec);
  Result<bundle::Manifest> manifest = bundle::loadManifest(manifest_path, model_name, hooks);
  if (manifest.isOk()) {
    meta = manifest->kind == bundle::BundleKind::kMeta;
    inputs = manifest->executable_inputs;
    std::string sizes;
    for (int64_t b : manifest->compiled_batch_sizes)
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(b);
    out << "  name: " << (manifest->name.empty() ? "(none)" : manifest->name) << "\n";
    out << "  inputs: " << specList(manifest->executable_inputs) << "\n";
    out << "  outputs: " << specList(manifest->executable_outputs) << "\n";
    if (hooks)
      out << "  hooks: model.py (docs/hooks.md)\n";
    if (!manifest->client_inputs.empty())
      out << "  client inputs: " << specList(manifest->client_inputs) << "\n";
    if (!manifest->client_outputs.empty())
      out << "  client outputs: " << specList(manifest->client_outputs) << "\n";
    if (meta) {
      std::string calls;
      for (const std::string &c : manifest->meta_calls)
        calls += (calls.empty() ? "" : ", ") + c;
      out << "  kind: meta, calls: [" << calls << "]\n";
    }
    out << "  batch sizes: " << (sizes.empty() ? "none" : sizes) << "\n";
    if (!manifest->input_shapes.empty())
      out << "  shape variants: " << manifest->input_shapes.size() << "\n";
    for (size_t v = 0; v < manifest->input_shapes.size(); ++v) {
      const bundle::ShapeVariant &variant = manifest->input_shapes[v];
      std::string inputs;
      for (const bundle::TensorSpec &spec : manifest->executable_inputs)
        inputs += (inputs.empty() ? "" : ", ") + spec.name + " " +
                  std::string(dtypeManifestName(spec.dtype)) +
                  shapeToString(spec.shapeForBatch(-1, variant));
      out << "    v" << v << " {" << bundle::variantText(variant) << "}: " << inputs << "\n";
    }
  } else {
    printError(out, manifest_path, manifest.status());
    ok = false;
  }
  const std::string weights_path = dir + "/weights.safetensors";
  std::error_code ec;
  if (!std::filesystem::exists(weights_path, ec)) {
    out << "  weights: none\n";
  } else if (Result<bundle::SafetensorsFile> w = bundle::SafetensorsFile::open(weights_path);
             w.isOk()) {
    out << "  weights: " << w->size() << "\n";
  } else {
    printError(out, weights_path, w.status());
    ok = false;
  }
  return ok;
}

bool describeBundle(const std::string &dir, std::ostream &out) {
  out << "bundle " << dir << "\n";
  std::vector<bundle::TensorSpec> inputs;
  bool meta = false;
  bool ok = describeBundleFiles(dir, inputs, meta, out);
  if (meta) // a meta bundle has no programs of its own: its calls run other bundles'
    return ok;
  Result<std::vector<std::string>> names = detail::listProgramFiles(dir);
  if (!names.isOk()) {
    printError(out, dir, names.status());
    return false;
  }
  if (names->empty()) {
    printError(out, dir, notFound() << "no program file (model*.mlir)");
    return false;
  }
  for (const std::string &name : *names)
    ok = describeProgram(dir + "/" + name, name, 2, inputs, out) && ok;
  return ok;
}

} // namespace

int inspectBundles(const std::vector<std::string> &paths, std::ostream &out) {
  bool ok = true;
  for (std::string path : paths) {
    while (path.size() > 1 && path.back() == '/')
      path.pop_back();
    if (detail::isDirectory(path))
      ok = describeBundle(path, out) && ok;
    else
      ok = describeProgram(path, path, 0, {}, out) && ok;
  }
  return ok ? 0 : 1;
}

} // namespace rs::tools
