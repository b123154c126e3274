//===- frontend/grpc_evidence.cc - reactant_evidence.EvidenceService ------===//
//
// GrpcServer's DeploymentEvidence handler (frontend/grpc_server.h): the
// deployment-identity document (server/evidence.h) as JSON text, with its `format` field.
//
//===----------------------------------------------------------------------===//
#include "frontend/grpc_server.h"

#include "frontend/grpc_server_impl.h"

#include <nlohmann/json.hpp>

namespace rs::frontend {

grpc::Status
GrpcServer::EvidenceImpl::DeploymentEvidence(const reactant_evidence::DeploymentEvidenceRequest *,
                                             reactant_evidence::DeploymentEvidenceResponse *resp) {
  std::string text = evidence_();
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object() && doc.contains("format") && doc["format"].is_string())
    resp->set_format(doc["format"].get<std::string>());
  resp->set_json(std::move(text));
  return grpc::Status::OK;
}

} // namespace rs::frontend
