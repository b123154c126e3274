//===- bundle/safetensors.cc - safetensors reader and writer --------------===//
#include "bundle/safetensors.h"
#include "support/file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rs::bundle {
namespace {

constexpr uint64_t kHeaderLengthBytes = 8;

/// Owns one read-only mapping; the shared_ptr to it is what tensor views hold.
struct Mapping {
  void *addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr)
      ::munmap(addr, size);
  }
};

uint64_t readLittleEndian64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

/// Required alignment of an element's address for in-place use.
uint64_t elementAlignment(DType dtype) {
  return static_cast<uint64_t>(std::min<int64_t>(dtypeSize(dtype), 8));
}

/// Reads a JSON integer that must fit in int64 and be >= 0 into `out`; false otherwise.
bool nonNegativeInt(const nlohmann::json &v, int64_t *out) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX))
      return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return true; // the caller reports negative values with their own message
  }
  return false;
}

} // namespace

Result<SafetensorsFile> SafetensorsFile::open(const std::string &path) {
  RS_ASSIGN_OR_RETURN(RegularFile opened, openRegularFile(path));
  const uint64_t file_size = static_cast<uint64_t>(opened.size());
  if (file_size < kHeaderLengthBytes)
    return dataLoss() << path << ": truncated: " << file_size
                      << " bytes, expected at least 8 for the header length";
  auto mapping = std::make_shared<Mapping>();
  void *addr = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, opened.fd(), 0);
  if (addr == MAP_FAILED)
    return internalError() << path << ": cannot mmap: " << std::strerror(errno);
  mapping->addr = addr;
  mapping->size = file_size;

  SafetensorsFile file;
  file.path_ = path;
  file.base_ = static_cast<const uint8_t *>(addr);
  file.mapping_ = mapping;

  const uint64_t header_len = readLittleEndian64(file.base_);
  if (header_len > file_size - kHeaderLengthBytes)
    return dataLoss() << path << ": truncated: header length " << header_len << " exceeds the "
                      << file_size - kHeaderLengthBytes << " bytes after the length field";
  const uint64_t data_start = kHeaderLengthBytes + header_len;
  const uint64_t data_size = file_size - data_start;

  const char *header_begin = reinterpret_cast<const char *>(file.base_ + kHeaderLengthBytes);
  nlohmann::json header = nlohmann::json::parse(header_begin, header_begin + header_len,
                                                /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded())
    return dataLoss() << path << ": corrupt header: not valid JSON";
  if (!header.is_object())
    return dataLoss() << path << ": corrupt header: expected a JSON object, got "
                      << header.type_name();

  struct Extent {
    uint64_t begin, end;
    const std::string *name;
  };
  std::vector<Extent> extents;

  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string &name = it.key();
    const nlohmann::json &value = it.value();
    if (name == "__metadata__") {
      if (!value.is_object())
        return dataLoss() << path << ": corrupt header: __metadata__ must be an object, got "
                          << value.type_name();
      for (auto m = value.begin(); m != value.end(); ++m) {
        if (!m.value().is_string())
          return dataLoss() << path << ": corrupt header: __metadata__ value '" << m.key()
                            << "' must be a string, got " << m.value().type_name();
        file.metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    auto bad = [&](std::string_view what) {
      return Status(dataLoss() << path << ": tensor '" << name << "': corrupt entry: " << what);
    };
    if (!value.is_object())
      return bad("expected an object");
    auto dtype_it = value.find("dtype");
    auto shape_it = value.find("shape");
    auto offsets_it = value.find("data_offsets");
    if (dtype_it == value.end() || !dtype_it->is_string())
      return bad("missing or non-string 'dtype'");
    if (shape_it == value.end() || !shape_it->is_array())
      return bad("missing or non-array 'shape'");
    if (offsets_it == value.end() || !offsets_it->is_array() || offsets_it->size() != 2)
      return bad("'data_offsets' must be an array of two integers");

    Entry entry;
    const std::string dtype_name = dtype_it->get<std::string>();
    std::optional<DType> dtype = dtypeFromSafetensorsName(dtype_name);
    if (!dtype)
      return invalidArgument() << path << ": tensor '" << name << "': unknown dtype '" << dtype_name
                               << "'";
    entry.dtype = *dtype;
    for (const auto &d : *shape_it) {
      int64_t dim = 0;
      if (!nonNegativeInt(d, &dim))
        return bad("shape entries must be integers");
      if (dim < 0)
        return invalidArgument() << path << ": tensor '" << name << "': negative dimension " << dim
                                 << " in shape";
      entry.shape.push_back(dim);
    }
    int64_t begin = 0, end = 0;
    if (!nonNegativeInt((*offsets_it)[0], &begin) || !nonNegativeInt((*offsets_it)[1], &end) ||
        begin < 0 || end < 0)
      return bad("'data_offsets' must be non-negative integers");
    if (begin > end)
      return bad("data_offsets begin " + std::to_string(begin) + " is after end " +
                 std::to_string(end));
    if (static_cast<uint64_t>(end) > data_size)
      return dataLoss() << path << ": tensor '" << name << "': data_offsets [" << begin << ","
                        << end << "] exceed the data buffer of " << data_size
                        << " bytes (file truncated?)";

    Result<int64_t> count = checkedElementCount(entry.shape);
    if (!count.isOk())
      return count.status().withPrefix(path + ": tensor '" + name + "'");
    const int64_t elem = dtypeSize(entry.dtype);
    if (*count > INT64_MAX / elem)
      return invalidArgument() << path << ": tensor '" << name << "': shape "
                               << shapeToString(entry.shape) << " overflows int64 bytes";
    const int64_t expected = *count * elem;
    if (expected != end - begin)
      return invalidArgument() << path << ": tensor '" << name << "': " << dtype_name
                               << shapeToString(entry.shape) << " needs " << expected
                               << " bytes but data_offsets [" << begin << "," << end << "] hold "
                               << end - begin;
    entry.begin = data_start + static_cast<uint64_t>(begin);
    entry.size = static_cast<uint64_t>(end - begin);
    auto [pos, inserted] = file.entries_.emplace(name, std::move(entry));
    (void)inserted; // JSON object keys are unique after parsing
    if (end > begin)
      extents.push_back({static_cast<uint64_t>(begin), static_cast<uint64_t>(end), &pos->first});
  }

  std::sort(extents.begin(), extents.end(), [](const Extent &a, const Extent &b) {
    return a.begin != b.begin ? a.begin < b.begin : *a.name < *b.name;
  });
  for (size_t i = 1; i < extents.size(); ++i)
    if (extents[i].begin < extents[i - 1].end)
      return invalidArgument() << path << ": tensor '" << *extents[i].name << "' overlaps tensor '"
                               << *extents[i - 1].name << "' in the data buffer";

  for (const auto &[name, entry] : file.entries_)
    file.names_.push_back(name);
  return file;
}

bool SafetensorsFile::contains(std::string_view name) const {
  return entries_.find(name) != entries_.end();
}

Result<Tensor> SafetensorsFile::tensor(std::string_view name) const {
  auto it = entries_.find(name);
  if (it == entries_.end())
    return notFound() << path_ << ": no tensor named '" << name << "'";
  const Entry &e = it->second;
  const uint8_t *data = base_ + e.begin;
  if (reinterpret_cast<uintptr_t>(data) % elementAlignment(e.dtype) != 0)
    return Tensor::copyOf(e.dtype, e.shape, {data, static_cast<size_t>(e.size)});
  return Tensor::view(e.dtype, e.shape, data, mapping_);
}

Status writeSafetensors(const std::string &path,
                        const std::vector<std::pair<std::string, Tensor>> &tensors,
                        const std::map<std::string, std::string> &metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto &[k, v] : metadata)
      meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  uint64_t offset = 0;
  for (const auto &[name, t] : tensors) {
    if (name.empty() || name == "__metadata__")
      return invalidArgument() << path << ": invalid tensor name '" << name << "'";
    if (header.contains(name))
      return invalidArgument() << path << ": duplicate tensor name '" << name << "'";
    if (!t.valid())
      return invalidArgument() << path << ": tensor '" << name << "' is invalid (no dtype)";
    std::string_view dtype_name = dtypeSafetensorsName(t.dtype());
    if (dtype_name == "INVALID")
      return invalidArgument() << path << ": tensor '" << name << "': dtype "
                               << dtypeMlirName(t.dtype()) << " has no safetensors name";
    const uint64_t size = static_cast<uint64_t>(t.byteSize());
    header[name] = {
        {"dtype", dtype_name}, {"shape", t.shape()}, {"data_offsets", {offset, offset + size}}};
    offset += size;
  }
  std::string text = header.dump();
  // Pad with spaces (allowed by the format) so the data buffer starts 8-byte aligned.
  while ((kHeaderLengthBytes + text.size()) % 8 != 0)
    text.push_back(' ');

  uint8_t len_bytes[8];
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    len_bytes[i] = static_cast<uint8_t>((n >> (8 * i)) & 0xff);

  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return internalError() << path << ": cannot create " << tmp << ": " << std::strerror(errno);
  bool ok = std::fwrite(len_bytes, 1, 8, f) == 8 &&
            std::fwrite(text.data(), 1, text.size(), f) == text.size();
  for (const auto &[name, t] : tensors) {
    if (!ok)
      break;
    const size_t size = static_cast<size_t>(t.byteSize());
    ok = size == 0 || std::fwrite(t.data(), 1, size, f) == size;
  }
  int err = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    return internalError() << path << ": write failed: " << std::strerror(err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    std::remove(tmp.c_str());
    return internalError() << path << ": cannot rename " << tmp << ": " << std::strerror(err);
  }
  return Status::ok();
}

} // namespace rs::bundle
