//===- tools/run_inputs.cc - Argument files of `reactant-server run` -------===//
#include "tools/run_inputs.h"

#include "protocol/json_tensor.h"
#include "protocol/wire_tensor.h"
#include "support/file.h"

#include <nlohmann/json.hpp>

#include <array>
#include <charconv>
#include <cstring>
#include <filesystem>

namespace rs::tools {
namespace {

struct NpyDescr {
  std::string_view descr;
  DType dtype;
};

// NumPy's array-protocol type strings (numpy docs "Array interface protocol", typestr).
constexpr std::array<NpyDescr, 14> kNpyDescrs = {{
    {"<f2", DType::kF16},
    {"<f4", DType::kF32},
    {"<f8", DType::kF64},
    {"|b1", DType::kBool},
    {"|i1", DType::kI8},
    {"<i2", DType::kI16},
    {"<i4", DType::kI32},
    {"<i8", DType::kI64},
    {"|u1", DType::kU8},
    {"<u2", DType::kU16},
    {"<u4", DType::kU32},
    {"<u8", DType::kU64},
    {"<c8", DType::kComplex64},
    {"<c16", DType::kComplex128},
}};

/// The text after `'key':` in the header dict, leading spaces skipped; empty if absent.
std::string_view npyValue(std::string_view header, std::string_view key) {
  std::string quoted = "'" + std::string(key) + "':";
  size_t at = header.find(quoted);
  if (at == std::string_view::npos)
    return {};
  std::string_view rest = header.substr(at + quoted.size());
  while (!rest.empty() && rest.front() == ' ')
    rest.remove_prefix(1);
  return rest;
}

Result<Shape> npyShape(std::string_view value, std::string_view file) {
  auto bad = [&] {
    return invalidArgument() << file << ": npy header 'shape' is not a tuple of integers";
  };
  if (value.empty() || value.front() != '(')
    return bad();
  size_t close = value.find(')');
  if (close == std::string_view::npos)
    return bad();
  std::string_view items = value.substr(1, close - 1);
  Shape shape;
  while (true) {
    while (!items.empty() && (items.front() == ' ' || items.front() == ','))
      items.remove_prefix(1);
    if (items.empty())
      break;
    int64_t dim = 0;
    auto [end, ec] = std::from_chars(items.data(), items.data() + items.size(), dim);
    if (ec != std::errc() || dim < 0)
      return bad();
    shape.push_back(dim);
    items.remove_prefix(static_cast<size_t>(end - items.data()));
  }
  return shape;
}

Result<Tensor> decodeJson(const std::string &text, const std::string &path, DType dtype,
                          const Shape &shape) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return invalidArgument() << path << ": not valid JSON";
  const nlohmann::json *data = &doc;
  if (doc.is_object()) {
    if (!doc.contains("datatype") || !doc["datatype"].is_string() || !doc.contains("shape") ||
        !doc.contains("data"))
      return invalidArgument() << path
                               << ": expected a KServe V2 tensor {\"datatype\", \"shape\", "
                                  "\"data\"} or a data array";
    const std::string datatype = doc["datatype"].get<std::string>();
    if (datatype != dtypeWireName(dtype))
      return invalidArgument() << path << ": datatype " << datatype << ", the argument is "
                               << dtypeWireName(dtype);
    Shape file_shape;
    if (!doc["shape"].is_array())
      return invalidArgument() << path << ": 'shape' is not an array of integers";
    for (const nlohmann::json &d : doc["shape"]) {
      if (!d.is_number_integer())
        return invalidArgument() << path << ": 'shape' is not an array of integers";
      file_shape.push_back(d.get<int64_t>());
    }
    if (file_shape != shape)
      return invalidArgument() << path << ": shape " << shapeToString(file_shape)
                               << ", the argument is " << shapeToString(shape);
    data = &doc["data"];
  }
  RS_ASSIGN_OR_RETURN(protocol::WireTensorLayout layout,
                      protocol::checkWireTensor(path, dtypeWireName(dtype), shape));
  return protocol::tensorFromJsonData(path, *data, layout);
}

} // namespace

Result<Tensor> decodeNpy(std::string_view bytes, std::string_view file) {
  static constexpr std::string_view kMagic("\x93NUMPY", 6);
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic)
    return invalidArgument() << file << ": not a .npy file (no \\x93NUMPY magic)";
  const auto major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | static_cast<size_t>(uint8_t(bytes[9])) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return invalidArgument() << file << ": npy header is truncated";
    for (int i = 3; i >= 0; --i)
      header_len = header_len << 8 | static_cast<uint8_t>(bytes[8 + i]);
    header_start = 12;
  } else {
    return invalidArgument() << file << ": npy format version " << int(major)
                             << " (expected 1, 2 or 3)";
  }
  if (header_len > bytes.size() - header_start)
    return invalidArgument() << file << ": npy header of " << header_len
                             << " bytes runs past the end of the file";
  std::string_view header = bytes.substr(header_start, header_len);
  std::string_view descr = npyValue(header, "descr");
  if (descr.size() < 2 || descr.front() != '\'')
    return invalidArgument() << file << ": npy header has no 'descr'";
  descr = descr.substr(1, descr.find('\'', 1) - 1);
  const NpyDescr *known = nullptr;
  for (const NpyDescr &d : kNpyDescrs)
    if (d.descr == descr)
      known = &d;
  if (known == nullptr)
    return invalidArgument() << file << ": npy descr '" << descr
                             << "' is not supported (little-endian bool, int, uint, float "
                                "and complex only)";
  if (!npyValue(header, "fortran_order").starts_with("False"))
    return invalidArgument() << file << ": npy array is in Fortran order (expected C order)";
  RS_ASSIGN_OR_RETURN(Shape shape, npyShape(npyValue(header, "shape"), file));
  RS_ASSIGN_OR_RETURN(int64_t count, checkedElementCount(shape));
  std::string_view data = bytes.substr(header_start + header_len);
  const int64_t element_size = dtypeSize(known->dtype);
  if (count > static_cast<int64_t>(data.size()) / element_size)
    return invalidArgument() << file << ": npy data has " << data.size() << " bytes, fewer than "
                             << shapeToString(shape) << " " << descr << " needs";
  const int64_t want = count * element_size;
  if (static_cast<int64_t>(data.size()) != want)
    return invalidArgument() << file << ": npy data has " << data.size() << " bytes, "
                             << shapeToString(shape) << " " << descr << " needs " << want;
  return Tensor::copyOf(known->dtype, shape,
                        {reinterpret_cast<const uint8_t *>(data.data()), data.size()});
}

Result<Tensor> readArgumentFile(const std::string &path, DType dtype, const Shape &shape) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".npy" && ext != ".json")
    return invalidArgument() << path << ": unknown input file type '" << ext
                             << "' (expected .npy or .json)";
  RS_ASSIGN_OR_RETURN(std::string text, readWholeFile(path));
  if (ext == ".json")
    return decodeJson(text, path, dtype, shape);
  RS_ASSIGN_OR_RETURN(Tensor t, decodeNpy(text, path));
  if (t.dtype() != dtype || t.shape() != shape)
    return invalidArgument() << path << ": " << dtypeMlirName(t.dtype()) << " "
                             << shapeToString(t.shape()) << ", the argument is "
                             << dtypeMlirName(dtype) << " " << shapeToString(shape);
  return t;
}

} // namespace rs::tools
