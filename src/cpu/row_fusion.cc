//===- cpu/row_fusion.cc - Row-blocked runs of reductions and their users --===//
#include "cpu/row_fusion.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace rs::cpu {
namespace {

/// Per-thread scratch of one block of rows (bytes): the block's values stay in L1/L2.
constexpr int64_t kBlockScratchBytes = 32 * 1024;
/// Elements of the widest op in one block when no value goes to scratch.
constexpr int64_t kBlockElements = 4096;
/// Most steps in one run.
constexpr size_t kMaxMembers = 48;
/// Most operands of a fused elementwise kernel.
constexpr size_t kMaxArity = 2;
/// Largest output of a step that moves ahead of a run it does not depend on.
constexpr int64_t kMaxHoisted = 4096;

/// Where a member reads an operand or writes its result.
struct Ref {
  enum Kind : uint8_t { kInput, kOutput, kScratch };
  Kind kind = kInput;
  bool whole = false;    // read by element index (a folded broadcast, a reduce's init)
  int32_t index = 0;     // into KernelIo::in or ::out, or a scratch value
  int64_t row_bytes = 0; // bytes per row
};

struct Member {
  std::shared_ptr<const Kernel> kernel;
  bool reduce = false;
  int64_t width = 1; // elementwise: output elements per row
  std::vector<Ref> in;
  Ref out;
};

uint8_t *threadScratch(int64_t bytes) {
  thread_local std::vector<uint64_t> buffer;
  const size_t words = static_cast<size_t>(bytes + 7) / 8;
  if (buffer.size() < words)
    buffer.resize(words);
  return reinterpret_cast<uint8_t *>(buffer.data());
}

/// Runs its members (in order) on blocks of `block_rows` of the `rows` rows.
class RowFusedKernel final : public Kernel {
public:
  RowFusedKernel(std::vector<Member> members, int64_t rows, int64_t block_rows,
                 std::vector<int64_t> scratch_offsets, int64_t scratch_bytes)
      : members_(std::move(members)), rows_(rows), block_rows_(block_rows),
        scratch_offsets_(std::move(scratch_offsets)), scratch_bytes_(scratch_bytes) {}

  void run(const KernelIo &io) const override {
    const int64_t blocks = (rows_ + block_rows_ - 1) / block_rows_;
    auto block = [&](int64_t b) {
      const int64_t r0 = b * block_rows_;
      runBlock(io, r0, std::min(rows_, r0 + block_rows_));
    };
    if (blocks == 1)
      block(0);
    else
      io.rc.cpu->parallelFor(blocks, block);
  }

private:
  uint8_t *address(const KernelIo &io, const Ref &r, int64_t r0, uint8_t *scratch) const {
    uint8_t *base = nullptr;
    switch (r.kind) {
    case Ref::kInput:
      base = const_cast<uint8_t *>(io.in[static_cast<size_t>(r.index)]->data());
      break;
    case Ref::kOutput: base = io.out[static_cast<size_t>(r.index)].mutableData(); break;
    case Ref::kScratch: return scratch + scratch_offsets_[static_cast<size_t>(r.index)];
    }
    return r.whole ? base : base + r0 * r.row_bytes;
  }

  void runBlock(const KernelIo &io, int64_t r0, int64_t r1) const {
    uint8_t *scratch = threadScratch(scratch_bytes_);
    const int64_t n = r1 - r0;
    for (const Member &m : members_) {
      if (m.reduce) {
        m.kernel->runReducedRows(address(io, m.in[0], r0, scratch),
                                 address(io, m.in[1], r0, scratch), address(io, m.out, r0, scratch),
                                 n);
        continue;
      }
      const uint8_t *in[kMaxArity];
      for (size_t k = 0; k < m.in.size(); ++k)
        in[k] = address(io, m.in[k], r0, scratch);
      m.kernel->runElements(in, address(io, m.out, r0, scratch), r0 * m.width, n * m.width);
    }
  }

  std::vector<Member> members_;
  int64_t rows_, block_rows_;
  std::vector<int64_t> scratch_offsets_;
  int64_t scratch_bytes_;
};

int64_t elements(const Callable &c, int32_t slot) {
  return c.slot_types[static_cast<size_t>(slot)].numElements();
}

int64_t elemSize(const Callable &c, int32_t slot) {
  return dtypeSize(c.slot_types[static_cast<size_t>(slot)].dtype);
}

/// A kAssigned step whose output is its operand's values in the same order (a reshape).
bool isReshape(const Step &s, const Callable &c) {
  if (s.mode != OutputMode::kAssigned || s.inputs.size() != 1 || s.num_outputs != 1 ||
      elements(c, s.inputs[0]) != elements(c, s.first_output))
    return false;
  StridedView v = StridedView::rowMajor(c.slot_types[static_cast<size_t>(s.inputs[0])].shape);
  if (!s.kernel->outputView(v) || v.offset != 0)
    return false;
  const std::vector<int64_t> natural = rowMajorStrides(v.shape);
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] != 1 && v.strides[d] != natural[d])
      return false;
  return true;
}

bool isRowReduce(const Step &s) {
  return s.mode == OutputMode::kOverwritten && s.num_outputs == 1 && s.inputs.size() == 2 &&
         s.kernel->reducedRowWidth() > 0;
}

/// The output elements per row of step `t` as a member of a run of `rows` rows whose values
/// so far have the widths in `width`; nullopt when it cannot join (file comment of the
/// header).
std::optional<int64_t> memberWidth(const Step &t, const Callable &c,
                                   const std::unordered_map<int32_t, int64_t> &width,
                                   int64_t rows) {
  if (t.num_outputs != 1 || t.inputs.empty())
    return std::nullopt;
  const int64_t n = elements(c, t.first_output);
  if (isReshape(t, c))
    return width.count(t.inputs[0]) ? std::optional<int64_t>(n / rows) : std::nullopt;
  if (isRowReduce(t)) {
    auto it = width.find(t.inputs[0]);
    if (n != rows || width.count(t.inputs[1]) ||
        (it != width.end() && it->second != t.kernel->reducedRowWidth()))
      return std::nullopt;
    return 1;
  }
  if (!t.kernel->elementwise() || t.mode != OutputMode::kOverwritten ||
      t.inputs.size() > kMaxArity || n == 0 || n % rows != 0)
    return std::nullopt;
  const int64_t w = n / rows;
  const int b = t.kernel->broadcastOperand();
  for (size_t q = 0; q < t.inputs.size(); ++q) {
    auto it = width.find(t.inputs[q]);
    if (it == width.end())
      continue;
    if (static_cast<int>(q) == b) { // one value per row: index i / w
      const BroadcastIndex *ix = t.kernel->broadcastIndex();
      if (!ix || it->second != 1 || ix->outer_period != 1 || ix->period != rows || ix->repeat != w)
        return std::nullopt;
    } else if (it->second != w) {
      return std::nullopt;
    }
  }
  return w;
}

/// The members of one run laid out for a RowFusedKernel: where each reads and writes, the
/// outer values it reads (the fused step's inputs) and the run values it writes out.
struct RunLayout {
  std::vector<Member> members;
  std::vector<int32_t> inputs;            // outer slots, in input order
  std::vector<int32_t> outputs;           // old slots, in output order
  std::vector<int64_t> scratch_row_bytes; // per scratch value
  int64_t max_row_bytes = 1;
};

/// Row-block sizes of a run: as many rows as let the scratch values fit kBlockScratchBytes.
struct Blocking {
  int64_t block_rows = 1;
  std::vector<int64_t> offsets; // of each scratch value in the per-thread scratch
  int64_t scratch_bytes = 0;
};

/// fuseRowSteps over one Callable: the steps in order, each run of a row reduce and the
/// steps that join it replaced by one fused step (row_fusion.h).
class RowFuser {
public:
  explicit RowFuser(Callable &c)
      : c_(c), readers_(slotReaders(c)), results_(c.results.begin(), c.results.end()) {}

  void run() {
    std::vector<Step> steps;
    steps.reserve(c_.steps.size());
    for (size_t i = 0; i < c_.steps.size();) {
      Step &s = c_.steps[i];
      const int64_t rows = isRowReduce(s) ? elements(c_, s.first_output) : 0;
      const std::vector<size_t> members = rows > 1 ? collectRun(i, rows) : std::vector{i};
      if (members.size() < 2) {
        for (int32_t &in : s.inputs)
          in = renamed(in);
        steps.push_back(std::move(s));
        ++i;
        continue;
      }
      emitFusedStep(members, rows, steps);
      i = members.back() + 1;
    }
    for (int32_t &r : c_.results)
      r = renamed(r);
    c_.steps = std::move(steps);
  }

private:
  int32_t renamed(int32_t slot) const {
    auto it = rename_.find(slot);
    return it == rename_.end() ? slot : it->second;
  }

  /// Whether `slot` is a result or read by a step outside `run`.
  bool escapes(int32_t slot, const std::unordered_set<size_t> &run) const {
    if (results_.count(slot))
      return true;
    for (size_t r : readers_[static_cast<size_t>(slot)])
      if (!run.count(r))
        return true;
    return false;
  }

  /// The steps of the run that row reduce `i` of `rows` rows starts, in order.
  std::vector<size_t> collectRun(size_t i, int64_t rows) const {
    std::vector<size_t> members{i};
    std::unordered_map<int32_t, int64_t> width{{c_.steps[i].first_output, 1}};
    for (size_t j = i + 1; j < c_.steps.size() && members.size() < kMaxMembers; ++j) {
      const Step &t = c_.steps[j];
      if (const std::optional<int64_t> w = memberWidth(t, c_, width, rows)) {
        members.push_back(j);
        width[t.first_output] = *w;
        continue;
      }
      // A constant, or a small step that reads no value of the run (a bias vector's
      // reshape), moves ahead of the run.
      bool independent = t.num_outputs == 1 && elements(c_, t.first_output) <= kMaxHoisted;
      for (int32_t in : t.inputs)
        independent = independent && !width.count(in);
      if (!independent)
        break;
    }
    // A reshape whose value is read after the run ends it (it has no storage of its own).
    for (bool trimmed = true; trimmed;) {
      trimmed = false;
      const std::unordered_set<size_t> run(members.begin(), members.end());
      for (size_t k = 1; k < members.size() && !trimmed; ++k)
        if (isReshape(c_.steps[members[k]], c_) &&
            escapes(c_.steps[members[k]].first_output, run)) {
          members.resize(k);
          trimmed = true;
        }
    }
    return members;
  }

  /// Where each member of the run reads and writes: run values in scratch unless read
  /// after the run or through a broadcast, outer values as inputs.
  RunLayout planMembers(const std::vector<size_t> &members, int64_t rows) const {
    const std::unordered_set<size_t> run(members.begin(), members.end());
    std::unordered_map<int32_t, int32_t> alias; // a reshape's value -> the value it shows
    auto root = [&](int32_t slot) {
      for (auto it = alias.find(slot); it != alias.end(); it = alias.find(slot))
        slot = it->second;
      return slot;
    };
    std::unordered_set<int32_t> whole_read; // run values read through a broadcast
    for (size_t k : members) {
      const Step &t = c_.steps[k];
      if (isReshape(t, c_))
        alias[t.first_output] = root(t.inputs[0]);
      else if (const int b = t.kernel->broadcastOperand(); b >= 0)
        whole_read.insert(root(t.inputs[static_cast<size_t>(b)]));
    }

    RunLayout layout;
    std::unordered_map<int32_t, int32_t> input_index;
    std::unordered_map<int32_t, Ref> where; // run values (roots)
    for (size_t k : members) {
      const Step &t = c_.steps[k];
      if (isReshape(t, c_))
        continue;
      Member m;
      m.kernel = t.kernel;
      m.reduce = isRowReduce(t);
      m.width = elements(c_, t.first_output) / rows;
      const int b = t.kernel->broadcastOperand();
      for (size_t q = 0; q < t.inputs.size(); ++q) {
        const int32_t slot = root(t.inputs[q]);
        const bool whole = static_cast<int>(q) == b || (m.reduce && q == 1);
        if (auto it = where.find(slot); it != where.end()) {
          Ref r = it->second;
          r.whole = whole;
          m.in.push_back(r);
          continue;
        }
        const int32_t outer = renamed(slot);
        auto [it, added] = input_index.emplace(outer, static_cast<int32_t>(layout.inputs.size()));
        if (added)
          layout.inputs.push_back(outer);
        const int64_t row = m.reduce ? t.kernel->reducedRowWidth() : m.width;
        m.in.push_back(Ref{Ref::kInput, whole, it->second, row * elemSize(c_, slot)});
      }
      const int32_t out = t.first_output;
      m.out.row_bytes = m.width * elemSize(c_, out);
      layout.max_row_bytes = std::max(layout.max_row_bytes, m.out.row_bytes);
      if (escapes(out, run) || whole_read.count(out)) {
        m.out.kind = Ref::kOutput;
        m.out.index = static_cast<int32_t>(layout.outputs.size());
        layout.outputs.push_back(out);
      } else {
        m.out.kind = Ref::kScratch;
        m.out.index = static_cast<int32_t>(layout.scratch_row_bytes.size());
        layout.scratch_row_bytes.push_back(m.out.row_bytes);
      }
      where[out] = m.out;
      layout.members.push_back(std::move(m));
    }
    return layout;
  }

  /// The rows per block and the scratch offsets of a run of `rows` rows.
  static Blocking chooseBlockRows(const RunLayout &layout, int64_t rows) {
    int64_t scratch_per_row = 0;
    for (int64_t b : layout.scratch_row_bytes)
      scratch_per_row += b;
    Blocking blocking;
    blocking.block_rows =
        std::clamp<int64_t>(scratch_per_row > 0 ? kBlockScratchBytes / scratch_per_row
                                                : kBlockElements * 4 / layout.max_row_bytes,
                            1, rows);
    for (int64_t b : layout.scratch_row_bytes) {
      blocking.offsets.push_back(blocking.scratch_bytes);
      blocking.scratch_bytes += (blocking.block_rows * b + 63) / 64 * 64;
    }
    return blocking;
  }

  /// Appends to `steps` the steps moved ahead of the run, then the run's fused step, whose
  /// outputs get new slots (the old ones renamed to them).
  void emitFusedStep(const std::vector<size_t> &members, int64_t rows, std::vector<Step> &steps) {
    RunLayout layout = planMembers(members, rows);
    Blocking blocking = chooseBlockRows(layout, rows);
    const std::unordered_set<size_t> run(members.begin(), members.end());
    for (size_t k = members.front() + 1; k < members.back(); ++k)
      if (!run.count(k)) { // steps moved ahead of the run
        for (int32_t &in : c_.steps[k].inputs)
          in = renamed(in);
        steps.push_back(std::move(c_.steps[k]));
      }
    Step fused;
    fused.mode = OutputMode::kOverwritten;
    fused.inputs = std::move(layout.inputs);
    fused.kernel =
        std::make_shared<RowFusedKernel>(std::move(layout.members), rows, blocking.block_rows,
                                         std::move(blocking.offsets), blocking.scratch_bytes);
    fused.first_output = c_.num_slots;
    fused.num_outputs = static_cast<int32_t>(layout.outputs.size());
    for (int32_t old : layout.outputs) {
      rename_[old] = c_.num_slots++;
      c_.slot_types.push_back(c_.slot_types[static_cast<size_t>(old)]);
    }
    c_.max_inputs = std::max(c_.max_inputs, fused.inputs.size());
    steps.push_back(std::move(fused));
  }

  Callable &c_;
  const std::vector<std::vector<size_t>> readers_;
  const std::unordered_set<int32_t> results_;
  std::unordered_map<int32_t, int32_t> rename_; // value -> its slot as a fused step's output
};

} // namespace

void fuseRowSteps(Callable &c) { RowFuser(c).run(); }

} // namespace rs::cpu
