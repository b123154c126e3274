//===- tools/verify_image_impl.h - verify-image's checks, one by one -------===//
//
// Shared by verify_image.cc (signature, statement, blobs, verdict) and
// verify_image_lock.cc (materials against the lock). Not a public interface.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"
#include "tools/verify_image.h"

#include <nlohmann/json.hpp>

#include <string>

namespace rs::tools::detail {

inline constexpr std::string_view kInTotoPayloadType = "application/vnd.in-toto+json";
inline constexpr std::string_view kStatementType = "https://in-toto.io/Statement/v1";
inline constexpr std::string_view kSlsaProvenanceType = "https://slsa.dev/provenance/v1";

/// The layout being checked: its folder, the manifest index.json names (the blob file
/// name), the digest of that blob's bytes once checkBlobs has read it, and the digest the
/// user gave after '@' ("" for none). Digests are 64 hex digits without "sha256:".
struct Layout {
  std::string dir;
  std::string manifest_name;
  std::string manifest_digest;
  std::string wanted;
};

/// The JSON object in `path`; InvalidArgument naming `what` when it is not one.
Result<nlohmann::json> readJsonFile(const std::string &path, const char *what);

/// Parses OCI_DIR[@sha256:DIGEST] and reads its index.json.
Result<Layout> readLayout(const std::string &image);

/// The signature check; on success `payload` receives the verified payload bytes. Errors:
/// the key file cannot be read or is not an Ed25519 public key.
Result<ImageCheck> checkSignature(const nlohmann::json &envelope, const std::string &key_path,
                                  std::string *payload);

/// payloadType, _type and predicateType of a verified statement.
ImageCheck checkStatement(const nlohmann::json &envelope, const nlohmann::json &statement);

/// Every blob against its name, and the manifest's descriptors; fills manifest_digest.
ImageCheck checkBlobs(Layout *layout);

/// The statement's resolvedDependencies against the lock's inputs of the statement's
/// variant (externalParameters.variant) plus the lock itself (`lock_sha256`).
ImageCheck checkMaterials(const nlohmann::json &statement, const nlohmann::json &lock,
                          const std::string &lock_path, const std::string &lock_sha256);

} // namespace rs::tools::detail
