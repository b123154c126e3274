//===- server/model_batching.h - A loaded model as the scheduler sees it ---===//
#pragma once

#include "runtime/model_repository.h"
#include "scheduler/scheduler.h"

namespace rs::server {

/// The scheduler's view of a loaded model: its compiled batch sizes, the batch axis of each
/// input and output (-1: none), and zero warmup inputs at each compiled size (none when an
/// input has a variable dim).
scheduler::ModelBatching batchingOf(const runtime::LoadedModel &m);

} // namespace rs::server
