//===- bundle/program_files.cc - A bundle's program files: names and choice ===//
#include "bundle/program_files.h"

#include "bundle/shape_variant.h"

#include <algorithm>
#include <filesystem>
#include <fmt/ranges.h>
#include <sstream>

namespace rs::bundle {
namespace {

namespace fs = std::filesystem;

/// Parses plain decimal digits (no sign, no leading zero, at most 18) or nullopt. Without
/// leading zeros each number has one spelling, so two files cannot name the same program
/// (model.b8.mlir and model.b08.mlir).
std::optional<int64_t> parseDigits(std::string_view s) {
  if (s.empty() || s.size() > 18 || (s.size() > 1 && s[0] == '0'))
    return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::string listToString(const std::vector<int64_t> &v) {
  return fmt::format("[{}]", fmt::join(v, ", "));
}

/// "shape variant 1 {s=16}, " for a multi-shape bundle's program; "" otherwise.
std::string variantPhrase(const ProgramKey &key, const Manifest &m) {
  if (m.input_shapes.empty())
    return "";
  return "shape variant " + std::to_string(key.variant) + " {" +
         variantText(m.input_shapes[key.variant]) + "}, ";
}

std::string fileName(const std::string &path) { return fs::path(path).filename().string(); }

/// The entries of `dir` by name, sorted: files of any type, so that a program name held by a
/// directory or a device is reported as such when it is read, not as missing.
Result<std::vector<std::string>> listFiles(const std::string &dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec)
    return notFound() << dir << ": cannot list bundle directory: " << ec.message();
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec)
      return internalError() << dir << ": cannot list bundle directory: " << ec.message();
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace

std::string programFileName(const ProgramKey &key, bool multi_shape) {
  std::string name = "model";
  if (multi_shape)
    name += ".v" + std::to_string(key.variant);
  if (key.batch_size != 0)
    name += ".b" + std::to_string(key.batch_size);
  return name + ".mlir";
}

std::optional<ProgramFileName> parseProgramFileName(std::string_view name) {
  ProgramFileName out;
  if (name == "model.mlir")
    return out;
  constexpr std::string_view kPrefix = "model.", kSuffix = ".mlir";
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix))
    return std::nullopt;
  std::string_view rest =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (rest.starts_with("v")) {
    const size_t dot = rest.find('.');
    std::optional<int64_t> index = parseDigits(rest.substr(1, dot - 1));
    if (!index)
      return std::nullopt;
    out.variant = static_cast<size_t>(*index);
    if (dot == std::string_view::npos)
      return out;
    rest.remove_prefix(dot + 1);
  }
  if (!rest.starts_with("b"))
    return std::nullopt;
  std::optional<int64_t> size = parseDigits(rest.substr(1));
  if (!size || *size <= 0)
    return std::nullopt;
  out.batch_size = *size;
  return out;
}

Result<ProgramSelection> selectProgramFiles(const std::string &dir, const Manifest &m) {
  RS_ASSIGN_OR_RETURN(std::vector<std::string> names, listFiles(dir));
  const bool multi_shape = !m.input_shapes.empty();
  const size_t variants = multi_shape ? m.input_shapes.size() : 1;
  const std::string batched_form = multi_shape ? "model.v{i}.b{N}.mlir" : "model.b{N}.mlir";
  const std::string unbatched_form = multi_shape ? "model.v{i}.mlir" : "model.mlir";
  ProgramSelection out;
  std::map<ProgramKey, std::string> batched, unbatched; // present files by program
  std::string polymorphic;                              // model.mlir of a multi-shape bundle
  for (const std::string &name : names) {
    std::optional<ProgramFileName> parsed = parseProgramFileName(name);
    const std::string path = dir + "/" + name;
    if (!parsed) {
      if (name.starts_with("model.") && name.ends_with(".mlir"))
        out.warnings.push_back(path + ": not a program file name (" + batched_form + " or " +
                               unbatched_form +
                               ", numbers in decimal without leading zeros); not loaded");
      continue;
    }
    if (multi_shape && !parsed->variant && parsed->batch_size == 0) {
      polymorphic = path; // one shape-polymorphic program for every variant
      continue;
    }
    if (parsed->variant.has_value() != multi_shape) {
      if (multi_shape)
        return invalidArgument()
               << path << ": the manifest has input_shapes (" << variants
               << " shape variants), so its programs are model.v{i}.b{N}.mlir or model.v{i}.mlir";
      return invalidArgument() << path
                               << ": a shape-variant program, but the manifest has no "
                                  "input_shapes (programs are model.b{N}.mlir or model.mlir)";
    }
    const ProgramKey key{parsed->variant.value_or(0), parsed->batch_size};
    if (key.variant >= variants) {
      out.warnings.push_back(path + ": shape variant " + std::to_string(key.variant) +
                             " is not in input_shapes " + variantsText(m.input_shapes) +
                             "; not loaded");
      continue;
    }
    (key.batch_size == 0 ? unbatched : batched)[key] = path;
  }

  if (!polymorphic.empty()) {
    if (!batched.empty() || !unbatched.empty())
      return invalidArgument() << dir << ": both model.mlir and "
                               << fileName((batched.empty() ? unbatched : batched).begin()->second)
                               << " exist (use one shape-polymorphic model.mlir or the "
                               << batched_form << " / " << unbatched_form << " files)";
    out.paths[{0, 0}] = polymorphic;
    out.shared_program = true;
    return out;
  }
  if (!batched.empty()) {
    if (!unbatched.empty())
      return invalidArgument() << dir << ": both " << fileName(unbatched.begin()->second) << " and "
                               << fileName(batched.begin()->second) << " exist (use one "
                               << unbatched_form << " or one " << batched_form
                               << " per compiled batch size)";
    if (m.compiled_batch_sizes.empty())
      return invalidArgument() << dir << "/manifest.yaml: batching.compiled_batch_sizes is "
                               << "missing but the bundle has "
                               << fileName(batched.begin()->second);
    for (size_t v = 0; v < variants; ++v)
      for (int64_t size : m.compiled_batch_sizes) {
        const ProgramKey key{v, size};
        auto it = batched.find(key);
        if (it == batched.end())
          return notFound() << dir << "/" << programFileName(key, multi_shape) << ": missing ("
                            << variantPhrase(key, m) << "batch size " << size
                            << " is listed in batching.compiled_batch_sizes "
                            << listToString(m.compiled_batch_sizes) << ")";
        out.paths[key] = it->second;
      }
    for (const auto &[key, path] : batched)
      if (!out.paths.count(key))
        out.warnings.push_back(path + ": batch size " + std::to_string(key.batch_size) +
                               " is not in batching.compiled_batch_sizes " +
                               listToString(m.compiled_batch_sizes) + "; not loaded");
  } else if (!unbatched.empty()) {
    for (size_t v = 0; v < variants; ++v) {
      const ProgramKey key{v, 0};
      auto it = unbatched.find(key);
      if (it == unbatched.end())
        return notFound() << dir << "/" << programFileName(key, multi_shape) << ": missing ("
                          << variantPhrase(key, m) << "the bundle's other variants have "
                          << unbatched_form << " programs)";
      out.paths[key] = it->second;
    }
  } else {
    return notFound() << dir << ": no program: expected " << unbatched_form << " or "
                      << batched_form << " for batching.compiled_batch_sizes "
                      << listToString(m.compiled_batch_sizes);
  }
  return out;
}

} // namespace rs::bundle
