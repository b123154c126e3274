//===- ir/printer.cc - MLIR generic-form printer --------------------------===//
#include "ir/printer.h"

#include "ir/lexer.h"

#include <charconv>
#include <string_view>
#include <vector>

namespace rs::ir {
namespace detail {
void appendAttrDict(std::string &out, const std::vector<NamedAttribute> &fields);
} // namespace detail

namespace {

/// Splits "file:line:col" (either number may be missing) into its parts; a missing number
/// is 0.
void splitSourcePosition(std::string_view source, std::string_view *file, int64_t *line,
                         int64_t *col) {
  std::vector<int64_t> numbers;
  while (numbers.size() < 2) {
    const size_t colon = source.rfind(':');
    if (colon == std::string_view::npos || colon + 1 == source.size())
      break;
    std::string_view digits = source.substr(colon + 1);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits[0] == '-')
      break;
    numbers.insert(numbers.begin(), v);
    source = source.substr(0, colon);
  }
  *file = source;
  *line = numbers.empty() ? 0 : numbers[0];
  *col = numbers.size() < 2 ? 0 : numbers[1];
}

/// ` loc("file":line:col)` for `loc` (see PrintOptions::locations), or "".
std::string locationSuffix(const Location &loc) {
  std::string_view file;
  int64_t line = 0, col = 0;
  if (!loc.source.empty()) {
    splitSourcePosition(loc.source, &file, &line, &col);
  } else if (loc.line > 0) {
    file = loc.file;
    line = loc.line;
    col = loc.col;
  } else {
    return "";
  }
  return " loc(" + quoteString(file) + ":" + std::to_string(line) + ":" + std::to_string(col) + ")";
}

class GenericPrinter {
public:
  GenericPrinter(const Module &m, const PrintOptions &options)
      : m_(m), options_(options), group_(m.value_types.size(), {-1, 0}) {}

  void printModule() {
    out_ += "\"builtin.module\"()";
    if (!m_.name.empty()) {
      out_ += " <{sym_name = ";
      out_ += quoteString(m_.name);
      out_ += "}>";
    }
    out_ += " ({\n";
    if (m_.ops.empty()) // the body block must exist even when empty
      out_ += "^bb0:\n";
    for (const Operation &op : m_.ops) {
      printOp(op, 1);
      out_ += '\n';
    }
    out_ += "})";
    if (!m_.attributes.empty()) {
      out_ += ' ';
      detail::appendAttrDict(out_, m_.attributes);
    }
    out_ += " : () -> ()\n";
  }

  void printOp(const Operation &op, int indent) {
    out_.append(static_cast<size_t>(indent) * 2, ' ');
    if (!op.results.empty()) {
      defineGroup(op.results);
      value(op.results.front(), /*definition=*/true);
      if (op.results.size() > 1) {
        out_ += ':';
        out_ += std::to_string(op.results.size());
      }
      out_ += " = ";
    }
    out_ += quoteString(op.name);
    out_ += '(';
    for (size_t i = 0; i < op.operands.size(); ++i) {
      if (i)
        out_ += ", ";
      value(op.operands[i], false);
    }
    out_ += ')';
    if (!op.properties.empty()) {
      out_ += " <";
      detail::appendAttrDict(out_, op.properties);
      out_ += '>';
    }
    if (!op.regions.empty()) {
      out_ += " (";
      for (size_t i = 0; i < op.regions.size(); ++i) {
        if (i)
          out_ += ", ";
        printRegion(op.regions[i], indent);
      }
      out_ += ')';
    }
    if (!op.attributes.empty()) {
      out_ += ' ';
      detail::appendAttrDict(out_, op.attributes);
    }
    out_ += " : (";
    for (size_t i = 0; i < op.operands.size(); ++i) {
      if (i)
        out_ += ", ";
      out_ += typeOf(op.operands[i]);
    }
    out_ += ") -> ";
    // As MLIR's printFunctionalType: one result of function type is wrapped too, or
    // `-> (a) -> b` would read back as two results.
    bool paren = op.results.size() != 1 || typeKind(op.results[0]) == TypeKind::kFunction;
    if (paren)
      out_ += '(';
    for (size_t i = 0; i < op.results.size(); ++i) {
      if (i)
        out_ += ", ";
      out_ += typeOf(op.results[i]);
    }
    if (paren)
      out_ += ')';
    if (options_.locations)
      out_ += locationSuffix(op.loc);
  }

  std::string take() { return std::move(out_); }

private:
  TypeKind typeKind(ValueId v) const {
    if (v < 0 || static_cast<size_t>(v) >= m_.value_types.size())
      return TypeKind::kOther;
    return m_.value_types[static_cast<size_t>(v)].kind;
  }

  std::string typeOf(ValueId v) const {
    if (v < 0 || static_cast<size_t>(v) >= m_.value_types.size())
      return "none";
    return m_.value_types[static_cast<size_t>(v)].toString();
  }

  void defineGroup(const std::vector<ValueId> &results) {
    if (results.size() < 2)
      return;
    for (size_t i = 0; i < results.size(); ++i) {
      ValueId v = results[i];
      if (v >= 0 && static_cast<size_t>(v) < group_.size())
        group_[static_cast<size_t>(v)] = {results.front(), static_cast<int>(i)};
    }
  }

  void value(ValueId v, bool definition) {
    out_ += '%';
    if (!definition && v >= 0 && static_cast<size_t>(v) < group_.size() &&
        group_[static_cast<size_t>(v)].first >= 0) {
      out_ += std::to_string(group_[static_cast<size_t>(v)].first);
      out_ += '#';
      out_ += std::to_string(group_[static_cast<size_t>(v)].second);
      return;
    }
    out_ += std::to_string(v);
  }

  void printRegion(const Region &r, int indent) {
    out_ += "{\n";
    for (size_t b = 0; b < r.blocks.size(); ++b) {
      const Block &block = r.blocks[b];
      // An empty entry block needs its label, or it would read back as no block.
      if (b > 0 || !block.arguments.empty() || block.ops.empty()) {
        out_.append(static_cast<size_t>(indent) * 2, ' ');
        out_ += "^bb";
        out_ += std::to_string(b);
        if (!block.arguments.empty()) {
          out_ += '(';
          for (size_t i = 0; i < block.arguments.size(); ++i) {
            if (i)
              out_ += ", ";
            value(block.arguments[i], true);
            out_ += ": ";
            out_ += typeOf(block.arguments[i]);
          }
          out_ += ')';
        }
        out_ += ":\n";
      }
      for (const Operation &op : block.ops) {
        printOp(op, indent + 1);
        out_ += '\n';
      }
    }
    out_.append(static_cast<size_t>(indent) * 2, ' ');
    out_ += '}';
  }

  const Module &m_;
  const PrintOptions options_;
  std::vector<std::pair<ValueId, int>> group_; // multi-result values: (first id, index)
  std::string out_;
};

} // namespace

std::string printGeneric(const Module &m) { return printGeneric(m, PrintOptions()); }

std::string printGeneric(const Module &m, const PrintOptions &options) {
  GenericPrinter p(m, options);
  p.printModule();
  return p.take();
}

std::string printOperation(const Operation &op, const Module &m) {
  GenericPrinter p(m, PrintOptions());
  p.printOp(op, 0);
  return p.take();
}

} // namespace rs::ir
