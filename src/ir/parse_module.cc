//===- ir/parse_module.cc - StableHLO parser: module level and public API -===//
//
// `module @name attributes {...} { ... }`, `"builtin.module"() ... ({ ... })`, or bare
// top-level ops (an implicit module); `#alias = ...` / `!alias = ...` definitions and the
// `{-# dialect_resources #-}` trailer. Also parseModule, parseModuleFile and
// splitInputFile (parser.h).
//
//===----------------------------------------------------------------------===//
#include "ir/parser.h"

#include "ir/bytecode.h"
#include "ir/bytecode_impl.h"
#include "ir/parser_impl.h"
#include "support/file.h"

#include <algorithm>

namespace rs::ir {
namespace detail {

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Status Parser::parseModuleBody(std::vector<Operation> *ops) {
  RS_RETURN_IF_ERROR(expect(Tok::kLBrace, "'{'"));
  if (is(Tok::kCaretId)) { // `^bb0:` of the module's only block (printed when empty)
    advance();
    RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  }
  pushScope(true);
  Status st = Status::ok();
  while (!is(Tok::kRBrace)) {
    if (is(Tok::kEof)) {
      st = errorExpected("'}'");
      break;
    }
    st = parseOperation(ops);
    if (!st.isOk())
      break;
  }
  popScope();
  RS_RETURN_IF_ERROR(st);
  advance();
  return skipOptionalLoc();
}

Status Parser::parsePrettyModule() {
  advance(); // 'module'
  if (is(Tok::kSymbol)) {
    Attribute sym;
    RS_RETURN_IF_ERROR(parseAttribute(&sym));
    module_.name = sym.str;
  }
  if (consumeKeyword("attributes"))
    RS_RETURN_IF_ERROR(parseAttrDict(&module_.attributes));
  RS_RETURN_IF_ERROR(parseModuleBody(&module_.ops));
  std::stable_sort(
      module_.attributes.begin(), module_.attributes.end(),
      [](const NamedAttribute &a, const NamedAttribute &b) { return a.name < b.name; });
  return Status::ok();
}

Status Parser::parseGenericModule(size_t pos) {
  advance(); // "builtin.module"
  OpState st;
  st.pos = pos;
  st.op.name = "builtin.module";
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  std::vector<NamedAttribute> all;
  if (consumeIf(Tok::kLess)) {
    RS_RETURN_IF_ERROR(parseAttrDict(&all));
    RS_RETURN_IF_ERROR(expect(Tok::kGreater, "'>'"));
  }
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  if (!is(Tok::kLBrace))
    return errorExpected("'{'");
  // The module's single region holds one block of ops without arguments.
  RS_RETURN_IF_ERROR(parseModuleBody(&module_.ops));
  RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  if (is(Tok::kLBrace))
    RS_RETURN_IF_ERROR(parseAttrDict(&all));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  Type fn;
  RS_RETURN_IF_ERROR(parseFunctionType(&fn));
  if (!fn.elements.empty() || !fn.results.empty())
    return errorAt(pos, "'builtin.module' must have type () -> ()");
  RS_RETURN_IF_ERROR(skipOptionalLoc());
  for (NamedAttribute &a : all) {
    if (a.name == "sym_name" && a.value.kind == AttrKind::kString)
      module_.name = a.value.str;
    else
      module_.attributes.push_back(std::move(a));
  }
  std::stable_sort(
      module_.attributes.begin(), module_.attributes.end(),
      [](const NamedAttribute &a, const NamedAttribute &b) { return a.name < b.name; });
  return Status::ok();
}

namespace {

/// The offset of the `{-#` that opens the trailing resource block, or npos: the last
/// `{-#` that is neither inside a string literal nor in a `//` comment (strings and
/// comments end at the line's end, so only its own line needs scanning).
size_t findResourceBlock(std::string_view src) {
  size_t at = src.rfind("{-#");
  while (at != std::string_view::npos) {
    size_t line = src.rfind('\n', at);
    line = line == std::string_view::npos ? 0 : line + 1;
    bool in_string = false, in_comment = false;
    for (size_t i = line; i < at && !in_comment; ++i) {
      if (in_string && src[i] == '\\')
        ++i; // an escaped character
      else if (src[i] == '"')
        in_string = !in_string;
      else if (!in_string && src[i] == '/' && i + 1 < at && src[i + 1] == '/')
        in_comment = true;
    }
    if (!in_string && !in_comment)
      return at;
    at = at == 0 ? std::string_view::npos : src.rfind("{-#", at - 1);
  }
  return at;
}

} // namespace

Status Parser::parseTopLevel() {
  while (!is(Tok::kEof)) {
    if ((is(Tok::kHashId) || is(Tok::kBangId)) && peek().kind == Tok::kEqual) {
      RS_RETURN_IF_ERROR(parseTopLevelAlias());
      continue;
    }
    if (is(Tok::kMetaOpen)) {
      while (!is(Tok::kMetaClose) && !is(Tok::kEof))
        advance();
      RS_RETURN_IF_ERROR(expect(Tok::kMetaClose, "'#-}'"));
      continue;
    }
    bool is_module = isKeyword("module") || (is(Tok::kString) && tok_.text == "\"builtin.module\"");
    if (is_module) {
      if (saw_module_ || saw_loose_ops_)
        return errorAt(tok_.pos, "expected one module per input");
      saw_module_ = true;
      if (isKeyword("module"))
        RS_RETURN_IF_ERROR(parsePrettyModule());
      else
        RS_RETURN_IF_ERROR(parseGenericModule(tok_.pos));
      continue;
    }
    if (saw_module_)
      return errorAt(tok_.pos, "expected one module per input");
    saw_loose_ops_ = true;
    pushScope(true);
    Status st = parseOperation(&module_.ops);
    popScope();
    RS_RETURN_IF_ERROR(st);
  }
  return Status::ok();
}

Result<Module> Parser::run() {
  size_t meta = findResourceBlock(src_);
  if (meta != std::string_view::npos) {
    lex_.resetTo(meta);
    advance();
    RS_RETURN_IF_ERROR(parseResources());
  }
  lex_.resetTo(0);
  advance();
  RS_RETURN_IF_ERROR(parseTopLevel());
  return std::move(module_);
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

Result<Module> parseModule(std::string_view text, std::string_view file, int first_line) {
  detail::Parser parser(text, file, first_line);
  return parser.run();
}

Result<Module> parseModuleFile(const std::string &path) {
  RS_ASSIGN_OR_RETURN(std::string text, readWholeFile(path));
  if (isBytecode(text))
    return readPortableArtifact(text, path);
  return parseModule(text, path);
}

namespace bc {

Result<Attribute> parseAttributeText(std::string_view text, std::string_view file) {
  detail::Parser p(text, file, 1);
  p.advance();
  Attribute a;
  RS_RETURN_IF_ERROR(p.parseAttribute(&a));
  if (!p.is(Tok::kEof))
    return p.errorExpected("the end of the attribute");
  return a;
}

Result<Type> parseTypeText(std::string_view text, std::string_view file) {
  detail::Parser p(text, file, 1);
  p.advance();
  Type t;
  RS_RETURN_IF_ERROR(p.parseType(&t));
  if (!p.is(Tok::kEof))
    return p.errorExpected("the end of the type");
  return t;
}

} // namespace bc

std::vector<std::pair<int, std::string_view>> splitInputFile(std::string_view text) {
  std::vector<std::pair<int, std::string_view>> chunks;
  size_t chunk_start = 0;
  int chunk_line = 1;
  int line = 1;
  size_t p = 0;
  while (p < text.size()) {
    size_t nl = text.find('\n', p);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view l = text.substr(p, end - p);
    size_t first = l.find_first_not_of(" \t");
    if (first != std::string_view::npos && l.substr(first).rfind("// -----", 0) == 0) {
      chunks.emplace_back(chunk_line, text.substr(chunk_start, p - chunk_start));
      chunk_start = nl == std::string_view::npos ? text.size() : nl + 1;
      chunk_line = line + 1;
    }
    if (nl == std::string_view::npos)
      break;
    p = nl + 1;
    ++line;
  }
  chunks.emplace_back(chunk_line, text.substr(chunk_start));
  return chunks;
}

} // namespace rs::ir
