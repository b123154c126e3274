//===- bundle/bundle.cc - Load and validate a model bundle ----------------===//
#include "bundle/bundle.h"

#include "bundle/polymorphic.h"
#include "bundle/safetensors.h"
#include "bundle/shape_variant.h"
#include "ir/parser.h"

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

namespace rs::bundle {

std::vector<int64_t> Bundle::batchSizes() const {
  std::vector<int64_t> sizes;
  for (const auto &[key, program] : programs)
    if (key.variant == 0)
      sizes.push_back(key.batch_size);
  return sizes;
}

namespace {

namespace fs = std::filesystem;

/// "1 input", "6 weights".
std::string count(size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

/// Reads argument_order from the weights file and returns the weights in that
/// order.
Status loadWeights(const std::string &path, Bundle &bundle) {
  RS_ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::open(path));
  auto order_it = file.metadata().find("argument_order");
  if (order_it == file.metadata().end()) {
    if (file.size() == 0)
      return Status::ok();
    return invalidArgument() << path << ": __metadata__.argument_order is missing (required when "
                             << "the file holds tensors; it has " << count(file.size(), "tensor")
                             << ")";
  }
  nlohmann::json order = nlohmann::json::parse(order_it->second, nullptr, false);
  if (order.is_discarded() || !order.is_array())
    return invalidArgument() << path
                             << ": __metadata__.argument_order is not a JSON list of names: "
                             << order_it->second;
  std::set<std::string> listed;
  for (size_t i = 0; i < order.size(); ++i) {
    if (!order[i].is_string())
      return invalidArgument() << path << ": __metadata__.argument_order[" << i
                               << "] is not a string";
    std::string name = order[i].get<std::string>();
    if (!listed.insert(name).second)
      return invalidArgument() << path << ": __metadata__.argument_order[" << i << "]: '" << name
                               << "' is listed twice";
    if (!file.contains(name))
      return invalidArgument() << path << ": __metadata__.argument_order[" << i << "] names '"
                               << name << "', which is not a tensor in the file";
    RS_ASSIGN_OR_RETURN(Tensor t, file.tensor(name));
    bundle.weight_names.push_back(name);
    bundle.weights.push_back(std::move(t));
  }
  for (const std::string &name : file.names())
    if (!listed.count(name))
      bundle.warnings.push_back(path + ": tensor '" + name +
                                "' is not in __metadata__.argument_order and is not used");
  return Status::ok();
}

std::string specTypeText(DType dtype, const Shape &shape) {
  return std::string(dtypeMlirName(dtype)) + shapeToString(shape);
}

/// True if `type` is a tensor of `dtype` with `shape`; `skip_axis` (if >= 0) is
/// not compared.
bool typeMatches(const ir::Type &type, DType dtype, const Shape &shape, int skip_axis = -1) {
  if (!type.isTensor() || type.element != dtype || type.shape.size() != shape.size())
    return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (static_cast<int>(i) != skip_axis && type.shape[i] != shape[i])
      return false;
  return true;
}

/// Checks `main` of `program` against the manifest and the weights.
Status checkSignature(const Program &program, const Bundle &bundle, bool has_weights_file) {
  const std::string &path = program.path;
  const ir::Operation *main = program.module.lookupFunction("main");
  if (!main)
    return invalidArgument() << path << ": no function named 'main'";
  const ir::Type &fn = ir::functionType(*main);
  const Manifest &m = bundle.manifest;
  const size_t n_inputs = m.executable_inputs.size();
  const size_t n_weights = bundle.weights.size();
  if (fn.elements.size() != n_inputs + n_weights)
    return invalidArgument() << path << ": main takes " << count(fn.elements.size(), "argument")
                             << " but the manifest has " << count(n_inputs, "input") << " and the "
                             << (has_weights_file
                                     ? "weights file has " + count(n_weights, "weight")
                                     : std::string("bundle has no weights.safetensors"))
                             << " (" << n_inputs + n_weights << " expected)";
  const bool unbatched = program.batch_size == 0;
  const ShapeVariant no_variant;
  const ShapeVariant &variant =
      m.input_shapes.empty() ? no_variant : m.input_shapes[program.variant];
  // " (shape variant 1 {s=16})" after a mismatch in a multi-shape bundle.
  const std::string of_variant = m.input_shapes.empty()
                                     ? ""
                                     : " (shape variant " + std::to_string(program.variant) + " {" +
                                           variantText(variant) + "})";
  for (size_t i = 0; i < n_inputs; ++i) {
    const TensorSpec &spec = m.executable_inputs[i];
    const Shape expected = spec.shapeForBatch(program.batch_size, variant);
    const int skip = unbatched && spec.batch_axis ? *spec.batch_axis : -1;
    if (!typeMatches(fn.elements[i], spec.dtype, expected, skip))
      return invalidArgument() << path << ": argument " << i << " (input '" << spec.name
                               << "'): type " << fn.elements[i].toString()
                               << " does not match manifest " << specTypeText(spec.dtype, expected)
                               << of_variant;
  }
  for (size_t j = 0; j < n_weights; ++j) {
    const Tensor &w = bundle.weights[j];
    const ir::Type &arg = fn.elements[n_inputs + j];
    if (!typeMatches(arg, w.dtype(), w.shape()))
      return invalidArgument() << path << ": argument " << n_inputs + j << " (weight '"
                               << bundle.weight_names[j] << "'): type " << arg.toString()
                               << " does not match weights file "
                               << specTypeText(w.dtype(), w.shape());
  }
  if (fn.results.size() != m.executable_outputs.size())
    return invalidArgument() << path << ": main returns " << count(fn.results.size(), "result")
                             << " but the manifest has "
                             << count(m.executable_outputs.size(), "executable output");
  for (size_t i = 0; i < fn.results.size(); ++i) {
    const TensorSpec &spec = m.executable_outputs[i];
    const Shape expected = spec.shapeForBatch(program.batch_size, variant);
    const int skip = unbatched && spec.batch_axis ? *spec.batch_axis : -1;
    if (!typeMatches(fn.results[i], spec.dtype, expected, skip))
      return invalidArgument() << path << ": result " << i << " (output '" << spec.name
                               << "'): type " << fn.results[i].toString()
                               << " does not match manifest " << specTypeText(spec.dtype, expected)
                               << of_variant;
  }
  return Status::ok();
}

} // namespace

Result<Bundle> loadBundle(const std::string &dir_in) {
  std::string dir = dir_in;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  Bundle bundle;
  bundle.dir = dir_in;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return notFound() << dir << ": not a bundle directory";
  bundle.name = fs::path(dir).filename().string();
  if (bundle.name == "." || bundle.name == "..") // "." names the current directory's model
    bundle.name = fs::weakly_canonical(fs::path(dir), ec).filename().string();

  bundle.hooks = fs::is_regular_file(dir + "/model.py", ec);
  RS_ASSIGN_OR_RETURN(bundle.manifest,
                      loadManifest(dir + "/manifest.yaml", bundle.name, bundle.hooks));
  const Manifest &m = bundle.manifest;
  if (m.kind == BundleKind::kMeta) {
    // A meta model is code only: model.py's run calls the models of meta.calls.
    if (!bundle.hooks)
      return invalidArgument() << dir << "/manifest.yaml: kind: meta needs a model.py that calls "
                               << "register_meta_model (docs/hooks.md)";
    if (fs::exists(dir + "/weights.safetensors", ec))
      return invalidArgument() << dir << "/weights.safetensors: a meta bundle has no weights "
                               << "of its own";
    return bundle;
  }
  if (fs::is_regular_file(dir + "/model.jl", ec))
    return unimplemented() << dir
                           << "/model.jl: Julia pre/post-processing hooks are not run by this "
                              "server; port them to model.py (docs/hooks.md) or remove model.jl "
                              "to serve the program as exported";
  RS_ASSIGN_OR_RETURN(ProgramSelection files, selectProgramFiles(dir, m));
  bundle.warnings = std::move(files.warnings);

  const std::string weights_path = dir + "/weights.safetensors";
  const bool has_weights_file = fs::exists(weights_path, ec);
  if (has_weights_file) {
    RS_RETURN_IF_ERROR(loadWeights(weights_path, bundle));
  }

  std::optional<ir::Module> single; // a lone model.mlir, parsed once to see if it is static
  if (files.paths.size() == 1 && files.paths.begin()->first == ProgramKey{0, 0}) {
    const std::string &path = files.paths.begin()->second;
    RS_ASSIGN_OR_RETURN(ir::Module module, ir::parseModuleFile(path));
    bundle.dynamic_axes = dynamicAxes(module, m.executable_inputs);
    if (bundle.dynamic_axes.empty() && files.shared_program)
      return invalidArgument() << path << ": the manifest has input_shapes ("
                               << m.input_shapes.size() << " shape variants) but main takes "
                               << "static inputs (a model.mlir for every variant must be "
                               << "shape-polymorphic; otherwise use model.v{i}.b{N}.mlir or "
                               << "model.v{i}.mlir per variant)";
    if (!bundle.dynamic_axes.empty()) {
      RS_ASSIGN_OR_RETURN(std::vector<ProgramKey> keys, refinementKeys(m, path));
      for (const ProgramKey &key : keys) {
        Program program;
        program.batch_size = key.batch_size;
        program.variant = key.variant;
        program.path = path;
        program.refined = true;
        RS_ASSIGN_OR_RETURN(program.module, refineForProgram(module, path, m, bundle.weights, key));
        RS_RETURN_IF_ERROR(checkSignature(program, bundle, has_weights_file));
        bundle.programs.emplace(key, std::move(program));
      }
      return bundle;
    }
    single = std::move(module);
  }
  for (const auto &[key, path] : files.paths) {
    Program program;
    program.batch_size = key.batch_size;
    program.variant = key.variant;
    program.path = path;
    if (single) {
      program.module = std::move(*single);
    } else {
      RS_ASSIGN_OR_RETURN(program.module, ir::parseModuleFile(path));
    }
    // An unbatched program runs requests as they come, whole; inputs with a batch axis need a
    // program per compiled size (or one refined per size), which the scheduler splits into.
    if (key.batch_size == 0 && m.batched() &&
        dynamicAxes(program.module, m.executable_inputs).empty())
      return invalidArgument()
             << path << ": main takes static inputs, but the manifest's inputs have a batch axis "
             << "(letter n; batching.compiled_batch_sizes "
             << fmt::format("[{}]", fmt::join(m.compiled_batch_sizes, ", "))
             << "): export it with a symbolic batch axis (a shape-polymorphic "
             << fs::path(path).filename().string() << ") or as one "
             << (m.input_shapes.empty() ? "model.b{N}.mlir" : "model.v{i}.b{N}.mlir")
             << " per compiled batch size";
    RS_RETURN_IF_ERROR(checkSignature(program, bundle, has_weights_file));
    bundle.programs.emplace(key, std::move(program));
  }
  return bundle;
}

std::vector<std::string> discoverBundles(const std::string &model_repo) {
  std::vector<std::string> dirs;
  std::error_code ec;
  fs::directory_iterator it(model_repo, ec);
  if (ec)
    return dirs;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec)
      break;
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.')
      continue;
    std::error_code type_ec;
    if (!it->is_directory(type_ec))
      continue;
    if (fs::is_regular_file(it->path() / "manifest.yaml", type_ec))
      dirs.push_back(it->path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

} // namespace rs::bundle
