//===- cpu/kernels/fold_types.cc - One element type per reduction ----------===//
#include "cpu/kernels/fold_types.h"

namespace rs::cpu {

Status checkFoldTypes(OpView &v, size_t n, std::vector<DType> &types) {
  for (size_t i = 0; i < n; ++i) {
    const TensorType &in = v.operand(i), &init = v.operand(n + i), &out = v.result(i);
    if (init.rank() != 0 || init.dtype != in.dtype)
      return v.error() << "init value " << i << " of type " << init.toString()
                       << " is not a scalar of the input element type";
    if (out.dtype != in.dtype)
      return v.error() << "result " << i << " of type " << out.toString() << ", expected "
                       << TensorType{in.dtype, out.shape}.toString();
    types.push_back(in.dtype);
  }
  return Status::ok();
}

Status checkScalarBody(OpView &v, const Callable &body, std::span<const DType> arg_types,
                       std::span<const DType> result_types, std::string_view what) {
  if (body.num_block_args != arg_types.size() || body.results.size() != result_types.size())
    return v.error() << what << " must take " << arg_types.size() << " and return "
                     << result_types.size() << " values, got " << body.num_block_args << " and "
                     << body.results.size();
  for (size_t i = 0; i < arg_types.size(); ++i) {
    TensorType t = body.paramType(i);
    if (t.rank() != 0 || t.dtype != arg_types[i])
      return v.error() << what << " argument " << i << " is " << t.toString() << ", expected "
                       << TensorType{arg_types[i], {}}.toString();
  }
  for (size_t i = 0; i < result_types.size(); ++i) {
    TensorType t = body.resultType(i);
    if (t.rank() != 0 || t.dtype != result_types[i])
      return v.error() << what << " result " << i << " is " << t.toString() << ", expected "
                       << TensorType{result_types[i], {}}.toString();
  }
  return Status::ok();
}

Status planFold(OpView &v, size_t n, std::vector<DType> &types, RegionRef &body) {
  RS_RETURN_IF_ERROR(checkFoldTypes(v, n, types));
  for (DType t : types)
    RS_RETURN_IF_ERROR(checkElementSize(v, t));
  RS_ASSIGN_OR_RETURN(body, v.compileRegion(0));
  std::vector<DType> arg_types = types;
  arg_types.insert(arg_types.end(), types.begin(), types.end());
  return checkScalarBody(v, *body.callable, arg_types, types, "body");
}

FoldTile::FoldTile(const RegionRef &body, std::span<const DType> types, const KernelIo &io)
    : fold(*body.callable, io.in.subspan(body.capture_begin, body.capture_count), io.rc, types),
      init(types.size()), x(types.size()), sizes(types.size()) {
  const size_t n = types.size();
  for (size_t i = 0; i < n; ++i) {
    init[i] = io.in[n + i]->data();
    sizes[i] = dtypeSize(types[i]);
  }
}

} // namespace rs::cpu
