//===- server/tls.cc - TLS for the gRPC and HTTP front-ends -----------------===//
#include "server/tls.h"

#include <grpcpp/security/server_credentials.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rs::server {

Result<std::string> readPemFile(const std::string &path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return failedPrecondition() << what << " " << path
                                << " cannot be read: " << std::strerror(errno);
  std::ostringstream s;
  s << in.rdbuf();
  if (s.str().empty())
    return failedPrecondition() << what << " " << path << " is empty";
  return s.str();
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
  o.pem_key_cert_pairs.push_back(std::move(pair));
  if (tls.mutual()) {
    RS_ASSIGN_OR_RETURN(o.pem_root_certs, readPemFile(tls.client_ca_file, "tls.client_ca_file"));
  }
  return grpc::SslServerCredentials(o);
}

} // namespace rs::server
