//===- bundle/manifest_impl.h - Private declarations of the manifest parser ===//
//
// Private to bundle/manifest*.cc. ManifestParser reads one manifest.yaml tree:
// manifest.cc the top level (format_version, kind, batching, input_shapes, meta,
// provenance, batchability) and the public entry points, manifest_tensors.cc the tensor
// specs and their lists, with TensorSpec's shape queries.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/manifest.h"
#include "support/yaml.h"

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rs::bundle::detail {

/// The entry `key` of map `v` when present and not null.
const yaml::Value *present(const yaml::Value &v, std::string_view key);

/// Parses one manifest; every error names `file_`, the line and the field.
class ManifestParser {
public:
  ManifestParser(std::string_view file, std::string_view model_name, bool has_hooks)
      : file_(file), model_name_(model_name), has_hooks_(has_hooks) {}

  Result<Manifest> parse(const yaml::Value &root);

private:
  /// "<file>:<line>:<col>: <field>: " about `v` (yaml::errorAt).
  StatusBuilder error(const yaml::Value &v) const { return yaml::errorAt(v, file_); }

  /// Rejects unknown keys of map `v`.
  Status checkKeys(const yaml::Value &v, const std::set<std::string> &allowed) const;
  Result<std::string> scalar(const yaml::Value &v) const { return yaml::scalarOf(v, file_); }
  Result<int64_t> integer(const yaml::Value &v) const { return yaml::integerOf(v, file_); }
  /// `wire`: a client_inputs/client_outputs spec, which may take dtype `bytes`.
  Result<TensorSpec> parseSpec(const yaml::Value &v, bool wire) const;
  Result<std::vector<TensorSpec>> parseSection(const yaml::Value &root, const char *key) const;
  Status parseBatching(const yaml::Value &root, Manifest &m) const;
  Status parseInputShapes(const yaml::Value &root, Manifest &m) const;
  Status parseMeta(const yaml::Value &root, Manifest &m) const;
  Status checkBatchability(const yaml::Value &root, Manifest &m) const;

  std::string file_;
  std::string model_name_;
  bool has_hooks_ = false; // the bundle has model.py
};

} // namespace rs::bundle::detail
