//===- support/text.h - Small ASCII text helpers ----------------------------===//
//
// Helpers that config files, environment overrides and command lines share. ASCII only:
// configuration keys and values are ASCII by definition, so no locale is consulted.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace rs {

/// A copy of `s` with A-Z turned into a-z; every other byte unchanged.
std::string lower(std::string_view s);

/// `s` without leading and trailing ASCII whitespace (space, \t, \n, \v, \f, \r); a view
/// into the same characters.
std::string_view trim(std::string_view s);

/// A copy of `s` with every occurrence of `from` (not empty) replaced by `to`, scanning
/// left to right without rescanning replaced text.
std::string replaceAll(std::string_view s, std::string_view from, std::string_view to);

/// `a` and `b` are equal ignoring ASCII case (HTTP field names and tokens, RFC 9110 5.1).
bool equalsIgnoreCase(std::string_view a, std::string_view b);

/// The value of hexadecimal digit `c` (0-9, a-f, A-F), or -1.
int hexDigitValue(char c);

} // namespace rs
