//===- protocol/grpc_client_codec.cc - KServe V2 gRPC messages, client side -===//
//
// The client side of protocol/grpc_codec.h (the `infer` tool, the gateway, tests):
// ModelInferRequest encoded with every input raw, ModelInferResponse decoded and validated
// like requests. Tensor contents are grpc_tensor_contents.cc's (protocol/grpc_codec_impl.h).
//
//===----------------------------------------------------------------------===//
#include "protocol/grpc_codec.h"

#include "protocol/grpc_codec_impl.h"
#include "protocol/wire_tensor.h"

namespace rs::protocol {

using namespace grpc_codec_detail;

inference::ModelInferRequest encodeModelInferRequest(const InferRequest &request) {
  inference::ModelInferRequest msg;
  msg.set_model_name(request.model_name);
  msg.set_model_version(request.model_version);
  msg.set_id(request.id);
  for (const NamedTensor &in : request.inputs) {
    auto *t = msg.add_inputs();
    t->set_name(in.name);
    t->set_datatype(std::string(in.datatype()));
    setShape(t->mutable_shape(), in.shape());
    addRawContents(in, msg.mutable_raw_input_contents());
  }
  for (const std::string &name : request.requested_outputs)
    msg.add_outputs()->set_name(name);
  return msg;
}

Result<InferResponse> decodeModelInferResponse(const inference::ModelInferResponse &msg) {
  InferResponse resp;
  resp.model_name = msg.model_name();
  resp.model_version = msg.model_version();
  resp.id = msg.id();
  bool raw = msg.raw_output_contents_size() > 0;
  if (raw && msg.raw_output_contents_size() != msg.outputs_size())
    return invalidArgument() << "response has " << msg.raw_output_contents_size()
                             << " raw_output_contents entries for " << msg.outputs_size()
                             << " outputs";
  for (int i = 0; i < msg.outputs_size(); ++i) {
    const auto &o = msg.outputs(i);
    std::string what = outputWhat(o.name());
    RS_ASSIGN_OR_RETURN(WireTensorLayout layout,
                        checkWireTensor(what, o.datatype(),
                                        {o.shape().data(), static_cast<size_t>(o.shape_size())}));
    RS_ASSIGN_OR_RETURN(NamedTensor t,
                        decodeNamedTensor(o.name(), what, layout, o.contents(),
                                          raw ? &msg.raw_output_contents(i) : nullptr, nullptr));
    resp.outputs.push_back(std::move(t));
  }
  return resp;
}

} // namespace rs::protocol
