//===- ir/verify_conv_dot.cc - convolution and dot_general -----------------===//
//
// stablehlo.convolution (spec "convolution", convolution_c1..c27) and
// stablehlo.dot_general (spec "dot_general", dot_general_c1..c12): dimension numbers,
// window attributes, group counts and the result shape. Element types and precision_config
// are the backends' (and the numerics pass's) concern.
//
//===----------------------------------------------------------------------===//
#include "ir/verify_impl.h"

#include <algorithm>

namespace rs::ir::detail {
namespace {

int64_t dimOf(const Type &t, int64_t d) { return t.shape[static_cast<size_t>(d)]; }

std::vector<int64_t> concat(std::initializer_list<const std::vector<int64_t> *> parts) {
  std::vector<int64_t> out;
  for (const auto *p : parts)
    out.insert(out.end(), p->begin(), p->end());
  return out;
}

/// The spatial size of a convolution's result along one dim (convolution_c25).
int64_t convOutputSize(int64_t in_size, int64_t window, int64_t stride, int64_t lo, int64_t hi,
                       int64_t lhs_dilation, int64_t rhs_dilation) {
  const int64_t dilated_in = in_size == 0 ? 0 : (in_size - 1) * lhs_dilation + 1;
  const int64_t padded = dilated_in + lo + hi;
  const int64_t dilated_w = window == 0 ? 0 : (window - 1) * rhs_dilation + 1;
  return padded < dilated_w || dilated_w == 0 ? 0 : (padded - dilated_w) / stride + 1;
}

/// convolution_c1, c13, c18, c23: ranks; the dimension numbers as permutations.
Status checkConvDims(const OpCheck &c, const ConvDimensionNumbers &dn) {
  const Type &lhs = c.operand(0), &rhs = c.operand(1), &out = c.result(0);
  const size_t s = dn.input_spatial.size();
  const int64_t rank = static_cast<int64_t>(s) + 2;
  if (lhs.rank() != rank || rhs.rank() != rank || out.rank() != rank ||
      dn.kernel_spatial.size() != s ||
      dn.output_spatial.size() != s) // convolution_c1, c13, c18, c23
    return c.error() << "operand and result ranks must be " << rank;
  std::vector<int64_t> idims = {dn.input_batch, dn.input_feature};
  std::vector<int64_t> kdims = {dn.kernel_input_feature, dn.kernel_output_feature};
  std::vector<int64_t> odims = {dn.output_batch, dn.output_feature};
  idims.insert(idims.end(), dn.input_spatial.begin(), dn.input_spatial.end());
  kdims.insert(kdims.end(), dn.kernel_spatial.begin(), dn.kernel_spatial.end());
  odims.insert(odims.end(), dn.output_spatial.begin(), dn.output_spatial.end());
  if (!validDims(idims, rank) || !validDims(kdims, rank) ||
      !validDims(odims, rank)) // convolution_c13, c18, c23
    return c.error() << "dimension_numbers are not permutations of [0, " << rank << ")";
  return Status::ok();
}

/// convolution_c4..c12, c14: the window attributes and the group counts.
Status checkConvWindow(const OpCheck &c, const ConvAttributes &a) {
  const size_t s = a.dims.input_spatial.size();
  if (a.window_strides.size() != s || a.padding.size() != 2 * s || a.lhs_dilation.size() != s ||
      a.rhs_dilation.size() != s || a.window_reversal.size() != s) // convolution_c4..c10
    return c.error() << "window attributes must have " << s << " entries per spatial dim";
  for (size_t d = 0; d < s; ++d)
    if (a.window_strides[d] <= 0 || a.lhs_dilation[d] <= 0 ||
        a.rhs_dilation[d] <= 0) // convolution_c5, c7, c8
      return c.error() << "strides and dilations must be positive";
  const int64_t fgc = a.feature_group_count, bgc = a.batch_group_count;
  if (fgc <= 0 || bgc <= 0 || (fgc > 1 && bgc > 1)) // convolution_c11, c12, c14
    return c.error() << "feature_group_count " << fgc << " and batch_group_count " << bgc
                     << " are invalid";
  return Status::ok();
}

/// convolution_c12..c16, c25: feature and batch sizes against the group counts; the
/// result shape.
Status checkConvShapes(const OpCheck &c, const ConvAttributes &a) {
  const Type &lhs = c.operand(0), &rhs = c.operand(1), &out = c.result(0);
  const ConvDimensionNumbers &dn = a.dims;
  const int64_t fgc = a.feature_group_count, bgc = a.batch_group_count;
  const int64_t n = dimOf(lhs, dn.input_batch), features = dimOf(lhs, dn.input_feature);
  const int64_t kin = dimOf(rhs, dn.kernel_input_feature);
  const int64_t kout = dimOf(rhs, dn.kernel_output_feature);
  if (features % fgc != 0 || kin * fgc != features) // convolution_c13, c14
    return c.error() << "input features " << features << " do not match kernel input features "
                     << kin << " times feature_group_count " << fgc;
  if (kout % fgc != 0 || kout % bgc != 0 || n % bgc != 0) // convolution_c15, c16, c12
    return c.error() << "kernel output features " << kout << " or batch " << n
                     << " not divisible by the group counts";
  if (dimOf(out, dn.output_batch) != n / bgc || dimOf(out, dn.output_feature) != kout)
    return c.error() << "result batch/feature sizes " << dimOf(out, dn.output_batch) << "/"
                     << dimOf(out, dn.output_feature) << ", expected " << n / bgc << "/" << kout;
  for (size_t d = 0; d < dn.input_spatial.size(); ++d) {
    const int64_t o = convOutputSize(
        dimOf(lhs, dn.input_spatial[d]), dimOf(rhs, dn.kernel_spatial[d]), a.window_strides[d],
        a.padding[2 * d], a.padding[2 * d + 1], a.lhs_dilation[d], a.rhs_dilation[d]);
    if (dimOf(out, dn.output_spatial[d]) != o) // convolution_c25
      return c.error() << "result spatial dimension " << d << " is "
                       << dimOf(out, dn.output_spatial[d]) << ", expected " << o;
  }
  return Status::ok();
}

} // namespace

Status verifyConvolution(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(2, 1));
  RS_ASSIGN_OR_RETURN(ConvDimensionNumbers dn, c.prefixed(convDimensionNumbers(c.op())));
  RS_RETURN_IF_ERROR(checkConvDims(c, dn));
  RS_ASSIGN_OR_RETURN(ConvAttributes a, c.prefixed(convAttributes(c.op())));
  RS_RETURN_IF_ERROR(checkConvWindow(c, a));
  return checkConvShapes(c, a);
}

Status verifyDotGeneral(const OpCheck &c) {
  RS_RETURN_IF_ERROR(c.expectArity(2, 1));
  const Type &lhs = c.operand(0), &rhs = c.operand(1), &out = c.result(0);
  RS_ASSIGN_OR_RETURN(DotDimensionNumbers dn, c.prefixed(dotDimensionNumbers(c.op())));
  const std::vector<int64_t> &lb = dn.lhs_batching, &rb = dn.rhs_batching;
  const std::vector<int64_t> &lc = dn.lhs_contracting, &rc = dn.rhs_contracting;
  if (lb.size() != rb.size() || lc.size() != rc.size()) // dot_general_c1, c2
    return c.error() << "batching or contracting dimension lists differ in length";
  if (!validDims(concat({&lb, &lc}), lhs.rank()) || !validDims(concat({&rb, &rc}), rhs.rank()))
    return c.error() << "batching and contracting dimensions must be distinct dims of the "
                        "operands"; // dot_general_c3..c6
  for (size_t i = 0; i < lb.size(); ++i)
    if (dimOf(lhs, lb[i]) != dimOf(rhs, rb[i])) // dot_general_c7
      return c.error() << "batching dimension " << i << " sizes differ";
  for (size_t i = 0; i < lc.size(); ++i)
    if (dimOf(lhs, lc[i]) != dimOf(rhs, rc[i])) // dot_general_c8
      return c.error() << "contracting dimension " << i << " sizes differ";
  // dot_general_c12: batch dims, then the free dims of lhs, then those of rhs.
  Shape expect;
  for (int64_t d : lb)
    expect.push_back(dimOf(lhs, d));
  for (int64_t d : complementDims(lhs.rank(), {lb, lc}))
    expect.push_back(dimOf(lhs, d));
  for (int64_t d : complementDims(rhs.rank(), {rb, rc}))
    expect.push_back(dimOf(rhs, d));
  if (out.shape != expect) // dot_general_c12
    return c.error() << "result shape " << shapeToString(out.shape) << ", expected "
                     << shapeToString(expect);
  return Status::ok();
}

} // namespace rs::ir::detail
