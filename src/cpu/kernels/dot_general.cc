//===- cpu/kernels/dot_general.cc - stablehlo.dot_general ------------------===//
//
// lhs [batch..., lhs free..., contracting...] x rhs [batch..., contracting..., rhs free...]
// in any dimension order (dot_dimension_numbers: lhs/rhs_batching_dimensions,
// lhs/rhs_contracting_dimensions) -> result [batch..., lhs free..., rhs free...].
// Viewed as B independent products [M, K] x [K, N]. An operand whose dims already lie in
// (batch, free, contracting) or (batch, contracting, free) order is used in place
// (row- or column-major); any other order is first copied to (batch, free, contracting).
// Element types: any numeric lhs/rhs/result types (preferred_element_type included). The
// product is computed in the result type for f32, f64, i32, i64 (f32 sums accumulate in
// f32, as XLA:CPU does); f16/bf16 results in f32, rounded once at the end; narrower or
// unsigned integers in wrapping ui32/ui64 (gemm.h gemmComputeType). Operands of another
// type are converted first. precision_config and algorithm
// are ignored: the product is always computed at full precision (a TF32 algorithm gives the f32
// result).
//
// Parallelism and determinism: the output is cut into tiles of at most 512 x 256 per batch
// (smaller for small products or many threads: cpu/gemm_tiling.h); each tile is one
// single-threaded GEMM over the whole K (gemm.h) in which every f32/f64 element is one FMA
// chain in k order, so no output bit depends on the cut or the thread count. The op is verified
// (ir/verify_conv_dot.cc: dot_general_c1..c12); the plan chooses the operand layouts. Errors at
// plan time: Unimplemented for other or mixed element types.
//
//===----------------------------------------------------------------------===//
#include "cpu/gemm_tiling.h"
#include "cpu/kernels/gemm.h"
#include "cpu/kernels/kernel.h"
#include "ir/op_attributes.h"

#include <algorithm>
#include <numeric>
#include <optional>

namespace rs::cpu {
namespace {

/// How one operand is read as B matrices [rows, cols] (the lhs [M, K], the rhs [K, N]):
/// element (r, c) of matrix b (the row-major index over the batch dims) is element
/// offset + sum_d b_d * batch_strides[d] + r * row_stride + c * col_stride of the tensor.
struct OperandLayout {
  bool copy = false;   // permute into [B, rows, cols] row-major first (then read that)
  StridedCopy permute; // when copy
  std::vector<int64_t> batch_strides;
  int64_t offset = 0;
  int64_t row_stride = 0, col_stride = 0; // one of them 1
};

/// Where the result's [M, N] matrices lie: element (i, j) of matrix b at offset +
/// sum_d b_d * batch_strides[d] + i * row_stride + j of the output tensor.
struct ResultLayout {
  std::vector<int64_t> batch_strides;
  int64_t offset = 0;
  int64_t row_stride = 0; // >= N
  bool row_major = true;  // the result tensor itself (no Kernel::withResultView)
};

struct DotGeneralPlan {
  GemmTypes types;
  int64_t elem_size = 4; // of the compute type
  int64_t batch = 1, m = 1, n = 1, k = 1;
  Shape batch_shape;
  // Dimension numbers: batching, contracting and free dims (increasing) of lhs and rhs.
  std::vector<int64_t> lb, rb, lc, rc, lf, rf;
  Shape lhs_shape, rhs_shape;
  OperandLayout lhs, rhs; // lhs: [M, K]; rhs: [K, N]
  ResultLayout out;
};

int64_t product(const Shape &shape, const std::vector<int64_t> &dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= shape[static_cast<size_t>(d)];
  return p;
}

std::vector<int64_t> concat(std::initializer_list<const std::vector<int64_t> *> parts) {
  std::vector<int64_t> out;
  for (const auto *p : parts)
    out.insert(out.end(), p->begin(), p->end());
  return out;
}

std::vector<int64_t> pick(const std::vector<int64_t> &strides, const std::vector<int64_t> &dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims)
    out.push_back(strides[static_cast<size_t>(d)]);
  return out;
}

/// The one stride that walks dims `dims` (in this order) as a single row-major dim: the
/// stride of the last dim of size > 1, when each such dim's stride is the next one's times
/// that one's size; 0 when every dim has size 1; nullopt when they are not contiguous.
std::optional<int64_t> mergedStride(const Shape &shape, const std::vector<int64_t> &strides,
                                    const std::vector<int64_t> &dims) {
  std::optional<size_t> last;
  for (int64_t d : dims) {
    const size_t u = static_cast<size_t>(d);
    if (shape[u] == 1)
      continue;
    if (strides[u] <= 0 || (last && strides[*last] != strides[u] * shape[u]))
      return std::nullopt;
    last = u;
  }
  return last ? strides[*last] : 0;
}

/// Lays out one operand of `shape`, read through `strides` and `offset` (elements). `outer`
/// are the dims that become matrix rows for the lhs (free dims) or columns for the rhs;
/// `contract` the contracting dims. For the lhs the matrix is [outer, contract]; for the
/// rhs [contract, outer]. Read in place when rows and cols each walk with one stride and one
/// of those is 1; otherwise copied to [batch, rows, cols] first.
void layoutOperand(const Shape &shape, const std::vector<int64_t> &strides, int64_t offset,
                   const std::vector<int64_t> &batch, const std::vector<int64_t> &outer,
                   const std::vector<int64_t> &contract, bool is_lhs, int64_t elem_size,
                   OperandLayout &l) {
  const int64_t outer_n = product(shape, outer), contract_n = product(shape, contract);
  const int64_t rows = is_lhs ? outer_n : contract_n, cols = is_lhs ? contract_n : outer_n;
  const std::vector<int64_t> &row_dims = is_lhs ? outer : contract;
  const std::vector<int64_t> &col_dims = is_lhs ? contract : outer;
  l = OperandLayout{};
  if (elementCount(shape) > 0) {
    const std::optional<int64_t> rs = mergedStride(shape, strides, row_dims),
                                 cs = mergedStride(shape, strides, col_dims);
    if (rs && cs && (*cs == 1 || cols == 1)) {
      l.batch_strides = pick(strides, batch);
      l.offset = offset;
      l.row_stride = rows == 1 ? cols : *rs;
      l.col_stride = 1;
      return;
    }
    if (rs && cs && (*rs == 1 || rows == 1)) { // column-major
      l.batch_strides = pick(strides, batch);
      l.offset = offset;
      l.row_stride = 1;
      l.col_stride = cols == 1 ? rows : *cs;
      return;
    }
    l.copy = true;
  }
  // Row-major [batch, rows, cols]: a copy, or the tensor itself when it has no elements.
  const std::vector<int64_t> order = concat({&batch, &row_dims, &col_dims});
  for (int64_t d : order) {
    l.permute.shape.push_back(shape[static_cast<size_t>(d)]);
    l.permute.in_strides.push_back(strides[static_cast<size_t>(d)]);
  }
  l.permute.in_offset = offset;
  l.permute.out_strides = rowMajorStrides(l.permute.shape);
  l.permute.elem_size = elem_size;
  l.batch_strides.assign(l.permute.out_strides.begin(),
                         l.permute.out_strides.begin() + static_cast<std::ptrdiff_t>(batch.size()));
  l.permute.simplify();
  l.row_stride = cols;
  l.col_stride = 1;
}

/// Element offset of matrix `b` (row-major over `batch_shape`) at `strides`.
int64_t batchOffset(const Shape &batch_shape, const std::vector<int64_t> &strides, int64_t b) {
  int64_t off = 0;
  for (size_t d = batch_shape.size(); d-- > 0;) {
    off += (b % batch_shape[d]) * strides[d];
    b /= batch_shape[d];
  }
  return off;
}

Status planDotGeneral(OpView &v, DotGeneralPlan &p) {
  const TensorType &lhs = v.operand(0), &rhs = v.operand(1), &out = v.result(0);
  RS_ASSIGN_OR_RETURN(ir::DotDimensionNumbers dn, v.prefixed(ir::dotDimensionNumbers(v.op())));
  const std::vector<int64_t> &lb = dn.lhs_batching, &rb = dn.rhs_batching;
  const std::vector<int64_t> &lc = dn.lhs_contracting, &rc = dn.rhs_contracting;
  const std::vector<int64_t> lf = ir::complementDims(lhs.rank(), {lb, lc});
  const std::vector<int64_t> rf = ir::complementDims(rhs.rank(), {rb, rc});
  RS_RETURN_IF_ERROR(planGemmTypes(v, lhs.dtype, rhs.dtype, out.dtype, p.types));
  p.elem_size = p.types.elem_size;
  p.batch = product(lhs.shape, lb);
  p.m = product(lhs.shape, lf);
  p.k = product(lhs.shape, lc);
  p.n = product(rhs.shape, rf);
  for (int64_t d : lb)
    p.batch_shape.push_back(lhs.shape[static_cast<size_t>(d)]);
  p.lb = lb, p.rb = rb, p.lc = lc, p.rc = rc, p.lf = lf, p.rf = rf;
  p.lhs_shape = lhs.shape;
  p.rhs_shape = rhs.shape;
  layoutOperand(lhs.shape, rowMajorStrides(lhs.shape), 0, lb, lf, lc, /*is_lhs=*/true, p.elem_size,
                p.lhs);
  layoutOperand(rhs.shape, rowMajorStrides(rhs.shape), 0, rb, rf, rc, /*is_lhs=*/false, p.elem_size,
                p.rhs);
  p.out.batch_strides = rowMajorStrides(p.batch_shape);
  for (int64_t &s : p.out.batch_strides)
    s *= p.m * p.n;
  p.out.row_stride = p.n;
  return Status::ok();
}

/// The product; with `epilogue`, each output tile's rows go through it as soon as the tile
/// is written (only when the result needs no conversion: DotGeneralKernel::withEpilogue).
void runDotGeneral(const DotGeneralPlan &p, const KernelIo &io, const OutputEpilogue *epilogue) {
  std::unique_ptr<uint8_t[]> a_conv, b_conv, c_conv;
  const uint8_t *a = inComputeType(p.types.lhs, *io.in[0], p.elem_size, a_conv);
  const uint8_t *b = inComputeType(p.types.rhs, *io.in[1], p.elem_size, b_conv);
  uint8_t *c = io.out[0].mutableData();
  if (p.types.out) {
    c_conv.reset(new uint8_t[static_cast<size_t>(io.out[0].numElements() * p.elem_size)]);
    c = c_conv.get();
  }
  std::unique_ptr<uint8_t[]> a_copy, b_copy;
  if (p.lhs.copy) {
    a_copy.reset(new uint8_t[static_cast<size_t>(p.batch * p.m * p.k * p.elem_size)]);
    p.lhs.permute.run(io.rc, a, a_copy.get());
    a = a_copy.get();
  }
  if (p.rhs.copy) {
    b_copy.reset(new uint8_t[static_cast<size_t>(p.batch * p.k * p.n * p.elem_size)]);
    p.rhs.permute.run(io.rc, b, b_copy.get());
    b = b_copy.get();
  }
  const GemmTiles gt = chooseGemmTiles(p.batch, p.m, p.n, io.rc.cpu->numThreads());
  const int64_t tile_m = gt.tile_m, tile_n = gt.tile_n, tiles_m = gt.tiles_m, tiles_n = gt.tiles_n;
  const int64_t es = p.elem_size;
  io.rc.cpu->parallelFor(p.batch * tiles_m * tiles_n, [&](int64_t t) {
    const int64_t bi = t / (tiles_m * tiles_n), mi = (t / tiles_n) % tiles_m, ni = t % tiles_n;
    const int64_t i0 = mi * tile_m, j0 = ni * tile_n;
    const int64_t a_off = p.lhs.offset + batchOffset(p.batch_shape, p.lhs.batch_strides, bi);
    const int64_t b_off = p.rhs.offset + batchOffset(p.batch_shape, p.rhs.batch_strides, bi);
    const int64_t c_off = p.out.offset + batchOffset(p.batch_shape, p.out.batch_strides, bi);
    const uint8_t *at = a + (a_off + i0 * p.lhs.row_stride) * es;
    const uint8_t *bt = b + (b_off + j0 * p.rhs.col_stride) * es;
    uint8_t *ct = c + (c_off + i0 * p.out.row_stride + j0) * es;
    const int64_t rows = std::min(tile_m, p.m - i0), cols = std::min(tile_n, p.n - j0);
    p.types.gemm(at, p.lhs.row_stride, p.lhs.col_stride, bt, p.rhs.row_stride, p.rhs.col_stride, ct,
                 p.out.row_stride, rows, cols, p.k);
    if (epilogue)
      for (int64_t i = 0; i < rows; ++i)
        epilogue->runRange(io, (bi * p.m + i0 + i) * p.n + j0, cols);
  });
  if (p.types.out)
    p.types.out(c, io.out[0].mutableData(), io.out[0].numElements());
}

/// dot_general's kernel; loop fusion may attach an elementwise epilogue to it.
class DotGeneralKernel final : public Kernel {
public:
  DotGeneralKernel(std::shared_ptr<const DotGeneralPlan> plan,
                   std::shared_ptr<const OutputEpilogue> epilogue)
      : plan_(std::move(plan)), epilogue_(std::move(epilogue)) {}
  void run(const KernelIo &io) const override { runDotGeneral(*plan_, io, epilogue_.get()); }
  std::unique_ptr<Kernel>
  withEpilogue(std::shared_ptr<const OutputEpilogue> epilogue) const override {
    // One epilogue; the tiles must be the row-major result itself.
    if (epilogue_ || plan_->types.out || !plan_->out.row_major)
      return nullptr;
    return std::make_unique<DotGeneralKernel>(plan_, std::move(epilogue));
  }
  std::unique_ptr<Kernel> withOperandView(int operand, const StridedView &view) const override;
  std::unique_ptr<Kernel> withResultView(const StridedView &view) const override;

private:
  std::shared_ptr<const DotGeneralPlan> plan_;
  std::shared_ptr<const OutputEpilogue> epilogue_;
};

std::unique_ptr<Kernel> DotGeneralKernel::withOperandView(int operand,
                                                          const StridedView &view) const {
  const DotGeneralPlan &p = *plan_;
  const bool is_lhs = operand == 0;
  if ((operand != 0 && operand != 1) || (is_lhs ? p.types.lhs : p.types.rhs) ||
      view.shape != (is_lhs ? p.lhs_shape : p.rhs_shape) ||
      view.strides.size() != view.shape.size() || elementCount(view.shape) == 0)
    return nullptr;
  auto plan = std::make_shared<DotGeneralPlan>(p);
  OperandLayout &l = is_lhs ? plan->lhs : plan->rhs;
  if (is_lhs)
    layoutOperand(view.shape, view.strides, view.offset, p.lb, p.lf, p.lc, true, p.elem_size, l);
  else
    layoutOperand(view.shape, view.strides, view.offset, p.rb, p.rf, p.rc, false, p.elem_size, l);
  if (l.copy) // a copy here saves nothing over the view's own step
    return nullptr;
  return std::make_unique<DotGeneralKernel>(std::move(plan), epilogue_);
}

std::unique_ptr<Kernel> DotGeneralKernel::withResultView(const StridedView &view) const {
  const DotGeneralPlan &p = *plan_;
  const size_t nb = p.lb.size(), nl = p.lf.size(), nr = p.rf.size();
  if (view.shape.size() != nb + nl + nr || view.strides.size() != view.shape.size() ||
      elementCount(view.shape) == 0)
    return nullptr;
  bool row_major = view.offset == 0;
  const std::vector<int64_t> natural = rowMajorStrides(view.shape);
  for (size_t d = 0; d < view.shape.size(); ++d)
    row_major = row_major && (view.shape[d] == 1 || view.strides[d] == natural[d]);
  if (row_major && p.out.row_major) // the same bytes: the output only gets another shape
    return std::make_unique<DotGeneralKernel>(plan_, epilogue_);
  if (epilogue_ || p.types.out || !p.out.row_major)
    return nullptr;
  std::vector<int64_t> batch_dims(nb), row_dims(nl), col_dims(nr);
  std::iota(batch_dims.begin(), batch_dims.end(), 0);
  std::iota(row_dims.begin(), row_dims.end(), static_cast<int64_t>(nb));
  std::iota(col_dims.begin(), col_dims.end(), static_cast<int64_t>(nb + nl));
  const std::optional<int64_t> rs = mergedStride(view.shape, view.strides, row_dims),
                               cs = mergedStride(view.shape, view.strides, col_dims);
  if (!rs || !cs || (p.n > 1 && *cs != 1) || (p.m > 1 && *rs < p.n))
    return nullptr;
  auto plan = std::make_shared<DotGeneralPlan>(p);
  plan->out.batch_strides = pick(view.strides, batch_dims);
  plan->out.offset = view.offset;
  plan->out.row_stride = p.m > 1 ? *rs : p.n;
  plan->out.row_major = false;
  return std::make_unique<DotGeneralKernel>(std::move(plan), nullptr);
}

Result<std::unique_ptr<Kernel>> makeDotGeneral(OpView &v) {
  auto plan = std::make_shared<DotGeneralPlan>();
  RS_RETURN_IF_ERROR(planDotGeneral(v, *plan));
  return std::unique_ptr<Kernel>(std::make_unique<DotGeneralKernel>(std::move(plan), nullptr));
}

} // namespace

void registerDotGeneralKernels(KernelRegistry &r) {
  r.add("stablehlo.dot_general", &makeDotGeneral, OutputMode::kOverwritten);
}

} // namespace rs::cpu
