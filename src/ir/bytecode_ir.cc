//===- ir/bytecode_ir.cc - The IR section of MLIR bytecode as a tree ------===//
//
// Ops, regions, blocks and value numbering (vhlo-bytecode.md 2.5; BytecodeReader.cpp,
// parseRegions / parseOpWithoutRegions / parseBlockHeader / defineValues):
// - a region reserves `numValues` slots at the end of its value scope; its block
//   arguments and op results fill them in stream order; leaving the region releases
//   them, so sibling regions reuse the same slot numbers;
// - the root and every region flagged isolated start a new, empty scope; from bytecode 2
//   on, an isolated op's regions sit in a nested IR section;
// - an operand may name a slot that is not yet defined (a forward reference); it is
//   bound when the slot's definition comes, and must be by the time the region ends.
// Every value gets a RawValue number; the result is a RawOp tree for vhlo_legalize.cc.
// Use-list orders are parsed and dropped (they only restore in-memory use order).
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode_impl.h"

namespace rs::ir::bc {
namespace {

class IRReader {
public:
  explicit IRReader(const Container &c) : c_(c) {}

  Status readRoot(ByteReader &r, RawOp *root) {
    scopes_.emplace_back();
    Scope &scope = scopes_.back();
    scope.next.push_back(0);
    RawBlock block;
    uint64_t num_ops = 0;
    RS_RETURN_IF_ERROR(readBlockHeader(r, &block, &num_ops));
    if (num_ops != 1 || !block.arguments.empty())
      return r.errorAt(r.offset(), "expected one top-level op without block arguments, got " +
                                       std::to_string(num_ops) + " ops");
    RS_RETURN_IF_ERROR(readOp(r, root, 0));
    RS_RETURN_IF_ERROR(r.expectEnd("after the top-level op"));
    return resolveForwardRefs(*root);
  }

  int32_t numValues() const { return next_raw_; }

private:
  struct Scope {
    std::vector<RawValue> slots; ///< -1: not defined yet
    std::vector<size_t> next;    ///< per open region: the next slot it defines
  };
  /// A forward reference: a placeholder RawValue, bound when its slot is defined.
  struct ForwardRef {
    RawValue bound = -1;
    size_t offset = 0; ///< the first use, for the error
  };

  Status defineValues(ByteReader &r, size_t count, std::vector<RawValue> *out) {
    Scope &scope = scopes_.back();
    size_t &next = scope.next.back();
    if (next + count > scope.slots.size())
      return r.error("defines more values than its region announced (" +
                     std::to_string(scope.slots.size()) + " slots)");
    for (size_t i = 0; i < count; ++i, ++next) {
      RawValue v = next_raw_++;
      RawValue old = scope.slots[next];
      if (old >= 0 && isForward(old))
        forward_[static_cast<size_t>(old - kForwardBase)].bound = v;
      else if (old >= 0)
        return r.error("value slot " + std::to_string(next) + " is defined twice");
      scope.slots[next] = v;
      out->push_back(v);
    }
    return Status::ok();
  }

  static constexpr RawValue kForwardBase = 1 << 30;
  bool isForward(RawValue v) const { return v >= kForwardBase; }

  Status readOperand(ByteReader &r, RawValue *out) {
    size_t at = r.offset();
    uint64_t index = 0;
    RS_RETURN_IF_ERROR(r.readVarInt(&index));
    Scope &scope = scopes_.back();
    if (index >= scope.slots.size())
      return r.errorAt(at, "value index " + std::to_string(index) + " is out of range (" +
                               std::to_string(scope.slots.size()) + " values in scope)");
    RawValue &slot = scope.slots[static_cast<size_t>(index)];
    if (slot < 0) {
      if (forward_.size() >= static_cast<size_t>(kForwardBase))
        return r.errorAt(at, "too many forward references");
      slot = kForwardBase + static_cast<RawValue>(forward_.size());
      forward_.push_back({-1, at});
    }
    *out = slot;
    return Status::ok();
  }

  Status readUseListOrders(ByteReader &r, size_t range_size) {
    uint64_t values = 1;
    if (range_size > 1)
      RS_RETURN_IF_ERROR(r.readCount(&values));
    for (uint64_t i = 0; i < values; ++i) {
      uint64_t index = 0, n = 0;
      bool pairs = false;
      if (range_size > 1)
        RS_RETURN_IF_ERROR(r.readVarInt(&index));
      RS_RETURN_IF_ERROR(r.readVarIntWithFlag(&n, &pairs));
      if (n > r.remaining())
        return r.error("use-list order of " + std::to_string(n) + " entries runs past the end");
      for (uint64_t k = 0; k < n; ++k)
        RS_RETURN_IF_ERROR(r.readVarInt(&index));
    }
    return Status::ok();
  }

  Status readBlockHeader(ByteReader &r, RawBlock *block, uint64_t *num_ops) {
    bool has_args = false;
    RS_RETURN_IF_ERROR(r.readVarIntWithFlag(num_ops, &has_args));
    if (*num_ops > r.remaining())
      return r.error("a block of " + std::to_string(*num_ops) +
                     " ops is larger than the bytes left allow");
    if (has_args) {
      uint64_t n = 0;
      RS_RETURN_IF_ERROR(r.readCount(&n));
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t type = 0;
        if (c_.version >= kElideUnknownBlockArgLocation) {
          bool has_loc = false;
          RS_RETURN_IF_ERROR(r.readVarIntWithFlag(&type, &has_loc));
          uint64_t loc = 0;
          if (has_loc)
            RS_RETURN_IF_ERROR(readAttrIndex(r, &loc));
        } else {
          uint64_t loc = 0;
          RS_RETURN_IF_ERROR(r.readVarInt(&type));
          RS_RETURN_IF_ERROR(readAttrIndex(r, &loc));
        }
        if (type >= c_.types.size())
          return r.error("block argument type " + std::to_string(type) + " is out of range (" +
                         std::to_string(c_.types.size()) + " types)");
        block->argument_types.push_back(type);
      }
      RS_RETURN_IF_ERROR(defineValues(r, block->argument_types.size(), &block->arguments));
      if (c_.version >= kUseListOrdering) {
        uint8_t has_orders = 0;
        RS_RETURN_IF_ERROR(r.readByte(&has_orders));
        if (has_orders)
          RS_RETURN_IF_ERROR(readUseListOrders(r, block->arguments.size()));
      }
    }
    return Status::ok();
  }

  Status readIndexList(ByteReader &r, size_t limit, std::string_view what,
                       std::vector<uint64_t> *out) {
    uint64_t n = 0;
    RS_RETURN_IF_ERROR(r.readCount(&n));
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t v = 0;
      RS_RETURN_IF_ERROR(r.readVarInt(&v));
      if (v >= limit)
        return r.error(std::string(what) + " " + std::to_string(v) + " is out of range (" +
                       std::to_string(limit) + ")");
      out->push_back(v);
    }
    return Status::ok();
  }

  Status readOp(ByteReader &r, RawOp *op, int depth) {
    if (depth > kMaxDepth)
      return r.error("regions nested more than " + std::to_string(kMaxDepth) + " deep");
    op->offset = r.offset();
    RS_RETURN_IF_ERROR(r.readVarInt(&op->name));
    if (op->name >= c_.op_names.size())
      return r.errorAt(op->offset, "op name index " + std::to_string(op->name) +
                                       " is out of range (" + std::to_string(c_.op_names.size()) +
                                       " op names)");
    uint8_t mask = 0;
    RS_RETURN_IF_ERROR(r.readByte(&mask));
    if (mask & 0x80)
      return r.errorAt(r.offset() - 1, "unknown op encoding mask bit 0x80");
    RS_RETURN_IF_ERROR(readAttrIndex(r, &op->loc));
    if (mask & 0x01) {
      uint64_t a = 0;
      RS_RETURN_IF_ERROR(readAttrIndex(r, &a));
      op->attr_dict = a;
    }
    if (mask & 0x40) {
      if (c_.version < kNativePropertiesEncoding)
        return r.error("properties on an op in bytecode version " + std::to_string(c_.version) +
                       ", which has none");
      uint64_t p = 0;
      if (c_.op_names[op->name].registered) {
        RS_RETURN_IF_ERROR(r.readVarInt(&p));
        if (p >= c_.properties.size())
          return r.error("properties index " + std::to_string(p) + " is out of range (" +
                         std::to_string(c_.properties.size()) + " entries)");
        op->properties = p;
      } else {
        RS_RETURN_IF_ERROR(readAttrIndex(r, &p));
        op->properties_attr = p;
      }
    }
    if (mask & 0x02)
      RS_RETURN_IF_ERROR(readIndexList(r, c_.types.size(), "result type", &op->result_types));
    if (mask & 0x04) {
      uint64_t n = 0;
      RS_RETURN_IF_ERROR(r.readCount(&n));
      op->operands.resize(static_cast<size_t>(n));
      for (RawValue &v : op->operands)
        RS_RETURN_IF_ERROR(readOperand(r, &v));
    }
    if (mask & 0x08)
      return r.error("op '" + c_.op_names[op->name].name +
                     "' has block successors, which no StableHLO op has");
    if ((mask & 0x20) && c_.version >= kUseListOrdering)
      RS_RETURN_IF_ERROR(readUseListOrders(r, op->result_types.size()));
    uint64_t num_regions = 0;
    bool isolated = false;
    if (mask & 0x10) {
      RS_RETURN_IF_ERROR(r.readVarIntWithFlag(&num_regions, &isolated));
      if (num_regions > r.remaining())
        return r.error(std::to_string(num_regions) + " regions run past the end");
    }
    RS_RETURN_IF_ERROR(defineValues(r, op->result_types.size(), &op->results));
    if (num_regions == 0)
      return Status::ok();
    op->regions.resize(static_cast<size_t>(num_regions));
    if (!isolated) {
      for (RawRegion &region : op->regions)
        RS_RETURN_IF_ERROR(readRegion(r, &region, depth));
      return Status::ok();
    }
    scopes_.emplace_back();
    if (c_.version >= kLazyLoading) {
      // The regions of an isolated op sit in a nested IR section.
      size_t at = r.offset();
      uint8_t id = 0;
      RS_RETURN_IF_ERROR(r.readByte(&id));
      if ((id & 0x7F) != kIRSection)
        return r.errorAt(at, "expected a nested IR section (id 4) for the regions of '" +
                                 c_.op_names[op->name].name + "', got id " +
                                 std::to_string(id & 0x7F));
      uint64_t length = 0;
      RS_RETURN_IF_ERROR(r.readVarInt(&length));
      if (id & 0x80) {
        uint64_t alignment = 0;
        RS_RETURN_IF_ERROR(r.readVarInt(&alignment));
        RS_RETURN_IF_ERROR(r.alignTo(alignment));
      }
      ByteReader nested = r;
      RS_RETURN_IF_ERROR(r.sub(static_cast<size_t>(length), "IR", &nested));
      for (RawRegion &region : op->regions)
        RS_RETURN_IF_ERROR(readRegion(nested, &region, depth));
      RS_RETURN_IF_ERROR(
          nested.expectEnd("after the regions of '" + c_.op_names[op->name].name + "'"));
    } else {
      for (RawRegion &region : op->regions)
        RS_RETURN_IF_ERROR(readRegion(r, &region, depth));
    }
    scopes_.pop_back();
    return Status::ok();
  }

  Status readRegion(ByteReader &r, RawRegion *region, int depth) {
    uint64_t num_blocks = 0;
    RS_RETURN_IF_ERROR(r.readCount(&num_blocks));
    if (num_blocks == 0)
      return Status::ok();
    size_t at = r.offset();
    uint64_t num_values = 0;
    RS_RETURN_IF_ERROR(r.readCount(&num_values));
    Scope &scope = scopes_.back();
    size_t first = scope.slots.size();
    scope.slots.resize(first + static_cast<size_t>(num_values), -1);
    scope.next.push_back(first);
    region->blocks.resize(static_cast<size_t>(num_blocks));
    for (RawBlock &block : region->blocks) {
      uint64_t num_ops = 0;
      RS_RETURN_IF_ERROR(readBlockHeader(r, &block, &num_ops));
      block.ops.resize(static_cast<size_t>(num_ops));
      for (RawOp &op : block.ops)
        RS_RETURN_IF_ERROR(readOp(r, &op, depth + 1));
    }
    Scope &after = scopes_.back();
    size_t defined = after.next.back() - first;
    if (defined != num_values)
      return r.errorAt(at, "the region announces " + std::to_string(num_values) +
                               " values but defines " + std::to_string(defined));
    for (size_t s = first; s < after.slots.size(); ++s)
      if (isForward(after.slots[s]) &&
          forward_[static_cast<size_t>(after.slots[s] - kForwardBase)].bound < 0)
        return r.errorAt(forward_[static_cast<size_t>(after.slots[s] - kForwardBase)].offset,
                         "value " + std::to_string(s) + " is used but never defined");
    after.slots.resize(first);
    after.next.pop_back();
    return Status::ok();
  }

  Status readAttrIndex(ByteReader &r, uint64_t *out) {
    RS_RETURN_IF_ERROR(r.readVarInt(out));
    if (*out >= c_.attrs.size())
      return r.errorAt(r.offset() - 1, "attribute index " + std::to_string(*out) +
                                           " is out of range (" + std::to_string(c_.attrs.size()) +
                                           " attributes)");
    return Status::ok();
  }

  /// Replaces placeholders by the values they were bound to.
  Status resolveForwardRefs(RawOp &op) {
    for (RawValue &v : op.operands) {
      if (!isForward(v))
        continue;
      // Bound before its region ended (checked there); bindings never chain, since a
      // definition always gets a fresh number.
      v = forward_[static_cast<size_t>(v - kForwardBase)].bound;
    }
    for (RawRegion &region : op.regions)
      for (RawBlock &block : region.blocks)
        for (RawOp &nested : block.ops)
          RS_RETURN_IF_ERROR(resolveForwardRefs(nested));
    return Status::ok();
  }

  const Container &c_;
  std::vector<Scope> scopes_;
  std::vector<ForwardRef> forward_;
  RawValue next_raw_ = 0;
};

} // namespace

Status readIR(const Container &c, RawOp *root, int32_t *num_values) {
  ByteReader r = c.reader(*c.sections[kIRSection], kIRSection);
  IRReader reader(c);
  RS_RETURN_IF_ERROR(reader.readRoot(r, root));
  *num_values = reader.numValues();
  return Status::ok();
}

} // namespace rs::ir::bc
