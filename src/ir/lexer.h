//===- ir/lexer.h - Tokens of MLIR/StableHLO text -------------------------===//
//
// A lexer over a string_view (no copies, no regex) for the MLIR textual syntax that
// StableHLO exporters write: bare identifiers (`stablehlo.add`, `tensor`, `x`), value ids
// (`%0`, `%arg0`), symbols (`@main`, `@"quoted"`), attribute/type aliases and dialect
// prefixes (`#stablehlo.dot`, `#loc3`, `!stablehlo.token`), block labels (`^bb0`),
// integer (decimal or 0x hex), float and string literals, punctuation, and the
// `{-#` / `#-}` brackets of the dialect-resources trailer. `//` comments are skipped.
//
// Token texts point into the source, which must outlive the lexer. The parser may
// rewind the lexer to any byte offset (dimension lists such as `2x3xf32` are scanned
// by characters, not tokens). Positions map to 1-based line:col through LineTable.
//
// Errors: an unexpected character or an unterminated string becomes a kError token;
// the parser turns it into a diagnostic. Thread safety: one lexer per thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rs::ir {

enum class Tok : uint8_t {
  kEof,
  kError,
  kBareId,   // stablehlo.add, tensor, f32, x
  kValueId,  // %0, %arg0 (text includes '%')
  kSymbol,   // @main, @"a b" (text includes '@')
  kHashId,   // #stablehlo, #loc3, #2 (text includes '#')
  kBangId,   // !stablehlo.token (text includes '!')
  kCaretId,  // ^bb0 (text includes '^')
  kInteger,  // 12, 0x7FC00000
  kFloat,    // 1.5, 1.000000e+00
  kString,   // "text" (text includes the quotes, escapes undecoded)
  kLParen,   // (
  kRParen,   // )
  kLBrace,   // {
  kRBrace,   // }
  kLSquare,  // [
  kRSquare,  // ]
  kLess,     // <
  kGreater,  // >
  kComma,    // ,
  kColon,    // :
  kEqual,    // =
  kArrow,    // ->
  kMinus,    // -
  kPlus,     // +
  kQuestion, // ?
  kStar,     // *
  kVBar,     // |
  kMetaOpen, // {-#
  kMetaClose // #-}
};

struct Token {
  Tok kind = Tok::kEof;
  std::string_view text;
  size_t pos = 0; // byte offset of the first character
};

class Lexer {
public:
  explicit Lexer(std::string_view src) : src_(src) {}

  /// The next token from the current position (kEof at the end, forever).
  Token lex();
  /// Continues lexing at byte offset `pos` (clamped to the end).
  void resetTo(size_t pos) { pos_ = pos < src_.size() ? pos : src_.size(); }
  size_t position() const { return pos_; }
  std::string_view source() const { return src_; }

private:
  Token make(Tok kind, size_t start) const {
    return Token{kind, src_.substr(start, pos_ - start), start};
  }
  void skipSpaceAndComments();
  Token lexNumber(size_t start);
  Token lexString(size_t start);
  Token lexPrefixed(Tok kind, size_t start);

  std::string_view src_;
  size_t pos_ = 0;
};

/// MLIR bare-id characters: letters, digits, '_', '$', '.'.
bool isBareIdChar(char c);
bool isBareIdStart(char c);

/// Maps byte offsets to 1-based line and column numbers; `first_line` is the line number
/// of the first byte (for chunks of a `// -----` split file).
class LineTable {
public:
  LineTable(std::string_view src, int first_line);
  int line(size_t pos) const;
  int column(size_t pos) const;

private:
  std::vector<size_t> starts_; // byte offset of each line start
  int first_line_;
};

/// Decodes an MLIR string literal token (with quotes): \" \\ \n \t and \XX hex escapes.
/// Returns false on a malformed escape.
bool decodeStringLiteral(std::string_view token_text, std::string *out);

/// Quotes `s` as an MLIR string literal (escaping '"', '\\' and non-printable bytes).
std::string quoteString(std::string_view s);

} // namespace rs::ir
