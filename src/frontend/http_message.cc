//===- frontend/http_message.cc - One HTTP/1.1 request and its response -------===//
#include "frontend/http_message.h"

#include <algorithm>

namespace rs::frontend {

namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string firstValue(const HttpHeaders &headers, std::string_view name) {
  auto it = headers.find(std::string(name));
  return it == headers.end() ? std::string() : it->second;
}

} // namespace

bool HeaderNameLess::operator()(std::string_view a, std::string_view b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                      [](char x, char y) { return lower(x) < lower(y); });
}

bool HttpRequest::has_header(std::string_view name) const {
  return headers.count(std::string(name)) > 0;
}

std::string HttpRequest::get_header_value(std::string_view name) const {
  return firstValue(headers, name);
}

void HttpResponse::set_header(std::string_view name, std::string_view value) {
  headers.erase(std::string(name));
  headers.emplace(std::string(name), std::string(value));
}

bool HttpResponse::has_header(std::string_view name) const {
  return headers.count(std::string(name)) > 0;
}

std::string HttpResponse::get_header_value(std::string_view name) const {
  return firstValue(headers, name);
}

void HttpResponse::set_content(std::string content, std::string_view content_type) {
  body = std::move(content);
  set_header("Content-Type", content_type);
}

} // namespace rs::frontend
