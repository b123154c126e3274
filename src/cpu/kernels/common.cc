//===- cpu/kernels/common.cc - Shared kernel helpers and the registry ------===//
//
// Row-major strides, the strided copy every data
// movement kernel uses, and the kernel registry (one entry per op name, built once from
// every family's register function).
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/kernel.h"

#include "cpu/compiler.h"

#include <algorithm>
#include <limits>

namespace rs::cpu {

StridedView StridedView::rowMajor(const Shape &shape) {
  return StridedView{shape, rowMajorStrides(shape), 0};
}

bool StridedView::reshape(const Shape &to) {
  if (elementCount(to) != elementCount(shape) || elementCount(shape) == 0)
    return false;
  // Dims of size 1 are skipped (any stride fits them: 0 in the result). The others are cut
  // into groups of equal product, old dims [i, i1) against new dims [j, j1); within a group
  // the old dims must be contiguous, and the new ones then get contiguous strides.
  std::vector<int64_t> old_size, old_stride;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) {
      old_size.push_back(shape[d]);
      old_stride.push_back(strides[d]);
    }
  std::vector<size_t> to_dims;
  for (size_t d = 0; d < to.size(); ++d)
    if (to[d] != 1)
      to_dims.push_back(d);
  std::vector<int64_t> to_strides(to.size(), 0);
  for (size_t i = 0, j = 0; i < old_size.size() && j < to_dims.size();) {
    size_t i1 = i + 1, j1 = j + 1;
    int64_t pi = old_size[i], pj = to[to_dims[j]];
    while (pi != pj) {
      if (pi < pj)
        pi *= old_size[i1++];
      else
        pj *= to[to_dims[j1++]];
    }
    for (size_t k = i; k + 1 < i1; ++k)
      if (old_stride[k] != old_stride[k + 1] * old_size[k + 1])
        return false;
    to_strides[to_dims[j1 - 1]] = old_stride[i1 - 1];
    for (size_t k = j1 - 1; k > j; --k)
      to_strides[to_dims[k - 1]] = to_strides[to_dims[k]] * to[to_dims[k]];
    i = i1;
    j = j1;
  }
  shape = to;
  strides = std::move(to_strides);
  return true;
}

std::string_view binaryBodyOp(const ir::Region &region) {
  if (region.blocks.size() != 1)
    return {};
  const ir::Block &b = region.blocks[0];
  if (b.arguments.size() != 2 || b.ops.size() != 2)
    return {};
  const ir::Operation &op = b.ops[0], &ret = b.ops[1];
  if (op.operands.size() != 2 || op.results.size() != 1 || !op.regions.empty())
    return {};
  bool args = (op.operands[0] == b.arguments[0] && op.operands[1] == b.arguments[1]) ||
              (op.operands[0] == b.arguments[1] && op.operands[1] == b.arguments[0]);
  if (!args || ret.operands.size() != 1 || ret.operands[0] != op.results[0])
    return {};
  return op.name;
}

Status checkElementSize(OpView &v, DType t) {
  int64_t s = dtypeSize(t);
  if (s != 1 && s != 2 && s != 4 && s != 8 && s != 16)
    return v.unsupportedType(t);
  return Status::ok();
}

void fillElements(uint8_t *out, int64_t n, const uint8_t *value, int64_t elem_size) {
  auto fill = [&](auto tag) {
    using E = typename decltype(tag)::type;
    E v;
    std::memcpy(&v, value, sizeof(E));
    E *o = reinterpret_cast<E *>(out);
    std::fill(o, o + n, v);
  };
  switch (elem_size) {
  case 1: fill(TypeTag<uint8_t>{}); break;
  case 2: fill(TypeTag<uint16_t>{}); break;
  case 4: fill(TypeTag<uint32_t>{}); break;
  case 8: fill(TypeTag<uint64_t>{}); break;
  default:
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(out + i * elem_size, value, static_cast<size_t>(elem_size));
  }
}

//===----------------------------------------------------------------------===//
// StridedCopy
//===----------------------------------------------------------------------===//

void StridedCopy::simplify() {
  Shape shape2;
  std::vector<int64_t> in2, out2;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    if (!shape2.empty() && in2.back() == in_strides[d] * shape[d] &&
        out2.back() == out_strides[d] * shape[d]) {
      shape2.back() *= shape[d];
      in2.back() = in_strides[d];
      out2.back() = out_strides[d];
      continue;
    }
    shape2.push_back(shape[d]);
    in2.push_back(in_strides[d]);
    out2.push_back(out_strides[d]);
  }
  shape = std::move(shape2);
  in_strides = std::move(in2);
  out_strides = std::move(out2);
}

namespace {

/// A 16-byte element (complex<f64>), copied as a whole.
struct Bytes16 {
  uint64_t lo, hi;
};

template <typename E>
void copyRows(const StridedCopy &c, const E *in, E *out, int64_t row_begin, int64_t row_end) {
  const size_t rank = c.shape.size();
  const int64_t inner = c.shape[rank - 1];
  const int64_t is = c.in_strides[rank - 1], os = c.out_strides[rank - 1];
  // Index of the first row, in the dims before the innermost one.
  std::vector<int64_t> idx(rank - 1, 0);
  int64_t in_off = 0, out_off = 0;
  int64_t rem = row_begin;
  for (size_t d = rank - 1; d-- > 0;) {
    idx[d] = rem % c.shape[d];
    rem /= c.shape[d];
    in_off += idx[d] * c.in_strides[d];
    out_off += idx[d] * c.out_strides[d];
  }
  for (int64_t row = row_begin; row < row_end; ++row) {
    const E *src = in + in_off;
    E *dst = out + out_off;
    if (is == 1 && os == 1)
      std::memcpy(dst, src, static_cast<size_t>(inner) * sizeof(E));
    else if (is == 0 && os == 1)
      std::fill(dst, dst + inner, *src);
    else
      for (int64_t j = 0; j < inner; ++j)
        dst[j * os] = src[j * is];
    for (size_t d = rank - 1; d-- > 0;) {
      in_off += c.in_strides[d];
      out_off += c.out_strides[d];
      if (++idx[d] < c.shape[d])
        break;
      in_off -= idx[d] * c.in_strides[d];
      out_off -= idx[d] * c.out_strides[d];
      idx[d] = 0;
    }
  }
}

void copyRowRange(const StridedCopy &c, const uint8_t *in, uint8_t *out, int64_t b, int64_t e) {
  auto rows = [&](auto tag) {
    using E = typename decltype(tag)::type;
    copyRows<E>(c, reinterpret_cast<const E *>(in), reinterpret_cast<E *>(out), b, e);
  };
  switch (c.elem_size) {
  case 1: rows(TypeTag<uint8_t>{}); break;
  case 2: rows(TypeTag<uint16_t>{}); break;
  case 4: rows(TypeTag<uint32_t>{}); break;
  case 8: rows(TypeTag<uint64_t>{}); break;
  default: rows(TypeTag<Bytes16>{}); break;
  }
}

/// Moves `in` and `out` to the copy's first elements; false when that leaves no rows to copy
/// (no elements, or a scalar, which it copies).
bool startCopy(const StridedCopy &c, const uint8_t *&in, uint8_t *&out, int64_t in_delta,
               int64_t out_delta) {
  if (elementCount(c.shape) == 0)
    return false;
  in += (c.in_offset + in_delta) * c.elem_size;
  out += (c.out_offset + out_delta) * c.elem_size;
  if (c.shape.empty()) {
    std::memcpy(out, in, static_cast<size_t>(c.elem_size));
    return false;
  }
  return true;
}

} // namespace

void StridedCopy::run(const RunContext &rc, const uint8_t *in, uint8_t *out, int64_t in_delta,
                      int64_t out_delta) const {
  if (!startCopy(*this, in, out, in_delta, out_delta))
    return;
  const int64_t inner = shape.back();
  const int64_t rows = elementCount(shape) / inner;
  const int64_t rows_per_tile = std::max<int64_t>(1, kElementwiseGrain / inner);
  const int64_t tiles = (rows + rows_per_tile - 1) / rows_per_tile;
  rc.cpu->parallelFor(tiles, [&](int64_t t) {
    copyRowRange(*this, in, out, t * rows_per_tile, std::min(rows, (t + 1) * rows_per_tile));
  });
}

void StridedCopy::runSerial(const uint8_t *in, uint8_t *out, int64_t in_delta,
                            int64_t out_delta) const {
  if (startCopy(*this, in, out, in_delta, out_delta))
    copyRowRange(*this, in, out, 0, elementCount(shape) / shape.back());
}

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

void KernelRegistry::add(std::string op_name, PlanFn plan, OutputMode mode) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), op_name,
                             [](const auto &e, const std::string &n) { return e.first < n; });
  assert(it == entries_.end() || it->first != op_name);
  entries_.insert(it, {std::move(op_name), KernelEntry{plan, mode}});
}

const KernelEntry *KernelRegistry::find(std::string_view op_name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), op_name,
                             [](const auto &e, std::string_view n) { return e.first < n; });
  if (it == entries_.end() || it->first != op_name)
    return nullptr;
  return &it->second;
}

const KernelRegistry &kernelRegistry() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerElementwiseKernels(r);
    registerComplexPartKernels(r);
    registerCompareSelectKernels(r);
    registerConvertKernels(r);
    registerDataMovementKernels(r);
    registerSliceKernels(r);
    registerReduceKernels(r);
    registerReduceWindowKernels(r);
    registerDotGeneralKernels(r);
    registerConvolutionKernels(r);
    registerGatherKernels(r);
    registerScatterKernels(r);
    registerSortKernels(r);
    registerControlFlowKernels(r);
    registerMapKernels(r);
    registerTriangularSolveKernels(r);
    registerSpecialFunctionKernels(r);
    registerFftKernels(r);
    return r;
  }();
  return registry;
}

} // namespace rs::cpu
