//===- test/common/model_stream.cc - One pipelined ModelStreamInfer stream --===//
#include "common/model_stream.h"

namespace rs::testing {

StreamAnswers pipelineStream(inference::GRPCInferenceService::Stub &stub,
                             const std::vector<inference::ModelInferRequest> &requests,
                             int rounds) {
  grpc::ClientContext ctx;
  auto stream = stub.ModelStreamInfer(&ctx);
  bool writing = true;
  for (int round = 0; round < rounds && writing; ++round)
    for (const inference::ModelInferRequest &r : requests)
      if (writing)
        writing = stream->Write(r);
  stream->WritesDone();
  StreamAnswers out;
  inference::ModelStreamInferResponse answer;
  while (stream->Read(&answer))
    out.answers.push_back(std::move(answer));
  out.finished = stream->Finish();
  return out;
}

} // namespace rs::testing
