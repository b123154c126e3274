//===- ir/ir.h - StableHLO IR: types, attributes, operations ---------------===//
//
// The in-memory form of a parsed StableHLO module, shaped like MLIR's generic form:
// every op is an Operation with a full name ("stablehlo.add", "func.func",
// "func.return", "func.call", "chlo.top_k", "sdy.mesh"), operands and results as
// ValueIds, properties and discardable attributes by name, and nested regions.
//
// The parser normalises every pretty form to this generic shape, so consumers (the
// executor, passes, the printer) see one spelling: e.g. `stablehlo.broadcast_in_dim %x,
// dims = [3]` becomes property `broadcast_dimensions = array<i64: 3>`; `call @f(...)`
// becomes "func.call" with property `callee = @f`; a function body's `return` becomes
// "func.return"; `reduce(... init: ...) applies stablehlo.add across dimensions = [1]`
// becomes "stablehlo.reduce" with `dimensions = array<i64: 1>` and a one-block region
// holding stablehlo.add and stablehlo.return. Property names and attribute kinds are those
// of the generic form that MLIR prints for the same op (see reference/stablehlo.md).
//
// Properties vs attributes (normalised by the parser, whatever the spelling): an
// attribute whose name has no '.' is inherent and goes to Operation::properties; a
// dialect-prefixed one (mhlo.sharding, sdy.sharding, jax.result_info) goes to
// Operation::attributes. Both lists are sorted by name. So `<{k = 1}>`, `{k = 1}` and
// a pretty form's trailing `{k = 1}` give the same Operation. Defaults that pretty
// printers elide are filled in (chlo.top_k is_stable = true); func.func arg_attrs /
// res_attrs holding only empty dictionaries are dropped. #stablehlo.dot/gather/scatter
// structs keep their fields in MLIR's order without empty lists.
//
// Values: one table per module (Module::value_types); a ValueId indexes it. Ids are given
// in definition order while parsing, so print-then-parse gives the same ids.
// Functions are "func.func" operations in Module::ops, with properties sym_name (String),
// function_type (Type, kind kFunction), optional sym_visibility (String), arg_attrs /
// res_attrs (Array of Dictionary); their arguments are the entry block's arguments.
//
// Shapes are row-major; a scalar is rank 0. Thread safety: immutable after parsing, so
// concurrent readers are fine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/dtype.h"
#include "support/status.h"
#include "support/tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rs::ir {

/// Where something came from: file:line:col (1-based) in a text module, or the byte
/// offset of an op in a portable artifact (with the source position its debug location
/// names, if any). `line == 0` and `byte_offset < 0` means unknown.
struct Location {
  std::string file;
  int line = 0;
  int col = 0;
  int64_t byte_offset = -1;
  std::string source; ///< "model.py:12:3" from a portable artifact's loc(...)
  /// "model.b8.mlir:42:10", "model.b8.mlir: byte 518 (model.py:12:3)" or "<unknown>".
  std::string toString() const;
};

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

enum class TypeKind : uint8_t {
  kTensor,   // tensor<2x3xf32>, tensor<f32>
  kToken,    // !stablehlo.token
  kTuple,    // tuple<...>
  kFunction, // (inputs) -> results, only as the value of a Type attribute
  kOther,    // anything else (quantized, dynamic), kept verbatim in `text`
};

struct Type {
  TypeKind kind = TypeKind::kTensor;
  DType element = DType::kInvalid; // kTensor; also the scalar type of a bare `f32` type
  Shape shape;                     // kTensor, row-major; -1 marks a dynamic dim ('?')
  std::vector<Type> elements;      // kTuple: members; kFunction: inputs
  std::vector<Type> results;       // kFunction: results
  std::string text;                // kOther: verbatim spelling; also extra encoding text
  bool is_scalar_element = false;  // a bare element type such as `f32` (not tensor<f32>)

  static Type tensor(DType element, Shape shape);
  bool isTensor() const { return kind == TypeKind::kTensor && !is_scalar_element; }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const { return elementCount(shape); }
  bool operator==(const Type &o) const;
  bool operator!=(const Type &o) const { return !(*this == o); }
  /// MLIR spelling: "tensor<1x8xf32>", "f32", "(tensor<f32>) -> tensor<f32>".
  std::string toString() const;
};

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

enum class AttrKind : uint8_t {
  kUnit,          // present without a value
  kBool,          // true / false                          -> int_value 0/1
  kInteger,       // 1 : i64                               -> int_value, scalar_type
  kFloat,         // 1.0 : f32                             -> float_value, scalar_type
  kString,        // "text"                                -> str
  kType,          // a type (function_type = ...)          -> type
  kSymbolRef,     // @name                                 -> str (without '@')
  kArray,         // [a, b]                                -> elements
  kDenseArray,    // array<i64: 1, 2> / array<i1: true>    -> scalar_type, ints or floats
  kDenseElements, // dense<...> : tensor<...>              -> tensor (fully expanded)
  kDictionary,    // {a = 1, b}                            -> fields
  kEnum,          // #stablehlo<precision DEFAULT>         -> dialect, name, str (value)
  kStruct,        // #stablehlo.dot<...>, #stablehlo.conv<...> -> dialect, name, fields
  kOpaque,        // anything else (#sdy.sharding<...>, loc(...)) -> str, verbatim text
};

struct NamedAttribute;

/// One attribute value. A flat struct: which members are meaningful depends on `kind`.
/// Struct fields that are integer lists (dot/gather/scatter/conv dimension numbers) are
/// kDenseArray of i64; single integers (index_vector_dim, input_batch_dimension) are
/// kInteger of i64. #stablehlo.conv in the compact `[b, 0, 1, f]x[...]->[...]` form is
/// expanded to the named fields of its long form (input_batch_dimension, ...).
struct Attribute {
  AttrKind kind = AttrKind::kUnit;
  int64_t int_value = 0;
  double float_value = 0.0;
  DType scalar_type = DType::kInvalid;
  std::string str;
  std::string dialect; // kEnum/kStruct: "stablehlo", "chlo"
  std::string name;    // kEnum: "precision", "comparison_direction"; kStruct: "dot", "conv"
  std::shared_ptr<Type> type;
  std::vector<Attribute> elements;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  Tensor tensor;                      // kDenseElements
  std::shared_ptr<Type> tensor_type;  // kDenseElements: the declared type
  std::vector<NamedAttribute> fields; // kDictionary / kStruct

  /// A field of a kStruct/kDictionary, or nullptr.
  const Attribute *field(std::string_view field_name) const;
  bool operator==(const Attribute &o) const;
  bool operator!=(const Attribute &o) const { return !(*this == o); }
};

struct NamedAttribute {
  std::string name;
  Attribute value;
  bool operator==(const NamedAttribute &o) const { return name == o.name && value == o.value; }
};

//===----------------------------------------------------------------------===//
// Operations, blocks, regions, module
//===----------------------------------------------------------------------===//

using ValueId = int32_t;
struct Region;

struct Operation {
  std::string name; // full name, e.g. "stablehlo.add"
  std::vector<ValueId> operands;
  std::vector<ValueId> results;
  std::vector<NamedAttribute> properties; // inherent attributes, `<{...}>` in generic form
  std::vector<NamedAttribute> attributes; // discardable attributes, `{...}`
  std::vector<Region> regions;
  Location loc;

  /// The property or attribute named `attr_name` (properties first), or nullptr.
  const Attribute *attr(std::string_view attr_name) const;
  bool operator==(const Operation &o) const; // ignores loc
};

struct Block {
  std::vector<ValueId> arguments;
  std::vector<Operation> ops;
  bool operator==(const Block &o) const { return arguments == o.arguments && ops == o.ops; }
};

struct Region {
  std::vector<Block> blocks;
  bool operator==(const Region &o) const { return blocks == o.blocks; }
};

struct Module {
  std::string name;                       // module @name (may be empty)
  std::vector<NamedAttribute> attributes; // module attributes (mhlo.num_partitions, ...)
  std::vector<Operation> ops;             // top-level ops: func.func, sdy.mesh, ...
  std::vector<Type> value_types;          // indexed by ValueId
  std::string file;                       // source file name, for diagnostics

  const Type &typeOf(ValueId v) const { return value_types[static_cast<size_t>(v)]; }
  /// The func.func named `func_name`, or nullptr.
  const Operation *lookupFunction(std::string_view func_name) const;
  bool operator==(const Module &o) const; // structural; ignores locations and file
};

/// Helpers for func.func operations.
std::string_view functionName(const Operation &func);
/// The function_type of a func.func (kFunction type); asserts it is present.
const Type &functionType(const Operation &func);

} // namespace rs::ir
