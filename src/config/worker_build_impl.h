//===- config/worker_build_impl.h - Private: keys, env, typing -------------===//
//
// The steps of resolveWorker() after the node-level merge, used by node_config.cc:
// key checks of a config block, INFERENCE_SERVER_* overrides, and typing + validation +
// the regulated profile. Not part of the public API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "config/node_config.h"
#include "config/worker_config.h"
#include "support/status.h"
#include "support/yaml.h"

#include <string>
#include <string_view>

namespace rs::config::detail {

/// Rejects unknown and removed keys in a `global` or worker override block (a map or
/// null); messages name `file` and the key's origin.
Status checkBlockKeys(const yaml::Value &block, std::string_view file);

/// Applies INFERENCE_SERVER_* variables of `env` onto the raw worker tree `raw` and
/// records them in `out.env_overrides` / `out.env_keys`.
Status applyEnvironment(const Environment &env, yaml::Value &raw, WorkerConfig &out);

/// Types and validates `raw` (a merged, env-applied worker tree) into `out`, then applies
/// the regulated profile. Worker identity fields of `out` are left as they are.
Status buildWorker(const yaml::Value &raw, std::string_view file, WorkerConfig &out);

} // namespace rs::config::detail
