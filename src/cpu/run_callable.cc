//===- cpu/run_callable.cc - Running compiled blocks, and their buffers ----===//
//
// runCallable (one call: a frame of slots, outputs from a per-call BufferPool over the
// process's BlockCache), BodyEvaluator and BodyFold (a region run many times without
// allocating).
//
//===----------------------------------------------------------------------===//
#include "cpu/compiler.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>

namespace rs::cpu {

namespace {

/// Output storage of one runCallable() call. A block is handed out again, for an output of
/// the same byte size, once nothing but the pool refers to it (the slot that held it was
/// released and no view, result or capture shares it), so a call touches fresh pages only
/// for its peak set of live intermediates, not once per op; and those come from the
/// process's BlockCache when an earlier call left them there. Blocks are 64-byte aligned, as
/// Tensor::zeros gives.
class BufferPool {
public:
  explicit BufferPool(BlockCache &cache) : cache_(cache) {}
  BufferPool(const BufferPool &) = delete;
  BufferPool &operator=(const BufferPool &) = delete;

  ~BufferPool() {
    std::vector<std::pair<size_t, std::shared_ptr<uint8_t>>> unused;
    size_t call_bytes = 0;
    for (Block &b : blocks_) {
      call_bytes += b.bytes;
      if (b.data.use_count() == 1)
        unused.emplace_back(b.bytes, std::move(b.data));
    }
    cache_.give(std::move(unused), call_bytes);
  }

  Tensor take(const TensorType &t, bool zero) {
    const size_t n = static_cast<size_t>(elementCount(t.shape) * dtypeSize(t.dtype));
    std::shared_ptr<uint8_t> block;
    for (Block &b : blocks_)
      if (b.bytes == n && b.data.use_count() == 1) {
        block = b.data;
        break;
      }
    if (!block) {
      block = cache_.take(n);
      if (!block)
        block = cache_.allocate(n);
      blocks_.push_back(Block{n, block});
    }
    if (zero)
      std::memset(block.get(), 0, n);
    const uint8_t *data = block.get();
    return Tensor::view(t.dtype, t.shape, data, std::shared_ptr<const void>(std::move(block)));
  }

private:
  struct Block {
    size_t bytes;
    std::shared_ptr<uint8_t> data;
  };
  BlockCache &cache_;
  std::vector<Block> blocks_;
};

} // namespace

BlockCache &BlockCache::shared() {
  static BlockCache *cache = new BlockCache(); // never destroyed: calls may outlive statics
  return *cache;
}

std::shared_ptr<uint8_t> BlockCache::take(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < free_.size(); ++i)
    if (free_[i].first == bytes) {
      std::shared_ptr<uint8_t> block = std::move(free_[i].second);
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
      cached_bytes_ -= bytes;
      out_bytes_ += bytes;
      peak_out_bytes_ = std::max(peak_out_bytes_, out_bytes_);
      return block;
    }
  return nullptr;
}

void BlockCache::give(std::vector<std::pair<size_t, std::shared_ptr<uint8_t>>> blocks,
                      size_t call_bytes) {
  // Blocks not kept are dropped after the lock is released (their deleter recycles them).
  std::vector<std::pair<size_t, std::shared_ptr<uint8_t>>> dropped;
  std::lock_guard<std::mutex> lock(mutex_);
  limit_bytes_ = std::max(limit_bytes_, call_bytes);
  for (auto &b : blocks) {
    if (cached_bytes_ + b.first <= std::max(limit_bytes_, peak_out_bytes_)) {
      cached_bytes_ += b.first;
      out_bytes_ -= b.first;
      free_.push_back(std::move(b));
    } else {
      dropped.push_back(std::move(b));
    }
  }
}

std::shared_ptr<uint8_t> BlockCache::allocate(size_t bytes) {
  auto *p = static_cast<uint8_t *>(::operator new[](bytes ? bytes : 1, std::align_val_t(64)));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out_bytes_ += bytes;
    peak_out_bytes_ = std::max(peak_out_bytes_, out_bytes_);
  }
  return recycling(p, bytes);
}

std::shared_ptr<uint8_t> BlockCache::recycling(uint8_t *block, size_t bytes) {
  return std::shared_ptr<uint8_t>(block, [this, bytes](uint8_t *q) { recycle(q, bytes); });
}

void BlockCache::recycle(uint8_t *block, size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out_bytes_ -= bytes;
    if (cached_bytes_ + bytes <= std::max(limit_bytes_, peak_out_bytes_)) {
      cached_bytes_ += bytes;
      free_.emplace_back(bytes, recycling(block, bytes));
      return;
    }
  }
  ::operator delete[](block, std::align_val_t(64));
}

std::vector<Tensor> runCallable(const Callable &c, std::span<const Tensor> block_args,
                                std::span<const Tensor *const> captures, const RunContext &rc) {
  assert(block_args.size() == c.num_block_args);
  assert(captures.size() == c.captures.size());
  std::vector<Tensor> frame(static_cast<size_t>(c.num_slots));
  for (size_t i = 0; i < block_args.size(); ++i)
    frame[static_cast<size_t>(c.params[i])] = block_args[i];
  for (size_t i = 0; i < captures.size(); ++i)
    frame[static_cast<size_t>(c.params[c.num_block_args + i])] = *captures[i];
  std::vector<const Tensor *> in(c.max_inputs);
  BufferPool pool(BlockCache::shared());
  for (const Step &s : c.steps) {
    for (size_t k = 0; k < s.inputs.size(); ++k)
      in[k] = &frame[static_cast<size_t>(s.inputs[k])];
    std::span<Tensor> out(frame.data() + s.first_output, static_cast<size_t>(s.num_outputs));
    if (s.mode != OutputMode::kAssigned)
      for (int32_t k = 0; k < s.num_outputs; ++k)
        out[static_cast<size_t>(k)] =
            pool.take(c.slot_types[static_cast<size_t>(s.first_output + k)],
                      /*zero=*/s.mode == OutputMode::kPreallocated);
    s.kernel->run(KernelIo{rc, std::span<const Tensor *const>(in.data(), s.inputs.size()), out});
    for (int32_t r : s.release)
      frame[static_cast<size_t>(r)] = Tensor();
  }
  std::vector<Tensor> results;
  results.reserve(c.results.size());
  for (int32_t r : c.results)
    results.push_back(frame[static_cast<size_t>(r)]);
  return results;
}

BodyEvaluator::BodyEvaluator(const Callable &c, std::span<const Tensor *const> captures,
                             const RunContext &rc)
    : c_(c), rc_(rc), frame_(static_cast<size_t>(c.num_slots)), inputs_(c.max_inputs) {
  assert(captures.size() == c.captures.size());
  for (size_t i = 0; i < captures.size(); ++i)
    frame_[static_cast<size_t>(c.params[c.num_block_args + i])] = *captures[i];
  for (const Step &s : c.steps)
    if (s.mode != OutputMode::kAssigned)
      for (int32_t k = 0; k < s.num_outputs; ++k) {
        const TensorType &t = c.slot_types[static_cast<size_t>(s.first_output + k)];
        frame_[static_cast<size_t>(s.first_output + k)] = Tensor::zeros(t.dtype, t.shape);
      }
  for (size_t i = 0; i < c.num_block_args; ++i)
    arg_types_.push_back(c.slot_types[static_cast<size_t>(c.params[i])].dtype);
}

void BodyEvaluator::setArg(size_t i, const void *data) {
  frame_[static_cast<size_t>(c_.params[i])] =
      Tensor::view(arg_types_[i], {}, static_cast<const uint8_t *>(data), nullptr);
}

void BodyEvaluator::run() {
  for (const Step &s : c_.steps) {
    for (size_t k = 0; k < s.inputs.size(); ++k)
      inputs_[k] = &frame_[static_cast<size_t>(s.inputs[k])];
    std::span<Tensor> out(frame_.data() + s.first_output, static_cast<size_t>(s.num_outputs));
    s.kernel->run(
        KernelIo{rc_, std::span<const Tensor *const>(inputs_.data(), s.inputs.size()), out});
  }
}

const uint8_t *BodyEvaluator::result(size_t i) const {
  return frame_[static_cast<size_t>(c_.results[i])].data();
}

BodyFold::BodyFold(const Callable &body, std::span<const Tensor *const> captures,
                   const RunContext &rc, std::span<const DType> types)
    : eval_(body, captures, rc) {
  size_t total = 0;
  for (DType t : types) {
    offsets_.push_back(total);
    sizes_.push_back(static_cast<size_t>(dtypeSize(t)));
    total += (sizes_.back() + 7) / 8 * 8; // keeps every accumulator 8-byte aligned
  }
  acc_.assign(total, 0);
  tmp_.assign(total, 0);
  for (size_t i = 0; i < types.size(); ++i)
    eval_.setArg(i, acc_.data() + offsets_[i]);
}

void BodyFold::reset(std::span<const uint8_t *const> init) {
  for (size_t i = 0; i < offsets_.size(); ++i)
    std::memcpy(acc_.data() + offsets_[i], init[i], sizes_[i]);
}

void BodyFold::add(std::span<const uint8_t *const> x) {
  const size_t n = offsets_.size();
  for (size_t i = 0; i < n; ++i)
    eval_.setArg(n + i, x[i]);
  eval_.run();
  // Results may alias the accumulators (a body returning its arguments): copy via tmp.
  for (size_t i = 0; i < n; ++i)
    std::memcpy(tmp_.data() + offsets_[i], eval_.result(i), sizes_[i]);
  std::memcpy(acc_.data(), tmp_.data(), acc_.size());
}

} // namespace rs::cpu
