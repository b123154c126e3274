//===- frontend/http_server_impl.h - HttpServer internals (private) -------===//
//
// Shared by http_server.cc (health, metadata, inference, transport errors) and
// http_server_control.cc (shared memory, repository, statistics). Not API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/http_message.h"
#include "protocol/http_codec.h"
#include "support/status.h"

#include <string>

namespace rs::frontend::http_detail {

inline constexpr const char *kJson = "application/json";
/// /v2/models/{m} with an optional /versions/{v}: matches[1] the model, matches[2] the version.
inline constexpr const char *kModelPath = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";

/// Sets `res` to `status` with the JSON `body`.
void replyJson(HttpResponse &res, int status, std::string body);
/// The KServe error reply for `status` ({"error": message} with its HTTP status).
void replyError(HttpResponse &res, const Status &status);
/// The model and version a kModelPath route matched.
protocol::ModelRef modelRef(const HttpRequest &req);

} // namespace rs::frontend::http_detail
