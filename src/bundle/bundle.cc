//===- bundle/bundle.cc - Load and validate a model bundle ----------------===//
#include "bundle/bundle.h"

#include "bundle/safetensors.h"
#include "ir/parser.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

namespace rs::bundle {

std::vector<int64_t> Bundle::batchSizes() const {
  std::vector<int64_t> sizes;
  for (const auto &[size, program] : programs)
    sizes.push_back(size);
  return sizes;
}

namespace {

namespace fs = std::filesystem;

/// "1 input", "6 weights".
std::string count(size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

std::string listToString(const std::vector<int64_t> &v) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < v.size(); ++i)
    os << (i ? ", " : "") << v[i];
  os << ']';
  return os.str();
}

/// Parses "123" (digits only, no sign, fits int64 and > 0) or nullopt.
std::optional<int64_t> parsePositive(std::string_view s) {
  if (s.empty() || s.size() > 18)
    return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v > 0 ? std::optional<int64_t>(v) : std::nullopt;
}

/// The program files of a bundle directory.
struct ProgramFiles {
  std::map<int64_t, std::string> batched; // model.b{N}.mlir by N
  std::optional<std::string> single;      // model.mlir
  std::vector<std::string> variants;      // model.v{i}[.b{N}].mlir (unsupported)
  bool has_model_jl = false;
};

Result<ProgramFiles> listProgramFiles(const std::string &dir) {
  ProgramFiles files;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec)
    return notFound() << dir << ": cannot list bundle directory: " << ec.message();
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec)
      return internalError() << dir << ": cannot list bundle directory: " << ec.message();
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec))
      continue;
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string &name : names) {
    const std::string path = dir + "/" + name;
    if (name == "model.jl") {
      files.has_model_jl = true;
    } else if (name == "model.mlir") {
      files.single = path;
    } else if (name.starts_with("model.v") && name.ends_with(".mlir")) {
      files.variants.push_back(name);
    } else if (name.starts_with("model.b") && name.ends_with(".mlir")) {
      std::string_view digits(name);
      digits.remove_prefix(7);
      digits.remove_suffix(5);
      if (std::optional<int64_t> n = parsePositive(digits))
        files.batched[*n] = path;
    }
  }
  return files;
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
  for (size_t i = 0; i < n_inputs; ++i) {
    const TensorSpec &spec = m.executable_inputs[i];
    const Shape expected = spec.shapeForBatch(program.batch_size);
    const int skip = unbatched && spec.batch_axis ? *spec.batch_axis : -1;
    if (!typeMatches(fn.elements[i], spec.dtype, expected, skip))
      return invalidArgument() << path << ": argument " << i << " (input '" << spec.name
                               << "'): type " << fn.elements[i].toString()
                               << " does not match manifest " << specTypeText(spec.dtype, expected);
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
    const Shape expected = spec.shapeForBatch(program.batch_size);
    const int skip = unbatched && spec.batch_axis ? *spec.batch_axis : -1;
    if (!typeMatches(fn.results[i], spec.dtype, expected, skip))
      return invalidArgument() << path << ": result " << i << " (output '" << spec.name
                               << "'): type " << fn.results[i].toString()
                               << " does not match manifest " << specTypeText(spec.dtype, expected);
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

  RS_ASSIGN_OR_RETURN(bundle.manifest, loadManifest(dir + "/manifest.yaml", bundle.name));
  const Manifest &m = bundle.manifest;
  if (m.kind == BundleKind::kMeta)
    return unimplemented() << dir << "/manifest.yaml: kind: meta bundles are not supported yet";
  if (!m.input_shapes.empty())
    return unimplemented() << dir
                           << "/manifest.yaml: input_shapes: multi-shape bundles are not "
                              "supported yet";

  RS_ASSIGN_OR_RETURN(ProgramFiles files, listProgramFiles(dir));
  if (files.has_model_jl)
    return unimplemented() << dir
                           << "/model.jl: Julia pre/post-processing hooks are not supported; "
                              "remove model.jl to serve the program as exported";
  if (!files.variants.empty())
    return unimplemented() << dir << "/" << files.variants.front()
                           << ": multi-shape bundles (model.v{i}.*.mlir) are not supported yet";

  std::map<int64_t, std::string> to_parse;
  if (!files.batched.empty()) {
    if (files.single)
      return invalidArgument() << dir << ": both model.mlir and model.b"
                               << files.batched.begin()->first
                               << ".mlir exist (use one model.mlir or one model.b{N}.mlir per "
                                  "compiled batch size)";
    if (m.compiled_batch_sizes.empty())
      return invalidArgument() << dir << "/manifest.yaml: batching.compiled_batch_sizes is "
                               << "missing but the bundle has model.b"
                               << files.batched.begin()->first << ".mlir";
    for (int64_t size : m.compiled_batch_sizes) {
      auto it = files.batched.find(size);
      if (it == files.batched.end())
        return notFound() << dir << "/model.b" << size << ".mlir: missing (batch size " << size
                          << " is listed in batching.compiled_batch_sizes "
                          << listToString(m.compiled_batch_sizes) << ")";
      to_parse[size] = it->second;
    }
    for (const auto &[size, path] : files.batched)
      if (!to_parse.count(size))
        bundle.warnings.push_back(path + ": batch size " + std::to_string(size) +
                                  " is not in batching.compiled_batch_sizes " +
                                  listToString(m.compiled_batch_sizes) + "; not loaded");
  } else if (files.single) {
    to_parse[0] = *files.single;
  } else {
    return notFound() << dir << ": no program: expected model.mlir or model.b{N}.mlir for "
                      << "batching.compiled_batch_sizes " << listToString(m.compiled_batch_sizes);
  }

  const std::string weights_path = dir + "/weights.safetensors";
  const bool has_weights_file = fs::exists(weights_path, ec);
  if (has_weights_file) {
    RS_RETURN_IF_ERROR(loadWeights(weights_path, bundle));
  }

  for (const auto &[size, path] : to_parse) {
    Program program;
    program.batch_size = size;
    program.path = path;
    RS_ASSIGN_OR_RETURN(program.module, ir::parseModuleFile(path));
    RS_RETURN_IF_ERROR(checkSignature(program, bundle, has_weights_file));
    bundle.programs.emplace(size, std::move(program));
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
