//===- server/model_metadata.h - A loaded model as the wire describes it ----===//
//
// KServe ModelMetadata of a loaded model: its name, the backend's platform, and its
// executable inputs and outputs in manifest order with row-major shapes, -1 on the batch
// axis and on the variable axes of a multi-shape bundle (bundle::TensorSpec::wireShape),
// each with its batch axis.
//
// Thread safety: a pure function.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"
#include "runtime/model_repository.h"

namespace rs::server {

/// The metadata of `model` (see the file comment).
protocol::ModelMetadata modelMetadataOf(const runtime::LoadedModel &model);

} // namespace rs::server
