//===- config/worker_scheduler_keys.cc - A worker's scheduler.* rows ------===//
//
// One row per scheduler.* key of `global:` / a worker's override block: the discipline
// and its tuning, queue limits, dispatch, coalescing, and the per-model table
// scheduler.models.<name> (weight, residency, max_batch_size), in the order they are read
// and documented.
//
//===----------------------------------------------------------------------===//
#include "config/worker_keys_impl.h"

#include "config/key_reader.h"

// Each row names only the fields it sets (designated initializers, the rest keep their
// defaults); GCC 12's -Wextra would still ask for every field.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace rs::config::detail {
namespace {

using W = WorkerConfig;
using M = ModelSchedulerConfig;
using T = ValueType;

constexpr Choice kDisciplines[] = {{"fair", int(Discipline::kFair)},
                                   {"fifo", int(Discipline::kFifo)},
                                   {"edf", int(Discipline::kEdf)}};
constexpr Choice kResidencies[] = {{"unpinned", int(Residency::kUnpinned)},
                                   {"system", int(Residency::kPinnedSystem), true},
                                   {"pinned_system", int(Residency::kPinnedSystem)},
                                   {"device", int(Residency::kPinnedDevice), true},
                                   {"pinned_device", int(Residency::kPinnedDevice)}};

/// scheduler.models.<name>: no variables (reference-system.md §2.3).
const KeyTable<M> &modelKeys() {
  static const KeyTable<M> table{
      .rows = {
          {{.path = "weight",
            .type = T::kNumber,
            .fallback = "1.0",
            .numbers = {0, kInf, true, true},
            .doc = "used under `fair`: the model's relative share of the device's compute "
                   "(`SetModelPolicy` changes it live)"},
           [](M &m) { return field(m.weight); }},
          {{.path = "residency",
            .type = T::kChoice,
            .default_doc = "unset (`system` with a weight cache)",
            .choices = kResidencies,
            .doc = "used on the CPU backend: the model's floor in the weight cache "
                   "(docs/model_repository.md)"},
           [](M &m) { return field(m.residency); }},
          {{.path = "pin_to_gpu",
            .type = T::kBoolean,
            .fallback = "false",
            .alias = true,
            .doc = "alias: `true` means `residency: device` when `residency` is unset"},
           [](M &m) { return field(m.pin_to_gpu); }},
          {{.path = "max_batch_size",
            .type = T::kInteger,
            .default_doc = "unset (uncapped)",
            .ints = {1, kMaxInt},
            .doc = "used: no coalesced batch of the model holds more rows (docs/scheduler.md)"},
           [](M &m) { return field(m.max_batch_size); }},
      }};
  return table;
}

std::map<std::string, M> &schedulerModels(W &c) { return c.scheduler.models; }

} // namespace

std::vector<Key<W>> schedulerKeyRows() {
  return {
      // --- scheduler
      {{.path = "scheduler.discipline",
        .type = T::kChoice,
        .fallback = "fair",
        .choices = kDisciplines,
        .doc = "used: which model dispatches next: `fair` (weighted share of recent compute, "
               "cost-aware), `fifo` (oldest front request), `edf` (soonest deadline, with "
               "laxity shedding) (docs/scheduler.md)"},
       [](W &c) { return field(c.scheduler.discipline); }},
      {{.path = "scheduler.ema_halflife_seconds",
        .type = T::kNumber,
        .fallback = "30",
        .numbers = {0, kInf, true, true},
        .doc = "used under `fair`: half-life of each model's recent-compute EMA"},
       [](W &c) { return field(c.scheduler.ema_halflife_seconds); }},
      {{.path = "scheduler.recency_penalty_cap",
        .type = T::kNumber,
        .fallback = "0.25",
        .numbers = {0, 1, true, false},
        .doc = "used under `fair`: clamp of share - recent share in the priority"},
       [](W &c) { return field(c.scheduler.recency_penalty_cap); }},
      {{.path = "scheduler.coalescing_discount",
        .type = T::kNumber,
        .fallback = "0.1",
        .numbers = {0, 1, false, true},
        .doc = "used under `fair`: the priority divides by cost x (1 - discount)"},
       [](W &c) { return field(c.scheduler.coalescing_discount); }},
      {{.path = "scheduler.cost_ema_alpha",
        .type = T::kNumber,
        .fallback = "0.2",
        .numbers = {0, 1, true, false},
        .doc = "used: weight of a new measurement in a model's cost estimate per batch size "
               "(`fair` priority, `edf` laxity)"},
       [](W &c) { return field(c.scheduler.cost_ema_alpha); }},
      {{.path = "scheduler.max_queue_depth",
        .type = T::kInteger,
        .fallback = "1024",
        .ints = {1, kMaxInt},
        .values_doc = ">= 1, per model",
        .doc = "used: a full queue answers RESOURCE_EXHAUSTED"},
       [](W &c) { return field(c.scheduler.max_queue_depth); }},
      {{.path = "scheduler.max_queue_delay_microseconds",
        .type = T::kInteger,
        .fallback = "0",
        .default_doc = "`0` (dispatch at once, the reference)",
        .ints = {0, 60000000},
        .values_doc = "0..60000000 (60 s)",
        .doc = "used (ours, Triton's dynamic-batcher delay): with coalescing, how long a "
               "partial batch may wait for more rows, never past a deadline (docs/scheduler.md)"},
       [](W &c) { return field(c.scheduler.max_queue_delay_microseconds); }},
      {{.path = "scheduler.max_batches_in_flight",
        .type = T::kInteger,
        .fallback = "0",
        .default_doc = "`0` (by backend: 1 on cpu, 2 on cuda)",
        .ints = {0, 16},
        .values_doc = "0..16",
        .doc = "used (ours): batches that may run at once, overlapping one batch's transfers "
               "and answers with another's execution; outputs do not depend on it "
               "(docs/scheduler.md \"Batches in flight\")"},
       [](W &c) { return field(c.scheduler.max_batches_in_flight); }},
      {{.path = "scheduler.compaction_interval",
        .type = T::kInteger,
        .fallback = "0",
        .default_doc = "`0` (off)",
        .ints = {0, kMaxInt},
        .doc = "accepted: validated and logged, no effect in this server (no memory compaction "
               "on the worker)"},
       [](W &c) { return field(c.scheduler.compaction_interval); }},
      {{.path = "scheduler.dispatch_timeout_seconds",
        .type = T::kNumber,
        .fallback = "30",
        .numbers = {0, kInf, true, true},
        .doc = "accepted: parsed, not enforced (as the reference)"},
       [](W &c) { return field(c.scheduler.dispatch_timeout_seconds); }},
      {{.path = "scheduler.coalescing",
        .type = T::kBoolean,
        .fallback = "true",
        .default_doc = "`true` (`false` under the profile)",
        .doc = "used: `false` serves exactly one request (or one piece of a split request) per "
               "dispatch"},
       [](W &c) { return field(c.scheduler.coalescing); }},
      {{.path = "scheduler.models",
        .type = T::kModelMap,
        .default_doc = "`{}`",
        .env = kNoEnv,
        .values_doc = "map of model name -> `{weight, residency, max_batch_size}`",
        .doc = "per-model settings (rows below); not overridable from the environment"},
       nullptr,
       modelMapHooks<W, M>(&schedulerModels, &modelKeys(), "scheduler.models")},
  };
}

} // namespace rs::config::detail
