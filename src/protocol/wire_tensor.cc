//===- protocol/wire_tensor.cc - Checked wire tensor descriptions ----------===//
#include "protocol/wire_tensor.h"

#include "protocol/shared_memory.h"

#include <limits>

namespace rs::protocol {

Result<WireTensorLayout> checkWireTensor(std::string_view what, std::string_view datatype,
                                         std::span<const int64_t> shape) {
  const bool bytes = datatype == kBytesDatatype;
  std::optional<DType> dtype = dtypeFromWireName(datatype);
  if (!dtype && !bytes)
    return invalidArgument() << what << ": unknown datatype '" << datatype << "'";
  if (static_cast<int64_t>(shape.size()) > kMaxWireRank)
    return invalidArgument() << what << ": rank " << shape.size() << " exceeds the maximum "
                             << kMaxWireRank;
  Result<int64_t> count = checkedElementCount(shape);
  if (!count.isOk())
    return count.status().withPrefix(what);
  WireTensorLayout layout;
  layout.shape.assign(shape.begin(), shape.end());
  layout.num_elements = *count;
  if (bytes) {
    layout.bytes = true;
    return layout;
  }
  int64_t elem = dtypeSize(*dtype);
  if (*count > std::numeric_limits<int64_t>::max() / elem)
    return invalidArgument() << what << ": shape " << shapeToString(shape) << " of " << datatype
                             << " is too large (byte size overflows int64)";
  layout.dtype = *dtype;
  layout.byte_size = *count * elem;
  return layout;
}

std::string describeLayout(const WireTensorLayout &layout) {
  return "shape " + shapeToString(layout.shape) + " of " +
         std::string(layout.bytes ? kBytesDatatype : dtypeWireName(layout.dtype));
}

Status withDatatypes(const Status &status, const DecodeOptions &options, const std::string &name,
                     std::string_view received) {
  const std::string expected = options.expected_datatype ? options.expected_datatype(name) : "";
  std::string note = " (";
  if (!expected.empty())
    note += "expected " + expected + ", ";
  note += "received " + std::string(received) + ")";
  return Status(status.code(), status.message() + note);
}

std::string inputWhat(std::string_view name) { return "input '" + std::string(name) + "'"; }
std::string outputWhat(std::string_view name) { return "output '" + std::string(name) + "'"; }

} // namespace rs::protocol
