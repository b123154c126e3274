//===- fuzz/http_request_fuzz.cc - HTTP/1.1 request parser -------------------===//
//
// Input: one byte giving the size of the pieces the bytes arrive in (0: all at once), then
// the bytes of a connection: requests one after another (pipelined). Each is parsed by
// frontend/http_request_parser.h with small limits (4 KiB head, 64 KiB body) as the
// transport does: unconsumed bytes kept, a new parser per request, stop at an error. A
// parsed request must keep its body within the limit and its answer status must be one the
// parser documents.
//
//===----------------------------------------------------------------------===//
#include "frontend/http_request_parser.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const size_t step = data[0];
  std::string_view bytes(reinterpret_cast<const char *>(data + 1), size - 1);
  rs::frontend::HttpParserLimits limits;
  limits.max_head_bytes = 4096;
  limits.max_body_bytes = 64 << 10;
  std::string pending;
  size_t given = 0;
  for (int request = 0; request < 64; ++request) {
    rs::frontend::HttpRequestParser parser(limits);
    using State = rs::frontend::HttpRequestParser::State;
    while (parser.state() == State::kHead || parser.state() == State::kBody) {
      if (given < bytes.size()) {
        const size_t n = step == 0 ? bytes.size() - given : std::min(step, bytes.size() - given);
        pending.append(bytes.substr(given, n));
        given += n;
      }
      const size_t used = parser.feed(pending);
      if (used > pending.size())
        std::abort();
      pending.erase(0, used);
      if (used == 0 && given == bytes.size())
        break;
    }
    if (parser.state() == State::kError) {
      const int s = parser.errorStatus();
      if (s != 400 && s != 413 && s != 415 && s != 417 && s != 431 && s != 501 && s != 505)
        std::abort();
      return 0;
    }
    if (parser.state() != State::kDone)
      return 0;
    if (parser.request().body.size() > limits.max_body_bytes)
      std::abort();
  }
  return 0;
}
