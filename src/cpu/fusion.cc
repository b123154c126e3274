//===- cpu/fusion.cc - Loop fusion of elementwise steps --------------------===//
#include "cpu/fusion.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace rs::cpu {
namespace {

/// Elements one thread computes per parallel tile of a fused step (a constant: tiles depend
/// on the element count only).
constexpr int64_t kFusedGrain = 4096;
/// Per-thread scratch of the values that stay inside a fused step (bytes).
constexpr int64_t kScratchBytes = 32 * 1024;
/// Most ops in one fused step (bounds the scratch a tile needs).
constexpr size_t kMaxMembers = 48;
/// Most operands of a fusable kernel (unary and binary ops).
constexpr size_t kMaxArity = 2;
/// Largest output of a step that moves ahead of a group it does not depend on.
constexpr int64_t kMaxHoistedElements = 4096;

alignas(64) thread_local uint8_t t_scratch[kScratchBytes];

/// Where one op of a fused step reads an operand or writes its result.
struct ValueRef {
  enum Kind : uint8_t { kInput, kBroadcastInput, kOutput, kScratch };
  Kind kind = kInput;
  int32_t index = 0;     // into KernelIo::in or KernelIo::out, or a scratch buffer
  int32_t elem_size = 0; // bytes
};

struct Member {
  std::shared_ptr<const Kernel> kernel;
  std::vector<ValueRef> in;
  ValueRef out;
};

/// Runs its members (elementwise kernels, in order) tile by tile over `n` elements: as a
/// step of its own (run), or as the epilogue of the step that produces one of its inputs
/// (runRange on each piece of that step's output).
class FusedElementwiseKernel final : public Kernel, public OutputEpilogue {
public:
  FusedElementwiseKernel(std::vector<Member> members, int64_t n, int64_t tile,
                         int64_t scratch_stride)
      : members_(std::move(members)), n_(n), tile_(tile), scratch_stride_(scratch_stride) {}

  void run(const KernelIo &io) const override {
    auto chunk = [&](int64_t t) {
      const int64_t end = std::min(n_, (t + 1) * kFusedGrain);
      for (int64_t b = t * kFusedGrain; b < end; b += tile_)
        runTile(io, b, std::min(tile_, end - b));
    };
    const int64_t chunks = (n_ + kFusedGrain - 1) / kFusedGrain;
    if (chunks == 1)
      chunk(0);
    else
      io.rc.cpu->parallelFor(chunks, chunk);
  }

  void runRange(const KernelIo &io, int64_t begin, int64_t len) const override {
    for (int64_t b = begin, end = begin + len; b < end; b += tile_)
      runTile(io, b, std::min(tile_, end - b));
  }

private:
  const uint8_t *address(const KernelIo &io, const ValueRef &v, int64_t begin) const {
    switch (v.kind) {
    case ValueRef::kInput: return io.in[static_cast<size_t>(v.index)]->data() + begin * v.elem_size;
    case ValueRef::kBroadcastInput: return io.in[static_cast<size_t>(v.index)]->data();
    case ValueRef::kOutput:
      return io.out[static_cast<size_t>(v.index)].data() + begin * v.elem_size;
    case ValueRef::kScratch: break;
    }
    return t_scratch + v.index * scratch_stride_;
  }

  void runTile(const KernelIo &io, int64_t begin, int64_t len) const {
    const uint8_t *in[kMaxArity];
    for (const Member &m : members_) {
      for (size_t k = 0; k < m.in.size(); ++k)
        in[k] = address(io, m.in[k], begin);
      auto *out = const_cast<uint8_t *>(address(io, m.out, begin));
      m.kernel->runElements(in, out, begin, len);
    }
  }

  std::vector<Member> members_;
  int64_t n_;
  int64_t tile_;
  int64_t scratch_stride_;
};

/// Whether step `s` can be part of a fused run (an elementwise kernel with one output).
bool fusable(const Step &s, const Callable &c) {
  if (!s.kernel->elementwise() || s.mode != OutputMode::kOverwritten || s.num_outputs != 1 ||
      s.inputs.size() > kMaxArity)
    return false;
  const TensorType &t = c.slot_types[static_cast<size_t>(s.first_output)];
  return t.numElements() >= kMinFusedElements && dtypeSize(t.dtype) <= 16;
}

int64_t outputElements(const Step &s, const Callable &c) {
  return c.slot_types[static_cast<size_t>(s.first_output)].numElements();
}

/// Builds the step that runs `group` (indices into c.steps, in order), or with `producer`
/// (a step whose single output the group reads and whose kernel takes an epilogue) the step
/// that runs the producer with the group as its epilogue: inputs the producer's, then the
/// group's; outputs the producer's, then the group's. New output slots are appended to c and
/// recorded in `rename`. Null when the producer's kernel refuses the epilogue.
std::optional<Step> fuseGroup(Callable &c, const std::vector<size_t> &group,
                              const std::vector<std::vector<size_t>> &readers,
                              const std::unordered_set<int32_t> &results,
                              std::unordered_map<int32_t, int32_t> &rename, const Step *producer) {
  const std::unordered_set<size_t> in_group(group.begin(), group.end());
  std::unordered_map<int32_t, size_t> defined_by; // slot -> position in group
  for (size_t g = 0; g < group.size(); ++g)
    defined_by[c.steps[group[g]].first_output] = g;
  // Position in the group of the last op that reads each value defined in it.
  std::unordered_map<int32_t, size_t> last_read;
  for (size_t g = 0; g < group.size(); ++g)
    for (int32_t in : c.steps[group[g]].inputs)
      if (defined_by.count(in))
        last_read[in] = g;

  // Whether the value a member defines is read after the group or returned.
  auto escapes = [&](int32_t slot) {
    if (results.count(slot) || static_cast<size_t>(slot) >= readers.size()) // a fused output
      return true;
    for (size_t r : readers[static_cast<size_t>(slot)])
      if (!in_group.count(r))
        return true;
    return false;
  };
  // With a producer whose result only the group reads: the product can be written straight
  // into the buffer of the first escaping value defined at or after the group's last read of
  // the product, which the group then computes in place (element i is read, then written,
  // by the same tile). One buffer, and one pass over memory, less.
  std::optional<size_t> in_place; // position in the group
  if (producer && !escapes(producer->first_output)) {
    const int32_t v = producer->first_output;
    size_t last_v_read = 0;
    for (size_t g = 0; g < group.size(); ++g)
      for (int32_t in : c.steps[group[g]].inputs)
        if (in == v)
          last_v_read = g;
    for (size_t g = last_v_read; g < group.size() && !in_place; ++g) {
      const int32_t out = c.steps[group[g]].first_output;
      if (escapes(out) &&
          c.slot_types[static_cast<size_t>(out)] == c.slot_types[static_cast<size_t>(v)])
        in_place = g;
    }
  }

  Step fused;
  fused.mode = OutputMode::kOverwritten;
  std::unordered_map<int32_t, int32_t> input_index; // slot -> index into the fused inputs
  std::unordered_map<int32_t, ValueRef> where;      // values defined in the group
  std::vector<int32_t> free_scratch;
  int32_t num_scratch = 0;
  int32_t max_scratch_elem = 1;
  std::vector<Member> members;
  std::vector<int32_t> outputs; // old slots, in output order
  if (producer) {
    fused.inputs = producer->inputs;
    const int32_t v = producer->first_output;
    where[v] =
        ValueRef{ValueRef::kOutput, 0,
                 static_cast<int32_t>(dtypeSize(c.slot_types[static_cast<size_t>(v)].dtype))};
    outputs.push_back(in_place ? c.steps[group[*in_place]].first_output : v);
  }
  for (size_t g = 0; g < group.size(); ++g) {
    const Step &s = c.steps[group[g]];
    Member m;
    m.kernel = s.kernel;
    const int bcast = s.kernel->broadcastOperand();
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      const int32_t slot = s.inputs[k];
      if (auto it = where.find(slot); it != where.end()) {
        m.in.push_back(it->second);
        continue;
      }
      auto [it, added] = input_index.emplace(slot, static_cast<int32_t>(fused.inputs.size()));
      if (added)
        fused.inputs.push_back(slot);
      ValueRef v;
      v.kind = static_cast<int>(k) == bcast ? ValueRef::kBroadcastInput : ValueRef::kInput;
      v.index = it->second;
      v.elem_size = static_cast<int32_t>(dtypeSize(c.slot_types[static_cast<size_t>(slot)].dtype));
      m.in.push_back(v);
    }
    const int32_t out_slot = s.first_output;
    const TensorType &t = c.slot_types[static_cast<size_t>(out_slot)];
    ValueRef v;
    v.elem_size = static_cast<int32_t>(dtypeSize(t.dtype));
    if (in_place && *in_place == g) { // the producer's output buffer (see above)
      v.kind = ValueRef::kOutput;
      v.index = 0;
    } else if (escapes(out_slot)) {
      v.kind = ValueRef::kOutput;
      v.index = static_cast<int32_t>(outputs.size());
      outputs.push_back(out_slot);
    } else {
      v.kind = ValueRef::kScratch;
      if (free_scratch.empty()) {
        v.index = num_scratch++;
      } else {
        v.index = free_scratch.back();
        free_scratch.pop_back();
      }
      max_scratch_elem = std::max(max_scratch_elem, v.elem_size);
    }
    m.out = v;
    where[out_slot] = v;
    members.push_back(std::move(m));
    // Scratch read for the last time by this op is free for the ops after it.
    for (int32_t in : s.inputs)
      if (auto it = where.find(in);
          it != where.end() && it->second.kind == ValueRef::kScratch && last_read[in] == g) {
        free_scratch.push_back(it->second.index);
        last_read[in] = group.size(); // freed once, though read twice by this op
      }
  }
  // Tile: as many elements as let every scratch buffer fit (64-byte aligned strides).
  int64_t tile = 1024;
  while (tile > 64 && num_scratch * tile * max_scratch_elem > kScratchBytes)
    tile /= 2;
  const int64_t stride = (tile * max_scratch_elem + 63) / 64 * 64;

  auto loop = std::make_shared<FusedElementwiseKernel>(
      std::move(members), outputElements(c.steps[group.front()], c), tile, stride);
  if (producer) {
    std::unique_ptr<Kernel> k = producer->kernel->withEpilogue(std::move(loop));
    if (!k)
      return std::nullopt; // nothing in c changed yet
    fused.kernel = std::move(k);
  } else {
    fused.kernel = std::move(loop);
  }
  fused.first_output = c.num_slots;
  fused.num_outputs = static_cast<int32_t>(outputs.size());
  for (int32_t old : outputs) {
    rename[old] = c.num_slots++;
    c.slot_types.push_back(c.slot_types[static_cast<size_t>(old)]);
  }
  c.max_inputs = std::max(c.max_inputs, fused.inputs.size());
  return fused;
}

} // namespace

void fuseElementwiseSteps(Callable &c) {
  const std::vector<std::vector<size_t>> readers = slotReaders(c);
  const std::unordered_set<int32_t> results(c.results.begin(), c.results.end());

  std::unordered_map<int32_t, int32_t> rename; // value -> its slot as a fused step's output
  std::vector<Step> steps;
  steps.reserve(c.steps.size());
  std::vector<size_t> group;
  std::unordered_set<int32_t> group_defs;
  // The step that produced a value the group reads and may run the group as its epilogue:
  // one of the last few steps, with a single output of the group's element count that a
  // member reads (not through a folded broadcast) and that no step after it reads (those
  // steps then run before it: a broadcast of the bias, constants).
  auto producerOf = [&]() -> std::optional<size_t> {
    constexpr size_t kLookBack = 8;
    const int64_t n = outputElements(c.steps[group.front()], c);
    for (size_t k = steps.size(); k-- > 0 && steps.size() - k <= kLookBack;) {
      const Step &p = steps[k];
      if (p.num_outputs != 1 || p.mode != OutputMode::kOverwritten || outputElements(p, c) != n)
        continue;
      bool read = false, whole = false;
      for (size_t g : group) {
        const Step &m = c.steps[g];
        for (size_t q = 0; q < m.inputs.size(); ++q)
          if (m.inputs[q] == p.first_output) {
            read = true;
            whole = whole || static_cast<int>(q) == m.kernel->broadcastOperand();
          }
      }
      if (!read || whole)
        continue;
      bool later_reads = false;
      for (size_t j = k + 1; j < steps.size(); ++j)
        for (int32_t in : steps[j].inputs)
          later_reads = later_reads || in == p.first_output;
      if (!later_reads)
        return k;
    }
    return std::nullopt;
  };
  auto close = [&] {
    if (group.empty())
      return;
    std::optional<size_t> producer = producerOf();
    std::optional<Step> with_epilogue;
    if (producer) {
      const Step p = steps[*producer]; // copy: c.slot_types and rename grow in fuseGroup
      with_epilogue = fuseGroup(c, group, readers, results, rename, &p);
    }
    if (with_epilogue) {
      // The steps after the producer now come first: the group may read them.
      steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(*producer));
      steps.push_back(std::move(*with_epilogue));
    } else if (group.size() == 1) {
      steps.push_back(std::move(c.steps[group[0]]));
    } else {
      steps.push_back(*fuseGroup(c, group, readers, results, rename, nullptr));
    }
    group.clear();
    group_defs.clear();
  };
  for (size_t i = 0; i < c.steps.size(); ++i) {
    Step &s = c.steps[i];
    const bool f = fusable(s, c);
    const int bcast = f ? s.kernel->broadcastOperand() : -1;
    const bool joins = f && !group.empty() && group.size() < kMaxMembers &&
                       outputElements(s, c) == outputElements(c.steps[group.front()], c) &&
                       (bcast < 0 || !group_defs.count(s.inputs[static_cast<size_t>(bcast)]));
    // A constant, or a small step that reads nothing the group defines (a bias vector's
    // reshape): runs first, so that it does not cut the group in two.
    bool independent = !f && !group.empty() && outputElements(s, c) <= kMaxHoistedElements;
    for (int32_t in : s.inputs)
      independent = independent && !group_defs.count(in);
    const bool hoisted = !f && !group.empty() && (s.inputs.empty() || independent);
    if (!joins && !hoisted)
      close(); // first: this step may read what the group defines (renamed by close)
    for (int32_t &in : s.inputs)
      if (auto it = rename.find(in); it != rename.end())
        in = it->second;
    if (f) {
      group.push_back(i);
      group_defs.insert(s.first_output);
    } else {
      steps.push_back(std::move(s));
    }
  }
  close();
  for (int32_t &r : c.results)
    if (auto it = rename.find(r); it != rename.end())
      r = it->second;
  c.steps = std::move(steps);
}

} // namespace rs::cpu
