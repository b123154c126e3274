//===- ir/bytecode_impl.h - Private declarations of the bytecode reader ---===//
//
// The reader behind bytecode.h works in two steps:
//   1. the container (bytecode_stream.cc, bytecode_sections.cc, bytecode_ir.cc): the
//      header, the section index, the string, dialect, attribute/type, properties and
//      resource tables, and the IR section as a tree of RawOps whose operands and
//      results are RawValue numbers (value scopes and forward references resolved);
//   2. the meaning: attribute and type entries decoded on first use into ir::Attribute
//      and ir::Type (bytecode_entries.cc the tables and shared helpers, bytecode_dense.cc
//      dense data, bytecode_builtin.cc the builtin dialect, vhlo_attrs.cc and
//      vhlo_types.cc VHLO), and the RawOp tree mapped to StableHLO ops (vhlo_ops.cc holds
//      the op table, vhlo_versions.cc the version numbers, vhlo_op_attrs.cc the attribute
//      conversions, vhlo_legalize.cc the mapping).
// Every reading method returns a Status naming the byte offset and section; nothing
// reads outside the buffer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/bytecode.h"
#include "ir/ir.h"
#include "support/status.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rs::ir::bc {

/// Section ids of MLIR bytecode (mlir/include/mlir/Bytecode/Encoding.h).
enum SectionId : uint8_t {
  kStringSection = 0,
  kDialectSection = 1,
  kAttrTypeSection = 2,
  kAttrTypeOffsetSection = 3,
  kIRSection = 4,
  kResourceSection = 5,
  kResourceOffsetSection = 6,
  kDialectVersionsSection = 7,
  kPropertiesSection = 8,
  kNumSections = 9,
};

/// "String", "IR", ... for error messages.
std::string_view sectionName(uint8_t id);

/// What a user can do about a binary encoding of `dialect` that this reader does not know:
/// for Shardy ("sdy": sdy.mesh, #sdy.sharding, #sdy.op_sharding_rule) the advice to export
/// without shardings or to serve the module's text form, starting with "; "; "" for any
/// other dialect (bytecode_entries.cc).
std::string otherDialectAdvice(std::string_view dialect);

/// Bytecode format versions with a behaviour change a reader honours (Encoding.h).
enum BytecodeVersion : uint64_t {
  kDialectVersioning = 1,
  kLazyLoading = 2,
  kUseListOrdering = 3,
  kElideUnknownBlockArgLocation = 4,
  kNativePropertiesEncoding = 5,
  kLatestVersion = 6,
};

/// Nesting depth (regions, attribute and type entries) past which the reader refuses.
constexpr int kMaxDepth = 256;

/// Reads one range [begin, end) of the artifact. Offsets are absolute (from the start of
/// the file), so errors and alignment use file offsets. Errors name the file, the offset
/// and the section.
class ByteReader {
public:
  ByteReader(std::string_view file, std::span<const uint8_t> data, size_t begin, size_t end,
             std::string_view section)
      : file_(file), data_(data), pos_(begin), end_(end), section_(section) {}

  size_t offset() const { return pos_; }
  size_t end() const { return end_; }
  size_t remaining() const { return end_ - pos_; }
  bool atEnd() const { return pos_ >= end_; }
  std::string_view section() const { return section_; }
  std::span<const uint8_t> data() const { return data_; }
  std::string_view file() const { return file_; }

  /// "<file>: invalid portable artifact: byte <offset> (<section> section): <what>".
  Status error(std::string_view what) const { return errorAt(pos_, what); }
  Status errorAt(size_t offset, std::string_view what) const;

  Status readByte(uint8_t *out);
  /// PrefixVarInt (vhlo-bytecode.md 1.2).
  Status readVarInt(uint64_t *out);
  /// Zig-zag signed varint.
  Status readSignedVarInt(int64_t *out);
  /// A varint whose low bit is a flag: value = raw >> 1, flag = raw & 1.
  Status readVarIntWithFlag(uint64_t *value, bool *flag);
  /// A varint that is a count of items of at least `min_item_bytes` bytes each, checked
  /// against the bytes left so a hostile count cannot make the reader allocate.
  Status readCount(uint64_t *out, size_t min_item_bytes = 1);
  Status readBytes(size_t n, std::span<const uint8_t> *out);
  /// A NUL-terminated string (the NUL is consumed, not returned).
  Status readCString(std::string_view *out);
  /// Skips 0xCB padding bytes until the absolute offset is a multiple of `alignment`.
  Status alignTo(uint64_t alignment);
  /// A reader over the next `n` bytes (consumed from this one).
  Status sub(size_t n, std::string_view section, ByteReader *out);
  /// A dialect blob: varint size, then the bytes.
  Status readBlob(std::span<const uint8_t> *out);
  /// An error unless every byte has been read ("<what>: N bytes left over").
  Status expectEnd(std::string_view what) const;

private:
  std::string_view file_;
  std::span<const uint8_t> data_;
  size_t pos_;
  size_t end_;
  std::string_view section_;
};

//===----------------------------------------------------------------------===//
// The container: tables read from the sections
//===----------------------------------------------------------------------===//

struct Range {
  size_t begin = 0;
  size_t end = 0;
};

struct OpName {
  uint64_t dialect = 0;
  std::string name; ///< "vhlo.add_v1", "builtin.module"
  bool registered = true;
};

/// One attribute or type entry of the AttrType section.
struct Entry {
  uint64_t dialect = 0;
  Range bytes;
  bool custom = false; ///< false: a NUL-terminated textual MLIR spelling
};

/// One entry of a dialect's resource group (only the builtin group holds dense data).
struct Resource {
  uint64_t dialect = 0;
  std::string_view key;
  uint8_t kind = 0; ///< 0 blob, 1 bool, 2 string
  Range bytes;      ///< its bytes in the Resource section; empty for a declaration
};

struct Container {
  std::string file;
  std::span<const uint8_t> data;
  uint64_t version = 0;
  std::string producer;
  std::string vhlo_version; ///< from the producer; empty if not StableHLO
  std::array<std::optional<Range>, kNumSections> sections;
  std::vector<std::string_view> strings;
  std::vector<std::string_view> dialects;
  std::vector<OpName> op_names;
  std::vector<Entry> attrs;
  std::vector<Entry> types;
  std::vector<Range> properties;
  std::vector<Resource> resources; ///< dialect groups, in handle order

  ByteReader reader(Range r, uint8_t section) const {
    return ByteReader(file, data, r.begin, r.end, sectionName(section));
  }
  Status string(uint64_t index, std::string_view *out, const ByteReader &at) const;
};

/// Header (magic, version, producer) and section index; then the string, dialect,
/// attribute/type offset, properties and resource tables (bytecode_sections.cc).
Status readContainer(std::string_view file, std::span<const uint8_t> data, Container *c);

//===----------------------------------------------------------------------===//
// The IR section as a tree (bytecode_ir.cc)
//===----------------------------------------------------------------------===//

/// A value of the IR section, numbered in stream order over the whole file.
using RawValue = int32_t;

struct RawRegion;

struct RawOp {
  uint64_t name = 0;                       ///< index into Container::op_names
  size_t offset = 0;                       ///< byte offset of the op in the file
  uint64_t loc = 0;                        ///< attribute index of its location
  std::optional<uint64_t> attr_dict;       ///< attribute index of its discardable (or, before
                                           ///< bytecode 5, all) attributes
  std::optional<uint64_t> properties;      ///< properties entry (registered ops)
  std::optional<uint64_t> properties_attr; ///< attribute index (unregistered ops)
  std::vector<uint64_t> result_types;      ///< type indices
  std::vector<RawValue> results;
  std::vector<RawValue> operands;
  std::vector<RawRegion> regions;
};

struct RawBlock {
  std::vector<RawValue> arguments;
  std::vector<uint64_t> argument_types;
  std::vector<RawOp> ops;
};

struct RawRegion {
  std::vector<RawBlock> blocks;
};

/// The IR section's single top-level op (builtin.module in every StableHLO artifact).
Status readIR(const Container &c, RawOp *root, int32_t *num_values);

//===----------------------------------------------------------------------===//
// Attribute and type entries (decoded on first use, memoised)
//===----------------------------------------------------------------------===//

/// Where a decoded attribute came from, for the VHLO mapping (the attribute code of its
/// dialect, vhlo-bytecode.md 2.4 and 3.1).
enum class Origin : uint8_t {
  kBuiltin,  ///< a builtin attribute (code in `code`)
  kLocation, ///< a builtin location
  kVhlo,     ///< a VHLO attribute (code in `code`)
  kText,     ///< a textual fallback entry
};

/// A decoded attribute entry.
struct DecodedAttr {
  Attribute attr;
  Origin origin = Origin::kBuiltin;
  uint64_t code = 0;
  /// Locations: the source position "file:line:col" they lead to (empty if none).
  std::string source;
  /// VHLO type_extensions_v1: the bounds (INT64_MIN for '?').
  std::vector<int64_t> bounds;
};

/// A decoded type entry.
struct DecodedType {
  Type type;
  int bit_width = 0; ///< of a scalar (integer, float, index) type, for APInt payloads
  bool is_vhlo = false;
  bool is_none = false; ///< builtin none / vhlo none_v1
};

class Entries {
public:
  explicit Entries(const Container &c) : c_(c), attrs_(c.attrs.size()), types_(c.types.size()) {}

  /// The attribute entry `index`; `at` gives the offset to blame for a bad index.
  Status attribute(uint64_t index, const ByteReader &at, const DecodedAttr **out);
  Status type(uint64_t index, const ByteReader &at, const DecodedType **out);
  const Container &container() const { return c_; }

  /// Decoders for one dialect's entries (bytecode_builtin.cc, vhlo_attrs.cc,
  /// vhlo_types.cc). Every binary entry opens with a varint, its kind `code` in its
  /// dialect; decodeAttr and decodeType read it (and, for attributes, store it in `out`
  /// with the origin) and the decoder reads the rest.
  Status decodeBuiltinAttr(ByteReader &r, uint64_t code, DecodedAttr *out);
  Status decodeBuiltinType(ByteReader &r, uint64_t code, DecodedType *out);
  Status decodeVhloAttr(ByteReader &r, uint64_t code, DecodedAttr *out);
  Status decodeVhloType(ByteReader &r, uint64_t code, DecodedType *out);

  /// The attribute / type whose index is the next varint of `r`.
  Status attrRef(ByteReader &r, const DecodedAttr **out);
  Status typeRef(ByteReader &r, const DecodedType **out);
  /// `list<T#>`.
  Status typeList(ByteReader &r, std::vector<Type> *out);
  /// `list<A#>` as an array attribute.
  Status arrayAttr(ByteReader &r, Attribute *out);
  /// `list<(A# name, A# value)>` as a dictionary sorted by name (names are strings).
  Status dictionaryAttr(ByteReader &r, Attribute *out);
  /// `varint string`: a string attribute (builtin String, vhlo string_v1).
  Status stringAttr(ByteReader &r, Attribute *out);
  /// `T# type`: a type attribute (builtin TypeAttr, vhlo type_v1).
  Status typeAttr(ByteReader &r, Attribute *out);
  /// `T# type, APInt value`: an integer attribute (builtin Integer, vhlo integer_v1); a
  /// type without a bit width of 1 to 64 is "<what> of type <t> is not supported".
  Status typedIntegerAttr(ByteReader &r, std::string_view what, Attribute *out);
  /// `[A# encoding,] list<vs> shape, T# element`: a ranked tensor type.
  Status rankedTensorType(ByteReader &r, bool with_encoding, Type *out);

  /// An APInt of `width` bits (vhlo-bytecode.md 3.3), as the low 64 bits.
  static Status readAPInt(ByteReader &r, int width, uint64_t *out);
  /// A dense-elements blob for `type` (tensor_v1 data, builtin DenseIntOrFPElements):
  /// splats expanded, i1 unpacked; non-numeric element types give an opaque spelling; a
  /// type that is not a statically shaped tensor is an error (bytecode_dense.cc).
  Status denseElements(ByteReader &r, const Type &type, std::span<const uint8_t> blob,
                       DecodedAttr *out);
  /// A builtin dense array of `n` elements of `element` in `blob`.
  static Status denseArray(ByteReader &r, const Type &element, uint64_t n,
                           std::span<const uint8_t> blob, Attribute *out);

private:
  Status decodeAttr(uint64_t index, DecodedAttr *out);
  Status decodeType(uint64_t index, DecodedType *out);

  const Container &c_;
  std::vector<std::unique_ptr<DecodedAttr>> attrs_;
  std::vector<std::unique_ptr<DecodedType>> types_;
  std::vector<uint8_t> attr_busy_ = std::vector<uint8_t>(c_.attrs.size());
  std::vector<uint8_t> type_busy_ = std::vector<uint8_t>(c_.types.size());
  int depth_ = 0;
};

/// Shared pieces of the builtin and VHLO decoders (bytecode_entries.cc).
Type scalarType(DType t);
Type otherType(std::string text);
/// complex<element>: a DType scalar for f32 and f64, else MLIR's spelling.
Type complexType(const Type &element);
/// tensor<shape x element[, encoding]>: a kTensor when the element is a DType scalar,
/// else kOther with MLIR's spelling.
Type tensorType(Shape shape, const Type &element, std::string encoding);
/// `list<vs>` of dimensions; INT64_MIN (dynamic) becomes -1.
Status readShape(ByteReader &r, Shape *out);
/// An integer attribute of `type` from an APInt payload's low bits (sign-extended for
/// signless and signed types); index and odd widths in MLIR's spelling.
Attribute integerAttr(const DecodedType &type, uint64_t bits);
/// An APFloat of `type`'s width as a float attribute.
Status readFloatAttr(ByteReader &r, const DecodedType &type, Attribute *out);
/// "%e" spelling of a double, as MLIR prints APFloat parameters (1.000000e-05)
/// (vhlo_attrs.cc).
std::string sciText(double v);
/// `list<vs>`.
Status readSignedList(ByteReader &r, std::vector<int64_t> *out);

//===----------------------------------------------------------------------===//
// VHLO ops (vhlo_ops.cc) and the mapping to StableHLO (vhlo_legalize.cc)
//===----------------------------------------------------------------------===//

/// One VHLO op: its name with version, the StableHLO op it maps to, and its attributes
/// (= properties fields) in encoded (sorted) order.
struct VhloOpInfo {
  std::string_view name; ///< "add_v1" (without "vhlo.")
  std::string_view min_version;
  std::string_view max_version; ///< "current" for ops of the newest version
  std::string_view stablehlo;   ///< "stablehlo.add", "func.func", "func.call", "" (return)
  std::vector<std::string_view> properties;
};

/// The op named `name` ("add_v1"), or nullptr.
const VhloOpInfo *lookupVhloOp(std::string_view name);
/// The newest StableHLO version this reader knows ("1.20.0") (vhlo_versions.cc, as are
/// the two below).
std::string_view currentVhloVersion();
/// Compares "a.b.c" versions: <0, 0, >0. Unparsable strings compare as 0.0.0.
int compareVersions(std::string_view a, std::string_view b);
/// Whether `v` is a well-formed "a.b.c" version.
bool isVersion(std::string_view v);

/// Converts one VHLO op's attributes (`op` = "dot_general_v2", `base` = "dot_general")
/// to the StableHLO op's, in place (vhlo_op_attrs.cc). Errors name the attribute.
Status convertVhloAttributes(std::string_view op, std::string_view base,
                             std::vector<NamedAttribute> *attrs);

/// Maps the decoded tree to a Module (vhlo_legalize.cc).
Status legalizeModule(const Container &c, Entries &entries, const RawOp &root, int32_t num_values,
                      Module *out);

/// The text parser's entry points for textual fallback entries (parse_module.cc).
Result<Attribute> parseAttributeText(std::string_view text, std::string_view file);
Result<Type> parseTypeText(std::string_view text, std::string_view file);

} // namespace rs::ir::bc
