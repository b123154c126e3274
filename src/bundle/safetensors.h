//===- bundle/safetensors.h - safetensors reader and writer ---------------===//
//
// The safetensors format (huggingface/safetensors, "Format" section of its README): an
// 8-byte little-endian unsigned header length N, then N bytes of UTF-8 JSON, then the
// data buffer. The JSON maps each tensor name to {"dtype": "F32", "shape": [..],
// "data_offsets": [begin, end]} (byte offsets relative to the start of the data buffer,
// end exclusive), plus an optional "__metadata__" object of string values.
//
// Shapes are row-major as stored; a scalar may be stored as shape [] or (in our golden
// files) as [1]. Dtypes are those of support/dtype.h (dtypeFromSafetensorsName).
//
// Reading maps the file read-only; tensors returned by SafetensorsFile::tensor() are
// zero-copy views that keep the mapping alive, so a SafetensorsFile may be destroyed while
// its tensors are still in use. Errors (each message starts with the file path and, where
// one is at fault, names the tensor):
//   - NotFound: the file cannot be opened; Internal: stat/mmap failed.
//   - DataLoss: structural damage: file shorter than 8 bytes or than the header length
//     says, JSON that does not parse, a header or entry of the wrong JSON shape (missing
//     or mistyped dtype/shape/data_offsets, non-string metadata), offsets outside the data
//     buffer or with begin > end.
//   - InvalidArgument: a well-formed entry with invalid content: unknown dtype, negative
//     dims, byte size that does not match shape x dtype, overlapping tensors.
//
// Thread safety: a SafetensorsFile is immutable after open(); concurrent readers are fine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"
#include "support/tensor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rs::bundle {

/// A read-only, memory-mapped safetensors file with every entry validated at open().
class SafetensorsFile {
public:
  /// Maps `path` and validates the header and every entry (see the file comment for the
  /// error codes). An empty data buffer (no tensors) is valid.
  static Result<SafetensorsFile> open(const std::string &path);

  /// The path given to open().
  const std::string &path() const { return path_; }
  /// Tensor names in sorted (byte-wise) order, `__metadata__` excluded.
  const std::vector<std::string> &names() const { return names_; }
  /// Number of tensors.
  size_t size() const { return names_.size(); }
  bool contains(std::string_view name) const;
  /// A zero-copy view of tensor `name` (dtype and row-major shape as stored) that keeps
  /// the mapping alive. If the stored bytes are not aligned to the element size (a writer
  /// that did not pad its header), an aligned owned copy is returned instead.
  /// NotFound if there is no such tensor.
  Result<Tensor> tensor(std::string_view name) const;
  /// The `__metadata__` string map (empty when absent).
  const std::map<std::string, std::string> &metadata() const { return metadata_; }

private:
  struct Entry {
    DType dtype = DType::kInvalid;
    Shape shape;
    uint64_t begin = 0; // offset of the first byte in the file
    uint64_t size = 0;  // bytes
  };

  std::string path_;
  std::shared_ptr<const void> mapping_; // keeps the mmap alive (also held by views)
  const uint8_t *base_ = nullptr;       // start of the file mapping
  std::vector<std::string> names_;
  std::map<std::string, Entry, std::less<>> entries_;
  std::map<std::string, std::string> metadata_;
};

/// Writes `tensors` (in the given order in the data buffer, the header padded with spaces
/// so the data starts 8-byte aligned) and `metadata` (as `__metadata__`, omitted when empty)
/// to `path`, through a temporary file renamed into place. InvalidArgument if a name is
/// empty, repeated or `__metadata__`, a tensor is invalid or its dtype has no safetensors
/// name; Internal if the file cannot be written.
Status writeSafetensors(const std::string &path,
                        const std::vector<std::pair<std::string, Tensor>> &tensors,
                        const std::map<std::string, std::string> &metadata = {});

} // namespace rs::bundle
