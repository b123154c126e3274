//===- passes/numerics.cc - The numerics pass (runtime.numerics) -----------===//
//
// Walk-and-collect, then mutate (STYLE.md rule 6): collect() records, in program order,
// each op to change and what to do with it; apply() changes the attributes.
//
//===----------------------------------------------------------------------===//
#include "passes/numerics.h"

#include "ir/verify.h"
#include "passes/properties.h"

#include <algorithm>
#include <fmt/ranges.h>
#include <set>
#include <sstream>

namespace rs::passes {
namespace {

constexpr std::string_view kDotGeneral = "stablehlo.dot_general";
constexpr std::string_view kDot = "stablehlo.dot";
constexpr std::string_view kConvolution = "stablehlo.convolution";
constexpr std::string_view kOpaqueOps[] = {"stablehlo.custom_call", "stablehlo.cholesky",
                                           "stablehlo.triangular_solve"};

bool isMatmulClass(std::string_view name) {
  return name == kDotGeneral || name == kDot || name == kConvolution;
}

bool isOpaque(std::string_view name) {
  return std::find(std::begin(kOpaqueOps), std::end(kOpaqueOps), name) != std::end(kOpaqueOps);
}

/// Both matmul operands are f32 tensors.
bool hasF32Operands(const ir::Operation &op, const ir::Module &m) {
  if (op.operands.size() < 2)
    return false;
  for (size_t i = 0; i < 2; ++i) {
    const ir::ValueId v = op.operands[i];
    if (v < 0 || static_cast<size_t>(v) >= m.value_types.size())
      return false;
    const ir::Type &t = m.typeOf(v);
    if (!t.isTensor() || t.element != DType::kF32)
      return false;
  }
  return true;
}

/// A scalar type field of a dot algorithm is TF32.
bool isTf32Type(const ir::Attribute *field) {
  return field && field->kind == ir::AttrKind::kType && field->type &&
         field->type->kind == ir::TypeKind::kOther && field->type->text == "tf32";
}

/// The op's algorithm when it is a #stablehlo.dot_algorithm naming TF32, else nullptr.
const ir::Attribute *tf32Algorithm(const ir::Operation &op) {
  const ir::Attribute *a = op.attr("algorithm");
  if (!a || a->kind != ir::AttrKind::kStruct)
    return nullptr;
  if (isTf32Type(a->field("lhs_precision_type")) || isTf32Type(a->field("rhs_precision_type")) ||
      isTf32Type(a->field("accumulation_type")))
    return a;
  return nullptr;
}

enum class Precision : uint8_t { kAllHighest, kLower };

/// Reads precision_config: absent or empty means DEFAULT. `lowest` gets the first
/// non-HIGHEST value for messages ("DEFAULT" when absent).
Result<Precision> readPrecision(const ir::Operation &op, std::string *lowest) {
  const ir::Attribute *p = op.attr("precision_config");
  if (!p || (p->kind == ir::AttrKind::kArray && p->elements.empty())) {
    *lowest = "DEFAULT";
    return Precision::kLower;
  }
  if (p->kind != ir::AttrKind::kArray)
    return invalidArgument() << op.loc.toString() << ": '" << op.name
                             << "' op precision_config is not an array of precisions";
  for (const ir::Attribute &e : p->elements) {
    if (e.kind != ir::AttrKind::kEnum || e.name != "precision")
      return invalidArgument() << op.loc.toString() << ": '" << op.name
                               << "' op precision_config holds a non-precision value";
    if (e.str != "HIGHEST") {
      *lowest = e.str;
      return Precision::kLower;
    }
  }
  return Precision::kAllHighest;
}

ir::Attribute precisionEnum(std::string_view value) {
  ir::Attribute a;
  a.kind = ir::AttrKind::kEnum;
  a.dialect = "stablehlo";
  a.name = "precision";
  a.str = std::string(value);
  return a;
}

/// The all-f32 form of a TF32 algorithm (XLA's DOT_F32_F32_F32): precision and
/// accumulation types f32, one component per operand, one primitive operation.
ir::Attribute f32Algorithm(const ir::Attribute &tf32) {
  ir::Attribute out = tf32;
  auto f32 = std::make_shared<ir::Type>();
  f32->kind = ir::TypeKind::kTensor;
  f32->is_scalar_element = true;
  f32->element = DType::kF32;
  for (ir::NamedAttribute &f : out.fields) {
    if (f.name == "lhs_precision_type" || f.name == "rhs_precision_type" ||
        f.name == "accumulation_type") {
      f.value.kind = ir::AttrKind::kType;
      f.value.type = f32;
    } else if (f.name == "lhs_component_count" || f.name == "rhs_component_count" ||
               f.name == "num_primitive_operations") {
      f.value.int_value = 1;
    } else if (f.name == "allow_imprecise_accumulation") {
      f.value.int_value = 0;
    }
  }
  return out;
}

enum class Action : uint8_t { kPin, kRewrite, kStrip };

struct Change {
  ir::Operation *op;
  Action action;
};

/// Applies `fn(op)` to every op of `ops` and of their nested regions, in program order
/// (an op before the ops of its regions).
template <typename Op, typename Fn> void walk(std::vector<Op> &ops, Fn &&fn) {
  for (Op &op : ops) {
    fn(op);
    for (auto &region : op.regions)
      for (auto &block : region.blocks)
        walk(block.ops, fn);
  }
}

template <typename Fn> void walkConst(const std::vector<ir::Operation> &ops, Fn &&fn) {
  for (const ir::Operation &op : ops) {
    fn(op);
    for (const ir::Region &region : op.regions)
      for (const ir::Block &block : region.blocks)
        walkConst(block.ops, fn);
  }
}

Result<std::vector<Change>> collect(ir::Module &m, const NumericsOptions &options,
                                    NumericsReport &report) {
  std::vector<Change> changes;
  Status status = Status::ok();
  walk(m.ops, [&](ir::Operation &op) {
    if (!status.isOk())
      return;
    if (options.mode == NumericsMode::kAuto) {
      if (!options.target_has_tf32 && op.name == kDotGeneral && tf32Algorithm(op))
        changes.push_back({&op, Action::kStrip});
      return;
    }
    if (options.mode != NumericsMode::kF32)
      return;
    if (isOpaque(op.name)) {
      report.opaque_ops.push_back(op.name);
      return;
    }
    if (!isMatmulClass(op.name))
      return;
    if (op.name == kDotGeneral && tf32Algorithm(op)) {
      // Rewritten even when the operands are not f32: TF32 is never what f32 mode serves.
      changes.push_back({&op, Action::kRewrite});
      return;
    }
    if (op.attr("algorithm") || !hasF32Operands(op, m))
      return; // an explicit non-TF32 algorithm states intent; non-f32 ops are not TF32's
    std::string lowest;
    Result<Precision> p = readPrecision(op, &lowest);
    if (!p.isOk()) {
      status = p.status();
      return;
    }
    if (*p == Precision::kLower)
      changes.push_back({&op, Action::kPin});
  });
  if (!status.isOk())
    return status;
  return changes;
}

} // namespace

std::string_view numericsModeName(NumericsMode mode) {
  switch (mode) {
  case NumericsMode::kF32: return "f32";
  case NumericsMode::kAuto: return "auto";
  case NumericsMode::kTf32: return "tf32";
  }
  return "auto";
}

void NumericsReport::merge(const NumericsReport &other) {
  ops_pinned.dot_general += other.ops_pinned.dot_general;
  ops_pinned.convolution += other.ops_pinned.convolution;
  algorithms_rewritten += other.algorithms_rewritten;
  algorithms_stripped += other.algorithms_stripped;
  opaque_ops.insert(opaque_ops.end(), other.opaque_ops.begin(), other.opaque_ops.end());
}

std::string NumericsReport::outcome() const {
  std::ostringstream os;
  switch (mode) {
  case NumericsMode::kTf32: return "tf32";
  case NumericsMode::kAuto:
    if (algorithms_stripped > 0)
      os << "auto (stripped " << algorithms_stripped << " tf32 algorithm(s): target lacks TF32)";
    else
      os << (target_has_tf32 ? "auto (tf32 active)" : "auto (f32: target lacks TF32)");
    return os.str();
  case NumericsMode::kF32: break;
  }
  std::vector<std::string> parts;
  if (algorithms_rewritten > 0)
    parts.push_back("rewrote " + std::to_string(algorithms_rewritten) + " tf32 algorithm(s)");
  if (ops_pinned.dot_general > 0)
    parts.push_back("pinned " + std::to_string(ops_pinned.dot_general) + " dot_general");
  if (ops_pinned.convolution > 0)
    parts.push_back("pinned " + std::to_string(ops_pinned.convolution) + " convolution");
  if (!opaque_ops.empty()) {
    const std::set<std::string> names(opaque_ops.begin(), opaque_ops.end()); // sorted, unique
    parts.push_back(fmt::format("UNGOVERNED opaque ops: {}", fmt::join(names, ", ")));
  }
  if (parts.empty())
    return "f32 (nothing to pin)";
  os << "f32 (";
  for (size_t i = 0; i < parts.size(); ++i)
    os << (i ? ", " : "") << parts[i];
  os << ")";
  return os.str();
}

Result<NumericsReport> pinNumerics(ir::Module &module, const NumericsOptions &options) {
  NumericsReport report;
  report.mode = options.mode;
  report.target_has_tf32 = options.target_has_tf32;
  if (options.mode == NumericsMode::kTf32 && !options.target_has_tf32)
    return failedPrecondition() << module.file
                                << ": numerics tf32: the compile target has no TF32 (needs a "
                                   "CUDA GPU with compute capability 8.0 or higher)";
  RS_ASSIGN_OR_RETURN(std::vector<Change> changes, collect(module, options, report));
  for (const Change &c : changes) {
    switch (c.action) {
    case Action::kPin:
      setProperty(*c.op, "precision_config", [] {
        ir::Attribute a;
        a.kind = ir::AttrKind::kArray;
        a.elements = {precisionEnum("HIGHEST"), precisionEnum("HIGHEST")};
        return a;
      }());
      ++(c.op->name == kConvolution ? report.ops_pinned.convolution
                                    : report.ops_pinned.dot_general);
      break;
    case Action::kRewrite:
      setProperty(*c.op, "algorithm", f32Algorithm(*tf32Algorithm(*c.op)));
      ++report.algorithms_rewritten;
      break;
    case Action::kStrip:
      eraseProperty(*c.op, "algorithm");
      ++report.algorithms_stripped;
      break;
    }
  }
  if (options.mode == NumericsMode::kF32)
    RS_RETURN_IF_ERROR(verifyF32Pinned(module));
  // As after every pass, the rewritten module must still verify (ir/verify.h).
  RS_RETURN_IF_ERROR(ir::verifyModule(module));
  return report;
}

Status verifyF32Pinned(const ir::Module &module) {
  const ir::Operation *first = nullptr;
  std::string first_precision;
  int64_t unpinned = 0;
  Status status = Status::ok();
  walkConst(module.ops, [&](const ir::Operation &op) {
    if (!status.isOk() || !isMatmulClass(op.name))
      return;
    if (op.name == kDotGeneral && tf32Algorithm(op)) {
      if (!first) {
        first = &op;
        first_precision = "a tf32 algorithm";
      }
      ++unpinned;
      return;
    }
    if (op.attr("algorithm") || !hasF32Operands(op, module))
      return;
    std::string lowest;
    Result<Precision> p = readPrecision(op, &lowest);
    if (!p.isOk()) {
      status = p.status();
      return;
    }
    if (*p == Precision::kAllHighest)
      return;
    if (!first) {
      first = &op;
      first_precision = "precision " + lowest;
    }
    ++unpinned;
  });
  RS_RETURN_IF_ERROR(status);
  if (!first)
    return Status::ok();
  return failedPrecondition() << first->loc.toString() << ": '" << first->name
                              << "' op numerics f32: f32 operands left at " << first_precision
                              << " (" << unpinned
                              << " f32 matmul-class op(s) not pinned to HIGHEST in the module)";
}

} // namespace rs::passes
