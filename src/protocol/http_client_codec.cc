//===- protocol/http_client_codec.cc - KServe V2 REST bodies, client side ----===//
//
// The client side of protocol/http_codec.h (the `infer` tool, the gateway, tests):
// inference requests encoded, responses decoded and validated like requests. The body
// parts both sides share are http_body.cc's (protocol/http_codec_impl.h).
//
//===----------------------------------------------------------------------===//
#include "protocol/http_codec.h"

#include "protocol/http_codec_impl.h"

#include <nlohmann/json.hpp>

namespace rs::protocol {
namespace {

using namespace http_codec_detail;
using nlohmann::json;

Result<json> parseJson(std::string_view text) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception &e) {
    return invalidArgument() << "invalid JSON: " << e.what();
  }
}

} // namespace

HttpBody encodeHttpInferRequest(const InferRequest &request, bool binary_inputs,
                                const OutputEncoding &outputs) {
  std::string text = "{";
  if (!request.id.empty())
    text += "\"id\":" + jsonString(request.id) + ",";
  text += "\"parameters\":{\"binary_data_output\":";
  text += outputs.binary_by_default ? "true" : "false";
  text += "},\"inputs\":[";
  std::vector<const NamedTensor *> binary;
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    if (i)
      text.push_back(',');
    if (appendTensorEntry(request.inputs[i], binary_inputs, text))
      binary.push_back(&request.inputs[i]);
  }
  text += "]";
  if (!request.requested_outputs.empty()) {
    text += ",\"outputs\":[";
    for (size_t i = 0; i < request.requested_outputs.size(); ++i) {
      const std::string &name = request.requested_outputs[i];
      if (i)
        text.push_back(',');
      text += "{\"name\":" + jsonString(name) + ",\"parameters\":{\"binary_data\":";
      text += outputs.binaryFor(name) ? "true" : "false";
      text += "}}";
    }
    text += "]";
  }
  text += "}";
  return finishBody(std::move(text), binary);
}

Result<InferResponse> decodeHttpInferResponse(std::string_view body,
                                              std::optional<std::string_view> header_length) {
  std::string_view json_part, binary_part;
  RS_RETURN_IF_ERROR(splitBody(body, header_length, json_part, binary_part));
  RS_ASSIGN_OR_RETURN(json root, parseJson(json_part));
  if (!root.is_object())
    return invalidArgument() << "response body must be a JSON object";
  InferResponse resp;
  auto str = [&](const char *key, std::string &dst) -> Status {
    auto it = root.find(key);
    if (it == root.end())
      return Status::ok();
    if (!it->is_string())
      return invalidArgument() << "response '" << key << "' must be a string";
    dst = it->get<std::string>();
    return Status::ok();
  };
  RS_RETURN_IF_ERROR(str("model_name", resp.model_name));
  RS_RETURN_IF_ERROR(str("model_version", resp.model_version));
  RS_RETURN_IF_ERROR(str("id", resp.id));
  auto outputs = root.find("outputs");
  if (outputs == root.end() || !outputs->is_array())
    return invalidArgument() << "response has no 'outputs' array";
  RS_RETURN_IF_ERROR(decodeTensorList(*outputs, false, binary_part, header_length.has_value(),
                                      nullptr, resp.outputs));
  return resp;
}

} // namespace rs::protocol
