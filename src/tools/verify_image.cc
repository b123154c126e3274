//===- tools/verify_image.cc - `reactant-server verify-image` --------------===//
//
// The envelope's signature and statement, the layout's blobs and manifest digest, and the
// verdict (tools/verify_image.h); the materials against the lock are verify_image_lock.cc.
//
//===----------------------------------------------------------------------===//
#include "tools/verify_image.h"

#include "support/digest.h"
#include "support/file.h"
#include "tools/exit_status.h"
#include "tools/verify_image_impl.h"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

namespace rs::tools {

namespace fs = std::filesystem;
using nlohmann::json;

std::string dssePae(std::string_view payload_type, std::string_view body) {
  std::string out = "DSSEv1 " + std::to_string(payload_type.size()) + " ";
  out.append(payload_type);
  out += " " + std::to_string(body.size()) + " ";
  out.append(body);
  return out;
}

Result<std::string> decodeBase64(std::string_view text) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+' || c == '-')
      v = 62;
    else if (c == '/' || c == '_')
      v = 63;
    else if (c == '=')
      break;
    else
      return invalidArgument() << "base64: unexpected character '" << c << "'";
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

namespace detail {

Result<json> readJsonFile(const std::string &path, const char *what) {
  RS_ASSIGN_OR_RETURN(std::string text, readWholeFile(path));
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return invalidArgument() << path << ": the " << what << " is not a JSON object";
  return doc;
}

namespace {

struct PkeyFree {
  void operator()(EVP_PKEY *k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX *c) const { EVP_MD_CTX_free(c); }
};

Result<std::unique_ptr<EVP_PKEY, PkeyFree>> readEd25519Key(const std::string &path) {
  RS_ASSIGN_OR_RETURN(std::string pem, readWholeFile(path));
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), int(pem.size())),
                                                &BIO_free);
  std::unique_ptr<EVP_PKEY, PkeyFree> key(
      PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  if (!key)
    return invalidArgument() << path << ": not a PEM public key (expected the releaser's "
                             << "Ed25519 key, -----BEGIN PUBLIC KEY-----)";
  if (EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519)
    return invalidArgument() << path << ": the public key is not an Ed25519 key";
  return key;
}

bool ed25519Verifies(EVP_PKEY *key, const std::string &message, const std::string &sig) {
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key) != 1)
    return false;
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char *>(sig.data()),
                          sig.size(), reinterpret_cast<const unsigned char *>(message.data()),
                          message.size()) == 1;
}

} // namespace

Result<ImageCheck> checkSignature(const json &envelope, const std::string &key_path,
                                  std::string *payload) {
  RS_ASSIGN_OR_RETURN(auto key, readEd25519Key(key_path));
  ImageCheck c{"signature", false, false, ""};
  const std::string type = envelope.value("payloadType", "");
  Result<std::string> body = decodeBase64(envelope.value("payload", ""));
  if (!body.isOk() || !envelope.contains("signatures") || !envelope["signatures"].is_array()) {
    c.detail = "the attestation is not a DSSE envelope (payloadType, base64 payload, signatures)";
    return c;
  }
  const std::string message = dssePae(type, *body);
  size_t n = 0;
  for (const json &s : envelope["signatures"]) {
    ++n;
    Result<std::string> sig = decodeBase64(s.is_object() ? s.value("sig", "") : "");
    if (sig.isOk() && ed25519Verifies(key.get(), message, *sig)) {
      c.ok = true;
      c.detail = "Ed25519 signature " + std::to_string(n) + " verifies with " + key_path;
      *payload = std::move(*body);
      return c;
    }
  }
  c.detail = "no signature of the envelope (" + std::to_string(n) + ") verifies with " + key_path +
             ": wrong key, or the attestation was changed after signing";
  return c;
}

ImageCheck checkStatement(const json &envelope, const json &statement) {
  ImageCheck c{"statement", false, false, ""};
  const std::string type = envelope.value("payloadType", "");
  if (type != kInTotoPayloadType)
    c.detail = "payloadType is '" + type + "', expected " + std::string(kInTotoPayloadType);
  else if (statement.value("_type", "") != kStatementType)
    c.detail =
        "_type is '" + statement.value("_type", "") + "', expected " + std::string(kStatementType);
  else if (statement.value("predicateType", "") != kSlsaProvenanceType)
    c.detail = "predicateType is '" + statement.value("predicateType", "") + "', expected " +
               std::string(kSlsaProvenanceType);
  else {
    c.ok = true;
    c.detail = "in-toto Statement v1, SLSA Provenance v1, builder " +
               statement["predicate"]["runDetails"]["builder"].value("id", "?");
  }
  return c;
}

Result<Layout> readLayout(const std::string &image) {
  Layout l;
  l.dir = image;
  if (imageNamesDigest(image)) {
    const size_t at = image.rfind("@sha256:");
    l.dir = image.substr(0, at);
    l.wanted = image.substr(at + 8);
    if (l.wanted.size() != 64 ||
        l.wanted.find_first_not_of("0123456789abcdef") != std::string::npos)
      return invalidArgument() << image << ": the digest after @sha256: must be 64 lower-case "
                               << "hex digits";
  }
  RS_ASSIGN_OR_RETURN(json index,
                      readJsonFile((fs::path(l.dir) / "index.json").string(), "OCI image index"));
  const json manifests = index.value("manifests", json::array());
  std::vector<std::string> listed;
  for (const json &m : manifests) {
    const std::string d = m.is_object() ? m.value("digest", "") : "";
    if (d.rfind("sha256:", 0) == 0)
      listed.push_back(d.substr(7));
  }
  if (listed.empty())
    return invalidArgument() << l.dir << "/index.json lists no sha256 manifest";
  if (!l.wanted.empty() && std::count(listed.begin(), listed.end(), l.wanted) > 0)
    l.manifest_name = l.wanted;
  else if (listed.size() == 1)
    l.manifest_name = listed[0];
  else
    return invalidArgument() << l.dir << "/index.json lists " << listed.size()
                             << " manifests: name one with OCI_DIR@sha256:DIGEST";
  return l;
}

ImageCheck checkBlobs(Layout *l) {
  ImageCheck c{"blobs", false, false, ""};
  const fs::path blobs = fs::path(l->dir) / "blobs" / "sha256";
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::directory_iterator(blobs, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    files.push_back(it->path());
  std::sort(files.begin(), files.end());
  std::vector<std::string> bad;
  for (const fs::path &f : files) {
    Result<std::string> got = sha256OfFile(f.string());
    const std::string name = f.filename().string();
    if (!got.isOk())
      bad.push_back(got.status().message());
    else if (*got != name)
      bad.push_back("blob sha256:" + name + " has content sha256:" + *got);
    if (name == l->manifest_name && got.isOk())
      l->manifest_digest = *got;
  }
  Result<std::string> text = readWholeFile((blobs / l->manifest_name).string());
  json manifest = text.isOk() ? json::parse(*text, nullptr, false) : json();
  if (!manifest.is_object()) {
    bad.push_back("the manifest sha256:" + l->manifest_name + " is missing or not JSON");
  } else {
    std::vector<json> descs = manifest.value("layers", std::vector<json>{});
    descs.insert(descs.begin(), manifest.value("config", json::object()));
    for (size_t i = 0; i < descs.size(); ++i) {
      const std::string what = i == 0 ? "the config" : "layer " + std::to_string(i);
      const std::string d = descs[i].is_object() ? descs[i].value("digest", "") : "";
      const fs::path p = blobs / (d.size() > 7 ? d.substr(7) : "?");
      if (d.rfind("sha256:", 0) != 0 || !fs::is_regular_file(p))
        bad.push_back(what + " (" + d + ") is missing from the layout");
      else if (int64_t(fs::file_size(p)) != descs[i].value("size", int64_t(-1)))
        bad.push_back(what + " (" + d + ") is " + std::to_string(fs::file_size(p)) +
                      " bytes, the manifest says " + std::to_string(descs[i].value("size", -1)));
    }
  }
  if (bad.empty()) {
    c.ok = true;
    c.detail = std::to_string(files.size()) + " blobs, each matching its digest";
  } else {
    c.detail =
        bad[0] + (bad.size() > 1 ? " (and " + std::to_string(bad.size() - 1) + " more)" : "");
  }
  return c;
}

} // namespace detail

using namespace detail;

Result<std::vector<ImageCheck>> verifyImage(const VerifyImageOptions &o) {
  RS_ASSIGN_OR_RETURN(Layout layout, readLayout(o.image));
  RS_ASSIGN_OR_RETURN(json envelope, readJsonFile(o.attestation, "attestation"));
  RS_ASSIGN_OR_RETURN(json lock, readJsonFile(o.lock, "lock"));
  RS_ASSIGN_OR_RETURN(std::string lock_sha, sha256OfFile(o.lock));
  std::vector<ImageCheck> checks;
  std::string payload;
  RS_ASSIGN_OR_RETURN(ImageCheck sig, checkSignature(envelope, o.key, &payload));
  checks.push_back(sig);
  json statement = sig.ok ? json::parse(payload, nullptr, false) : json();
  const bool trusted = sig.ok && statement.is_object();
  auto untrusted = [&](const char *name) {
    return ImageCheck{name, false, false,
                      sig.ok ? "the signed payload is not JSON"
                             : "not checked: the signature did not verify"};
  };
  checks.push_back(trusted ? checkStatement(envelope, statement) : untrusted("statement"));
  checks.push_back(checkBlobs(&layout));
  const std::string manifest = "sha256:" + layout.manifest_digest;
  if (!trusted) {
    checks.push_back(untrusted("subject"));
  } else {
    ImageCheck c{"subject", false, false, ""};
    std::string subjects;
    for (const json &s : statement.value("subject", json::array())) {
      const std::string d = s.is_object() && s.contains("digest") && s["digest"].is_object()
                                ? s["digest"].value("sha256", "")
                                : "";
      c.ok = c.ok || (!d.empty() && d == layout.manifest_digest);
      subjects += (subjects.empty() ? "sha256:" : ", sha256:") + d;
    }
    c.detail = c.ok ? "the manifest " + manifest + " is the attestation's subject"
                    : "the attestation's subject is " + subjects + ", the layout's manifest is " +
                          manifest;
    checks.push_back(c);
  }
  ImageCheck d{"digest", false, false, ""};
  if (layout.wanted.empty()) {
    d.ok = d.skipped = true;
    d.detail = "no digest given (give --image OCI_DIR@sha256:DIGEST to pin the image)";
  } else {
    d.ok = layout.manifest_digest == layout.wanted;
    d.detail = d.ok ? "the manifest is the digest given, " + manifest
                    : "the layout's manifest is " + manifest +
                          ", not the digest given sha256:" + layout.wanted;
  }
  checks.push_back(d);
  checks.push_back(trusted ? checkMaterials(statement, lock, o.lock, lock_sha)
                           : untrusted("materials"));
  return checks;
}

bool imageNamesDigest(std::string_view image) {
  return image.rfind("@sha256:") != std::string_view::npos;
}

int runVerifyImage(const VerifyImageOptions &options, std::ostream &out, std::ostream &err) {
  if (!imageNamesDigest(options.image) && !options.allow_no_digest) {
    err << "verify-image: --image " << options.image
        << " names no digest: give --image OCI_DIR@sha256:DIGEST with the digest you deploy "
           "(the other checks do not pin which image that is), or --allow-no-digest to check "
           "the signature, blobs, subject and materials alone\n";
    return kExitUsage;
  }
  Result<std::vector<ImageCheck>> checks = verifyImage(options);
  if (!checks.isOk()) {
    err << "verify-image: " << checks.status().toString() << "\n";
    return kExitError;
  }
  size_t failed = 0;
  for (const ImageCheck &c : *checks) {
    failed += c.ok ? 0 : 1;
    out << "verify-image: " << c.name << ": "
        << (c.skipped ? "SKIPPED"
            : c.ok    ? "OK"
                      : "FAILED")
        << ": " << c.detail << "\n";
  }
  if (failed == 0) {
    out << "verify-image: VERIFIED"
        << (imageNamesDigest(options.image)
                ? ""
                : " (digest not checked: the image was given without @sha256:DIGEST, so this "
                  "is not proof that the image deployed is this one)")
        << "\n";
    return kExitOk;
  }
  out << "verify-image: REFUSED: " << failed << " of " << checks->size() << " checks failed\n";
  return kExitCheckFailed;
}

void addVerifyImageCommand(CLI::App &app) {
  auto o = std::make_shared<VerifyImageOptions>();
  CLI::App *c = app.add_subcommand(
      "verify-image", "Check a release image's layout against its signed build attestation");
  c->add_option("--image", o->image, "OCI image layout directory, OCI_DIR@sha256:DIGEST")
      ->required();
  c->add_option("--attestation", o->attestation, "DSSE envelope (attestation.dsse.json)")
      ->required();
  c->add_option("--key", o->key, "The releaser's Ed25519 public key (PEM)")->required();
  c->add_option("--lock", o->lock, "The release lock (deploy/lock/release.lock.json)")->required();
  c->add_flag("--allow-no-digest", o->allow_no_digest,
              "Check an image given without @sha256:DIGEST (the digest check is skipped and "
              "the verdict says so)");
  c->callback([o] { std::exit(runVerifyImage(*o, std::cout, std::cerr)); });
}

} // namespace rs::tools
