//===- config/node_keys.cc - The rows of the node file's top level --------===//
//
// The node file's own keys (reference-system.md §2.1). The scalar ones are read through the
// table; the structural ones (model_repo, gpus, global, workers, models, gateway) by
// node_config.cc, and are rows here so that the unknown-key check and the docs know them.
//
//===----------------------------------------------------------------------===//
#include "config/keys.h"

// Each row names only the fields it sets (designated initializers, the rest keep their
// defaults); GCC 12's -Wextra would still ask for every field.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace rs::config {
namespace {

using N = NodeConfig;
using T = ValueType;

constexpr Choice kRoles[] = {
    {"all", int(Role::kAll)}, {"workers", int(Role::kWorkers)}, {"gateway", int(Role::kGateway)}};

KeyTable<N> makeNodeKeys() {
  KeyTable<N> t;
  t.rows = {
      {{.path = "model_repo",
        .type = T::kStructure,
        .default_doc = "(required)",
        .env = "INFERENCE_SERVER_MODEL_DIRS",
        .values_doc = "non-empty path; relative to the node file's folder",
        .doc = "used: every worker's `model_dirs` (the variable, a `:` list, replaces it)"}},
      {{.path = "base_port",
        .type = T::kInteger,
        .ints = {1, 65535},
        .env = kNoEnv,
        .doc = "used: worker *i* gets `endpoints.port = base_port + i` unless it sets `port:`"},
       [](N &n) { return field(n.base_port); }},
      {{.path = "metrics_base_port",
        .type = T::kInteger,
        .default_doc = "unset (metrics off)",
        .ints = {1, 65535},
        .env = kNoEnv,
        .doc = "used: worker *i* gets `endpoints.metrics_port = metrics_base_port + i`"},
       [](N &n) { return field(n.metrics_base_port); }},
      {{.path = "gpus",
        .type = T::kStructure,
        .default_doc = "`auto`",
        .env = "REACTANT_GPUS",
        .values_doc = "`auto`, an integer >= 0, or a list of ordinals/UUIDs",
        .doc = "supervisor (`node`) only: the GPUs to start workers on"}},
      {{.path = "role",
        .type = T::kChoice,
        .default_doc = "`all`",
        .choices = kRoles,
        .env = "REACTANT_ROLE",
        .doc = "supervisor only: start the workers, the gateway, or both"},
       [](N &n) { return field(n.role); }},
      {{.path = "shared_host_weights",
        .type = T::kBoolean,
        .env = kNoEnv,
        .doc = "copied into each worker's `runtime.shared_host_weights` unless it sets one"},
       [](N &n) { return field(n.shared_host_weights); }},
      {{.path = "global",
        .type = T::kStructure,
        .default_doc = "`{}`",
        .env = kNoEnv,
        .values_doc = "a map of the worker keys below",
        .doc = "merged into every worker"}},
      {{.path = "workers",
        .type = T::kStructure,
        .default_doc = "unset (workers `worker0`..)",
        .env = kNoEnv,
        .values_doc = "list of `{name, gpu, host, port, <override blocks>}`; names unique, no "
                      "port collisions",
        .doc = "a worker's blocks are deep-merged over `global`"}},
      {{.path = "models",
        .type = T::kStructure,
        .default_doc = "`{}`",
        .env = kNoEnv,
        .values_doc = "`{model: [worker names]}`, non-empty lists of defined workers",
        .doc = "sets `scheduler.models.<m>.residency: device` on those workers when unset"}},
      {{.path = "gateway",
        .type = T::kStructure,
        .default_doc = "-",
        .env = kNoEnv,
        .values_doc = "read by the gateway only",
        .doc = "ignored by workers"}},
  };
  return t;
}

} // namespace

const KeyTable<NodeConfig> &nodeKeys() {
  static const KeyTable<NodeConfig> table = makeNodeKeys();
  return table;
}

} // namespace rs::config
