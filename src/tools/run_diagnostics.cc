//===- tools/run_diagnostics.cc - `run --verify-diagnostics` ---------------===//
#include "tools/run_diagnostics.h"

#include <charconv>

namespace rs::tools {
namespace {

constexpr std::string_view kDirective = "expected-error";

std::string_view skipSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  return s;
}

/// Parses what follows `expected-error` on line `n`: the optional @ offset, then {{text}}.
Result<ExpectedError> parseDirective(std::string_view rest, int n, std::string_view file) {
  auto bad = [&](std::string_view what) {
    return invalidArgument() << file << ":" << n << ": expected-error: " << what;
  };
  ExpectedError e;
  e.directive_line = n;
  e.line = n;
  rest = skipSpaces(rest);
  if (rest.starts_with("@unknown")) {
    e.line = 0;
    rest.remove_prefix(8);
  } else if (rest.starts_with("@+") || rest.starts_with("@-")) {
    const bool down = rest[1] == '+';
    rest.remove_prefix(2);
    int offset = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), offset);
    if (ec != std::errc() || offset < 0)
      return bad("expected a line offset after '@+' or '@-'");
    rest.remove_prefix(static_cast<size_t>(end - rest.data()));
    e.line = down ? n + offset : n - offset;
  } else if (rest.starts_with("@")) {
    return bad("expected '@+N', '@-N' or '@unknown'");
  }
  rest = skipSpaces(rest);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r'))
    rest.remove_suffix(1);
  if (!rest.starts_with("{{") || !rest.ends_with("}}") || rest.size() < 4)
    return bad("expected {{message}}");
  e.text = std::string(rest.substr(2, rest.size() - 4));
  return e;
}

} // namespace

Result<std::optional<ExpectedError>> findExpectedError(std::string_view chunk, int first_line,
                                                       std::string_view file) {
  std::optional<ExpectedError> found;
  int n = first_line;
  for (size_t p = 0; p < chunk.size(); ++n) {
    size_t nl = chunk.find('\n', p);
    std::string_view line = chunk.substr(p, nl == std::string_view::npos ? nl : nl - p);
    p = nl == std::string_view::npos ? chunk.size() : nl + 1;
    size_t comment = line.find("//");
    if (comment == std::string_view::npos)
      continue;
    std::string_view body = skipSpaces(line.substr(comment + 2));
    if (!body.starts_with(kDirective))
      continue;
    if (found)
      return invalidArgument() << file << ":" << n
                               << ": a second expected-error in one chunk (the first is on line "
                               << found->directive_line << ")";
    RS_ASSIGN_OR_RETURN(ExpectedError e, parseDirective(body.substr(kDirective.size()), n, file));
    found = std::move(e);
  }
  return found;
}

Status matchExpectedError(const ExpectedError &expected, const Status &actual,
                          std::string_view file) {
  auto where = [&] { return invalidArgument() << file << ":" << expected.directive_line << ": "; };
  if (actual.isOk())
    return where() << "expected an error containing '" << expected.text << "', got none";
  const std::string &message = actual.message();
  if (expected.line > 0) {
    const std::string prefix = std::string(file) + ":" + std::to_string(expected.line) + ":";
    if (!message.starts_with(prefix))
      return where() << "expected an error at " << prefix << " got: " << message;
  }
  if (message.find(expected.text) == std::string::npos)
    return where() << "expected an error containing '" << expected.text << "', got: " << message;
  return Status::ok();
}

} // namespace rs::tools
