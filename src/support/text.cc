//===- support/text.cc - Small ASCII text helpers ---------------------------===//
#include "support/text.h"

#include <cctype>

namespace rs {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

std::string replaceAll(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  size_t at = 0;
  for (size_t hit; !from.empty() && (hit = s.find(from, at)) != std::string_view::npos;
       at = hit + from.size())
    out.append(s.substr(at, hit - at)).append(to);
  return out.append(s.substr(at));
}

} // namespace rs
