//===- tools/verify_image.h - `reactant-server verify-image` ---------------===//
//
// Checks a release image against its signed build attestation before it is deployed
// (docs/deploy.md, "The release image"):
//
//   reactant-server verify-image --image OCI_DIR@sha256:DIGEST --attestation FILE
//       --key PUBKEY.pem --lock deploy/lock/release.lock.json [--allow-no-digest]
//
// OCI_DIR is an OCI image layout (scripts/image.sh); FILE a DSSE envelope around an in-toto
// Statement v1 with a SLSA Provenance v1 predicate (scripts/image/attest.py); PUBKEY the
// releaser's Ed25519 public key (PEM); the lock the one the image claims to be built from.
// The checks, each printed as "verify-image: <check>: OK|FAILED|SKIPPED: <detail>":
//   signature  some signature of the envelope verifies with PUBKEY over the DSSE
//              pre-authentication encoding of its payloadType and payload
//   statement  the signed payload is an in-toto Statement v1 (payloadType
//              application/vnd.in-toto+json) with predicateType https://slsa.dev/provenance/v1
//   blobs      every file under blobs/sha256/ hashes to its name, and the manifest's config
//              and layers are present with their sizes (a tampered layer fails here)
//   subject    the manifest's digest, recomputed from its bytes, is a subject of the statement
//   digest     the manifest's digest is the DIGEST given (SKIPPED without one, which only
//              --allow-no-digest permits)
//   materials  the statement's resolvedDependencies are exactly the lock's inputs of the
//              image's variant (source commit, Debian suites and .debs, wheels) with the same
//              digests, plus the lock file itself with its sha256
// The statement, subject and materials checks read the payload only once the signature
// verified; otherwise they fail as "not checked".
//
// An image given without @sha256:DIGEST is refused before any check (exit status 2): the
// other checks prove that the layout is the one the attestation signs, not that it is the
// image about to be deployed, which only the digest the deployment names pins. With
// --allow-no-digest the checks run, the digest check is SKIPPED, and the verdict says that
// the digest was not checked ("verify-image: VERIFIED (digest not checked: ...)").
//
// Exit status (tools/exit_status.h): 0 when every check passed ("verify-image: VERIFIED");
// 1 when one failed ("verify-image: REFUSED: N of M checks failed"); 3 when an input cannot
// be read (no index.json, an unreadable key, attestation or lock); 2 bad command-line use,
// an image without a digest included.
//
// Thread safety: the functions touch only their arguments and the files named.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <CLI/CLI.hpp>

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace rs::tools {

struct VerifyImageOptions {
  /// OCI_DIR or OCI_DIR@sha256:<64 hex digits>.
  std::string image;
  std::string attestation;
  std::string key;
  std::string lock;
  /// Run the checks for an image given without @sha256:DIGEST (the digest check is then
  /// SKIPPED and the verdict says so); false: such an image is a usage error.
  bool allow_no_digest = false;
};

/// One check's outcome; `skipped` checks count as passed.
struct ImageCheck {
  std::string name;
  bool ok = false;
  bool skipped = false;
  std::string detail;
};

/// DSSE v1 pre-authentication encoding: "DSSEv1 <len(type)> <type> <len(body)> <body>".
std::string dssePae(std::string_view payload_type, std::string_view body);

/// Decodes standard or URL-safe base64, padded or not; InvalidArgument on another character.
Result<std::string> decodeBase64(std::string_view text);

/// Runs every check (see the file comment). Errors: an input that cannot be read at all.
Result<std::vector<ImageCheck>> verifyImage(const VerifyImageOptions &options);

/// True when `image` names a digest to pin, OCI_DIR@sha256:DIGEST (the digest's form is
/// checked when the layout is read).
bool imageNamesDigest(std::string_view image);

/// Runs verify-image; prints one line per check and the verdict to `out`, input errors to
/// `err`; returns kExitOk, kExitCheckFailed or kExitError, and kExitUsage without running
/// any check for an image without a digest unless options.allow_no_digest.
int runVerifyImage(const VerifyImageOptions &options, std::ostream &out, std::ostream &err);

/// Registers `verify-image` on `app`.
void addVerifyImageCommand(CLI::App &app);

} // namespace rs::tools
