//===- ir/vhlo_legalize.cc - The decoded VHLO tree as a StableHLO module --===//
//
// Walks the RawOp tree of bytecode_ir.cc and builds the Module the text parser would
// build for the same program (vhlo-bytecode.md 4; StableHLO's deserialize pipeline,
// VhloToVersion then VhloLegalizeToStablehlo):
//   - builtin.module: its name from the sym_name property, its attributes kept;
//   - each vhlo op: its attributes read from its properties entry (bytecode >= 5, in the
//     op table's order) or from its attribute dictionary (before 5), converted
//     (vhlo_op_attrs.cc), renamed to its StableHLO op; `return_v1` is `func.return` in a
//     function body and `stablehlo.return` elsewhere;
//   - ops of other dialects (let through by `allowOtherDialects`) kept as they are;
//   - values numbered as the parser numbers them: block arguments, then each op's
//     regions, then its results; a use before the definition is refused.
// Each op then goes through the parser's own normalisation (normalise.cc), so both
// readers agree on where every attribute lives.
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode_impl.h"
#include "ir/parser_impl.h"

#include <algorithm>

namespace rs::ir::bc {
namespace {

class Legalizer {
public:
  Legalizer(const Container &c, Entries &e, int32_t num_values, Module *m)
      : c_(c), e_(e), m_(*m), ids_(static_cast<size_t>(num_values), -1) {}

  Status run(const RawOp &root) {
    const OpName &name = c_.op_names[root.name];
    if (name.name != "builtin.module")
      return opError(root, "expected 'builtin.module' at the top, got '" + name.name + "'");
    m_.file = c_.file;
    std::vector<NamedAttribute> attrs;
    if (root.attr_dict)
      RS_RETURN_IF_ERROR(dictionary(*root.attr_dict, root, "attributes", &attrs));
    if (root.properties) {
      // sym_name and sym_visibility, both optional: vf(attribute, present).
      ByteReader r = c_.reader(c_.properties[*root.properties], kPropertiesSection);
      for (std::string_view field : {"sym_name", "sym_visibility"}) {
        uint64_t index = 0;
        bool present = false;
        RS_RETURN_IF_ERROR(r.readVarIntWithFlag(&index, &present));
        if (!present)
          continue;
        const DecodedAttr *a = nullptr;
        RS_RETURN_IF_ERROR(e_.attribute(index, r, &a));
        attrs.push_back({std::string(field), a->attr});
      }
      RS_RETURN_IF_ERROR(r.expectEnd("after the properties of 'builtin.module'"));
    }
    for (NamedAttribute &a : attrs) {
      if (a.name == "sym_name") {
        if (a.value.kind != AttrKind::kString)
          return opError(root, "the module's sym_name must be a string");
        m_.name = a.value.str;
      } else if (a.name != "sym_visibility") {
        m_.attributes.push_back(std::move(a));
      }
    }
    std::stable_sort(
        m_.attributes.begin(), m_.attributes.end(),
        [](const NamedAttribute &x, const NamedAttribute &y) { return x.name < y.name; });
    if (!root.results.empty() || !root.operands.empty())
      return opError(root, "the module takes no operands and has no results");
    if (root.regions.size() != 1 || root.regions[0].blocks.size() > 1)
      return opError(root, "the module must have one region of at most one block");
    if (root.regions[0].blocks.empty())
      return Status::ok();
    const RawBlock &body = root.regions[0].blocks[0];
    if (!body.arguments.empty())
      return opError(root, "the module's block takes no arguments");
    for (const RawOp &op : body.ops) {
      Operation out;
      RS_RETURN_IF_ERROR(convertOp(op, name.name, &out));
      m_.ops.push_back(std::move(out));
    }
    return Status::ok();
  }

private:
  Status opError(const RawOp &op, std::string_view what) const {
    ByteReader r = c_.reader(*c_.sections[kIRSection], kIRSection);
    return r.errorAt(op.offset, "'" + c_.op_names[op.name].name + "': " + std::string(what));
  }

  ByteReader at(const RawOp &op) const {
    ByteReader r(c_.file, c_.data, op.offset, c_.sections[kIRSection]->end, "IR");
    return r;
  }

  /// A builtin dictionary attribute's fields.
  Status dictionary(uint64_t index, const RawOp &op, std::string_view what,
                    std::vector<NamedAttribute> *out) {
    const DecodedAttr *a = nullptr;
    RS_RETURN_IF_ERROR(e_.attribute(index, at(op), &a));
    if (a->attr.kind != AttrKind::kDictionary)
      return opError(op, "its " + std::string(what) + " must be a dictionary attribute");
    out->insert(out->end(), a->attr.fields.begin(), a->attr.fields.end());
    return Status::ok();
  }

  Location location(const RawOp &op) {
    Location l;
    l.file = c_.file;
    l.byte_offset = static_cast<int64_t>(op.offset);
    const DecodedAttr *loc = nullptr;
    if (e_.attribute(op.loc, at(op), &loc).isOk() && loc->origin == Origin::kLocation)
      l.source = loc->source;
    return l;
  }

  Status define(RawValue raw, uint64_t type_index, const RawOp &op, ValueId *out) {
    const DecodedType *t = nullptr;
    RS_RETURN_IF_ERROR(e_.type(type_index, at(op), &t));
    if (raw < 0 || static_cast<size_t>(raw) >= ids_.size())
      return opError(op, "value number out of range");
    *out = static_cast<ValueId>(m_.value_types.size());
    m_.value_types.push_back(t->type);
    ids_[static_cast<size_t>(raw)] = *out;
    return Status::ok();
  }

  Status use(RawValue raw, const RawOp &op, ValueId *out) {
    if (raw < 0 || static_cast<size_t>(raw) >= ids_.size() || ids_[static_cast<size_t>(raw)] < 0)
      return opError(op, "an operand is used before its definition");
    *out = ids_[static_cast<size_t>(raw)];
    return Status::ok();
  }

  /// The VHLO op's attributes: its properties entry (or, before bytecode 5, the inherent
  /// names of its attribute dictionary) and its discardable attributes.
  Status vhloAttributes(const RawOp &op, const VhloOpInfo &info, std::vector<NamedAttribute> *props,
                        std::vector<NamedAttribute> *attrs) {
    const std::string &name = c_.op_names[op.name].name;
    if (op.properties) {
      ByteReader r = c_.reader(c_.properties[*op.properties], kPropertiesSection);
      for (std::string_view field : info.properties) {
        uint64_t index = 0;
        RS_RETURN_IF_ERROR(r.readVarInt(&index));
        const DecodedAttr *a = nullptr;
        RS_RETURN_IF_ERROR(e_.attribute(index, r, &a));
        props->push_back({std::string(field), a->attr});
      }
      RS_RETURN_IF_ERROR(r.expectEnd("after the " + std::to_string(info.properties.size()) +
                                     " properties of '" + name + "'"));
    } else if (op.properties_attr) {
      RS_RETURN_IF_ERROR(dictionary(*op.properties_attr, op, "properties", props));
    }
    if (op.attr_dict) {
      std::vector<NamedAttribute> all;
      RS_RETURN_IF_ERROR(dictionary(*op.attr_dict, op, "attributes", &all));
      for (NamedAttribute &a : all) {
        bool inherent = std::find(info.properties.begin(), info.properties.end(), a.name) !=
                        info.properties.end();
        if (inherent && c_.version < kNativePropertiesEncoding)
          props->push_back(std::move(a));
        else
          attrs->push_back(std::move(a));
      }
    }
    for (std::string_view field : info.properties)
      if (std::none_of(props->begin(), props->end(),
                       [&](const NamedAttribute &a) { return a.name == field; }))
        return opError(op, "has no '" + std::string(field) + "' attribute");
    if (props->size() != info.properties.size())
      return opError(op, "has " + std::to_string(props->size()) + " attributes where " +
                             std::to_string(info.properties.size()) + " are expected");
    return Status::ok();
  }

  Status convertOp(const RawOp &op, std::string_view parent, Operation *out) {
    const OpName &name = c_.op_names[op.name];
    out->loc = location(op);
    std::vector<NamedAttribute> props, attrs;
    if (name.name.starts_with("vhlo.")) {
      std::string_view versioned = std::string_view(name.name).substr(5);
      const VhloOpInfo *info = lookupVhloOp(versioned);
      if (!info)
        return opError(op, "unknown VHLO op: not an op of StableHLO 0.9.0 to " +
                               std::string(currentVhloVersion()) +
                               (c_.vhlo_version.empty() ? std::string()
                                                        : " (the file was written for StableHLO " +
                                                              c_.vhlo_version + ")"));
      RS_RETURN_IF_ERROR(vhloAttributes(op, *info, &props, &attrs));
      std::string_view base = versioned.substr(0, versioned.rfind("_v"));
      Status s = convertVhloAttributes(versioned, base, &props);
      if (!s.isOk())
        return opError(op, s.message());
      out->name = base == "return" ? (parent == "vhlo.func_v1" ? "func.return" : "stablehlo.return")
                                   : std::string(info->stablehlo);
    } else if (name.name == "builtin.module") {
      return opError(op, "a module inside a region is not supported (only the top level "
                         "holds one)");
    } else {
      // Another dialect's op: kept with its attributes; native properties of a
      // registered op of another dialect have an encoding only that dialect knows.
      if (op.properties)
        return opError(op, "op of dialect '" + std::string(c_.dialects[name.dialect]) +
                               "' stores properties in an encoding this reader does not know" +
                               otherDialectAdvice(c_.dialects[name.dialect]));
      if (op.properties_attr)
        RS_RETURN_IF_ERROR(dictionary(*op.properties_attr, op, "properties", &props));
      if (op.attr_dict)
        RS_RETURN_IF_ERROR(dictionary(*op.attr_dict, op, "attributes", &attrs));
      out->name = name.name;
    }
    for (const RawRegion &raw : op.regions) {
      Region region;
      RS_RETURN_IF_ERROR(convertRegion(raw, op, &region));
      out->regions.push_back(std::move(region));
    }
    for (RawValue v : op.operands) {
      ValueId id = 0;
      RS_RETURN_IF_ERROR(use(v, op, &id));
      out->operands.push_back(id);
    }
    for (size_t i = 0; i < op.results.size(); ++i) {
      ValueId id = 0;
      RS_RETURN_IF_ERROR(define(op.results[i], op.result_types[i], op, &id));
      out->results.push_back(id);
    }
    out->properties = std::move(props);
    out->attributes = std::move(attrs);
    return detail::normaliseAttributes(*out, m_);
  }

  /// A region of `owner`; errors about its block arguments name the owner.
  Status convertRegion(const RawRegion &raw, const RawOp &owner, Region *out) {
    for (const RawBlock &rb : raw.blocks) {
      Block block;
      for (size_t i = 0; i < rb.arguments.size(); ++i) {
        ValueId id = 0;
        RS_RETURN_IF_ERROR(define(rb.arguments[i], rb.argument_types[i], owner, &id));
        block.arguments.push_back(id);
      }
      for (const RawOp &op : rb.ops) {
        Operation converted;
        RS_RETURN_IF_ERROR(convertOp(op, c_.op_names[owner.name].name, &converted));
        block.ops.push_back(std::move(converted));
      }
      out->blocks.push_back(std::move(block));
    }
    return Status::ok();
  }

  const Container &c_;
  Entries &e_;
  Module &m_;
  std::vector<ValueId> ids_; ///< RawValue -> ValueId, -1 until defined
};

} // namespace

Status legalizeModule(const Container &c, Entries &entries, const RawOp &root, int32_t num_values,
                      Module *out) {
  Legalizer l(c, entries, num_values, out);
  return l.run(root);
}

} // namespace rs::ir::bc
