//===- frontend/tls.cc - TLS for the gRPC and HTTP front-ends -----------------===//
#include "frontend/tls.h"
#include "support/file.h"

#include <grpcpp/security/server_credentials.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

namespace rs::frontend {

Result<std::string> readPemFile(const std::string &path, std::string_view what) {
  Result<std::string> text = readWholeFile(path);
  if (!text.isOk()) // "tls.cert_file PATH: cannot open: REASON"
    return failedPrecondition() << what << " " << text.status().message();
  if (text->empty())
    return failedPrecondition() << what << " " << path << " is empty";
  return std::move(text).value();
}

namespace {

using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

/// A read-only memory BIO over `pem` (which must outlive it).
BioPtr memoryBio(const std::string &pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
}

/// The first PEM certificate of `pem`, or null.
std::unique_ptr<X509, decltype(&X509_free)> firstCertificate(const std::string &pem) {
  BioPtr bio = memoryBio(pem);
  return {PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free};
}

} // namespace

Status checkKeyMatchesCertificate(const std::string &cert_pem, const std::string &key_pem,
                                  const std::string &cert_path, const std::string &key_path) {
  auto cert = firstCertificate(cert_pem);
  if (!cert)
    return failedPrecondition() << "tls.cert_file " << cert_path << " holds no PEM certificate";
  BioPtr key_bio = memoryBio(key_pem);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
  if (!key)
    return failedPrecondition() << "tls.key_file " << key_path
                                << " holds no PEM private key (or one with a passphrase)";
  if (X509_check_private_key(cert.get(), key.get()) != 1)
    return failedPrecondition() << "tls.key_file " << key_path
                                << " is not the private key of the certificate in tls.cert_file "
                                << cert_path;
  return Status::ok();
}

Result<std::shared_ptr<grpc::ServerCredentials>> grpcServerCredentials(const TlsOptions &tls) {
  if (!tls.enabled())
    return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions o(
      tls.mutual() ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                   : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  RS_ASSIGN_OR_RETURN(pair.cert_chain, readPemFile(tls.cert_file, "tls.cert_file"));
  RS_ASSIGN_OR_RETURN(pair.private_key, readPemFile(tls.key_file, "tls.key_file"));
  RS_RETURN_IF_ERROR(
      checkKeyMatchesCertificate(pair.cert_chain, pair.private_key, tls.cert_file, tls.key_file));
  o.pem_key_cert_pairs.push_back(std::move(pair));
  if (tls.mutual()) {
    RS_ASSIGN_OR_RETURN(o.pem_root_certs, readPemFile(tls.client_ca_file, "tls.client_ca_file"));
    if (!firstCertificate(o.pem_root_certs))
      return failedPrecondition() << "tls.client_ca_file " << tls.client_ca_file
                                  << " holds no PEM certificate";
  }
  return grpc::SslServerCredentials(o);
}

} // namespace rs::frontend
