//===- ir/parser_impl.h - Private declarations of the StableHLO parser ----===//
//
// The recursive-descent parser behind parser.h. One Parser parses one module text; its
// methods are spread over files of one purpose each:
//   parser.cc            tokens, diagnostics, value scopes
//   parse_operations.cc  operation statements, the generic form, regions and blocks
//   parse_types.cc       types and the `: ...` type section of pretty ops
//   parse_attributes.cc  attributes, dictionaries, #stablehlo enums and structs
//   parse_dense.cc       dense<...> literals
//   parse_resources.cc   dense_resource<...> and the dialect_resources trailer
//   pretty_ops.cc        table-driven pretty forms (operands, `key = value` items)
//   pretty_ops_regions.cc  pretty forms with regions (func, while, reduce, scan)
//   pretty_ops_special.cc  other pretty forms with their own syntax (convolution, ...)
//   parse_module.cc      the module, top-level aliases, public API
//   normalise.cc         one spelling for every op (properties, defaults)
//
// Every method returns a Status; the first error stops the parse. Nesting depth is
// bounded (kMaxDepth) so hostile input cannot overflow the stack.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"
#include "ir/lexer.h"

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rs::ir::detail {

/// Largest nesting of regions, types and attributes accepted.
constexpr int kMaxDepth = 256;
/// Largest dense constant (bytes) the parser materialises.
constexpr int64_t kMaxDenseBytes = int64_t{1} << 32;

/// A block argument before it gets a ValueId: `%name: type`.
struct ArgDecl {
  std::string name;
  Type type;
  size_t pos = 0;
};

/// The `: ...` part of a pretty op: either a function type `(a, b) -> r` / `a -> (r, s)`
/// (functional = true) or a plain list of types.
struct TypeSection {
  bool functional = false;
  std::vector<Type> inputs;  // functional: operand types; else: the list
  std::vector<Type> results; // functional only
};

/// The op being parsed: what a pretty-form handler fills in.
struct OpState {
  Operation op;
  size_t pos = 0;      // start of the statement
  int num_results = 0; // results bound on the left of '='
  std::vector<Type> result_types;
};

/// The kinds of `key = value` items of the pretty forms parseSimpleOp reads (the table
/// itemsFor in pretty_ops.cc).
enum class ItemKind : uint8_t {
  kI64Array,  // [1, 2]          -> array<i64: 1, 2>
  kI64,       // 0               -> 0 : i64
  kEnum,      // THREE_FRY       -> #stablehlo<`extra` THREE_FRY>
  kPrecision, // [DEFAULT, HIGH] -> [#stablehlo<precision DEFAULT>, ...]
  kDimsPair,  // [0] x [1]       -> lhs_`prop` / rhs_`prop` of #stablehlo.dot
  kAlgorithm, // <...>          -> #stablehlo.dot_algorithm<...>
  kFormat,    // e5m10           -> exponent_bits = 5 : i32, mantissa_bits = 10 : i32
  kBool,      // true
  kString,    // "ab,bc->ac"
  kAttr,      // any attribute, property named like the key
};

struct ItemSpec {
  std::string_view key;
  std::string_view prop;
  ItemKind kind;
  std::string_view extra = {};
};

/// A decimal or 0x-hexadecimal integer literal's magnitude; false when it does not fit.
bool parseUnsigned(std::string_view text, uint64_t *out);
/// The bytes of a `0x...` hex blob (the text of a `dense<"0x...">` literal or of a
/// dialect resource); false, with `out` unspecified, unless it is "0x" followed by an even
/// number of hex digits (parse_dense.cc).
bool decodeHexBlob(std::string_view hex, std::string *out);

class Parser {
public:
  Parser(std::string_view text, std::string_view file, int first_line);
  Result<Module> run();

  //===--- tokens and diagnostics (parser.cc) ---------------------------===//
  const Token &tok() const { return tok_; }
  void advance() {
    prev_end_ = tok_.pos + tok_.text.size();
    tok_ = lex_.lex();
  }
  /// Byte offset just past the last consumed token (ends verbatim text slices).
  size_t prevEnd() const { return prev_end_; }
  bool is(Tok k) const { return tok_.kind == k; }
  bool isKeyword(std::string_view kw) const { return tok_.kind == Tok::kBareId && tok_.text == kw; }
  bool consumeIf(Tok k);
  bool consumeKeyword(std::string_view kw);
  Status expect(Tok k, std::string_view what);
  Status expectKeyword(std::string_view kw);
  /// "<file>:<line>:<col>: error: expected <what>, got '<token>'" at the current token.
  Status errorExpected(std::string_view what) const;
  /// "<file>:<line>:<col>: error: <msg>" at byte offset `pos`.
  Status errorAt(size_t pos, std::string_view msg) const;
  Token peek();
  /// True when the character right after the current token is `c` (no space between).
  bool nextCharIs(char c) const;
  Location locationAt(size_t pos) const;
  std::string_view source() const { return src_; }

  /// Depth guard for recursion: returns an error past kMaxDepth.
  Status enter();
  void leave() { --depth_; }
  Status skipOptionalLoc();
  /// Skips a balanced (...), [...], {...} or <...> group starting at the current token
  /// and returns its source text.
  Status skipBalanced(std::string_view *text);

  //===--- values and scopes (parser.cc) --------------------------------===//
  ValueId newValue(const Type &type);
  Status defineName(std::string_view name, size_t pos, ValueId first, int count);
  /// `%x` or `%x#n` at the current token.
  Status parseValueUse(ValueId *out);
  /// A comma-separated list of value uses (possibly empty when `allow_empty`).
  Status parseValueUseList(std::vector<ValueId> *out);
  void pushScope(bool isolated);
  void popScope();
  const Type &valueType(ValueId v) const { return module_.value_types[static_cast<size_t>(v)]; }

  //===--- operations and regions (parse_operations.cc) -----------------===//
  Status parseOperation(std::vector<Operation> *out);
  /// The generic form after the op name string.
  Status parseGenericBody(OpState &st);
  /// `{ ... }` region. When `entry` is given the entry block has those arguments
  /// (pretty forms); otherwise a `^bb0(...)` label may declare them.
  Status parseRegion(Region *out, const std::vector<ArgDecl> *entry, bool isolated);
  Status parseBlockArgs(std::vector<ArgDecl> *out); // `(%a: T, ...)`

  //===--- types (parse_types.cc) ---------------------------------------===//
  bool atTypeStart() const;
  Status parseType(Type *out);
  Status parseTypeList(std::vector<Type> *out);    // `a, b, c` (at least one)
  Status parseResultTypes(std::vector<Type> *out); // after '->': `(a, b)`, `()` or `a`
  /// `(a, b) -> r`, `(a) -> (r, s)` or `a -> r` (chlo). The current token starts it.
  Status parseFunctionType(Type *out);
  Status parseTypeSection(TypeSection *out); // after ':'
  /// Sets st.result_types from a type section (see pretty_ops.cc for the rules).
  Status assignResultTypes(OpState &st, const TypeSection &ts);

  //===--- attributes (parse_attributes.cc, parse_dense.cc, parse_resources.cc) ===//
  Status parseAttribute(Attribute *out);
  /// parseAttribute, when the current token is a `k` (a string, a symbol); else
  /// errorExpected(what), with nothing consumed.
  Status expectAttribute(Tok k, std::string_view what, Attribute *out);
  // The kinds of parseAttribute; `start` is the attribute's first character.
  Status parseKeywordAttr(size_t start, Attribute *out); // true, unit, dense<, array<, a type
  Status parseDenseArray(size_t start, Attribute *out);  // `array<T: a, b>` after `array`
  Status parseNumberAttr(size_t start, Attribute *out);  // `-1.5 : f32`, `3`, `1 : index`
  /// As parseAttribute, but a number takes no `: type` suffix (i64 / f64), for
  /// `key = value` items that a type section follows (`tolerance = 0.1 : tensor<f64>`).
  Status parseItemValue(Attribute *out);
  Status parseAttrDict(std::vector<NamedAttribute> *out); // `{...}` at current token
  Status parseArrayAttr(Attribute *out);                  // `[a, b]`
  Status parseI64List(std::vector<int64_t> *out);         // `[1, -2]`
  Status parseBoolList(std::vector<int64_t> *out);        // `[true, 0]` -> 0/1
  Status parseSignedInteger(int64_t *out);                // `-3`, `0x10`
  Status parseHashAttribute(Attribute *out);              // #dialect<...>, #alias
  Status parseStructFields(std::string_view struct_name, Attribute *out); // after '<'
  Status parseConvCompact(Attribute *out);           // `[b, 0, f]x[...]->[...]`
  Status parseDense(Attribute *out, Type *type_out); // `dense<...> : type`
  Status parseDenseResource(Attribute *out, Type *type_out);
  /// A float literal token (decimal, or 0x bit pattern of `dt`'s width), negated if `neg`.
  Status parseFloatLiteral(const Token &lit, bool neg, DType dt, double *out);
  Status parseResources();     // `{-# ... #-}`
  Status parseTopLevelAlias(); // `#a = ...`, `!t = ...`

  //===--- pretty forms (pretty_ops*.cc) --------------------------------===//
  Status parsePrettyOp(std::string_view name, OpState &st);
  Status parseFuncOp(OpState &st);
  Status parseWhileOp(OpState &st);
  Status parseReduceOp(OpState &st);
  Status parseConvolutionOp(OpState &st);
  Status parseSliceOp(OpState &st);
  Status parseCompareOp(OpState &st);
  Status parseCustomCallOp(OpState &st);
  Status parseCompositeOp(OpState &st);
  Status parseConstantOp(OpState &st);
  Status parseTopKOp(OpState &st);
  Status parseCallOp(OpState &st);
  Status parseSdyMeshOp(OpState &st);
  Status parseShardingConstraintOp(OpState &st);
  Status parseGetTupleElementOp(OpState &st);
  Status parseCheckConstOp(OpState &st);
  Status parseScanOp(OpState &st);
  /// Operands, `key = value` items, attr-dict, `: types` (the common pretty shape).
  Status parseSimpleOp(OpState &st);
  /// The value of one `key = value` item of `item`'s kind, stored as its property (a
  /// dims pair into `dot_fields`, assembled by the caller).
  Status parseItem(const ItemSpec &item, OpState &st, std::vector<NamedAttribute> *dot_fields);
  /// reduce_precision's `format = e5m10`: exponent_bits and mantissa_bits.
  Status parseFormatItem(OpState &st);
  Status parseTrailingAttrDict(OpState &st); // optional `{...}` or `attributes {...}`
  /// `, key = value` items, as many as there are, each value (parseItemValue) stored as the
  /// property named by its key (chlo.top_k's `k = 3`, check.expect_*_const's `tolerance`).
  Status parseCommaItems(OpState &st);
  /// One value use, appended to the op's operands.
  Status parseOperand(OpState &st);
  /// A balanced `<...>` kept as an opaque attribute spelled `prefix<...>` ("#sdy.mesh").
  Status parseOpaqueAngle(std::string_view prefix, Attribute *out);
  /// The tail of most pretty forms: the trailing attr-dict, `:` and the type section,
  /// whose results become the op's result types.
  Status finishOp(OpState &st);
  /// `@symbol(%a, %b)`: the symbol into `symbol` (`what` names it when missing) and the
  /// operands into the op (func.call's and custom_call's shape).
  Status parseSymbolCall(OpState &st, std::string_view what, Attribute *symbol);

  Module module_;

private:
  struct NameDef {
    ValueId first = 0;
    int count = 1;
  };
  struct ScopeMark {
    size_t log_size;
    bool isolated;
  };
  Status parseTopLevel();
  Status parsePrettyModule();
  Status parseGenericModule(size_t pos);
  Status parseModuleBody(std::vector<Operation> *ops); // until '}'
  Status parseBlock(Block *b, bool entry, const std::vector<ArgDecl> *entry_args, bool *has_label);

  std::string_view src_;
  std::string file_;
  Lexer lex_;
  LineTable lines_;
  Token tok_;
  size_t prev_end_ = 0;
  int depth_ = 0;
  bool saw_module_ = false;
  bool saw_loose_ops_ = false;

  std::unordered_map<std::string, NameDef> names_;
  std::vector<std::string> scope_log_;
  std::vector<ScopeMark> scope_marks_;
  std::vector<std::unordered_map<std::string, NameDef>> isolated_saved_;

public:
  std::map<std::string, Attribute, std::less<>> attr_aliases_;
  std::map<std::string, Type, std::less<>> type_aliases_;
  std::map<std::string, std::string, std::less<>> resources_; // name -> raw bytes
};

//===--- attribute builders shared by the parser files ------------------===//
Attribute makeString(std::string s);
Attribute makeInt(int64_t v, DType t = DType::kI64);                   // `v : t`
Attribute makeI64Array(std::vector<int64_t> v, DType t = DType::kI64); // array<t: ...>
Attribute makeEnum(std::string_view name, std::string_view value);     // #stablehlo<name value>
Attribute makeDict(std::vector<NamedAttribute> fields);                // sorted by name

/// Moves inherent attributes (no '.' in the name) to properties and dialect-prefixed
/// ones to attributes, sorts both by name, fills documented defaults, checks func.func
/// (normalise.cc; see ir.h).
Status normaliseAttributes(Operation &op, const Module &m);

} // namespace rs::ir::detail
