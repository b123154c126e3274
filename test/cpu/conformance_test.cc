//===- test/cpu/conformance_test.cc - StableHLO conformance suites ---------===//
//
// Runs the StableHLO interpreter suite (shared/conformance/interpret/*.mlir, one case per
// `// -----` chunk) and the JAX-generated testdata suite (shared/conformance/testdata,
// one case per file) through the CPU executor. Each case's check ops
// (check.expect_eq[_const], check.expect_almost_eq[_const], check.expect_close, and the
// custom_call @check.* forms of testdata) are taken out of the entry function, the values
// they check become its results, and the harness compares them:
//   - eq: bit for bit (NaN equals NaN);
//   - almost_eq: |a - b| <= tolerance (default 1e-4 for the check dialect's ops, 1e-3 for
//     testdata's custom_call @check.expect_almost_eq, as stablehlo-translate checks it),
//     NaN equals NaN, infinities exact;
//   - close: at most max_ulp_difference (default 3) units in the last place apart.
// Complex values are compared part by part (real, imaginary) with the same rules.
// A case passes, fails (wrong result or an unexpected error) or is unsupported (compile
// gives Unimplemented: an op or element type the executor lacks). The checked-in list
// conformance_expected.txt names every case that does not pass, with its status and
// reason; the test fails when the actual set differs in either direction, printing the
// lines to add or remove. Each case prints one line (pass, FAIL with the first mismatch,
// skip with the missing feature); each suite ends with "N passed, N failed, N skipped".
// Conformance.Report prints both totals and, with RS_WRITE_CONFORMANCE=1 in the
// environment, writes docs/conformance.md (skips counted by reason).
//
//===----------------------------------------------------------------------===//
#include "common/files.h"
#include "cpu_test_util.h"
#include "ir/float_bits.h"
#include "passes/refine_shapes.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace rs::cpu::testing {
namespace {

namespace fs = std::filesystem;

enum class CheckKind { kEq, kAlmostEq, kClose };

struct Check {
  CheckKind kind = CheckKind::kEq;
  double tolerance = 1e-4;
  int64_t max_ulp = 3;
  size_t lhs = 0;            // result index of the checked value
  std::optional<size_t> rhs; // result index of the expected value, or
  Tensor expected;           // the expected constant
};

struct Outcome {
  std::string status; // "pass", "fails", "unsupported"
  std::string reason;
};

//===----------------------------------------------------------------------===//
// Element comparison
//===----------------------------------------------------------------------===//

/// Sign-magnitude bits of a float element of 1 (minifloats), 2 (f16/bf16), 4 or 8 bytes,
/// mapped to a monotonic integer; `nan` set for NaNs.
int64_t orderedBits(DType t, const uint8_t *p, bool &nan) {
  if (const ir::FloatFormat *f = ir::minifloatFormat(t)) { // one byte, sign at bit width - 1
    nan = ir::minifloatIsNaN(p[0], *f);
    const int sign_bit = f->exp_bits + f->mant_bits;
    const int64_t magnitude = p[0] & ((1 << sign_bit) - 1);
    return f->has_sign && ((p[0] >> sign_bit) & 1) ? -magnitude : magnitude;
  }
  uint64_t bits = 0;
  int64_t size = dtypeSize(t);
  std::memcpy(&bits, p, static_cast<size_t>(size));
  int exp_bits = t == DType::kF16 ? 5 : t == DType::kBF16 ? 8 : t == DType::kF32 ? 8 : 11;
  int width = static_cast<int>(size * 8);
  uint64_t sign = uint64_t{1} << (width - 1);
  uint64_t mant_mask = (uint64_t{1} << (width - 1 - exp_bits)) - 1;
  uint64_t exp_mask = ((uint64_t{1} << exp_bits) - 1) << (width - 1 - exp_bits);
  nan = (bits & exp_mask) == exp_mask && (bits & mant_mask) != 0;
  int64_t magnitude = static_cast<int64_t>(bits & ~sign);
  return (bits & sign) ? -magnitude : magnitude;
}

double floatValue(DType t, const uint8_t *p) {
  if (const ir::FloatFormat *f = ir::minifloatFormat(t))
    return ir::minifloatToDouble(p[0], *f);
  switch (t) {
  case DType::kF32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case DType::kF64: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  default: { // f16 / bf16: decode through the ordered bits
    uint16_t h;
    std::memcpy(&h, p, 2);
    uint32_t f32 = 0;
    if (t == DType::kBF16) {
      f32 = static_cast<uint32_t>(h) << 16;
    } else {
      uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
      if (exp == 0x1f)
        f32 = sign | 0x7f800000u | (mant << 13);
      else if (exp == 0) {
        float v = std::ldexp(static_cast<float>(mant), -24);
        std::memcpy(&f32, &v, 4);
        f32 |= sign;
      } else
        f32 = sign | ((exp + 112) << 23) | (mant << 13);
    }
    float v;
    std::memcpy(&v, &f32, 4);
    return v;
  }
  }
}

std::string compareTensors(const Check &c, const Tensor &a, const Tensor &b) {
  if (a.dtype() != b.dtype() || a.numElements() != b.numElements())
    return "type mismatch: " + TensorType{a.dtype(), a.shape()}.toString() + " vs " +
           TensorType{b.dtype(), b.shape()}.toString();
  // Complex: the real and imaginary parts are compared separately, as floats of the part
  // type (reference/stablehlo.md section 1.4); element i of the mismatch names the part.
  const bool complex = isComplex(a.dtype());
  const DType t = a.dtype() == DType::kComplex64    ? DType::kF32
                  : a.dtype() == DType::kComplex128 ? DType::kF64
                                                    : a.dtype();
  const int64_t size = dtypeSize(t);
  const int64_t count = a.numElements() * (complex ? 2 : 1);
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t *pa = a.data() + i * size, *pb = b.data() + i * size;
    if (!isFloat(t)) {
      if (std::memcmp(pa, pb, static_cast<size_t>(size)) != 0)
        return "element " + std::to_string(i) + " differs";
      continue;
    }
    bool nan_a = false, nan_b = false;
    int64_t oa = orderedBits(t, pa, nan_a), ob = orderedBits(t, pb, nan_b);
    if (nan_a || nan_b) {
      if (nan_a != nan_b)
        return "element " + std::to_string(i) + ": NaN vs number";
      continue;
    }
    bool ok = true;
    switch (c.kind) {
    case CheckKind::kEq: ok = oa == ob; break;
    case CheckKind::kClose: ok = std::llabs(oa - ob) <= c.max_ulp; break;
    case CheckKind::kAlmostEq: {
      double x = floatValue(t, pa), y = floatValue(t, pb);
      ok = std::isinf(x) || std::isinf(y) ? x == y : std::fabs(x - y) <= c.tolerance;
      break;
    }
    }
    if (!ok) {
      std::ostringstream os;
      // Enough digits to tell any two values of the type apart (f64: 17, f32 and narrower: 9).
      os.precision(t == DType::kF64 ? 17 : 9);
      os << "element " << (complex ? i / 2 : i) << (complex ? (i % 2 ? " (imag)" : " (real)") : "")
         << ": " << floatValue(t, pa) << " vs expected " << floatValue(t, pb);
      return os.str();
    }
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Running one case
//===----------------------------------------------------------------------===//

ir::Operation *entryFunction(ir::Module &m) {
  ir::Operation *only = nullptr;
  int funcs = 0;
  for (ir::Operation &op : m.ops) {
    if (op.name != "func.func")
      continue;
    ++funcs;
    only = &op;
    if (ir::functionName(op) == "main")
      return &op;
  }
  return funcs == 1 ? only : nullptr;
}

bool isCheck(const ir::Operation &op) {
  if (op.name.rfind("check.", 0) == 0)
    return true;
  const ir::Attribute *t =
      op.name == "stablehlo.custom_call" ? op.attr("call_target_name") : nullptr;
  return t && t->str.rfind("check.", 0) == 0;
}

/// The outcome of a compile error: unsupported for Unimplemented (the reason without its
/// location and function, so that the table groups by op and reason), else fails.
Outcome compileFailure(const Status &status) {
  const std::string &msg = status.message();
  std::string reason = msg.substr(msg.find(": ") == std::string::npos ? 0 : msg.find(": ") + 2);
  if (size_t in_function = reason.find(" (in function @"); in_function != std::string::npos)
    reason.resize(in_function);
  if (status.code() == StatusCode::kUnimplemented)
    return {"unsupported", reason};
  return {"fails", status.toString()};
}

/// The size every `?` of a dynamic-shape case gets, and the value of its dimension
/// arguments; the next ones are tried when refinement fails for the first (a module that
/// constrains the size, e.g. to be even).
constexpr int64_t kDynamicSizes[] = {3, 2, 4, 1, 6, 8};

/// A dynamic-shape case with no checks (testdata's serialization round-trip files):
/// every `?` of the entry function's argument types becomes one size, each leading
/// integer scalar argument (a JAX dimension argument) holds that size, the module is
/// refined (passes/refine_shapes.h), compiled and run on zeros; it passes when that gives
/// no error.
Outcome runDynamic(const ir::Module &original, std::string_view entry_name) {
  std::string first_error;
  for (int64_t size : kDynamicSizes) {
    ir::Module m = original;
    const passes::RefineOptions options =
        passes::uniformRefinement(*m.lookupFunction(entry_name), size);
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < options.arg_types.size(); ++i) {
      const ir::Type &t = options.arg_types[i];
      inputs.push_back(Tensor::zeros(t.element, t.shape));
      if (const std::optional<int64_t> &value = options.dimension_values[i])
        std::memcpy(inputs.back().mutableData(), &*value,
                    static_cast<size_t>(dtypeSize(t.element))); // little-endian
    }
    auto refined = passes::refineShapes(m, options);
    if (!refined.isOk()) {
      if (first_error.empty())
        first_error = refined.status().message();
      continue;
    }
    auto program = Program::compile(m, entry_name, contextWithThreads(2));
    if (!program.isOk())
      return compileFailure(program.status());
    auto out = (*program)->run(inputs);
    if (!out.isOk())
      return {"fails", out.status().toString()};
    return {"pass", "refined with size " + std::to_string(size)};
  }
  return {"fails", "refine-shapes: " + first_error};
}

/// Whether `m` holds an op that only a refined module runs: a dynamic_* shape op or a
/// dynamically shaped value.
bool needsRefinement(const ir::Module &m) {
  for (const ir::Type &t : m.value_types)
    if (t.isTensor() && std::find(t.shape.begin(), t.shape.end(), -1) != t.shape.end())
      return true;
  std::function<bool(const std::vector<ir::Operation> &)> any =
      [&](const std::vector<ir::Operation> &ops) {
        for (const ir::Operation &op : ops) {
          if (op.name.rfind("stablehlo.dynamic_", 0) == 0 && op.name != "stablehlo.dynamic_slice" &&
              op.name != "stablehlo.dynamic_update_slice")
            return true;
          if (op.name == "stablehlo.real_dynamic_slice")
            return true;
          for (const ir::Region &r : op.regions)
            for (const ir::Block &b : r.blocks)
              if (any(b.ops))
                return true;
        }
        return false;
      };
  return any(m.ops);
}

/// Runs the checks of function `entry` (an op of `m`, which it rewrites).
Outcome runFunction(ir::Module &m, ir::Operation *entry) {
  if (!entry || entry->regions.size() != 1 || entry->regions[0].blocks.size() != 1)
    return {"unsupported", "harness: no single entry function"};
  ir::Block &block = entry->regions[0].blocks[0];
  if (!block.arguments.empty()) {
    if (std::none_of(block.ops.begin(), block.ops.end(), isCheck)) {
      if (needsRefinement(m))
        return runDynamic(m, ir::functionName(*entry));
      return {"unsupported", "harness: entry function takes arguments and the module has no "
                             "checks (a serialization round-trip test)"};
    }
    return {"unsupported", "harness: entry function takes arguments"};
  }
  if (block.ops.empty())
    return {"unsupported", "harness: empty entry function"};

  std::vector<ir::Operation> kept;
  std::vector<ir::ValueId> returned;
  std::vector<Check> checks;
  auto addValue = [&](ir::ValueId v) {
    returned.push_back(v);
    return returned.size() - 1;
  };
  for (size_t i = 0; i + 1 < block.ops.size(); ++i) {
    ir::Operation &op = block.ops[i];
    std::string name = op.name;
    bool custom_call = false;
    if (op.name == "stablehlo.custom_call")
      if (const ir::Attribute *t = op.attr("call_target_name");
          t && t->str.rfind("check.", 0) == 0) {
        name = t->str;
        custom_call = true;
      }
    if (name.rfind("check.", 0) != 0) {
      kept.push_back(std::move(op));
      continue;
    }
    Check c;
    if (name == "check.expect_eq" || name == "check.eq" || name == "check.expect_eq_const")
      c.kind = CheckKind::kEq;
    else if (name == "check.expect_almost_eq" || name == "check.expect_almost_eq_const") {
      c.kind = CheckKind::kAlmostEq;
      // testdata's custom_call form is checked by stablehlo-translate's fallback with an
      // absolute tolerance of 1e-3 (reference/stablehlo.md, "How results are checked");
      // the check dialect's ops default to 1e-4.
      if (custom_call)
        c.tolerance = 1e-3;
    } else if (name == "check.expect_close")
      c.kind = CheckKind::kClose;
    else
      return {"unsupported", "harness: " + name};
    if (const ir::Attribute *tol = op.attr("tolerance"))
      c.tolerance = tol->kind == ir::AttrKind::kFloat ? tol->float_value : c.tolerance;
    if (const ir::Attribute *ulp = op.attr("max_ulp_difference"))
      c.max_ulp = ulp->int_value;
    if (op.operands.empty())
      return {"fails", "harness: check without operands"};
    c.lhs = addValue(op.operands[0]);
    if (name.size() > 6 && name.substr(name.size() - 6) == "_const") {
      const ir::Attribute *value = op.attr("value");
      if (!value || value->kind != ir::AttrKind::kDenseElements || !value->tensor.valid())
        return {"unsupported", "harness: expected value of an element type the IR does not "
                               "hold (" +
                                   name + ")"};
      c.expected = value->tensor;
    } else {
      if (op.operands.size() < 2)
        return {"fails", "harness: " + name + " needs two operands"};
      c.rhs = addValue(op.operands[1]);
    }
    checks.push_back(std::move(c));
  }
  // A function with no checks passes when it compiles and runs without an error: what its
  // RUN line (stablehlo-translate --interpret, no FileCheck) asks of the interpreter. The
  // reason "no checks" lets the suite turn it into a skip when FileCheck reads printed output.
  const bool no_checks = checks.empty();
  ir::Operation ret = std::move(block.ops.back());
  ret.operands = returned;
  kept.push_back(std::move(ret));
  block.ops = std::move(kept);

  // Dynamic shape ops with constant shape operands (the interpreter suite's dynamic_*
  // cases) run once refined.
  if (needsRefinement(m))
    if (auto refined = passes::refineShapes(m, {std::string(ir::functionName(*entry)), {}, {}});
        !refined.isOk())
      return {"fails", "refine-shapes: " + refined.status().message()};
  auto program = Program::compile(m, ir::functionName(*entry), contextWithThreads(2));
  if (!program.isOk())
    return compileFailure(program.status());
  auto out = (*program)->run({});
  if (!out.isOk())
    return {"fails", out.status().toString()};
  for (size_t i = 0; i < checks.size(); ++i) {
    const Check &c = checks[i];
    const Tensor &expected = c.rhs ? (*out)[*c.rhs] : c.expected;
    std::string diff = compareTensors(c, (*out)[c.lhs], expected);
    if (!diff.empty())
      return {"fails", "check " + std::to_string(i) + ": " + diff};
  }
  return {"pass", no_checks ? "no checks" : ""};
}

/// A case that passed with no check ops but whose text has FileCheck `CHECK` lines (its
/// printed output is what upstream compares) is a skip: the harness does not compare prints.
Outcome unlessFileChecked(Outcome o, std::string_view chunk) {
  if (o.status == "pass" && o.reason == "no checks" && chunk.find("// CHECK") != std::string::npos)
    return {"unsupported", "harness: no check ops; FileCheck compares the printed output"};
  return o;
}

/// Runs one case: its `main` (or only function); a chunk of several functions and no
/// `main` (a `// -----` separator commented out) runs each function that takes no
/// arguments, and passes when all do (the first other outcome, in function order, wins).
Outcome runCase(ir::Module m) {
  if (ir::Operation *entry = entryFunction(m))
    return runFunction(m, entry);
  std::vector<size_t> funcs;
  for (size_t i = 0; i < m.ops.size(); ++i)
    if (m.ops[i].name == "func.func")
      funcs.push_back(i);
  if (funcs.empty())
    return {"unsupported", "harness: empty module"};
  for (size_t i : funcs) {
    ir::Module copy = m;
    Outcome o = runFunction(copy, &copy.ops[i]);
    if (o.status != "pass")
      return o;
  }
  return {"pass", ""};
}

//===----------------------------------------------------------------------===//
// Suites
//===----------------------------------------------------------------------===//

using Results = std::map<std::string, Outcome>; // case key -> outcome

using rs::testing::readFile;

std::vector<fs::path> mlirFiles(const fs::path &dir) {
  std::vector<fs::path> files;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".mlir")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

Results runInterpretSuite() {
  Results results;
  const fs::path dir = fs::path(RS_SHARED_DIR) / "conformance" / "interpret";
  for (const fs::path &file : mlirFiles(dir)) {
    const std::string text = readFile(file);
    const std::string name = file.filename().string();
    for (const auto &[line, chunk] : ir::splitInputFile(text)) {
      const std::string key = "interpret/" + name + ":" + std::to_string(line);
      auto m = ir::parseModule(chunk, name, line);
      results[key] = m.isOk() ? unlessFileChecked(runCase(std::move(m).value()), chunk)
                              : Outcome{"fails", m.status().toString()};
    }
  }
  return results;
}

Results runTestdataSuite() {
  Results results;
  const fs::path dir = fs::path(RS_SHARED_DIR) / "conformance" / "testdata";
  for (const fs::path &file : mlirFiles(dir)) {
    const std::string text = readFile(file);
    const std::string name = file.filename().string();
    auto chunks = ir::splitInputFile(text);
    for (const auto &[line, chunk] : chunks) {
      // One case per file; files of several modules get one case per chunk.
      const std::string key =
          "testdata/" + name + (chunks.size() > 1 ? ":" + std::to_string(line) : "");
      auto m = ir::parseModule(chunk, name, line);
      results[key] = m.isOk() ? unlessFileChecked(runCase(std::move(m).value()), chunk)
                              : Outcome{"fails", m.status().toString()};
    }
  }
  return results;
}

/// The checked-in expectations for `suite` ("interpret/" or "testdata/" keys): key ->
/// status.
std::map<std::string, std::string> expectations(const std::string &suite) {
  std::map<std::string, std::string> out;
  std::ifstream in(fs::path(RS_SOURCE_DIR) / "test" / "cpu" / "conformance_expected.txt");
  EXPECT_TRUE(in.good()) << "cannot read test/cpu/conformance_expected.txt";
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ls(line);
    std::string key, status;
    ls >> key >> status;
    if (key.rfind(suite, 0) == 0)
      out[key] = status;
  }
  return out;
}

/// The feature a skip reason names, with tensor shapes dropped so that cases of one
/// element type group together: "'stablehlo.add' op type tensor<2xcomplex<f32>> is not
/// supported" becomes "'stablehlo.add' op type complex<f32> is not supported".
std::string skipFeature(const std::string &reason) {
  std::string out;
  size_t i = 0;
  while (i < reason.size()) {
    if (reason.compare(i, 7, "tensor<") != 0) {
      out += reason[i++];
      continue;
    }
    size_t j = i + 7;
    size_t dims = j; // skip "2x3x" / "?x" shape prefixes
    while (j < reason.size() && (std::isdigit(static_cast<unsigned char>(reason[j])) ||
                                 reason[j] == '?' || reason[j] == 'x')) {
      if (reason[j] == 'x')
        dims = j + 1;
      ++j;
    }
    int depth = 1;
    size_t k = dims;
    for (; k < reason.size() && depth > 0; ++k)
      depth += reason[k] == '<' ? 1 : reason[k] == '>' ? -1 : 0;
    out += reason.substr(dims, k - 1 - dims);
    i = k;
  }
  return out;
}

struct SuiteSummary {
  int passed = 0, failed = 0, skipped = 0;
  std::map<std::string, int> skip_reasons;                   // feature -> cases
  std::vector<std::pair<std::string, std::string>> failures; // key, first mismatch
};

SuiteSummary summarize(const Results &results) {
  SuiteSummary s;
  for (const auto &[key, o] : results) {
    if (o.status == "pass") {
      ++s.passed;
    } else if (o.status == "fails") {
      ++s.failed;
      s.failures.emplace_back(key, o.reason);
    } else {
      ++s.skipped;
      ++s.skip_reasons[skipFeature(o.reason)];
    }
  }
  return s;
}

/// "N passed, N failed, N skipped".
std::string totalLine(const SuiteSummary &s) {
  return std::to_string(s.passed) + " passed, " + std::to_string(s.failed) + " failed, " +
         std::to_string(s.skipped) + " skipped";
}

/// Prints one line per case (pass / fail with the first mismatch / skip with the missing
/// feature) and the suite's total, then checks the results against
/// conformance_expected.txt.
void checkSuite(const std::string &suite, const Results &results) {
  for (const auto &[key, o] : results) {
    if (o.status == "pass")
      std::printf("[ conform  ] pass  %s\n", key.c_str());
    else if (o.status == "fails")
      std::printf("[ conform  ] FAIL  %s: %s\n", key.c_str(), o.reason.c_str());
    else
      std::printf("[ conform  ] skip  %s: %s\n", key.c_str(), o.reason.c_str());
  }
  const SuiteSummary s = summarize(results);
  for (const auto &[reason, n] : s.skip_reasons)
    std::printf("[ conform  ]   skipped x%-3d %s\n", n, reason.c_str());
  std::printf("[ conform  ] %s: %s\n", suite.c_str(), totalLine(s).c_str());

  std::map<std::string, std::string> expected = expectations(suite);
  std::vector<std::string> add, remove;
  for (const auto &[key, o] : results) {
    auto it = expected.find(key);
    if (o.status == "pass") {
      if (it != expected.end())
        remove.push_back(key + " " + it->second + " (now passes)");
    } else if (it == expected.end() || it->second != o.status) {
      add.push_back(key + " " + o.status + " " + o.reason);
    }
  }
  for (const auto &[key, status] : expected)
    if (!results.count(key))
      remove.push_back(key + " " + status + " (no such case)");
  std::string diff;
  for (const std::string &l : add)
    diff += "  add:    " + l + "\n";
  for (const std::string &l : remove)
    diff += "  remove: " + l + "\n";
  EXPECT_TRUE(add.empty() && remove.empty())
      << "conformance_expected.txt is out of date for " << suite << ":\n"
      << diff;
}

/// Each suite runs once per test binary; the suite tests and the report share the results.
const Results &interpretResults() {
  static const Results r = runInterpretSuite();
  return r;
}
const Results &testdataResults() {
  static const Results r = runTestdataSuite();
  return r;
}

/// The Markdown of docs/conformance.md: per suite the totals, the skipped cases counted
/// by missing feature, and the failures with their first mismatch.
std::string conformanceMarkdown(const std::vector<std::pair<std::string, SuiteSummary>> &suites) {
  std::ostringstream md;
  md << "# StableHLO conformance of the CPU executor\n\n"
     << "Generated by `RS_WRITE_CONFORMANCE=1 rs_cpu_test --gtest_filter=Conformance.*` "
        "(test/cpu/conformance_test.cc); do not edit by hand. The suites are the StableHLO "
        "interpreter tests (`shared/conformance/interpret`, one case per `// -----` chunk) "
        "and the JAX-generated testdata (`shared/conformance/testdata`, one case per file). "
        "A case passes when every `check.*` op (or `custom_call @check.*`) holds; a case "
        "with no check ops passes when it compiles and runs without an error, as its RUN line "
        "asks of the interpreter, unless FileCheck compares its printed output (then it is a "
        "skip). A case is skipped when the executor reports an op or element type it lacks "
        "(Unimplemented at compile time) or the harness cannot express it; the checked-in "
        "list `test/cpu/conformance_expected.txt` names every case that does not pass. Issue "
        "3's acceptance counts the testdata files that are not quantized "
        "(`uniform_quantize`), not dynamic-shape (`tensor<?x...>`) and not disabled upstream "
        "(the four `fft_*_14_15_16_17` files, RUN-DISABLED). A dynamic-shape file "
        "(entry arguments of type `tensor<?x...>`, no check ops: a serialization round-trip "
        "test upstream) is refined first (`passes/refine_shapes.h`, "
        "docs/shape_polymorphism.md): every `?` gets one size (3; 2, 4, 1, 6 and 8 in turn "
        "when refinement fails for it), each leading integer scalar argument (a dimension "
        "argument) holds that size, the inputs are zeros; it passes when it refines, "
        "compiles and runs without an error. A case whose dynamic_* shape ops have constant "
        "shape operands (the interpreter suite's dynamic_* cases) is refined with its "
        "declared types before it runs.\n\n"
     << "| suite | passed | failed | skipped |\n|---|---:|---:|---:|\n";
  for (const auto &[name, s] : suites)
    md << "| " << name << " | " << s.passed << " | " << s.failed << " | " << s.skipped << " |\n";
  for (const auto &[name, s] : suites) {
    md << "\n## " << name << "\n\n" << totalLine(s) << "\n";
    if (!s.failures.empty()) {
      md << "\n### Failures\n\n| case | first mismatch |\n|---|---|\n";
      for (const auto &[key, why] : s.failures)
        md << "| `" << key << "` | " << why << " |\n";
    }
    if (!s.skip_reasons.empty()) {
      std::vector<std::pair<int, std::string>> by_count;
      for (const auto &[reason, n] : s.skip_reasons)
        by_count.emplace_back(-n, reason);
      std::sort(by_count.begin(), by_count.end());
      md << "\n### Skipped, by reason\n\n| cases | reason |\n|---:|---|\n";
      for (const auto &[neg, reason] : by_count) {
        std::string cell = reason;
        for (size_t p = 0; (p = cell.find('|', p)) != std::string::npos; p += 2)
          cell.replace(p, 1, "\\|");
        md << "| " << -neg << " | " << cell << " |\n";
      }
    }
  }
  return md.str();
}

TEST(Conformance, HarnessDetectsWrongResults) {
  const char *text = R"(func.func @main() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 5]> : tensor<2xi32>
  func.return
}
)";
  auto m = ir::parseModule(text, "harness.mlir");
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  Outcome o = runCase(std::move(m).value());
  EXPECT_EQ(o.status, "fails");
  EXPECT_EQ(o.reason, "check 0: element 1 differs");
  auto good = ir::parseModule(
      std::string(text).replace(std::string(text).find("[2, 5]"), 6, "[2, 4]"), "harness.mlir");
  ASSERT_TRUE(good.isOk());
  EXPECT_EQ(runCase(std::move(good).value()).status, "pass");
}

TEST(Conformance, SkipFeatureDropsShapes) {
  EXPECT_EQ(skipFeature("'stablehlo.add' op type tensor<2x3xcomplex<f32>> is not supported"),
            "'stablehlo.add' op type complex<f32> is not supported");
  EXPECT_EQ(skipFeature("op type tensor<i4> and tensor<?x2xf32>"), "op type i4 and f32");
  EXPECT_EQ(skipFeature("harness: no checks"), "harness: no checks");
}

TEST(Conformance, InterpretSuite) { checkSuite("interpret/", interpretResults()); }

TEST(Conformance, TestdataSuite) { checkSuite("testdata/", testdataResults()); }

/// Prints both suites' totals; with RS_WRITE_CONFORMANCE=1 also writes
/// docs/conformance.md under RS_SOURCE_DIR.
TEST(Conformance, Report) {
  std::vector<std::pair<std::string, SuiteSummary>> suites = {
      {"interpret", summarize(interpretResults())}, {"testdata", summarize(testdataResults())}};
  for (const auto &[name, s] : suites)
    std::printf("[ conform  ] %s: %s\n", name.c_str(), totalLine(s).c_str());
  const std::string md = conformanceMarkdown(suites);
  EXPECT_NE(md.find("| interpret | "), std::string::npos);
  const char *write = std::getenv("RS_WRITE_CONFORMANCE");
  if (write && std::string(write) == "1") {
    const fs::path out = fs::path(RS_SOURCE_DIR) / "docs" / "conformance.md";
    // The hand-written part after the marker (the portable-artifact reader's figures,
    // from test/ir/bytecode_test.cc) is kept.
    constexpr std::string_view kMarker = "<!-- hand-written below this line -->";
    std::string kept;
    {
      std::ifstream old(out, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(old)), std::istreambuf_iterator<char>());
      size_t at = text.find(kMarker);
      if (at != std::string::npos)
        kept = "\n" + text.substr(at);
    }
    std::ofstream f(out, std::ios::binary | std::ios::trunc);
    f << md << kept;
    f.close();
    EXPECT_TRUE(f.good()) << "cannot write " << out;
    std::printf("[ conform  ] wrote %s\n", out.string().c_str());
  }
}

} // namespace
} // namespace rs::cpu::testing
