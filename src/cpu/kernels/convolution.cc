//===- cpu/kernels/convolution.cc - stablehlo.convolution ------------------===//
//
// lhs (input) x rhs (kernel) -> result, any dimension_numbers (#stablehlo.conv: input
// batch/feature/spatial dims, kernel input-feature/output-feature/spatial dims, output
// batch/feature/spatial dims), window_strides, padding (may be negative), lhs_dilation,
// rhs_dilation, window_reversal, feature_group_count and batch_group_count (at most one
// of them above 1). Element types: any numeric lhs/rhs/result types, computed as
// dot_general does (gemm.h gemmComputeType: f32 sums in f32, f16/bf16 through f32, narrow
// integers wrapping). precision_config is ignored (full precision).
//
// Method: im2col + GEMM. For group g, output position r = (batch, spatial...) gets a
// patch row [window position, input feature] (zero where the window falls on padding or
// a dilation hole); the kernel is a [window * features, out features of g] matrix (read in
// place when laid out as [spatial..., i, o] without reversal, else packed once per run);
// one single-threaded GEMM (gemm.h) per tile of output positions x output features
// (cpu/gemm_tiling.h). 1x1 windows with unit strides and no padding/dilation on a
// [b, spatial..., f] input skip the patch copy. Tiles are (group, row block, feature block);
// each f32/f64 output element is one FMA chain over the patch in order whatever its tile, so
// results do not depend on the thread count. The op is verified (ir/verify_conv_dot.cc:
// convolution_c1..c27); the plan chooses the layouts. Errors at plan time: Unimplemented for
// other or mixed element types.
//
//===----------------------------------------------------------------------===//
#include "cpu/gemm_tiling.h"
#include "cpu/kernels/gemm.h"
#include "cpu/kernels/kernel.h"
#include "ir/op_attributes.h"

#include <algorithm>

namespace rs::cpu {
namespace {

struct ConvolutionPlan {
  GemmTypes types;
  int64_t es = 4; // element size of the compute type
  size_t spatial = 0;
  // Input.
  int64_t in_batch_stride = 0, in_feature_stride = 0;
  std::vector<int64_t> in_spatial_stride;
  // Kernel: element (window w, input feature i, output feature o).
  std::vector<int64_t> window;                // W per spatial dim
  std::vector<int64_t> kernel_spatial_stride; // in the rhs
  int64_t kernel_in_stride = 0, kernel_out_stride = 0;
  std::vector<bool> reversed;
  bool pack_kernel = false;
  // Output.
  std::vector<int64_t> out_spatial; // sizes
  int64_t out_batch_stride = 0, out_feature_stride = 0;
  std::vector<int64_t> out_spatial_stride;
  bool direct_output = false; // output rows are [position, feature] contiguous
  // Groups.
  int64_t groups = 1;
  bool batch_groups = false;         // groups split the batch (else the features)
  int64_t in_features_per_group = 0; // I (kernel input feature size)
  int64_t out_features_per_group = 0;
  int64_t out_batch = 0, positions = 0; // output batch, output spatial positions
  int64_t out_features = 0;
  // Per spatial dim: for output index o and window index w, the input index or -1.
  std::vector<std::vector<int64_t>> input_index;
  bool direct_input = false; // the patch matrix is the input itself
  int64_t patch_cols = 0;    // window volume * I
};

/// The input index table of one spatial dim: for output index o and window index w, the
/// input index read, or -1 on padding or a dilation hole.
std::vector<int64_t> inputIndexTable(int64_t out_size, int64_t window, int64_t in_size,
                                     int64_t stride, int64_t pad_lo, int64_t lhs_dilation,
                                     int64_t rhs_dilation) {
  std::vector<int64_t> table(static_cast<size_t>(out_size * window));
  for (int64_t oi = 0; oi < out_size; ++oi)
    for (int64_t wi = 0; wi < window; ++wi) {
      const int64_t q = oi * stride + wi * rhs_dilation - pad_lo;
      int64_t idx = -1;
      if (q >= 0 && q % lhs_dilation == 0 && q / lhs_dilation < in_size)
        idx = q / lhs_dilation;
      table[static_cast<size_t>(oi * window + wi)] = idx;
    }
  return table;
}

/// Strides, window sizes, group sizes and the input index tables.
void planWindows(const TensorType &lhs, const TensorType &rhs, const TensorType &out,
                 const ir::ConvAttributes &a, ConvolutionPlan &p) {
  const ir::ConvDimensionNumbers &dn = a.dims;
  auto dim = [](const TensorType &t, int64_t d) { return t.shape[static_cast<size_t>(d)]; };
  const std::vector<int64_t> in_strides = rowMajorStrides(lhs.shape);
  const std::vector<int64_t> k_strides = rowMajorStrides(rhs.shape);
  const std::vector<int64_t> o_strides = rowMajorStrides(out.shape);
  p.spatial = dn.input_spatial.size();
  p.in_batch_stride = in_strides[static_cast<size_t>(dn.input_batch)];
  p.in_feature_stride = in_strides[static_cast<size_t>(dn.input_feature)];
  p.kernel_in_stride = k_strides[static_cast<size_t>(dn.kernel_input_feature)];
  p.kernel_out_stride = k_strides[static_cast<size_t>(dn.kernel_output_feature)];
  p.out_batch_stride = o_strides[static_cast<size_t>(dn.output_batch)];
  p.out_feature_stride = o_strides[static_cast<size_t>(dn.output_feature)];
  for (size_t d = 0; d < p.spatial; ++d) {
    const int64_t w = dim(rhs, dn.kernel_spatial[d]), o = dim(out, dn.output_spatial[d]);
    p.window.push_back(w);
    p.out_spatial.push_back(o);
    p.in_spatial_stride.push_back(in_strides[static_cast<size_t>(dn.input_spatial[d])]);
    p.kernel_spatial_stride.push_back(k_strides[static_cast<size_t>(dn.kernel_spatial[d])]);
    p.out_spatial_stride.push_back(o_strides[static_cast<size_t>(dn.output_spatial[d])]);
    p.reversed.push_back(a.window_reversal[d] != 0);
    p.input_index.push_back(inputIndexTable(o, w, dim(lhs, dn.input_spatial[d]),
                                            a.window_strides[d], a.padding[2 * d],
                                            a.lhs_dilation[d], a.rhs_dilation[d]));
  }
  const int64_t kin = dim(rhs, dn.kernel_input_feature), kout = dim(rhs, dn.kernel_output_feature);
  p.groups = a.feature_group_count * a.batch_group_count;
  p.batch_groups = a.batch_group_count > 1;
  p.in_features_per_group = kin;
  p.out_features_per_group = kout / p.groups;
  p.out_batch = dim(lhs, dn.input_batch) / a.batch_group_count;
  p.out_features = kout;
  p.positions = elementCount(p.out_spatial);
  p.patch_cols = elementCount(p.window) * kin;
}

/// Whether `dims` is 0, 1, ..., rank - 1.
bool isIdentity(const std::vector<int64_t> &dims) {
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] != static_cast<int64_t>(d))
      return false;
  return true;
}

/// The layouts: the kernel read in place when laid out [spatial..., i, o] without
/// reversal; the output written directly and the input used as the patch matrix when they
/// are [b, spatial..., f] (the input also needing a trivial window and one group).
void chooseLayout(const ir::ConvAttributes &a, ConvolutionPlan &p) {
  const ir::ConvDimensionNumbers &dn = a.dims;
  std::vector<int64_t> hwio(dn.kernel_spatial);
  hwio.push_back(dn.kernel_input_feature);
  hwio.push_back(dn.kernel_output_feature);
  p.pack_kernel = !isIdentity(hwio) || std::find(a.window_reversal.begin(), a.window_reversal.end(),
                                                 1) != a.window_reversal.end();
  std::vector<int64_t> out_bsf = {dn.output_batch}, in_bsf = {dn.input_batch};
  out_bsf.insert(out_bsf.end(), dn.output_spatial.begin(), dn.output_spatial.end());
  out_bsf.push_back(dn.output_feature);
  in_bsf.insert(in_bsf.end(), dn.input_spatial.begin(), dn.input_spatial.end());
  in_bsf.push_back(dn.input_feature);
  bool trivial_window = true;
  for (size_t d = 0; d < p.spatial; ++d)
    trivial_window = trivial_window && p.window[d] == 1 && a.window_strides[d] == 1 &&
                     a.padding[2 * d] == 0 && a.padding[2 * d + 1] == 0 && a.lhs_dilation[d] == 1;
  p.direct_output = isIdentity(out_bsf);
  p.direct_input = isIdentity(in_bsf) && trivial_window && p.groups == 1;
}

Status planConvolution(OpView &v, ConvolutionPlan &p) {
  const TensorType &lhs = v.operand(0), &rhs = v.operand(1), &out = v.result(0);
  RS_RETURN_IF_ERROR(planGemmTypes(v, lhs.dtype, rhs.dtype, out.dtype, p.types));
  p.es = p.types.elem_size;
  RS_ASSIGN_OR_RETURN(ir::ConvAttributes a, v.prefixed(ir::convAttributes(v.op())));
  planWindows(lhs, rhs, out, a, p);
  chooseLayout(a, p);
  return Status::ok();
}

/// Per-thread scratch, reused across tiles and runs (slot 0: patches, 1: output tile).
uint8_t *scratch(size_t slot, size_t bytes) {
  thread_local std::vector<uint8_t> buffers[2];
  std::vector<uint8_t> &b = buffers[slot];
  if (b.size() < bytes)
    b.resize(bytes);
  return b.data();
}

/// Writes the patch row of output position `pos` (batch index, then spatial row-major).
void im2colRow(const ConvolutionPlan &p, const uint8_t *in, int64_t batch, int64_t feature0,
               int64_t pos, uint8_t *row) {
  const size_t s = p.spatial;
  int64_t o[16];
  std::vector<int64_t> o_big;
  int64_t *oi = o;
  if (s > 16) {
    o_big.resize(s);
    oi = o_big.data();
  }
  for (size_t d = s; d-- > 0;) {
    oi[d] = pos % p.out_spatial[d];
    pos /= p.out_spatial[d];
  }
  const int64_t I = p.in_features_per_group, es = p.es;
  const int64_t windows = p.patch_cols / std::max<int64_t>(I, 1);
  const uint8_t *base = in + (batch * p.in_batch_stride + feature0 * p.in_feature_stride) * es;
  for (int64_t w = 0; w < windows; ++w) {
    // Window multi-index, row-major over p.window.
    int64_t rem = w, offset = 0;
    bool inside = true;
    for (size_t d = s; d-- > 0;) {
      int64_t wi = rem % p.window[d];
      rem /= p.window[d];
      int64_t idx = p.input_index[d][static_cast<size_t>(oi[d] * p.window[d] + wi)];
      inside = inside && idx >= 0;
      offset += idx * p.in_spatial_stride[d];
    }
    uint8_t *dst = row + w * I * es;
    if (!inside) {
      std::memset(dst, 0, static_cast<size_t>(I * es));
    } else if (p.in_feature_stride == 1) {
      std::memcpy(dst, base + offset * es, static_cast<size_t>(I * es));
    } else {
      for (int64_t i = 0; i < I; ++i)
        std::memcpy(dst + i * es, base + (offset + i * p.in_feature_stride) * es,
                    static_cast<size_t>(es));
    }
  }
}

void runConvolution(const ConvolutionPlan &p, const KernelIo &io) {
  std::unique_ptr<uint8_t[]> in_conv, kernel_conv, out_conv;
  const uint8_t *in = inComputeType(p.types.lhs, *io.in[0], p.es, in_conv);
  const uint8_t *kernel = inComputeType(p.types.rhs, *io.in[1], p.es, kernel_conv);
  uint8_t *out = io.out[0].mutableData();
  if (p.types.out) {
    out_conv.reset(new uint8_t[static_cast<size_t>(io.out[0].numElements() * p.es)]);
    out = out_conv.get();
  }
  const int64_t es = p.es, I = p.in_features_per_group, Og = p.out_features_per_group;
  const int64_t K = p.patch_cols;

  // Kernel matrices [K, Og] per group: in place (row stride O) or packed.
  std::unique_ptr<uint8_t[]> packed;
  int64_t k_rs = p.out_features, group_stride = Og; // elements
  if (p.pack_kernel) {
    packed.reset(new uint8_t[static_cast<size_t>(p.groups * K * Og * es)]);
    const int64_t windows = K / std::max<int64_t>(I, 1);
    for (int64_t g = 0; g < p.groups; ++g)
      for (int64_t w = 0; w < windows; ++w) {
        int64_t rem = w, offset = 0;
        for (size_t d = p.spatial; d-- > 0;) {
          int64_t wi = rem % p.window[d];
          rem /= p.window[d];
          if (p.reversed[d])
            wi = p.window[d] - 1 - wi;
          offset += wi * p.kernel_spatial_stride[d];
        }
        for (int64_t i = 0; i < I; ++i)
          for (int64_t o = 0; o < Og; ++o)
            std::memcpy(packed.get() + ((g * K + w * I + i) * Og + o) * es,
                        kernel +
                            (offset + i * p.kernel_in_stride + (g * Og + o) * p.kernel_out_stride) *
                                es,
                        static_cast<size_t>(es));
      }
    kernel = packed.get();
    k_rs = Og;
    group_stride = K * Og;
  }

  const int64_t rows = p.out_batch * p.positions;
  // Tiles (group, row block, output-feature block): cpu/gemm_tiling.h.
  const GemmTiles gt = chooseGemmTiles(p.groups, rows, Og, io.rc.cpu->numThreads());
  const int64_t row_tiles = gt.tiles_m, col_tiles = gt.tiles_n;
  io.rc.cpu->parallelFor(p.groups * row_tiles * col_tiles, [&](int64_t t) {
    const int64_t g = t / (row_tiles * col_tiles), r0 = (t / col_tiles) % row_tiles * gt.tile_m;
    const int64_t o0 = t % col_tiles * gt.tile_n, no = std::min(gt.tile_n, Og - o0);
    const int64_t nr = std::min(gt.tile_m, rows - r0);
    const uint8_t *a;
    int64_t a_rs = K;
    if (p.direct_input) {
      a = in + r0 * K * es; // [rows, C] row-major, C == K
    } else {
      uint8_t *patches = scratch(0, static_cast<size_t>(nr * K * es));
      for (int64_t r = 0; r < nr; ++r) {
        const int64_t row = r0 + r, b = row / p.positions, pos = row % p.positions;
        const int64_t in_batch = p.batch_groups ? g * p.out_batch + b : b;
        const int64_t feature0 = p.batch_groups ? 0 : g * I;
        im2colRow(p, in, in_batch, feature0, pos, patches + r * K * es);
      }
      a = patches;
    }
    const int64_t b_cs = p.pack_kernel ? 1 : p.kernel_out_stride;
    const uint8_t *bmat =
        kernel +
        ((p.pack_kernel ? g * group_stride : g * Og * p.kernel_out_stride) + o0 * b_cs) * es;
    if (p.direct_output) {
      uint8_t *c = out + (r0 * p.out_features + g * Og + o0) * es;
      p.types.gemm(a, a_rs, 1, bmat, k_rs, b_cs, c, p.out_features, nr, no, K);
      return;
    }
    uint8_t *tile = scratch(1, static_cast<size_t>(nr * no * es));
    p.types.gemm(a, a_rs, 1, bmat, k_rs, b_cs, tile, no, nr, no, K);
    for (int64_t r = 0; r < nr; ++r) {
      const int64_t row = r0 + r, b = row / p.positions;
      int64_t pos = row % p.positions, offset = b * p.out_batch_stride;
      for (size_t d = p.spatial; d-- > 0;) {
        offset += (pos % p.out_spatial[d]) * p.out_spatial_stride[d];
        pos /= p.out_spatial[d];
      }
      for (int64_t o = 0; o < no; ++o)
        std::memcpy(out + (offset + (g * Og + o0 + o) * p.out_feature_stride) * es,
                    tile + (r * no + o) * es, static_cast<size_t>(es));
    }
  });
  if (p.types.out)
    p.types.out(out, io.out[0].mutableData(), io.out[0].numElements());
}

} // namespace

void registerConvolutionKernels(KernelRegistry &r) {
  r.add("stablehlo.convolution", &makeKernel<ConvolutionPlan, planConvolution, runConvolution>);
}

} // namespace rs::cpu
