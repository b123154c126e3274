//===- ir/lexer.cc - Tokens of MLIR/StableHLO text ------------------------===//
#include "ir/lexer.h"

#include <algorithm>
#include <cstring>

namespace rs::ir {
namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isHexDigit(char c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
// Characters of an MLIR suffix-id after '%', '#', '^': letters, digits, $ . _ -
bool isSuffixIdChar(char c) {
  return isLetter(c) || isDigit(c) || c == '$' || c == '.' || c == '_' || c == '-';
}
int hexValue(char c) {
  if (isDigit(c))
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return c - 'A' + 10;
}

} // namespace

bool isBareIdChar(char c) { return isLetter(c) || isDigit(c) || c == '_' || c == '$' || c == '.'; }
bool isBareIdStart(char c) { return isLetter(c) || c == '_'; }

void Lexer::skipSpaceAndComments() {
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
      const void *nl = std::memchr(src_.data() + pos_, '\n', src_.size() - pos_);
      pos_ = nl ? static_cast<size_t>(static_cast<const char *>(nl) - src_.data()) : src_.size();
    } else {
      return;
    }
  }
}

Token Lexer::lexNumber(size_t start) {
  // Hexadecimal integer (also used for float bit patterns).
  if (src_[pos_] == '0' && pos_ + 2 < src_.size() && src_[pos_ + 1] == 'x' &&
      isHexDigit(src_[pos_ + 2])) {
    pos_ += 2;
    while (pos_ < src_.size() && isHexDigit(src_[pos_]))
      ++pos_;
    return make(Tok::kInteger, start);
  }
  while (pos_ < src_.size() && isDigit(src_[pos_]))
    ++pos_;
  if (pos_ >= src_.size() || src_[pos_] != '.')
    return make(Tok::kInteger, start);
  ++pos_;
  while (pos_ < src_.size() && isDigit(src_[pos_]))
    ++pos_;
  if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
    size_t p = pos_ + 1;
    if (p < src_.size() && (src_[p] == '+' || src_[p] == '-'))
      ++p;
    if (p < src_.size() && isDigit(src_[p])) {
      while (p < src_.size() && isDigit(src_[p]))
        ++p;
      pos_ = p;
    }
  }
  return make(Tok::kFloat, start);
}

Token Lexer::lexString(size_t start) {
  ++pos_; // opening quote
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == '"') {
      ++pos_;
      return make(Tok::kString, start);
    }
    if (c == '\n')
      break;
    if (c == '\\') {
      if (pos_ + 1 >= src_.size())
        break;
      pos_ += 2;
      continue;
    }
    ++pos_;
  }
  return make(Tok::kError, start);
}

Token Lexer::lexPrefixed(Tok kind, size_t start) {
  ++pos_; // the prefix character
  if (kind == Tok::kSymbol && pos_ < src_.size() && src_[pos_] == '"') {
    Token s = lexString(pos_);
    if (s.kind == Tok::kError)
      return make(Tok::kError, start);
    return make(kind, start);
  }
  size_t body = pos_;
  if (kind == Tok::kSymbol || kind == Tok::kBangId) {
    while (pos_ < src_.size() && isBareIdChar(src_[pos_]))
      ++pos_;
  } else if (pos_ < src_.size() && isDigit(src_[pos_])) {
    while (pos_ < src_.size() && isDigit(src_[pos_]))
      ++pos_;
  } else {
    while (pos_ < src_.size() && isSuffixIdChar(src_[pos_]))
      ++pos_;
  }
  if (pos_ == body)
    return make(Tok::kError, start);
  return make(kind, start);
}

Token Lexer::lex() {
  skipSpaceAndComments();
  size_t start = pos_;
  if (pos_ >= src_.size())
    return Token{Tok::kEof, std::string_view(), src_.size()};
  char c = src_[pos_];
  auto one = [&](Tok kind) {
    ++pos_;
    return make(kind, start);
  };
  switch (c) {
  case '(': return one(Tok::kLParen);
  case ')': return one(Tok::kRParen);
  case '[': return one(Tok::kLSquare);
  case ']': return one(Tok::kRSquare);
  case '<': return one(Tok::kLess);
  case '>': return one(Tok::kGreater);
  case ',': return one(Tok::kComma);
  case ':': return one(Tok::kColon);
  case '=': return one(Tok::kEqual);
  case '+': return one(Tok::kPlus);
  case '?': return one(Tok::kQuestion);
  case '*': return one(Tok::kStar);
  case '|': return one(Tok::kVBar);
  case '}': return one(Tok::kRBrace);
  case '{':
    if (src_.substr(pos_, 3) == "{-#") {
      pos_ += 3;
      return make(Tok::kMetaOpen, start);
    }
    return one(Tok::kLBrace);
  case '-':
    if (pos_ + 1 < src_.size() && src_[pos_ + 1] == '>') {
      pos_ += 2;
      return make(Tok::kArrow, start);
    }
    return one(Tok::kMinus);
  case '"': return lexString(start);
  case '%': return lexPrefixed(Tok::kValueId, start);
  case '@': return lexPrefixed(Tok::kSymbol, start);
  case '^': return lexPrefixed(Tok::kCaretId, start);
  case '!': return lexPrefixed(Tok::kBangId, start);
  case '#':
    if (src_.substr(pos_, 3) == "#-}") {
      pos_ += 3;
      return make(Tok::kMetaClose, start);
    }
    return lexPrefixed(Tok::kHashId, start);
  default: break;
  }
  if (isDigit(c))
    return lexNumber(start);
  if (isBareIdStart(c)) {
    while (pos_ < src_.size() && isBareIdChar(src_[pos_]))
      ++pos_;
    return make(Tok::kBareId, start);
  }
  return one(Tok::kError);
}

LineTable::LineTable(std::string_view src, int first_line) : first_line_(first_line) {
  starts_.push_back(0);
  const char *p = src.data();
  const char *end = src.data() + src.size();
  while (p < end) {
    const void *nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (!nl)
      break;
    p = static_cast<const char *>(nl) + 1;
    starts_.push_back(static_cast<size_t>(p - src.data()));
  }
}

int LineTable::line(size_t pos) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), pos);
  return first_line_ + static_cast<int>(it - starts_.begin()) - 1;
}

int LineTable::column(size_t pos) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), pos);
  return static_cast<int>(pos - *(it - 1)) + 1;
}

bool decodeStringLiteral(std::string_view text, std::string *out) {
  out->clear();
  if (text.size() < 2 || text.front() != '"' || text.back() != '"')
    return false;
  text = text.substr(1, text.size() - 2);
  out->reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (i + 1 >= text.size())
      return false;
    char e = text[++i];
    switch (e) {
    case '"': out->push_back('"'); break;
    case '\\': out->push_back('\\'); break;
    case 'n': out->push_back('\n'); break;
    case 't': out->push_back('\t'); break;
    default:
      if (i + 1 < text.size() && isHexDigit(e) && isHexDigit(text[i + 1])) {
        out->push_back(static_cast<char>(hexValue(e) * 16 + hexValue(text[i + 1])));
        ++i;
      } else {
        return false;
      }
    }
  }
  return true;
}

std::string quoteString(std::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20 || u >= 0x7F) {
      out.push_back('\\');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

} // namespace rs::ir
