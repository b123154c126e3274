//===- hooks/hook_binary.cc - The binary calls and results frames ----------===//
#include "hooks/hook_binary.h"

#include "protocol/wire_tensor.h"

#include <array>
#include <cstring>

namespace rs::hooks {
namespace {

/// Datatype names by code (index); code 0 is none.
constexpr std::array<std::string_view, 14> kDatatypes = {
    "",      "BOOL",  "UINT8", "UINT16", "UINT32", "UINT64", "INT8",
    "INT16", "INT32", "INT64", "FP16",   "FP32",   "FP64",   "BYTES"};

uint8_t codeOf(std::string_view datatype) {
  for (size_t i = 1; i < kDatatypes.size(); ++i)
    if (kDatatypes[i] == datatype)
      return static_cast<uint8_t>(i);
  return 0;
}

uint64_t aligned(uint64_t n) { return (n + kTensorAlignment - 1) & ~(kTensorAlignment - 1); }

template <typename T> void put(std::string &out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T)); // the server runs on little-endian hosts only
  out.append(b, sizeof(T));
}

/// Reads a body front to back; every read is checked against what is left.
class Cursor {
public:
  explicit Cursor(std::string_view bytes) : rest_(bytes) {}
  template <typename T> bool take(T &v) {
    if (rest_.size() < sizeof(T))
      return false;
    std::memcpy(&v, rest_.data(), sizeof(T));
    rest_.remove_prefix(sizeof(T));
    return true;
  }
  bool take(size_t n, std::string_view &v) {
    if (rest_.size() < n)
      return false;
    v = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return true;
  }
  size_t left() const { return rest_.size(); }

private:
  std::string_view rest_;
};

Status malformed(std::string_view why) {
  return internalError() << "the hook process sent a malformed results frame: " << why;
}

/// One tensor record (see the header); `extent` grows to the end of its bytes.
Status takeRecord(Cursor &c, TensorRecord &r, uint64_t &extent) {
  uint8_t code = 0, rank = 0;
  uint16_t name_length = 0;
  std::string_view name;
  if (!c.take(code) || !c.take(rank) || !c.take(name_length) || !c.take(r.offset) ||
      !c.take(r.nbytes))
    return malformed("a tensor record is cut short");
  if (code == 0 || code >= kDatatypes.size())
    return malformed("unknown datatype code " + std::to_string(code));
  if (rank > protocol::kMaxWireRank)
    return malformed("a tensor of rank " + std::to_string(rank));
  r.datatype = std::string(kDatatypes[code]);
  r.shape.resize(rank);
  for (int64_t &d : r.shape)
    if (!c.take(d))
      return malformed("a tensor record is cut short");
  if (!c.take(name_length, name))
    return malformed("a tensor name is cut short");
  r.name = std::string(name);
  if (r.offset <= UINT64_MAX - r.nbytes)
    extent = std::max(extent, r.offset + r.nbytes);
  return Status::ok();
}

} // namespace

uint64_t callsBytes(const std::vector<const std::vector<protocol::NamedTensor> *> &calls) {
  uint64_t total = 0;
  for (const std::vector<protocol::NamedTensor> *tensors : calls)
    for (const protocol::NamedTensor &t : *tensors)
      total = aligned(total) + t.wireByteSize();
  return total;
}

std::string encodeCalls(const std::vector<const std::vector<protocol::NamedTensor> *> &calls,
                        const CallsLayout &layout) {
  std::string out;
  out.reserve(32 + 64 * calls.size());
  put<uint8_t>(out, kCallsFrame);
  put<uint8_t>(out, layout.stage);
  put<uint8_t>(out, layout.flags);
  put<uint8_t>(out, 0);
  put<uint32_t>(out, static_cast<uint32_t>(calls.size()));
  const size_t used_at = out.size();
  put<uint64_t>(out, 0); // request bytes used, filled in below
  put<uint64_t>(out, layout.reply_offset);
  put<uint64_t>(out, layout.reply_bytes);
  uint64_t offset = 0;
  for (const std::vector<protocol::NamedTensor> *tensors : calls) {
    put<uint32_t>(out, static_cast<uint32_t>(tensors->size()));
    for (const protocol::NamedTensor &t : *tensors) {
      offset = aligned(offset);
      std::string serialized;
      std::span<const uint8_t> bytes;
      if (t.isBytes()) {
        serialized = t.bytes->serialized();
        bytes = {reinterpret_cast<const uint8_t *>(serialized.data()), serialized.size()};
      } else {
        bytes = t.tensor.bytes();
      }
      if (!bytes.empty())
        std::memcpy(layout.request_area + offset, bytes.data(), bytes.size());
      const Shape &shape = t.shape();
      put<uint8_t>(out, codeOf(t.datatype()));
      put<uint8_t>(out, static_cast<uint8_t>(shape.size()));
      put<uint16_t>(out, static_cast<uint16_t>(t.name.size()));
      put<uint64_t>(out, offset);
      put<uint64_t>(out, bytes.size());
      for (int64_t d : shape)
        put<int64_t>(out, d);
      out += t.name;
      offset += bytes.size();
    }
  }
  std::memcpy(out.data() + used_at, &offset, sizeof(offset));
  return out;
}

Result<ResultsFrame> decodeResults(std::string_view body) {
  Cursor c(body);
  uint8_t kind = 0, flags = 0;
  uint16_t zero = 0;
  uint32_t count = 0;
  if (!c.take(kind) || !c.take(flags) || !c.take(zero) || !c.take(count))
    return malformed("the header is cut short");
  if (kind != kResultsFrame)
    return malformed("frame kind " + std::to_string(kind));
  ResultsFrame frame;
  frame.in_memfd = (flags & kResultsInMemfd) != 0;
  // Each result takes at least 5 bytes: a count past that is refused before anything is sized.
  if (count > c.left() / 5)
    return malformed(std::to_string(count) + " results in " + std::to_string(c.left()) + " bytes");
  frame.results.resize(count);
  for (ResultRecord &result : frame.results) {
    uint32_t n = 0;
    if (!c.take(result.status) || !c.take(n))
      return malformed("a result is cut short");
    if (result.status > 2)
      return malformed("result status " + std::to_string(result.status));
    if (result.status != 0) {
      std::string_view text;
      if (!c.take(n, text))
        return malformed("an error text is cut short");
      result.error = std::string(text);
      continue;
    }
    // A record takes at least 20 bytes.
    if (n > c.left() / 20)
      return malformed(std::to_string(n) + " tensors in " + std::to_string(c.left()) + " bytes");
    result.tensors.resize(n);
    for (TensorRecord &r : result.tensors)
      RS_RETURN_IF_ERROR(takeRecord(c, r, frame.extent));
  }
  if (c.left() != 0)
    return malformed(std::to_string(c.left()) + " bytes after the last result");
  return frame;
}

} // namespace rs::hooks
