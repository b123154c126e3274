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
// results do not depend on the thread count. Errors at plan time: InvalidArgument for attributes or
// shapes that break convolution_c1..c27 (openxla/stablehlo docs/spec.md "convolution");
// Unimplemented for other or mixed element types.
//
//===----------------------------------------------------------------------===//
#include "cpu/gemm_tiling.h"
#include "cpu/kernels/gemm.h"
#include "cpu/kernels/kernel.h"

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

Status planConvolution(OpView &v, ConvolutionPlan &p) {
  RS_RETURN_IF_ERROR(v.expectArity(2, 1));
  const TensorType &lhs = v.operand(0), &rhs = v.operand(1), &out = v.result(0);
  RS_RETURN_IF_ERROR(planGemmTypes(v, lhs.dtype, rhs.dtype, out.dtype, p.types));
  p.es = p.types.elem_size;

  const ir::Attribute *dn = v.attr("dimension_numbers");
  if (!dn || dn->kind != ir::AttrKind::kStruct)
    return v.error() << "is missing attribute 'dimension_numbers'";
  auto scalar = [&](const char *name, int64_t &x) -> Status {
    const ir::Attribute *f = dn->field(name);
    if (!f || f->kind != ir::AttrKind::kInteger)
      return v.error() << "dimension_numbers lacks '" << name << "'";
    x = f->int_value;
    return Status::ok();
  };
  auto list = [&](const char *name, std::vector<int64_t> &x) -> Status {
    const ir::Attribute *f = dn->field(name);
    if (!f || !decodeIntList(*f, x))
      return v.error() << "dimension_numbers lacks '" << name << "'";
    return Status::ok();
  };
  int64_t ib, ifeat, ki, ko, ob, of;
  std::vector<int64_t> isp, ksp, osp;
  RS_RETURN_IF_ERROR(scalar("input_batch_dimension", ib));
  RS_RETURN_IF_ERROR(scalar("input_feature_dimension", ifeat));
  RS_RETURN_IF_ERROR(list("input_spatial_dimensions", isp));
  RS_RETURN_IF_ERROR(scalar("kernel_input_feature_dimension", ki));
  RS_RETURN_IF_ERROR(scalar("kernel_output_feature_dimension", ko));
  RS_RETURN_IF_ERROR(list("kernel_spatial_dimensions", ksp));
  RS_RETURN_IF_ERROR(scalar("output_batch_dimension", ob));
  RS_RETURN_IF_ERROR(scalar("output_feature_dimension", of));
  RS_RETURN_IF_ERROR(list("output_spatial_dimensions", osp));
  const size_t s = isp.size();
  p.spatial = s;
  const int64_t rank = static_cast<int64_t>(s) + 2;
  if (lhs.rank() != rank || rhs.rank() != rank || out.rank() != rank || ksp.size() != s ||
      osp.size() != s) // convolution_c1, c13, c18, c23
    return v.error() << "operand and result ranks must be " << rank;
  std::vector<int64_t> idims = {ib, ifeat}, kdims = {ki, ko}, odims = {ob, of};
  idims.insert(idims.end(), isp.begin(), isp.end());
  kdims.insert(kdims.end(), ksp.begin(), ksp.end());
  odims.insert(odims.end(), osp.begin(), osp.end());
  if (!validDims(idims, rank) || !validDims(kdims, rank) || !validDims(odims, rank))
    return v.error() << "dimension_numbers are not permutations of [0, " << rank << ")";

  RS_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      v.intList("window_strides", std::vector<int64_t>(s, 1)));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> padding,
                      v.intList("padding", std::vector<int64_t>(2 * s, 0)));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> lhs_dil,
                      v.intList("lhs_dilation", std::vector<int64_t>(s, 1)));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> rhs_dil,
                      v.intList("rhs_dilation", std::vector<int64_t>(s, 1)));
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> reversal,
                      v.intList("window_reversal", std::vector<int64_t>(s, 0)));
  RS_ASSIGN_OR_RETURN(int64_t fgc, v.intAttr("feature_group_count", 1));
  RS_ASSIGN_OR_RETURN(int64_t bgc, v.intAttr("batch_group_count", 1));
  if (strides.size() != s || padding.size() != 2 * s || lhs_dil.size() != s ||
      rhs_dil.size() != s || reversal.size() != s) // convolution_c4..c10
    return v.error() << "window attributes must have " << s << " entries per spatial dim";
  for (size_t d = 0; d < s; ++d)
    if (strides[d] <= 0 || lhs_dil[d] <= 0 || rhs_dil[d] <= 0)
      return v.error() << "strides and dilations must be positive";
  if (fgc <= 0 || bgc <= 0 || (fgc > 1 && bgc > 1)) // convolution_c11, c12, c14
    return v.error() << "feature_group_count " << fgc << " and batch_group_count " << bgc
                     << " are invalid";

  auto dim = [](const TensorType &t, int64_t d) { return t.shape[static_cast<size_t>(d)]; };
  const int64_t n = dim(lhs, ib), c = dim(lhs, ifeat);
  const int64_t kin = dim(rhs, ki), kout = dim(rhs, ko);
  if (c % fgc != 0 || kin * fgc != c) // convolution_c13, c14
    return v.error() << "input features " << c << " do not match kernel input features " << kin
                     << " times feature_group_count " << fgc;
  if (kout % fgc != 0 || kout % bgc != 0 || n % bgc != 0) // convolution_c15, c16, c12
    return v.error() << "kernel output features " << kout << " or batch " << n
                     << " not divisible by the group counts";
  if (dim(out, ob) != n / bgc || dim(out, of) != kout)
    return v.error() << "result batch/feature sizes " << dim(out, ob) << "/" << dim(out, of)
                     << ", expected " << n / bgc << "/" << kout;

  std::vector<int64_t> in_strides = rowMajorStrides(lhs.shape);
  std::vector<int64_t> k_strides = rowMajorStrides(rhs.shape);
  std::vector<int64_t> o_strides = rowMajorStrides(out.shape);
  p.in_batch_stride = in_strides[static_cast<size_t>(ib)];
  p.in_feature_stride = in_strides[static_cast<size_t>(ifeat)];
  p.kernel_in_stride = k_strides[static_cast<size_t>(ki)];
  p.kernel_out_stride = k_strides[static_cast<size_t>(ko)];
  p.out_batch_stride = o_strides[static_cast<size_t>(ob)];
  p.out_feature_stride = o_strides[static_cast<size_t>(of)];
  p.input_index.resize(s);
  bool trivial_window = true;
  for (size_t d = 0; d < s; ++d) {
    const int64_t in_size = dim(lhs, isp[d]), w = dim(rhs, ksp[d]);
    const int64_t lo = padding[2 * d], hi = padding[2 * d + 1];
    const int64_t dilated_in = in_size == 0 ? 0 : (in_size - 1) * lhs_dil[d] + 1;
    const int64_t padded = dilated_in + lo + hi;
    const int64_t dilated_w = w == 0 ? 0 : (w - 1) * rhs_dil[d] + 1;
    const int64_t o =
        padded < dilated_w || dilated_w == 0 ? 0 : (padded - dilated_w) / strides[d] + 1;
    if (dim(out, osp[d]) != o) // convolution_c25
      return v.error() << "result spatial dimension " << d << " is " << dim(out, osp[d])
                       << ", expected " << o;
    p.window.push_back(w);
    p.out_spatial.push_back(o);
    p.in_spatial_stride.push_back(in_strides[static_cast<size_t>(isp[d])]);
    p.kernel_spatial_stride.push_back(k_strides[static_cast<size_t>(ksp[d])]);
    p.out_spatial_stride.push_back(o_strides[static_cast<size_t>(osp[d])]);
    p.reversed.push_back(reversal[d] != 0);
    std::vector<int64_t> &table = p.input_index[d];
    table.resize(static_cast<size_t>(o * w));
    for (int64_t oi = 0; oi < o; ++oi)
      for (int64_t wi = 0; wi < w; ++wi) {
        int64_t q = oi * strides[d] + wi * rhs_dil[d] - lo;
        int64_t idx = -1;
        if (q >= 0 && q % lhs_dil[d] == 0 && q / lhs_dil[d] < in_size)
          idx = q / lhs_dil[d];
        table[static_cast<size_t>(oi * w + wi)] = idx;
      }
    trivial_window =
        trivial_window && w == 1 && strides[d] == 1 && lo == 0 && hi == 0 && lhs_dil[d] == 1;
  }
  p.groups = fgc * bgc;
  p.batch_groups = bgc > 1;
  p.in_features_per_group = kin;
  p.out_features_per_group = kout / p.groups;
  p.out_batch = n / bgc;
  p.out_features = kout;
  p.positions = elementCount(p.out_spatial);
  p.patch_cols = elementCount(p.window) * kin;

  // Kernel in place when laid out [spatial..., i, o] without reversal.
  std::vector<int64_t> hwio(ksp);
  hwio.push_back(ki);
  hwio.push_back(ko);
  bool hwio_order = true;
  for (int64_t d = 0; d < rank; ++d)
    hwio_order = hwio_order && hwio[static_cast<size_t>(d)] == d;
  p.pack_kernel = !hwio_order || std::find(reversal.begin(), reversal.end(), 1) != reversal.end();

  std::vector<int64_t> bsf = {ob}, in_bsf = {ib};
  bsf.insert(bsf.end(), osp.begin(), osp.end());
  bsf.push_back(of);
  in_bsf.insert(in_bsf.end(), isp.begin(), isp.end());
  in_bsf.push_back(ifeat);
  bool out_bsf = true, in_is_bsf = true;
  for (int64_t d = 0; d < rank; ++d) {
    out_bsf = out_bsf && bsf[static_cast<size_t>(d)] == d;
    in_is_bsf = in_is_bsf && in_bsf[static_cast<size_t>(d)] == d;
  }
  p.direct_output = out_bsf;
  p.direct_input = in_is_bsf && trivial_window && p.groups == 1;
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
