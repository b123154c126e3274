//===- config/image_identity.h - The release image a worker runs in ------===//
//
// A release image (deploy/, scripts/image.sh) carries its own identity in a file the build
// writes, by default /usr/share/reactant-server/image.json:
//
//   {"version": "0.4.0", "commit": "<40 hex>", "lock_sha256": "<64 hex>", "variant": "cpu"}
//
// (`variant` "cpu" or "gpu", hex digits lower-case, every key required, no other key). The
// image's digest cannot be inside the image, so whoever starts it passes it in
// REACTANT_IMAGE_DIGEST=sha256:<64 hex> (the Helm chart does). REACTANT_IMAGE_IDENTITY_FILE
// names another identity file; a file named there must exist.
//
// Neither the default file nor either variable present: the process runs outside a release
// image, and says so (`image=none`). A file that cannot be read or parsed, a key missing,
// unknown or malformed, or a malformed digest is an InvalidArgument naming the file or the
// variable and what was expected: a worker does not start with an identity it cannot prove.
// An empty variable counts as unset.
//
// The worker logs the identity in `Effective configuration` and serves it in its evidence
// (server/evidence.h), so a validation record made in one image reports another image as a
// change (`validate check`, category image/build).
//
// Thread safety: plain values and free functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rs::config {

/// The identity file a release image holds.
inline constexpr std::string_view kImageIdentityFile = "/usr/share/reactant-server/image.json";
/// Names an identity file other than kImageIdentityFile.
inline constexpr std::string_view kImageIdentityFileVariable = "REACTANT_IMAGE_IDENTITY_FILE";
/// The image's digest, "sha256:<64 lower-case hex>".
inline constexpr std::string_view kImageDigestVariable = "REACTANT_IMAGE_DIGEST";

/// What the running image says about itself; every field "" when unknown.
struct ImageIdentity {
  std::string file;        // the identity file read ("" = none)
  std::string version;     // the release's version, "0.4.0"
  std::string commit;      // the project commit it was built from, 40 hex digits
  std::string lock_sha256; // SHA-256 of the lock file it was built with, 64 hex digits
  std::string variant;     // "cpu" | "gpu"
  std::string digest;      // REACTANT_IMAGE_DIGEST, "sha256:<64 hex>"

  /// False outside a release image (no identity file and no digest).
  bool known() const { return !file.empty() || !digest.empty(); }
  bool operator==(const ImageIdentity &) const = default;
};

/// Parses the identity file's JSON `text`; `file` names it in errors and in the result.
/// InvalidArgument naming the file and the key for anything but the format above.
Result<ImageIdentity> parseImageIdentity(std::string_view text, const std::string &file);

/// The identity the process runs with, from `env` (the variables above) and the identity
/// file. An unknown identity (known() false) when neither is present; InvalidArgument as
/// described in the file comment.
Result<ImageIdentity> readImageIdentity(const std::map<std::string, std::string> &env);

/// The identity as `Effective configuration` prints it: ("image", "none") outside a release
/// image; else image.digest, image.version, image.commit, image.lock_sha256, image.variant
/// and image.file in that order, each "unset" when unknown.
std::vector<std::pair<std::string, std::string>> imageSettings(const ImageIdentity &image);

} // namespace rs::config
