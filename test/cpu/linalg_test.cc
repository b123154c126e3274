//===- test/cpu/linalg_test.cc - dot_general and convolution ---------------===//
//
// dot_general and convolution against straightforward reference loops written from the
// spec, over dimension orders, batching, several contracting dims, padding, strides,
// dilations, window reversal and group counts. Inputs are small integers stored as f32,
// so every sum is exact whatever the order and results must match bit for bit.
//
//===----------------------------------------------------------------------===//
#include "cpu_test_util.h"

#include <functional>
#include <random>

namespace rs::cpu::testing {
namespace {

std::vector<float> smallInts(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-3, 3);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = static_cast<float>(d(rng));
  return v;
}

std::string typeStr(const Shape &s, const char *elem = "f32") {
  std::string t = "tensor<";
  for (int64_t d : s)
    t += std::to_string(d) + "x";
  return t + elem + ">";
}

std::string intList(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

int64_t offsetOf(const Shape &shape, const std::vector<int64_t> &idx) {
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    off = off * shape[d] + idx[d];
  return off;
}

/// Calls f(index) for every index of `shape`, row-major.
void forEachIndex(const Shape &shape, const std::function<void(const std::vector<int64_t> &)> &f) {
  std::vector<int64_t> idx(shape.size(), 0);
  if (elementCount(shape) == 0)
    return;
  for (;;) {
    f(idx);
    size_t d = shape.size();
    while (d > 0 && ++idx[d - 1] == shape[d - 1])
      idx[--d] = 0;
    if (d == 0)
      return;
  }
}

//===----------------------------------------------------------------------===//
// dot_general
//===----------------------------------------------------------------------===//

struct DotCase {
  Shape lhs, rhs;
  std::vector<int64_t> lb, rb, lc, rc;
};

void checkDot(const DotCase &c) {
  // Result shape and reference.
  auto isIn = [](const std::vector<int64_t> &v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  std::vector<int64_t> lf, rf;
  for (int64_t d = 0; d < static_cast<int64_t>(c.lhs.size()); ++d)
    if (!isIn(c.lb, d) && !isIn(c.lc, d))
      lf.push_back(d);
  for (int64_t d = 0; d < static_cast<int64_t>(c.rhs.size()); ++d)
    if (!isIn(c.rb, d) && !isIn(c.rc, d))
      rf.push_back(d);
  Shape out;
  for (int64_t d : c.lb)
    out.push_back(c.lhs[static_cast<size_t>(d)]);
  for (int64_t d : lf)
    out.push_back(c.lhs[static_cast<size_t>(d)]);
  for (int64_t d : rf)
    out.push_back(c.rhs[static_cast<size_t>(d)]);
  Shape contract;
  for (int64_t d : c.lc)
    contract.push_back(c.lhs[static_cast<size_t>(d)]);

  std::vector<float> a = smallInts(elementCount(c.lhs), 1), b = smallInts(elementCount(c.rhs), 2);
  std::vector<float> expect(static_cast<size_t>(elementCount(out)));
  forEachIndex(out, [&](const std::vector<int64_t> &o) {
    std::vector<int64_t> li(c.lhs.size()), ri(c.rhs.size());
    size_t p = 0;
    for (size_t i = 0; i < c.lb.size(); ++i, ++p) {
      li[static_cast<size_t>(c.lb[i])] = o[p];
      ri[static_cast<size_t>(c.rb[i])] = o[p];
    }
    for (int64_t d : lf)
      li[static_cast<size_t>(d)] = o[p++];
    for (int64_t d : rf)
      ri[static_cast<size_t>(d)] = o[p++];
    float acc = 0;
    forEachIndex(contract, [&](const std::vector<int64_t> &k) {
      for (size_t i = 0; i < c.lc.size(); ++i) {
        li[static_cast<size_t>(c.lc[i])] = k[i];
        ri[static_cast<size_t>(c.rc[i])] = k[i];
      }
      acc +=
          a[static_cast<size_t>(offsetOf(c.lhs, li))] * b[static_cast<size_t>(offsetOf(c.rhs, ri))];
    });
    expect[static_cast<size_t>(offsetOf(out, o))] = acc;
  });

  std::string props = "<{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [" +
                      intList(c.lb) + "], rhs_batching_dimensions = [" + intList(c.rb) +
                      "], lhs_contracting_dimensions = [" + intList(c.lc) +
                      "], rhs_contracting_dimensions = [" + intList(c.rc) + "]>}>";
  for (int threads : {1, 3}) {
    auto result = runText(
        opModule("stablehlo.dot_general", {typeStr(c.lhs), typeStr(c.rhs)}, typeStr(out), props),
        {makeTensor<float>(c.lhs, a), makeTensor<float>(c.rhs, b)}, threads);
    ASSERT_EQ(result.size(), 1u) << props;
    EXPECT_EQ(valuesOf<float>(result[0]), expect) << props << " threads " << threads;
  }
}

TEST(DotGeneral, MatchesReference) {
  checkDot({{2, 3, 4}, {2, 4, 5}, {0}, {0}, {2}, {1}});     // batched, in place
  checkDot({{4, 3}, {4, 5}, {}, {}, {0}, {0}});             // lhs column-major
  checkDot({{3, 4}, {5, 4}, {}, {}, {1}, {1}});             // rhs column-major
  checkDot({{4, 2, 3}, {5, 2, 4}, {1}, {1}, {0}, {2}});     // both permuted
  checkDot({{2, 3, 4}, {3, 4, 5}, {}, {}, {1, 2}, {0, 1}}); // two contracting dims
  checkDot({{2, 3, 4}, {4, 3, 5}, {}, {}, {2, 1}, {0, 1}}); // contracting dims swapped
  checkDot({{7}, {7}, {}, {}, {0}, {0}});                   // dot product
  checkDot({{3}, {5}, {}, {}, {}, {}});                     // outer product
  checkDot({{130, 70}, {70, 300}, {}, {}, {1}, {0}});       // several tiles, ragged edges
  checkDot({{3, 1, 70}, {3, 70, 1}, {0}, {0}, {2}, {1}});   // matrix-vector shapes
}

TEST(DotGeneral, IntegerAndMixedTypes) {
  const std::string dims = "<{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions "
                           "= [1], rhs_contracting_dimensions = [0]>}>";
  auto out = runText(
      opModule("stablehlo.dot_general", {"tensor<2x2xi32>", "tensor<2x2xi32>"}, "tensor<2x2xi32>",
               dims),
      {makeTensor<int32_t>({2, 2}, {1, 2, 3, 4}), makeTensor<int32_t>({2, 2}, {5, 6, 7, 8})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(out[0]), (std::vector<int32_t>{19, 22, 43, 50}));
  // i8 x i8 -> i32 (preferred_element_type): no i8 overflow.
  out = runText(opModule("stablehlo.dot_general", {"tensor<2x2xi8>", "tensor<2x2xi8>"},
                         "tensor<2x2xi32>", dims),
                {makeTensor<int8_t>({2, 2}, {1, -2, 3, 4}),
                 makeTensor<int8_t>({2, 2}, {100, 100, 100, 100})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int32_t>(out[0]), (std::vector<int32_t>{-100, -100, 700, 700}));
  // i8 -> i8 wraps; bf16 x bf16 -> f32 keeps the f32 sum.
  out = runText(opModule("stablehlo.dot_general", {"tensor<1x2xi8>", "tensor<2x1xi8>"},
                         "tensor<1x1xi8>", dims),
                {makeTensor<int8_t>({1, 2}, {100, 100}), makeTensor<int8_t>({2, 1}, {1, 1})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<int8_t>(out[0]), std::vector<int8_t>{-56});
  Tensor ones = Tensor::zeros(DType::kBF16, {1, 3});
  Tensor col = Tensor::zeros(DType::kBF16, {3, 1});
  const uint16_t one = 0x3f80, tiny = 0x3b80; // 1.0 and 2^-8 in bf16
  for (int i = 0; i < 3; ++i) {
    std::memcpy(ones.mutableData() + 2 * i, &one, 2);
    std::memcpy(col.mutableData() + 2 * i, i == 0 ? &one : &tiny, 2);
  }
  out = runText(opModule("stablehlo.dot_general", {"tensor<1x3xbf16>", "tensor<3x1xbf16>"},
                         "tensor<1x1xf32>", dims),
                {ones, col});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(valuesOf<float>(out[0]), std::vector<float>{1.0f + 2.0f / 256});
  auto p = compileText(opModule("stablehlo.dot_general", {"tensor<2x2xi1>", "tensor<2x2xi1>"},
                                "tensor<2x2xi1>", dims));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
}

//===----------------------------------------------------------------------===//
// convolution
//===----------------------------------------------------------------------===//

struct ConvCase {
  std::string layout; // "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"
  // Positions of (batch, feature, spatial...) in the lhs, (out, in, spatial...) in the rhs
  // and (batch, feature, spatial...) in the result, as the layout string says.
  std::vector<int64_t> lhs_pos, rhs_pos, out_pos;
  int64_t n, c, o;
  std::vector<int64_t> in_sp, win;
  std::vector<int64_t> stride, pad_lo, pad_hi, lhs_dil, rhs_dil;
  std::vector<bool> reversal;
  int64_t fgc = 1, bgc = 1;
};

Shape place(const std::vector<int64_t> &pos, const std::vector<int64_t> &logical) {
  Shape s(logical.size());
  for (size_t i = 0; i < logical.size(); ++i)
    s[static_cast<size_t>(pos[i])] = logical[i];
  return s;
}

void checkConv(const ConvCase &c) {
  const size_t ns = c.in_sp.size();
  std::vector<int64_t> out_sp(ns);
  for (size_t d = 0; d < ns; ++d) {
    int64_t dilated = (c.in_sp[d] - 1) * c.lhs_dil[d] + 1 + c.pad_lo[d] + c.pad_hi[d];
    int64_t dw = (c.win[d] - 1) * c.rhs_dil[d] + 1;
    out_sp[d] = dilated < dw ? 0 : (dilated - dw) / c.stride[d] + 1;
  }
  const int64_t kin = c.c / c.fgc;
  std::vector<int64_t> lhs_logical = {c.n, c.c}, rhs_logical = {c.o, kin},
                       out_logical = {c.n / c.bgc, c.o};
  lhs_logical.insert(lhs_logical.end(), c.in_sp.begin(), c.in_sp.end());
  rhs_logical.insert(rhs_logical.end(), c.win.begin(), c.win.end());
  out_logical.insert(out_logical.end(), out_sp.begin(), out_sp.end());
  const Shape lhs = place(c.lhs_pos, lhs_logical), rhs = place(c.rhs_pos, rhs_logical),
              out = place(c.out_pos, out_logical);
  std::vector<float> a = smallInts(elementCount(lhs), 3), k = smallInts(elementCount(rhs), 4);
  auto at = [](const std::vector<int64_t> &pos, const std::vector<int64_t> &logical) {
    std::vector<int64_t> idx(logical.size());
    for (size_t i = 0; i < logical.size(); ++i)
      idx[static_cast<size_t>(pos[i])] = logical[i];
    return idx;
  };

  std::vector<float> expect(static_cast<size_t>(elementCount(out)));
  const int64_t og_f = c.o / c.fgc, og_b = c.o / c.bgc;
  forEachIndex(out_logical, [&](const std::vector<int64_t> &ol) {
    const int64_t b = ol[0], f = ol[1];
    const int64_t n = c.bgc > 1 ? (f / og_b) * (c.n / c.bgc) + b : b;
    float acc = 0;
    forEachIndex(Shape(c.win.begin(), c.win.end()), [&](const std::vector<int64_t> &w) {
      std::vector<int64_t> x(ns);
      for (size_t d = 0; d < ns; ++d) {
        int64_t q = ol[2 + d] * c.stride[d] + w[d] * c.rhs_dil[d] - c.pad_lo[d];
        if (q < 0 || q % c.lhs_dil[d] != 0 || q / c.lhs_dil[d] >= c.in_sp[d])
          return;
        x[d] = q / c.lhs_dil[d];
      }
      for (int64_t i = 0; i < kin; ++i) {
        const int64_t ch = c.fgc > 1 ? (f / og_f) * kin + i : i;
        std::vector<int64_t> li = {n, ch}, ki = {f, i};
        li.insert(li.end(), x.begin(), x.end());
        for (size_t d = 0; d < ns; ++d)
          ki.push_back(c.reversal[d] ? c.win[d] - 1 - w[d] : w[d]);
        acc += a[static_cast<size_t>(offsetOf(lhs, at(c.lhs_pos, li)))] *
               k[static_cast<size_t>(offsetOf(rhs, at(c.rhs_pos, ki)))];
      }
    });
    expect[static_cast<size_t>(offsetOf(out, at(c.out_pos, ol)))] = acc;
  });

  std::vector<int64_t> padding;
  std::string rev;
  for (size_t d = 0; d < ns; ++d) {
    padding.push_back(c.pad_lo[d]);
    padding.push_back(c.pad_hi[d]);
    rev += std::string(d ? ", " : "") + (c.reversal[d] ? "true" : "false");
  }
  std::string props = "<{batch_group_count = " + std::to_string(c.bgc) +
                      " : i64, dimension_numbers = #stablehlo.conv<" + c.layout +
                      ">, feature_group_count = " + std::to_string(c.fgc) +
                      " : i64, lhs_dilation = array<i64: " + intList(c.lhs_dil) +
                      ">, padding = dense<[" + intList(padding) + "]> : tensor<" +
                      std::to_string(ns) +
                      "x2xi64>, rhs_dilation = array<i64: " + intList(c.rhs_dil) +
                      ">, window_reversal = array<i1: " + rev +
                      ">, window_strides = array<i64: " + intList(c.stride) + ">}>";
  // dense<[a, b, ...]> of shape Nx2 needs nesting; rebuild it as rows.
  std::string rows = "[";
  for (size_t d = 0; d < ns; ++d)
    rows += std::string(d ? ", " : "") + "[" + std::to_string(c.pad_lo[d]) + ", " +
            std::to_string(c.pad_hi[d]) + "]";
  rows += "]";
  props.replace(props.find("dense<[" + intList(padding) + "]>"),
                ("dense<[" + intList(padding) + "]>").size(), "dense<" + rows + ">");
  for (int threads : {1, 3}) {
    auto result = runText(
        opModule("stablehlo.convolution", {typeStr(lhs), typeStr(rhs)}, typeStr(out), props),
        {makeTensor<float>(lhs, a), makeTensor<float>(rhs, k)}, threads);
    ASSERT_EQ(result.size(), 1u) << props;
    EXPECT_EQ(valuesOf<float>(result[0]), expect) << props << " threads " << threads;
  }
}

const char *kNhwc = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]";
const std::vector<int64_t> kNhwcLhs = {0, 3, 1, 2}, kHwioRhs = {3, 2, 0, 1};

TEST(Convolution, NhwcStridePadding) {
  checkConv({kNhwc,
             kNhwcLhs,
             kHwioRhs,
             kNhwcLhs,
             2,
             3,
             4,
             {7, 6},
             {3, 2},
             {2, 1},
             {1, 0},
             {1, 2},
             {1, 1},
             {1, 1},
             {false, false}});
}

TEST(Convolution, OneByOneUsesTheInputInPlace) {
  checkConv({kNhwc,
             kNhwcLhs,
             kHwioRhs,
             kNhwcLhs,
             3,
             5,
             6,
             {4, 5},
             {1, 1},
             {1, 1},
             {0, 0},
             {0, 0},
             {1, 1},
             {1, 1},
             {false, false}});
}

TEST(Convolution, NchwDilationsReversalNegativePadding) {
  // NCHW input, OIHW kernel, NHWC-like output ordering [b, f, 0, 1].
  checkConv({"[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
             {0, 1, 2, 3},
             {0, 1, 2, 3},
             {0, 1, 2, 3},
             1,
             2,
             3,
             {5, 4},
             {2, 3},
             {1, 2},
             {2, -1},
             {1, 2},
             {2, 1},
             {2, 1},
             {true, false}});
}

TEST(Convolution, FeatureGroupsAndDepthwise) {
  checkConv({kNhwc,
             kNhwcLhs,
             kHwioRhs,
             kNhwcLhs,
             2,
             4,
             6,
             {5, 5},
             {3, 3},
             {1, 1},
             {1, 1},
             {1, 1},
             {1, 1},
             {1, 1},
             {false, false},
             /*fgc=*/2});
  checkConv({kNhwc,
             kNhwcLhs,
             kHwioRhs,
             kNhwcLhs,
             1,
             3,
             3,
             {4, 4},
             {3, 3},
             {1, 1},
             {1, 1},
             {1, 1},
             {1, 1},
             {1, 1},
             {false, true},
             /*fgc=*/3});
}

TEST(Convolution, BatchGroups) {
  checkConv({kNhwc,
             kNhwcLhs,
             kHwioRhs,
             kNhwcLhs,
             4,
             2,
             6,
             {3, 3},
             {2, 2},
             {1, 1},
             {0, 0},
             {0, 0},
             {1, 1},
             {1, 1},
             {false, false},
             1,
             /*bgc=*/2});
}

TEST(Convolution, OneDimensionalAndThreeDimensional) {
  checkConv({"[b, 0, f]x[0, i, o]->[b, 0, f]",
             {0, 2, 1},
             {2, 1, 0},
             {0, 2, 1},
             2,
             3,
             2,
             {9},
             {4},
             {3},
             {2},
             {1},
             {1},
             {2},
             {false}});
  checkConv({"[b, f, 0, 1, 2]x[o, i, 0, 1, 2]->[b, 0, 1, 2, f]",
             {0, 1, 2, 3, 4},
             {0, 1, 2, 3, 4},
             {0, 4, 1, 2, 3},
             1,
             2,
             2,
             {3, 4, 3},
             {2, 2, 2},
             {1, 2, 1},
             {0, 1, 0},
             {1, 0, 1},
             {1, 1, 1},
             {1, 1, 1},
             {false, false, false}});
}

TEST(Convolution, RejectsWrongResultShape) {
  auto p =
      compileText(opModule("stablehlo.convolution", {"tensor<1x4x4x1xf32>", "tensor<3x3x1x1xf32>"},
                           "tensor<1x4x4x1xf32>",
                           std::string("<{dimension_numbers = #stablehlo.conv<") + kNhwc +
                               ">, feature_group_count = 1 : i64, batch_group_count = 1 : i64}>"));
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("result spatial dimension 0 is 4, expected 2"),
            std::string::npos)
      << p.status().message();
}

} // namespace
} // namespace rs::cpu::testing
