//===- config/config_keys.cc - Worker key checks and env overrides --------===//
//
// The unknown/removed key check of a worker block and the INFERENCE_SERVER_* overrides,
// both driven by the worker key table (config/keys.h).
//
//===----------------------------------------------------------------------===//
#include "config/worker_build_impl.h"

#include "config/key_reader.h"
#include "config/keys.h"

namespace rs::config::detail {

Status checkBlockKeys(const yaml::Value &block, std::string_view file) {
  return checkKeys(workerKeys(), KeyReader(block, std::string(file)), block);
}

Status applyEnvironment(const Environment &env, yaml::Value &raw, WorkerConfig &out) {
  EnvApplied applied;
  RS_RETURN_IF_ERROR(config::applyEnvironment(workerKeys(), env, raw, applied));
  out.env_overrides = std::move(applied.overrides);
  out.env_keys = std::move(applied.keys);
  return Status::ok();
}

} // namespace rs::config::detail
