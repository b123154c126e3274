//===- cpu/gemm_tiling.h - Output tiles of dot_general and convolution -----===//
//
// Private to cpu/. Chooses how a batch of [M, N] products is cut into output tiles for
// parallelFor(): tiles of tile_m x tile_n, at most 512 x 256, halved (N first, down to 64;
// then M, down to 16) while the whole product has fewer than 3 tiles per thread, so that
// small products (a batch-1 transformer layer: M = 128) still spread over 16 cores while
// few threads get large tiles (less packing per multiply-add).
//
// Determinism: every element of a tile is computed the same way whatever the tile it falls
// in (gemm.h: an FMA chain in k order for f32/f64, exact integer arithmetic, a k-ordered loop
// for complex), so the cut may depend on the thread count without changing any output bit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdint>

namespace rs::cpu {

struct GemmTiles {
  int64_t tile_m = 512, tile_n = 256;
  int64_t tiles_m = 1, tiles_n = 1; // per batch element
};

/// Tiles for `batch` products of [m, n] (m, n >= 0) run on `threads` threads.
inline GemmTiles chooseGemmTiles(int64_t batch, int64_t m, int64_t n, int threads) {
  const int64_t min_tiles = 3 * static_cast<int64_t>(std::max(threads, 1));
  GemmTiles t;
  auto count = [&] {
    t.tiles_m = (m + t.tile_m - 1) / t.tile_m;
    t.tiles_n = (n + t.tile_n - 1) / t.tile_n;
    return batch * t.tiles_m * t.tiles_n;
  };
  while (count() < min_tiles && t.tile_n > 64 && n > t.tile_n / 2)
    t.tile_n /= 2;
  while (count() < min_tiles && t.tile_m > 16 && m > t.tile_m / 2)
    t.tile_m /= 2;
  count();
  return t;
}

} // namespace rs::cpu
