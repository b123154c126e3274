//===- cpu/kernels/fma_gemm.cc - Order-exact f32/f64 matrix multiply -------===//
//
// Structure (the classic register-blocked GEMM, with k blocking that keeps the chain exact):
// the tile's columns are cut into panels of NR (a multiple of the vector width), k into
// blocks of kKc; for each (panel, k block) B is packed into a zero-padded [kc, NR] buffer,
// then a micro-kernel computes MR rows x NR columns: MR * NR / W vector accumulators, each
// k step one load per B vector, one broadcast per A row and one FMA per accumulator. The
// first k block starts the accumulators at zero, later ones reload them from C.
//
//===----------------------------------------------------------------------===//
#include "cpu/kernels/fma_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define RS_FMA_GEMM_X86 1
#endif

namespace rs::cpu {
namespace {

constexpr int64_t kKc = 256; // k block: a packed panel of 32 f32 columns is 32 KiB

/// Packs B[k0 .. k0 + kc, j0 .. j0 + nc) into dst[kc][NR], zero beyond nc columns.
template <typename T, int NR>
void packPanel(const T *b, int64_t b_rs, int64_t b_cs, int64_t k0, int64_t kc, int64_t j0,
               int64_t nc, T *dst) {
  if (b_cs == 1) {
    // Rows of B lie b_rs apart, often beyond the hardware stride prefetcher's reach (2 KiB
    // on Intel cores): prefetch a few rows ahead.
    constexpr int64_t kAhead = 8;
    for (int64_t l = 0; l < kc; ++l) {
      const T *row = b + (k0 + l) * b_rs + j0;
      if (l + kAhead < kc) {
        __builtin_prefetch(row + kAhead * b_rs);
        __builtin_prefetch(row + kAhead * b_rs + NR - 1);
      }
      T *d = dst + l * NR;
      if (nc == NR) {
        for (int64_t j = 0; j < NR; ++j) // a fixed-length loop: vector moves, no memcpy call
          d[j] = row[j];
      } else {
        for (int64_t j = 0; j < NR; ++j)
          d[j] = j < nc ? row[j] : T(0);
      }
    }
    return;
  }
  for (int64_t j = 0; j < NR; ++j) {
    if (j >= nc) {
      for (int64_t l = 0; l < kc; ++l)
        dst[l * NR + j] = T(0);
      continue;
    }
    const T *col = b + k0 * b_rs + (j0 + j) * b_cs;
    for (int64_t l = 0; l < kc; ++l)
      dst[l * NR + j] = col[l * b_rs];
  }
}

/// Per-thread packing buffer of at least `count` elements.
template <typename T> T *packBuffer(int64_t count) {
  thread_local std::vector<T> buffer;
  if (static_cast<int64_t>(buffer.size()) < count)
    buffer.resize(static_cast<size_t>(count));
  return buffer.data();
}

/// The portable micro-kernel: std::fma per element, the same chain as the vector kernels.
template <typename T, int MR, int NR> struct PortableKernel {
  static constexpr int kMr = MR, kNr = NR;
  static void run(int rows, const T *a, int64_t a_rs, int64_t a_cs, const T *bp, int64_t ldb,
                  int64_t kc, T *c, int64_t ldc, int64_t nc, bool first) {
    T acc[MR][NR];
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < NR; ++j)
        acc[i][j] = first || j >= nc ? T(0) : c[i * ldc + j];
    for (int64_t l = 0; l < kc; ++l)
      for (int i = 0; i < rows; ++i) {
        const T av = a[i * a_rs + l * a_cs];
        for (int j = 0; j < NR; ++j)
          acc[i][j] = std::fma(av, bp[l * ldb + j], acc[i][j]);
      }
    for (int i = 0; i < rows; ++i)
      for (int64_t j = 0; j < nc; ++j)
        c[i * ldc + j] = acc[i][j];
  }
};

#ifdef RS_FMA_GEMM_X86

#define RS_AVX512 __attribute__((target("avx512f")))
#define RS_AVX2 __attribute__((target("avx2,fma")))

/// Vector operations of one instruction set and element type.
struct Avx512F32 {
  using T = float;
  using V = __m512;
  static constexpr int kW = 16;
  RS_AVX512 static V zero() { return _mm512_setzero_ps(); }
  RS_AVX512 static V load(const T *p) { return _mm512_loadu_ps(p); }
  RS_AVX512 static V bcast(T x) { return _mm512_set1_ps(x); }
  RS_AVX512 static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  RS_AVX512 static __mmask16 mask(int64_t n) {
    return n >= kW ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
  }
  RS_AVX512 static V loadPart(const T *p, int64_t n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  RS_AVX512 static void storePart(T *p, V v, int64_t n) { _mm512_mask_storeu_ps(p, mask(n), v); }
};

struct Avx512F64 {
  using T = double;
  using V = __m512d;
  static constexpr int kW = 8;
  RS_AVX512 static V zero() { return _mm512_setzero_pd(); }
  RS_AVX512 static V load(const T *p) { return _mm512_loadu_pd(p); }
  RS_AVX512 static V bcast(T x) { return _mm512_set1_pd(x); }
  RS_AVX512 static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  RS_AVX512 static __mmask8 mask(int64_t n) {
    return n >= kW ? __mmask8(0xFF) : n <= 0 ? __mmask8(0) : __mmask8((1u << n) - 1);
  }
  RS_AVX512 static V loadPart(const T *p, int64_t n) { return _mm512_maskz_loadu_pd(mask(n), p); }
  RS_AVX512 static void storePart(T *p, V v, int64_t n) { _mm512_mask_storeu_pd(p, mask(n), v); }
};

struct Avx2F32 {
  using T = float;
  using V = __m256;
  static constexpr int kW = 8;
  RS_AVX2 static V zero() { return _mm256_setzero_ps(); }
  RS_AVX2 static V load(const T *p) { return _mm256_loadu_ps(p); }
  RS_AVX2 static V bcast(T x) { return _mm256_set1_ps(x); }
  RS_AVX2 static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  RS_AVX2 static __m256i mask(int64_t n) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<int64_t>(n, kW))), lanes);
  }
  RS_AVX2 static V loadPart(const T *p, int64_t n) { return _mm256_maskload_ps(p, mask(n)); }
  RS_AVX2 static void storePart(T *p, V v, int64_t n) { _mm256_maskstore_ps(p, mask(n), v); }
};

struct Avx2F64 {
  using T = double;
  using V = __m256d;
  static constexpr int kW = 4;
  RS_AVX2 static V zero() { return _mm256_setzero_pd(); }
  RS_AVX2 static V load(const T *p) { return _mm256_loadu_pd(p); }
  RS_AVX2 static V bcast(T x) { return _mm256_set1_pd(x); }
  RS_AVX2 static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  RS_AVX2 static __m256i mask(int64_t n) {
    const __m256i lanes = _mm256_setr_epi64x(0, 1, 2, 3);
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(std::min<int64_t>(n, kW)), lanes);
  }
  RS_AVX2 static V loadPart(const T *p, int64_t n) { return _mm256_maskload_pd(p, mask(n)); }
  RS_AVX2 static void storePart(T *p, V v, int64_t n) { _mm256_maskstore_pd(p, mask(n), v); }
};

/// The vector micro-kernel: up to MR rows x (NV vectors of Isa::kW) columns. B's k-th row of
/// the panel starts at bp + k * ldb (packed: ldb = NR, zero-padded; or B itself). Columns past
/// nc are computed on the padding and never stored.
#define RS_VECTOR_KERNEL(ATTR)                                                                     \
  template <typename Isa, int MR, int NV> struct ATTR##Kernel {                                    \
    using T = typename Isa::T;                                                                     \
    using V = typename Isa::V;                                                                     \
    static constexpr int kMr = MR, kNr = NV * Isa::kW;                                             \
    ATTR static void run(int rows, const T *a, int64_t a_rs, int64_t a_cs, const T *bp,            \
                         int64_t ldb, int64_t kc, T *c, int64_t ldc, int64_t nc, bool first) {     \
      if (rows == MR)                                                                              \
        block<MR>(a, a_rs, a_cs, bp, ldb, kc, c, ldc, nc, first);                                  \
      else                                                                                         \
        partial<MR - 1>(rows, a, a_rs, a_cs, bp, ldb, kc, c, ldc, nc, first);                      \
    }                                                                                              \
    template <int R>                                                                               \
    ATTR static void partial(int rows, const T *a, int64_t a_rs, int64_t a_cs, const T *bp,        \
                             int64_t ldb, int64_t kc, T *c, int64_t ldc, int64_t nc, bool first) { \
      if constexpr (R > 0) {                                                                       \
        if (rows == R)                                                                             \
          block<R>(a, a_rs, a_cs, bp, ldb, kc, c, ldc, nc, first);                                 \
        else                                                                                       \
          partial<R - 1>(rows, a, a_rs, a_cs, bp, ldb, kc, c, ldc, nc, first);                     \
      }                                                                                            \
    }                                                                                              \
    template <int R>                                                                               \
    ATTR static void block(const T *a, int64_t a_rs, int64_t a_cs, const T *bp, int64_t ldb,       \
                           int64_t kc, T *c, int64_t ldc, int64_t nc, bool first) {                \
      V acc[R][NV];                                                                                \
      _Pragma("GCC unroll 16") for (int i = 0; i < R; ++i)                                         \
          _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[i][v] =                         \
              first ? Isa::zero() : Isa::loadPart(c + i * ldc + v * Isa::kW, nc - v * Isa::kW);    \
      const T *ap[R];                                                                              \
      _Pragma("GCC unroll 16") for (int i = 0; i < R; ++i) ap[i] = a + i * a_rs;                   \
      for (int64_t l = 0; l < kc; ++l) {                                                           \
        V bv[NV];                                                                                  \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) bv[v] =                               \
            Isa::load(bp + l * ldb + v * Isa::kW);                                                 \
        _Pragma("GCC unroll 16") for (int i = 0; i < R; ++i) {                                     \
          const V av = Isa::bcast(ap[i][l * a_cs]);                                                \
          _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[i][v] =                         \
              Isa::fma(av, bv[v], acc[i][v]);                                                      \
        }                                                                                          \
      }                                                                                            \
      _Pragma("GCC unroll 16") for (int i = 0; i < R; ++i)                                         \
          _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v)                                     \
              Isa::storePart(c + i * ldc + v * Isa::kW, acc[i][v], nc - v * Isa::kW);              \
    }                                                                                              \
  };

RS_VECTOR_KERNEL(RS_AVX512)
RS_VECTOR_KERNEL(RS_AVX2)
#undef RS_VECTOR_KERNEL

#endif // RS_FMA_GEMM_X86

/// The driver: panels of Kernel::kNr columns, k blocks of kKc, row blocks of Kernel::kMr.
template <typename Kernel, typename T>
void driver(const T *a, int64_t a_rs, int64_t a_cs, const T *b, int64_t b_rs, int64_t b_cs, T *c,
            int64_t ldc, int64_t m, int64_t n, int64_t k) {
  constexpr int kMr = Kernel::kMr, kNr = Kernel::kNr;
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i)
      std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  T *packed = packBuffer<T>(std::min(k, kKc) * kNr);
  for (int64_t j0 = 0; j0 < n; j0 += kNr) {
    const int64_t nc = std::min<int64_t>(kNr, n - j0);
    for (int64_t k0 = 0; k0 < k; k0 += kKc) {
      const int64_t kc = std::min(kKc, k - k0);
      // Always packed: read in place, the rows of a panel lie a whole B row apart, and for
      // common widths (768 floats: 3 KiB) they fall into a few L1 sets and evict each other.
      packPanel<T, kNr>(b, b_rs, b_cs, k0, kc, j0, nc, packed);
      for (int64_t i0 = 0; i0 < m; i0 += kMr) {
        const int rows = static_cast<int>(std::min<int64_t>(kMr, m - i0));
        Kernel::run(rows, a + i0 * a_rs + k0 * a_cs, a_rs, a_cs, packed, kNr, kc, c + i0 * ldc + j0,
                    ldc, nc, k0 == 0);
      }
    }
  }
}

#ifdef RS_FMA_GEMM_X86
bool cpuHas(FmaGemmIsa isa) {
  switch (isa) {
  case FmaGemmIsa::kAvx512: return __builtin_cpu_supports("avx512f");
  case FmaGemmIsa::kAvx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  default: return true;
  }
}
#else
bool cpuHas(FmaGemmIsa isa) { return isa == FmaGemmIsa::kPortable || isa == FmaGemmIsa::kBest; }
#endif

FmaGemmIsa resolve(FmaGemmIsa isa) {
  if (isa != FmaGemmIsa::kBest)
    return isa;
  static const FmaGemmIsa best = cpuHas(FmaGemmIsa::kAvx512) ? FmaGemmIsa::kAvx512
                                 : cpuHas(FmaGemmIsa::kAvx2) ? FmaGemmIsa::kAvx2
                                                             : FmaGemmIsa::kPortable;
  return best;
}

} // namespace

bool fmaGemmIsaAvailable(FmaGemmIsa isa) { return cpuHas(isa); }

std::string_view fmaGemmBestIsaName() {
  switch (resolve(FmaGemmIsa::kBest)) {
  case FmaGemmIsa::kAvx512: return "avx512";
  case FmaGemmIsa::kAvx2: return "avx2";
  default: return "portable";
  }
}

void fmaGemmF32(const float *a, int64_t a_rs, int64_t a_cs, const float *b, int64_t b_rs,
                int64_t b_cs, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                FmaGemmIsa isa) {
  switch (resolve(isa)) {
#ifdef RS_FMA_GEMM_X86
  case FmaGemmIsa::kAvx512:
    return driver<RS_AVX512Kernel<Avx512F32, 8, 2>>(a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, m, n, k);
  case FmaGemmIsa::kAvx2:
    return driver<RS_AVX2Kernel<Avx2F32, 6, 2>>(a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, m, n, k);
#endif
  default:
    return driver<PortableKernel<float, 4, 16>>(a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, m, n, k);
  }
}

void fmaGemmF64(const double *a, int64_t a_rs, int64_t a_cs, const double *b, int64_t b_rs,
                int64_t b_cs, double *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                FmaGemmIsa isa) {
  switch (resolve(isa)) {
#ifdef RS_FMA_GEMM_X86
  case FmaGemmIsa::kAvx512:
    return driver<RS_AVX512Kernel<Avx512F64, 8, 2>>(a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, m, n, k);
  case FmaGemmIsa::kAvx2:
    return driver<RS_AVX2Kernel<Avx2F64, 6, 2>>(a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, m, n, k);
#endif
  default:
    return driver<PortableKernel<double, 4, 8>>(a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, m, n, k);
  }
}

} // namespace rs::cpu
