//===- tools/run_inputs.h - Argument files of `reactant-server run` --------===//
//
// Reads one argument of the entry function from a file, for `run --input N=FILE`:
//
//  - `.npy` (NumPy format 1.0, 2.0 or 3.0): little-endian or single-byte `descr` (`<f2`,
//    `<f4`, `<f8`, `|b1`, `|i1`, `<i2`, `<i4`, `<i8`, `|u1`, `<u2`, `<u4`, `<u8`, `<c8`,
//    `<c16`), C order; the dtype and shape must equal the argument's.
//  - `.json`: a KServe V2 REST tensor `{"datatype": "FP32", "shape": [2], "data": [...]}`
//    (checked against the argument's type), or the `data` array alone, which takes the
//    argument's dtype and shape (protocol/json_tensor.h says which values each dtype takes).
//
// Errors: InvalidArgument naming the file and what was expected (an unknown extension, a
// malformed header, Fortran order, a big-endian or unsupported descr, a dtype, shape or
// byte count that differs from the argument's), and the codes of support/file.h for a file
// that cannot be read. Thread safety: pure functions (the file aside).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/dtype.h"
#include "support/status.h"
#include "support/tensor.h"

#include <string>
#include <string_view>

namespace rs::tools {

/// The argument of element type `dtype` and row-major shape `shape` read from `path`
/// (see the file comment).
Result<Tensor> readArgumentFile(const std::string &path, DType dtype, const Shape &shape);

/// The tensor of a `.npy` file's bytes `bytes`; `file` names it in errors.
Result<Tensor> decodeNpy(std::string_view bytes, std::string_view file);

} // namespace rs::tools
