//===- support/integer_element.cc - One integer element read as int64 ------===//
#include "support/integer_element.h"

#include <cstring>
#include <limits>

namespace rs {

int64_t readIntegerElement(DType t, const uint8_t *p) {
  auto load = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  };
  switch (t) {
  case DType::kBool: return p[0] != 0;
  case DType::kI2:
  case DType::kI4:
  case DType::kI8: return load(int8_t{});
  case DType::kI16: return load(int16_t{});
  case DType::kI32: return load(int32_t{});
  case DType::kI64: return load(int64_t{});
  case DType::kU2:
  case DType::kU4:
  case DType::kU8: return load(uint8_t{});
  case DType::kU16: return load(uint16_t{});
  case DType::kU32: return load(uint32_t{});
  case DType::kU64: {
    const uint64_t v = load(uint64_t{});
    return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : static_cast<int64_t>(v);
  }
  default: return 0;
  }
}

} // namespace rs
