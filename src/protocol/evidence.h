//===- protocol/evidence.h - The deployment-identity document -------------===//
//
// What a server says about itself so that a validation record can prove, later, that a
// deployment is still the one that was validated (seed/reproducibility.md
// "Startup evidence" and "Checklist"). Served as JSON by `GET /v2/evidence` and, the same
// bytes, by the gRPC RPC reactant_evidence.EvidenceService/DeploymentEvidence
// (protocol/proto/reactant_evidence_v1.proto); docs/validation.md has the contract.
//
// The document (format "reactant-server evidence 1"), every value a string unless said:
//
//   build      version, commit, compiler, build_type, eigen, and `libraries` (grpc,
//              protobuf, openssl, glibc, spdlog, fmt, nlohmann_json, cpp_httplib): the
//              versions this binary was built with or runs on.
//   image      the release image the worker runs in (config/image_identity.h): "none"
//              outside one, else {digest, version, commit, lock_sha256, variant}, each ""
//              when unknown (digest: REACTANT_IMAGE_DIGEST not given).
//   config     every resolved setting that can change what a model computes, as the
//              `Effective configuration` line prints it (config::effectiveSettings), keyed
//              by dotted key. Per-instance keys (kInstanceConfigKeys) are under instance.
//   backend    platform, device_kind, compute_capability, backend_version (DeviceInfo);
//              driver_version, cuda_version, pjrt_plugin_path, pjrt_plugin_version,
//              pjrt_plugin_sha256 (BackendFacts; "" on the cpu backend).
//   tf32_probe the fields of the `TF32 probe` startup line (numerics, tf32_active,
//              pinned_exact).
//   models     by model name: state "ready" with manifest_sha256, weights_sha256 ("" for a
//              bundle without weights), programs (by batch size as a decimal string, "0"
//              for an unbatched model.mlir; in a multi-shape bundle by variant and size,
//              "v1.b8", "v1.b0" for model.v1.mlir: file, sha256, cache_key), batch_sizes
//              (JSON integers, ascending; [] when unbatched), numerics (the `model loaded`
//              outcome), inputs and outputs ([{name, datatype, shape}], shape as JSON
//              integers with -1 for the batch axis and variable axes), and for a
//              multi-shape bundle only input_shapes (the manifest's variants in order, each
//              {letter: size}); for a bundle with model.py hooks (docs/hooks.md) only
//              `hooks`: sha256 (the hooks' identity, also in every cache key), files (each
//              file the hooks may read, by bundle path: sha256), runtime ("cpython 3.11.7")
//              and packages (["numpy==2.4.6", ...]), python_path and allowed_packages
//              (hooks.*, only when set); or state "failed" with reason.
//   instance   facts of this one process that do not change outputs and that a
//              validation check never compares: worker name and index, node file and
//              host, hostname, pid, started_at (UTC, ISO 8601), image_identity_file (the
//              identity file read, "" = none), config (the instance keys),
//              config_sources (from_environment, from_profile), model_dirs (by model), and
//              executable_cache (hits, misses, and by model and program, keyed as under
//              models, "hit" or "miss: <reason>").
//
// Everything outside `instance` is a fact a validation compares (diffEvidence). Keys are
// sorted (nlohmann::json objects are ordered maps), so the same deployment prints the
// same bytes outside `instance`.
//
// A worker's document is built by server/evidence.h (evidenceDocument), a gateway's by
// gateway/gateway_evidence.cc; this file holds what both use and what `reactant-server
// validate` compares.
//
// Thread safety: free functions.
//
#pragma once

#include "support/build_info.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace rs::protocol {

/// "reactant-server evidence 1": the `format` of a worker's document.
inline constexpr std::string_view kEvidenceFormat = "reactant-server evidence 1";

/// "reactant-server gateway evidence 1": the `format` of a gateway's document
/// (gateway/gateway.h; docs/validation.md "Gateway contract").
inline constexpr std::string_view kGatewayEvidenceFormat = "reactant-server gateway evidence 1";

/// The `build` section of the document: `build`'s identity and the library versions this
/// binary was built with or runs on.
nlohmann::json buildEvidence(const ServerBuild &build);

/// This host's name (gethostname), or "unknown".
std::string evidenceHostName();

/// UTC now as "YYYY-MM-DDTHH:MM:SSZ".
std::string utcNow();

//===----------------------------------------------------------------------===//
// Comparing two documents (`reactant-server validate check`)
//===----------------------------------------------------------------------===//

/// One fact that differs between a recorded and a current document. `path` is dotted
/// ("config.runtime.numerics", "models.digits_cnn.weights_sha256"); a value is its JSON
/// text, or "(absent)".
struct FactChange {
  std::string path;
  std::string recorded;
  std::string current;
  /// What kind of change, for the operator (seed/reproducibility.md "Revalidate when"):
  /// "image/build", "device class", "driver", "backend", "numerics mode", "profile",
  /// "settings", "tf32 probe", "bundle hashes", "cache keys", "model load", "models",
  /// "format".
  std::string category;
};

/// Every fact outside `instance` objects (at any depth) that differs, in path order.
/// Objects are compared key by key; arrays and scalars as whole values.
std::vector<FactChange> diffEvidence(const nlohmann::json &recorded, const nlohmann::json &current);

} // namespace rs::protocol
