//===- cpu/gemm_tiling.h - Output tiles of dot_general and convolution -----===//
//
// Private to cpu/. Chooses how a batch of [M, N] products is cut into output tiles for
// parallelFor(): tiles of tile_m x tile_n, at most 64 x 256, halved (N first, down to 64;
// then M, down to 16) while the whole product has fewer than kMinTiles tiles, so that small
// products (a batch-1 transformer layer: M = 128) still spread over 16 cores.
//
// Determinism: the choice depends on (batch, M, N) only, never on the thread count, so
// every output element is summed by the same single-threaded GEMM call on any machine
// with the same cache sizes (gemm.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace rs::cpu {

struct GemmTiles {
  int64_t tile_m = 64, tile_n = 256;
  int64_t tiles_m = 1, tiles_n = 1; // per batch element
};

/// Tiles for `batch` products of [m, n] (m, n >= 0).
inline GemmTiles chooseGemmTiles(int64_t batch, int64_t m, int64_t n) {
  constexpr int64_t kMinTiles = 32;
  GemmTiles t;
  auto count = [&] {
    t.tiles_m = (m + t.tile_m - 1) / t.tile_m;
    t.tiles_n = (n + t.tile_n - 1) / t.tile_n;
    return batch * t.tiles_m * t.tiles_n;
  };
  while (count() < kMinTiles && t.tile_n > 64 && n > t.tile_n / 2)
    t.tile_n /= 2;
  while (count() < kMinTiles && t.tile_m > 16 && m > t.tile_m / 2)
    t.tile_m /= 2;
  count();
  return t;
}

} // namespace rs::cpu
