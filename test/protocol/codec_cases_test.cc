//===- test/protocol/codec_cases_test.cc - Request/expected-reply case files ===//
//
// Runs the data-driven decoder cases in http_requests.cases and grpc_requests.cases
// (STYLE.md rule 11). Case file format, one case per `=== <name>` header:
//
//   === <name>
//   model: <name>                 HTTP only: model from the URL (default "m")
//   header-length: json | <text>  HTTP only: Inference-Header-Content-Length; `json` is
//                                 the byte length of the request text
//   request:
//   <request lines>               HTTP: the JSON body; gRPC: a ModelInferRequest in
//                                 protobuf text format
//   binary: <hex>                 HTTP only: bytes appended after the JSON
//   expect: ok | error <CODE>: <message>   (a message ending in `...` matches a prefix)
//   <check lines>                 on success, exactly these, in this order:
//     id: <id>                      when the request id is non-empty
//     deadline-ns: <n>              when a deadline is set (relative to the decode's now)
//     outputs: <a>,<b>              requested outputs, when any
//     binary-output: default=<b> [<name>=<b>...]   HTTP, when not all default false
//     tensor: <name> <DTYPE> <shape> = <values>    one per input, in order
//
// Lines starting with `#` outside a request are comments.
//
//===----------------------------------------------------------------------===//
#include "protocol/grpc_codec.h"
#include "protocol/http_codec.h"
#include "tensor_text.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace rs::protocol {
namespace {

struct Case {
  std::string name;
  int line = 0;
  std::map<std::string, std::string> directives;
  std::string request;
  std::string binary;
  std::string expect;
  std::vector<std::string> checks;
};

bool startsWith(const std::string &s, std::string_view p) { return s.rfind(p, 0) == 0; }

std::string hexToBytes(const std::string &hex) {
  std::string out, digits;
  for (char c : hex)
    if (!std::isspace(static_cast<unsigned char>(c)))
      digits.push_back(c);
  for (size_t i = 0; i + 1 < digits.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16)));
  return out;
}

std::vector<Case> loadCases(const std::string &file) {
  std::ifstream in(std::string(RS_SOURCE_DIR) + "/test/protocol/" + file);
  EXPECT_TRUE(in.good()) << "cannot open " << file;
  std::vector<Case> cases;
  enum { kHeader, kRequest, kChecks } state = kHeader;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (startsWith(line, "=== ")) {
      cases.push_back({});
      cases.back().name = line.substr(4);
      cases.back().line = lineno;
      state = kHeader;
      continue;
    }
    if (cases.empty())
      continue;
    Case &c = cases.back();
    if (state == kRequest && !startsWith(line, "binary:") && !startsWith(line, "expect:")) {
      c.request += (c.request.empty() ? "" : "\n") + line;
      continue;
    }
    if (line.empty() || startsWith(line, "#"))
      continue;
    if (line == "request:") {
      state = kRequest;
    } else if (startsWith(line, "binary:")) {
      c.binary = hexToBytes(line.substr(7));
    } else if (startsWith(line, "expect: ")) {
      c.expect = line.substr(8);
      state = kChecks;
    } else if (state == kChecks) {
      c.checks.push_back(line);
    } else {
      size_t colon = line.find(": ");
      std::string key = line.substr(0, colon);
      c.directives[key] = colon == std::string::npos ? "" : line.substr(colon + 2);
      if (colon == std::string::npos) // "model:" with an empty value
        c.directives[line.substr(0, line.size() - 1)] = "";
    }
  }
  return cases;
}

std::string errorLine(const Status &s) {
  return "error " + std::string(statusCodeName(s.code())) + ": " + s.message();
}

void expectError(const Case &c, const Status &s) {
  std::string actual = errorLine(s);
  if (c.expect.size() > 3 && c.expect.compare(c.expect.size() - 3, 3, "...") == 0)
    EXPECT_TRUE(startsWith(actual, c.expect.substr(0, c.expect.size() - 3)))
        << "case '" << c.name << "' (line " << c.line << ")\n  actual: " << actual;
  else
    EXPECT_EQ(actual, c.expect) << "case '" << c.name << "' (line " << c.line << ")";
}

std::vector<std::string> requestChecks(const protocol::InferRequest &r,
                                       protocol::Clock::time_point now) {
  std::vector<std::string> lines;
  if (!r.id.empty())
    lines.push_back("id: " + r.id);
  if (r.deadline)
    lines.push_back(
        "deadline-ns: " +
        std::to_string(
            std::chrono::duration_cast<std::chrono::nanoseconds>(*r.deadline - now).count()));
  if (!r.requested_outputs.empty()) {
    std::string s = "outputs: ";
    for (size_t i = 0; i < r.requested_outputs.size(); ++i)
      s += (i ? "," : "") + r.requested_outputs[i];
    lines.push_back(s);
  }
  return lines;
}

void appendTensorChecks(const std::vector<protocol::NamedTensor> &tensors,
                        std::vector<std::string> &lines) {
  for (const auto &t : tensors)
    lines.push_back("tensor: " + tensorText(t));
}

const protocol::Clock::time_point kNow = protocol::Clock::time_point(std::chrono::hours(1000));

TEST(CodecCases, HttpRequests) {
  std::vector<Case> cases = loadCases("http_requests.cases");
  ASSERT_GT(cases.size(), 30u);
  for (const Case &c : cases) {
    SCOPED_TRACE("case '" + c.name + "' (line " + std::to_string(c.line) + ")");
    ModelRef model{"m", ""};
    if (auto it = c.directives.find("model"); it != c.directives.end())
      model.name = it->second;
    std::optional<std::string> header;
    if (auto it = c.directives.find("header-length"); it != c.directives.end())
      header = it->second == "json" ? std::to_string(c.request.size()) : it->second;
    std::string body = c.request + c.binary;
    Result<HttpInferRequest> r = decodeHttpInferRequest(
        model, body, header ? std::optional<std::string_view>(*header) : std::nullopt, kNow);
    if (c.expect != "ok") {
      ASSERT_FALSE(r.isOk()) << "expected " << c.expect;
      expectError(c, r.status());
      continue;
    }
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    EXPECT_EQ(r->request.model_name, model.name);
    std::vector<std::string> lines = requestChecks(r->request, kNow);
    const OutputEncoding &enc = r->output_encoding;
    if (enc.binary_by_default || !enc.per_output.empty()) {
      std::string s =
          std::string("binary-output: default=") + (enc.binary_by_default ? "true" : "false");
      for (const auto &[name, b] : enc.per_output)
        s += " " + name + "=" + (b ? "true" : "false");
      lines.push_back(s);
    }
    appendTensorChecks(r->request.inputs, lines);
    EXPECT_EQ(lines, c.checks);
  }
}

TEST(CodecCases, GrpcRequests) {
  std::vector<Case> cases = loadCases("grpc_requests.cases");
  ASSERT_GT(cases.size(), 20u);
  for (const Case &c : cases) {
    SCOPED_TRACE("case '" + c.name + "' (line " + std::to_string(c.line) + ")");
    inference::ModelInferRequest msg;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(c.request, &msg)) << "bad text proto";
    Result<protocol::InferRequest> r = decodeModelInferRequest(msg, kNow);
    if (c.expect != "ok") {
      ASSERT_FALSE(r.isOk()) << "expected " << c.expect;
      expectError(c, r.status());
      continue;
    }
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    EXPECT_EQ(r->model_name, msg.model_name());
    EXPECT_EQ(r->model_version, msg.model_version());
    std::vector<std::string> lines = requestChecks(*r, kNow);
    appendTensorChecks(r->inputs, lines);
    EXPECT_EQ(lines, c.checks);
  }
}

} // namespace
} // namespace rs::protocol
