#!/usr/bin/env bash
# bench/malloc_trim.sh: what glibc's trim threshold costs a thread that allocates, fills and
# frees blocks of an answer's size, as the serving path does per request (a response
# tensor and its protobuf copy). The server sets M_MMAP_THRESHOLD to 4 MiB
# (src/tools/bin/main.cc), which freezes M_TRIM_THRESHOLD at 128 KiB unless it is set too;
# this prints the mean and best time per round (two blocks of BYTES allocated, written,
# read and freed) with the threshold left at 128 KiB and with it set to 8 MiB, plus the
# madvise calls the first makes. Needs g++ (build-essential); never part of the test suite.
# usage: bench/malloc_trim.sh [BYTES] [ROUNDS]
set -euo pipefail
BYTES=${1:-131072}
ROUNDS=${2:-20000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/trim.cc" <<'CC'
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

volatile long sink = 0;

int main(int argc, char **argv) {
  const size_t bytes = std::strtoull(argv[1], nullptr, 10);
  const int rounds = std::atoi(argv[2]);
  const bool set_trim = argc > 3;
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  if (set_trim)
    mallopt(M_TRIM_THRESHOLD, 8 << 20);
  std::vector<char> source(bytes, 1);
  // A thread of its own, so the blocks come from a non-main arena as on a server thread.
  std::thread([&] {
    double total = 0, best = 1e30;
    for (int i = 0; i < rounds; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      char *a = static_cast<char *>(std::malloc(bytes + 64));
      std::memcpy(a, source.data(), bytes);
      char *b = static_cast<char *>(std::malloc(bytes + 64));
      std::memcpy(b, a, bytes);
      sink = sink + a[i % bytes] + b[(i * 7) % bytes];
      std::free(a);
      std::free(b);
      const double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      total += us;
      best = us < best ? us : best;
    }
    std::printf("trim threshold %-8s blocks %zu B: mean %.2f us, best %.2f us per round\n",
                set_trim ? "8 MiB" : "128 KiB", bytes, total / rounds, best);
  }).join();
}
CC
g++ -O2 -std=c++20 -pthread -o "$work/trim" "$work/trim.cc"
"$work/trim" "$BYTES" "$ROUNDS"
"$work/trim" "$BYTES" "$ROUNDS" set
if command -v strace >/dev/null; then
  echo "madvise calls with 128 KiB: $(strace -f -c -e trace=madvise "$work/trim" "$BYTES" "$ROUNDS" 2>&1 >/dev/null | awk '/madvise/ {print $4}')"
fi
