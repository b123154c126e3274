//===- ir/bytecode_sections.cc - Header and tables of MLIR bytecode -------===//
//
// The header (magic, bytecode version, producer), the section index, and the tables the
// IR section refers to: strings, dialects and op names, the attribute/type offset table,
// properties and resources (vhlo-bytecode.md 1.7-2.7; mlir/lib/Bytecode/Reader/
// BytecodeReader.cpp). Sections may come in any order, so all headers are read first.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode_impl.h"

#include <cstring>

namespace rs::ir::bc {
namespace {

constexpr uint8_t kMagic[4] = {'M', 'L', 0xEF, 'R'};

/// A section header: id byte (bit 7: aligned), length, optional alignment and padding.
Status readSectionHeader(ByteReader &r, uint8_t *id, Range *range) {
  uint8_t id_and_align = 0;
  RS_RETURN_IF_ERROR(r.readByte(&id_and_align));
  *id = id_and_align & 0x7F;
  uint64_t length = 0;
  RS_RETURN_IF_ERROR(r.readVarInt(&length));
  if (id_and_align & 0x80) {
    uint64_t alignment = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&alignment));
    RS_RETURN_IF_ERROR(r.alignTo(alignment));
  }
  if (length > r.remaining())
    return r.error("section " + std::string(sectionName(*id)) + " of " + std::to_string(length) +
                   " bytes runs past the end of the file (" + std::to_string(r.remaining()) +
                   " bytes left)");
  range->begin = r.offset();
  range->end = r.offset() + static_cast<size_t>(length);
  std::span<const uint8_t> skipped;
  return r.readBytes(static_cast<size_t>(length), &skipped);
}

Status readStrings(Container &c) {
  ByteReader r = c.reader(*c.sections[kStringSection], kStringSection);
  uint64_t count = 0;
  RS_RETURN_IF_ERROR(r.readCount(&count, 2)); // a size byte and at least the NUL each
  std::vector<uint64_t> sizes(static_cast<size_t>(count));
  uint64_t total = 0;
  for (uint64_t &s : sizes) {
    RS_RETURN_IF_ERROR(r.readVarInt(&s));
    if (s == 0 || s > r.remaining())
      return r.error("string size " + std::to_string(s) + " does not fit the section");
    total += s;
  }
  if (total != r.remaining())
    return r.error("the string sizes add up to " + std::to_string(total) + " bytes but " +
                   std::to_string(r.remaining()) + " bytes of string data follow");
  // The sizes are stored last string first; the data is in forward order.
  c.strings.resize(static_cast<size_t>(count));
  for (size_t i = 0; i < sizes.size(); ++i) {
    size_t n = static_cast<size_t>(sizes[sizes.size() - 1 - i]);
    std::span<const uint8_t> bytes;
    RS_RETURN_IF_ERROR(r.readBytes(n, &bytes));
    if (bytes.back() != 0)
      return r.errorAt(r.offset() - 1, "string " + std::to_string(i) + " is not NUL-terminated");
    c.strings[i] = std::string_view(reinterpret_cast<const char *>(bytes.data()), n - 1);
  }
  return Status::ok();
}

Status readDialects(Container &c) {
  ByteReader r = c.reader(*c.sections[kDialectSection], kDialectSection);
  uint64_t count = 0;
  RS_RETURN_IF_ERROR(r.readCount(&count));
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t name = 0;
    bool has_version = false;
    if (c.version < kDialectVersioning)
      RS_RETURN_IF_ERROR(r.readVarInt(&name));
    else
      RS_RETURN_IF_ERROR(r.readVarIntWithFlag(&name, &has_version));
    std::string_view s;
    RS_RETURN_IF_ERROR(c.string(name, &s, r));
    c.dialects.push_back(s);
    if (has_version) {
      // The dialect's own version blob; neither builtin nor VHLO writes one, and the
      // reader does not need it (op names carry their versions).
      uint8_t id = 0;
      Range blob;
      size_t at = r.offset();
      RS_RETURN_IF_ERROR(readSectionHeader(r, &id, &blob));
      if (id != kDialectVersionsSection)
        return r.errorAt(at, "expected a dialect version section (id 7) after dialect '" +
                                 std::string(s) + "', got id " + std::to_string(id));
    }
  }
  std::optional<uint64_t> total;
  if (c.version >= kElideUnknownBlockArgLocation) {
    uint64_t t = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&t));
    total = t;
  }
  while (!r.atEnd()) {
    uint64_t dialect = 0, n = 0;
    size_t at = r.offset();
    RS_RETURN_IF_ERROR(r.readVarInt(&dialect));
    if (dialect >= c.dialects.size())
      return r.errorAt(at, "op names of dialect " + std::to_string(dialect) + ", but there are " +
                               std::to_string(c.dialects.size()) + " dialects");
    RS_RETURN_IF_ERROR(r.readCount(&n));
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t name = 0;
      bool registered = true;
      if (c.version >= kNativePropertiesEncoding)
        RS_RETURN_IF_ERROR(r.readVarIntWithFlag(&name, &registered));
      else
        RS_RETURN_IF_ERROR(r.readVarInt(&name));
      std::string_view s;
      RS_RETURN_IF_ERROR(c.string(name, &s, r));
      c.op_names.push_back(
          {dialect, std::string(c.dialects[dialect]) + "." + std::string(s), registered});
    }
  }
  if (total && *total != c.op_names.size())
    return r.error("the dialect section announces " + std::to_string(*total) +
                   " op names but holds " + std::to_string(c.op_names.size()));
  return Status::ok();
}

Status readAttrTypeOffsets(Container &c) {
  ByteReader r = c.reader(*c.sections[kAttrTypeOffsetSection], kAttrTypeOffsetSection);
  Range data = *c.sections[kAttrTypeSection];
  uint64_t num_attrs = 0, num_types = 0;
  RS_RETURN_IF_ERROR(r.readCount(&num_attrs));
  RS_RETURN_IF_ERROR(r.readCount(&num_types));
  if (num_attrs + num_types > r.remaining())
    return r.error("announces " + std::to_string(num_attrs + num_types) +
                   " entries, more than its bytes can describe");
  size_t offset = data.begin;
  auto readEntries = [&](uint64_t wanted, std::vector<Entry> &out) -> Status {
    out.reserve(static_cast<size_t>(wanted));
    while (out.size() < wanted) {
      uint64_t dialect = 0, n = 0;
      size_t at = r.offset();
      RS_RETURN_IF_ERROR(r.readVarInt(&dialect));
      if (dialect >= c.dialects.size())
        return r.errorAt(at, "entries of dialect " + std::to_string(dialect) + ", but there are " +
                                 std::to_string(c.dialects.size()) + " dialects");
      RS_RETURN_IF_ERROR(r.readVarInt(&n));
      if (n > wanted - out.size())
        return r.errorAt(at, "a group of " + std::to_string(n) + " entries, but only " +
                                 std::to_string(wanted - out.size()) + " remain");
      for (uint64_t k = 0; k < n; ++k) {
        uint64_t size = 0;
        bool custom = false;
        RS_RETURN_IF_ERROR(r.readVarIntWithFlag(&size, &custom));
        if (size > data.end - offset)
          return r.error("an entry of " + std::to_string(size) +
                         " bytes runs past the end of the AttrType section");
        out.push_back({dialect, {offset, offset + static_cast<size_t>(size)}, custom});
        offset += static_cast<size_t>(size);
      }
    }
    return Status::ok();
  };
  RS_RETURN_IF_ERROR(readEntries(num_attrs, c.attrs));
  RS_RETURN_IF_ERROR(readEntries(num_types, c.types));
  RS_RETURN_IF_ERROR(r.expectEnd("after the last entry"));
  if (offset != data.end)
    return c.reader(data, kAttrTypeSection)
        .errorAt(offset, "the entries end " + std::to_string(data.end - offset) +
                             " bytes before the section does");
  return Status::ok();
}

Status readProperties(Container &c) {
  if (!c.sections[kPropertiesSection])
    return Status::ok();
  ByteReader r = c.reader(*c.sections[kPropertiesSection], kPropertiesSection);
  if (r.atEnd())
    return Status::ok();
  uint64_t count = 0;
  RS_RETURN_IF_ERROR(r.readCount(&count));
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t size = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&size));
    std::span<const uint8_t> bytes;
    size_t begin = r.offset();
    RS_RETURN_IF_ERROR(r.readBytes(static_cast<size_t>(size), &bytes));
    c.properties.push_back({begin, begin + bytes.size()});
  }
  return r.expectEnd("after the last properties entry");
}

Status readResources(Container &c) {
  bool has_offsets = c.sections[kResourceOffsetSection].has_value();
  if (has_offsets != c.sections[kResourceSection].has_value())
    return c.reader({0, c.data.size()}, kResourceOffsetSection)
        .errorAt(0, "the Resource and ResourceOffset sections must come together");
  if (!has_offsets)
    return Status::ok();
  ByteReader offsets = c.reader(*c.sections[kResourceOffsetSection], kResourceOffsetSection);
  ByteReader data = c.reader(*c.sections[kResourceSection], kResourceSection);
  auto readGroup = [&](bool external, uint64_t dialect) -> Status {
    uint64_t n = 0;
    RS_RETURN_IF_ERROR(offsets.readCount(&n, 3));
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t key = 0, size = 0;
      uint8_t kind = 0;
      RS_RETURN_IF_ERROR(offsets.readVarInt(&key));
      std::string_view key_str;
      RS_RETURN_IF_ERROR(c.string(key, &key_str, offsets));
      RS_RETURN_IF_ERROR(offsets.readVarInt(&size));
      RS_RETURN_IF_ERROR(offsets.readByte(&kind));
      if (kind > 2)
        return offsets.errorAt(offsets.offset() - 1, "resource kind " + std::to_string(kind) +
                                                         " (expected 0 blob, 1 bool or 2 string)");
      size_t begin = data.offset();
      std::span<const uint8_t> bytes;
      RS_RETURN_IF_ERROR(data.readBytes(static_cast<size_t>(size), &bytes));
      if (!external)
        c.resources.push_back({dialect, key_str, kind, {begin, begin + bytes.size()}});
    }
    return Status::ok();
  };
  uint64_t num_external = 0;
  RS_RETURN_IF_ERROR(offsets.readCount(&num_external));
  for (uint64_t i = 0; i < num_external; ++i) {
    uint64_t provider = 0;
    RS_RETURN_IF_ERROR(offsets.readVarInt(&provider));
    std::string_view ignored;
    RS_RETURN_IF_ERROR(c.string(provider, &ignored, offsets));
    RS_RETURN_IF_ERROR(readGroup(true, 0));
  }
  while (!offsets.atEnd()) {
    uint64_t dialect = 0;
    size_t at = offsets.offset();
    RS_RETURN_IF_ERROR(offsets.readVarInt(&dialect));
    if (dialect >= c.dialects.size())
      return offsets.errorAt(at, "resources of dialect " + std::to_string(dialect) +
                                     ", but there are " + std::to_string(c.dialects.size()) +
                                     " dialects");
    RS_RETURN_IF_ERROR(readGroup(false, dialect));
  }
  return data.expectEnd("after the last resource");
}

/// The magic, the bytecode version and the producer; `after` is the offset past them.
Status readHeader(std::string_view file, std::span<const uint8_t> data, Container *c,
                  size_t *after) {
  c->file = std::string(file);
  c->data = data;
  ByteReader r(c->file, data, 0, data.size(), "header");
  std::span<const uint8_t> magic;
  if (data.size() < 4 || std::memcmp(data.data(), kMagic, 4) != 0)
    return r.errorAt(0, "expected the MLIR bytecode magic 'ML\\xefR'");
  RS_RETURN_IF_ERROR(r.readBytes(4, &magic));
  size_t at = r.offset();
  RS_RETURN_IF_ERROR(r.readVarInt(&c->version));
  if (c->version > kLatestVersion)
    return r.errorAt(at, "bytecode format version " + std::to_string(c->version) +
                             " is newer than this reader knows (0 to " +
                             std::to_string(kLatestVersion) + ")");
  std::string_view producer;
  RS_RETURN_IF_ERROR(r.readCString(&producer));
  c->producer = std::string(producer);
  constexpr std::string_view kPrefix = "StableHLO_v";
  if (producer.starts_with(kPrefix)) {
    c->vhlo_version = std::string(producer.substr(kPrefix.size()));
    if (!isVersion(c->vhlo_version))
      return r.errorAt(at, "producer '" + c->producer + "' does not name a StableHLO version");
  }
  *after = r.offset();
  return Status::ok();
}

} // namespace

Status Container::string(uint64_t index, std::string_view *out, const ByteReader &at) const {
  if (index >= strings.size())
    return at.error("string index " + std::to_string(index) + " is out of range (" +
                    std::to_string(strings.size()) + " strings)");
  *out = strings[static_cast<size_t>(index)];
  return Status::ok();
}

Status readContainer(std::string_view file, std::span<const uint8_t> data, Container *c) {
  size_t pos = 0;
  RS_RETURN_IF_ERROR(readHeader(file, data, c, &pos));
  if (!c->vhlo_version.empty()) {
    ByteReader h(c->file, data, 0, pos, "header");
    if (compareVersions(c->vhlo_version, "0.9.0") < 0)
      return h.errorAt(5, "written for StableHLO " + c->vhlo_version +
                              ", older than the oldest portable artifact version (0.9.0)");
    // Patch releases of the newest minor version read the same ops.
    std::string_view cur = currentVhloVersion();
    std::string newest_minor(cur.substr(0, cur.rfind('.')));
    if (compareVersions(c->vhlo_version, newest_minor + ".999999") > 0)
      return h.errorAt(5, "written for StableHLO " + c->vhlo_version +
                              ", newer than the newest version this server reads (" +
                              std::string(cur) + ")");
  }
  ByteReader r(c->file, data, pos, data.size(), "section index");
  while (!r.atEnd()) {
    size_t at = r.offset();
    uint8_t id = 0;
    Range range;
    RS_RETURN_IF_ERROR(readSectionHeader(r, &id, &range));
    if (id >= kNumSections || id == kDialectVersionsSection)
      return r.errorAt(at, "unknown section id " + std::to_string(id));
    if (c->sections[id])
      return r.errorAt(at, "a second " + std::string(sectionName(id)) + " section");
    c->sections[id] = range;
  }
  for (uint8_t id :
       {kStringSection, kDialectSection, kAttrTypeSection, kAttrTypeOffsetSection, kIRSection})
    if (!c->sections[id])
      return r.error("the file has no " + std::string(sectionName(id)) + " section");
  if (c->version >= kNativePropertiesEncoding && !c->sections[kPropertiesSection])
    return r.error("bytecode version " + std::to_string(c->version) +
                   " needs a Properties section, the file has none");
  if (c->version < kNativePropertiesEncoding && c->sections[kPropertiesSection])
    return r.error("a Properties section in bytecode version " + std::to_string(c->version) +
                   ", which has none");
  RS_RETURN_IF_ERROR(readStrings(*c));
  RS_RETURN_IF_ERROR(readDialects(*c));
  RS_RETURN_IF_ERROR(readAttrTypeOffsets(*c));
  RS_RETURN_IF_ERROR(readProperties(*c));
  return readResources(*c);
}

} // namespace rs::ir::bc
