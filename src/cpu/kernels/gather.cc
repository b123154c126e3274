//===- cpu/kernels/gather.cc - stablehlo.gather ----------------------------===//
//
// operand, start_indices (any integer type) -> result, with dimension_numbers
// (#stablehlo.gather: offset_dims, collapsed_slice_dims, operand_batching_dims,
// start_indices_batching_dims, start_index_map, index_vector_dim) and slice_sizes.
// For each batch position of the result (the dims not in offset_dims) the start index is
// read from start_indices, clamped to [0, operand dim - slice size] per spec, combined
// with the batching index, and the slice (offset dims) is copied. Batch positions are split
// over threads in fixed tiles; each writes its own result elements.
// Any element type of 1, 2, 4 or 8 bytes. Errors at plan time: InvalidArgument for
// dimension numbers or shapes that break gather_c1..c22 (openxla/stablehlo docs/spec.md
// "gather").
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/kernel.h"

#include <algorithm>

namespace rs::cpu {
namespace {

constexpr int64_t kGatherGrain = 16384; // result elements per tile (about)

struct GatherPlan {
  DType index_type = DType::kI32;
  int64_t index_size = 4;
  // Batch positions: sizes, result strides, start_indices strides.
  std::vector<int64_t> batch_sizes, batch_result_strides, batch_index_strides;
  int64_t batch_count = 1;
  // Index vector: count, stride in start_indices; operand dim fed by each entry.
  int64_t index_count = 0, index_vector_stride = 0;
  std::vector<int64_t> start_dims;   // operand dim per index vector entry
  std::vector<int64_t> start_limits; // operand dim - slice size, per entry
  // Batching: operand dim stride and the batch position dim that feeds it.
  std::vector<int64_t> batching_operand_strides, batching_batch_dims;
  std::vector<int64_t> operand_strides;
  StridedCopy slice; // offset dims: operand -> result
  int64_t slice_elems = 1;
};

Status planGather(OpView &v, GatherPlan &p) {
  RS_RETURN_IF_ERROR(v.expectArity(2, 1));
  const TensorType &operand = v.operand(0), &indices = v.operand(1), &out = v.result(0);
  RS_RETURN_IF_ERROR(checkElementSize(v, operand.dtype));
  if (!isInteger(indices.dtype))
    return v.error() << "start_indices type " << indices.toString() << " is not an integer tensor";
  if (out.dtype != operand.dtype)
    return v.error() << "result element type differs from the operand's";
  const ir::Attribute *dn = v.attr("dimension_numbers");
  if (!dn || dn->kind != ir::AttrKind::kStruct)
    return v.error() << "is missing attribute 'dimension_numbers'";
  auto list = [&](const char *name, std::vector<int64_t> &x) -> Status {
    x.clear();
    if (const ir::Attribute *f = dn->field(name); f && !decodeIntList(*f, x))
      return v.error() << "dimension_numbers field '" << name << "' is not a list";
    return Status::ok();
  };
  std::vector<int64_t> offset_dims, collapsed, operand_batching, indices_batching, start_map;
  RS_RETURN_IF_ERROR(list("offset_dims", offset_dims));
  RS_RETURN_IF_ERROR(list("collapsed_slice_dims", collapsed));
  RS_RETURN_IF_ERROR(list("operand_batching_dims", operand_batching));
  RS_RETURN_IF_ERROR(list("start_indices_batching_dims", indices_batching));
  RS_RETURN_IF_ERROR(list("start_index_map", start_map));
  const ir::Attribute *ivd = dn->field("index_vector_dim");
  int64_t index_vector_dim = ivd && ivd->kind == ir::AttrKind::kInteger ? ivd->int_value : 0;
  RS_ASSIGN_OR_RETURN(std::vector<int64_t> slice_sizes, v.intList("slice_sizes"));

  const int64_t orank = operand.rank(), irank = indices.rank(), rrank = out.rank();
  if (index_vector_dim < 0 || index_vector_dim > irank) // gather_c2
    return v.error() << "index_vector_dim " << index_vector_dim << " not in [0, " << irank << "]";
  if (static_cast<int64_t>(slice_sizes.size()) != orank) // gather_c14
    return v.error() << "slice_sizes must have " << orank << " entries";
  for (int64_t d = 0; d < orank; ++d)
    if (slice_sizes[static_cast<size_t>(d)] < 0 ||
        slice_sizes[static_cast<size_t>(d)] > operand.shape[static_cast<size_t>(d)]) // c15
      return v.error() << "slice size " << slice_sizes[static_cast<size_t>(d)]
                       << " does not fit operand dimension " << d;
  std::vector<int64_t> not_offset = collapsed;
  not_offset.insert(not_offset.end(), operand_batching.begin(), operand_batching.end());
  if (!validDims(not_offset, orank) || !validDims(offset_dims, rrank) ||
      !std::is_sorted(offset_dims.begin(), offset_dims.end())) // gather_c4..c9
    return v.error() << "offset, collapsed or batching dims are invalid";
  for (int64_t d : not_offset)
    if (slice_sizes[static_cast<size_t>(d)] > 1) // gather_c7, c9
      return v.error() << "collapsed or batching dimension " << d << " has slice size above 1";
  const int64_t index_count =
      index_vector_dim < irank ? indices.shape[static_cast<size_t>(index_vector_dim)] : 1;
  if (static_cast<int64_t>(start_map.size()) != index_count || !validDims(start_map, orank)) // c12
    return v.error() << "start_index_map must name " << index_count << " distinct operand dims";
  if (operand_batching.size() != indices_batching.size()) // gather_c10
    return v.error() << "batching dimension lists differ in length";
  for (size_t i = 0; i < indices_batching.size(); ++i) {
    int64_t d = indices_batching[i];
    if (d < 0 || d >= irank || d == index_vector_dim ||
        indices.shape[static_cast<size_t>(d)] !=
            operand.shape[static_cast<size_t>(operand_batching[i])]) // gather_c11, c13
      return v.error() << "start_indices_batching_dims entry " << d << " is invalid";
  }

  // Offset dims of the result <-> operand dims not collapsed/batching, in order.
  std::vector<int64_t> slice_operand_dims;
  for (int64_t d = 0; d < orank; ++d)
    if (std::find(not_offset.begin(), not_offset.end(), d) == not_offset.end())
      slice_operand_dims.push_back(d);
  if (slice_operand_dims.size() != offset_dims.size()) // gather_c5
    return v.error() << "offset_dims must have " << slice_operand_dims.size() << " entries";
  // Batch dims of start_indices (all but index_vector_dim) <-> result dims not in offset_dims.
  std::vector<int64_t> index_batch_dims, result_batch_dims;
  for (int64_t d = 0; d < irank; ++d)
    if (d != index_vector_dim)
      index_batch_dims.push_back(d);
  for (int64_t d = 0; d < rrank; ++d)
    if (std::find(offset_dims.begin(), offset_dims.end(), d) == offset_dims.end())
      result_batch_dims.push_back(d);
  if (index_batch_dims.size() != result_batch_dims.size())
    return v.error() << "result rank " << rrank << " does not fit the batch and offset dims";
  Shape expect(static_cast<size_t>(rrank));
  for (size_t j = 0; j < result_batch_dims.size(); ++j)
    expect[static_cast<size_t>(result_batch_dims[j])] =
        indices.shape[static_cast<size_t>(index_batch_dims[j])];
  for (size_t k = 0; k < offset_dims.size(); ++k)
    expect[static_cast<size_t>(offset_dims[k])] =
        slice_sizes[static_cast<size_t>(slice_operand_dims[k])];
  if (expect != out.shape) // gather_c22
    return v.error() << "result shape " << shapeToString(out.shape) << ", expected "
                     << shapeToString(expect);

  const std::vector<int64_t> ostrides = rowMajorStrides(operand.shape);
  const std::vector<int64_t> istrides = rowMajorStrides(indices.shape);
  const std::vector<int64_t> rstrides = rowMajorStrides(out.shape);
  p.index_type = indices.dtype;
  p.index_size = dtypeSize(indices.dtype);
  for (size_t j = 0; j < result_batch_dims.size(); ++j) {
    p.batch_sizes.push_back(out.shape[static_cast<size_t>(result_batch_dims[j])]);
    p.batch_result_strides.push_back(rstrides[static_cast<size_t>(result_batch_dims[j])]);
    p.batch_index_strides.push_back(istrides[static_cast<size_t>(index_batch_dims[j])]);
  }
  p.batch_count = elementCount(p.batch_sizes);
  p.index_count = index_count;
  p.index_vector_stride =
      index_vector_dim < irank ? istrides[static_cast<size_t>(index_vector_dim)] : 0;
  for (int64_t d : start_map) {
    p.start_dims.push_back(d);
    p.start_limits.push_back(operand.shape[static_cast<size_t>(d)] -
                             slice_sizes[static_cast<size_t>(d)]);
  }
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    auto it = std::find(index_batch_dims.begin(), index_batch_dims.end(), indices_batching[i]);
    p.batching_operand_strides.push_back(ostrides[static_cast<size_t>(operand_batching[i])]);
    p.batching_batch_dims.push_back(it - index_batch_dims.begin());
  }
  p.operand_strides = ostrides;
  for (size_t k = 0; k < offset_dims.size(); ++k) {
    p.slice.shape.push_back(slice_sizes[static_cast<size_t>(slice_operand_dims[k])]);
    p.slice.in_strides.push_back(ostrides[static_cast<size_t>(slice_operand_dims[k])]);
    p.slice.out_strides.push_back(rstrides[static_cast<size_t>(offset_dims[k])]);
  }
  p.slice_elems = elementCount(p.slice.shape);
  p.slice.elem_size = dtypeSize(operand.dtype);
  p.slice.simplify();
  return Status::ok();
}

void runGather(const GatherPlan &p, const KernelIo &io) {
  const uint8_t *operand = io.in[0]->data(), *indices = io.in[1]->data();
  uint8_t *out = io.out[0].mutableData();
  const int64_t grain = std::max<int64_t>(1, kGatherGrain / std::max<int64_t>(1, p.slice_elems));
  const int64_t tiles = (p.batch_count + grain - 1) / grain;
  io.rc.cpu->parallelFor(tiles, [&](int64_t t) {
    const size_t nb = p.batch_sizes.size();
    std::vector<int64_t> bi(nb);
    for (int64_t b = t * grain, end = std::min(p.batch_count, (t + 1) * grain); b < end; ++b) {
      int64_t rem = b, index_off = 0, result_off = 0;
      for (size_t j = nb; j-- > 0;) {
        bi[j] = rem % p.batch_sizes[j];
        rem /= p.batch_sizes[j];
        index_off += bi[j] * p.batch_index_strides[j];
        result_off += bi[j] * p.batch_result_strides[j];
      }
      int64_t operand_off = 0;
      for (int64_t k = 0; k < p.index_count; ++k) {
        int64_t s = readIndex(p.index_type,
                              indices + (index_off + k * p.index_vector_stride) * p.index_size);
        s = std::clamp<int64_t>(s, 0, p.start_limits[static_cast<size_t>(k)]);
        operand_off +=
            s * p.operand_strides[static_cast<size_t>(p.start_dims[static_cast<size_t>(k)])];
      }
      for (size_t i = 0; i < p.batching_operand_strides.size(); ++i)
        operand_off +=
            bi[static_cast<size_t>(p.batching_batch_dims[i])] * p.batching_operand_strides[i];
      p.slice.runSerial(operand, out, operand_off, result_off);
    }
  });
}

} // namespace

void registerGatherKernels(KernelRegistry &r) {
  r.add("stablehlo.gather", &makeKernel<GatherPlan, planGather, runGather>);
}

} // namespace rs::cpu
