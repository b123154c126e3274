//===- frontend/tls.h - TLS for the gRPC and HTTP front-ends ------------------===//
//
// Optional TLS on a worker's (and the REST front-end's) data ports: the `tls:` block of
// the node file (config/worker_config.h TlsConfig; docs/operations.md "TLS"). Off while
// no certificate is given. With a certificate and key, gRPC is served over TLS
// (grpc::SslServerCredentials) and HTTP over HTTPS (OpenSSL through Boost.Asio,
// frontend/http_listener.h); a
// plaintext client fails its handshake. With client CAs as well, every client must
// present a certificate signed by one of them (mTLS): gRPC
// GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY, HTTP SSL_VERIFY_PEER |
// SSL_VERIFY_FAIL_IF_NO_PEER_CERT. The metrics and health port stays plaintext (probes
// and Prometheus scrapes).
//
// Thread safety: plain values and free functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

namespace rs::frontend {

/// PEM files of one TLS listener.
struct TlsOptions {
  std::string cert_file;      // server certificate chain; "" = TLS off
  std::string key_file;       // its private key
  std::string client_ca_file; // CAs of client certificates; "" = none required
  bool enabled() const { return !cert_file.empty(); }
  bool mutual() const { return !client_ca_file.empty(); }
};

/// The gRPC credentials for `tls`: insecure when it is off, else SSL credentials with
/// the files' contents. FailedPrecondition naming the file (and its key) when one cannot
/// be read, holds no PEM certificate / private key (tls.client_ca_file: no certificate), or
/// when the key is not the one of the certificate (the first of tls.cert_file's chain);
/// checkKeyMatchesCertificate().
Result<std::shared_ptr<grpc::ServerCredentials>> grpcServerCredentials(const TlsOptions &tls);

/// Checks that `key_pem` holds a private key and `cert_pem` a certificate (the first of a
/// chain), and that they belong together (OpenSSL X509_check_private_key).
/// FailedPrecondition naming tls.cert_file / tls.key_file and their paths otherwise; a
/// mismatched pair would otherwise surface as gRPC's "cannot bind".
Status checkKeyMatchesCertificate(const std::string &cert_pem, const std::string &key_pem,
                                  const std::string &cert_path, const std::string &key_path);

/// Reads a whole file (a PEM). FailedPrecondition naming `what` and the path otherwise.
Result<std::string> readPemFile(const std::string &path, std::string_view what);

} // namespace rs::frontend
