#!/usr/bin/env bash
# fuzz.sh: builds the libFuzzer targets (fuzz/, clang with ASan + UBSan) in build-fuzz/ and
# runs each for SECONDS (default 60), one after the other, on a corpus kept in
# build-fuzz/corpus/<target> and seeded from the fixtures. Not part of the test suite.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   TARGET: mlir_parser vhlo_reader manifest safetensors http_infer binary_header grpc_infer
#           http_request
#   (default all)
# Prints per target: runs, executions per second, corpus files and bytes, and whether it
# crashed (a crash, leak or sanitizer report leaves crash-*/leak-* files in build-fuzz/ and
# makes the script exit 1). docs/testing.md records the figures of the 10-minute runs.
# RS_FUZZ_KEEP_GOING=1: libFuzzer's fork mode with -ignore_crashes=1, so that a target runs
# for its SECONDS whatever it finds, keeping every failing input as <target>-crash-*; the
# result then counts the crashes (and timeouts and out-of-memory inputs).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
shared="$(cd "$root/../shared" && pwd)"
build="${RS_FUZZ_BUILD:-$root/build-fuzz}"
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(mlir_parser vhlo_reader manifest safetensors http_infer binary_header grpc_infer
  http_request)
jobs="${RS_BUILD_JOBS:-2}"
keep_going="${RS_FUZZ_KEEP_GOING:-0}"
mode=()
[ "$keep_going" != 1 ] || mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRS_FUZZ=ON -DRS_BUILD_TESTS=OFF -DRS_WERROR=OFF >/dev/null
# fuzz_make_seeds links the whole server: built only for the request decoders it seeds.
make_seeds=
for t in "${targets[@]}"; do
  case "$t" in http_infer | binary_header | grpc_infer) make_seeds=fuzz_make_seeds ;; esac
done
ninja -C "$build" -j "$jobs" $make_seeds $(printf 'fuzz_%s ' "${targets[@]}")

seeds="$build/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"/{mlir_parser,vhlo_reader,manifest,safetensors,http_infer,binary_header,grpc_infer,http_request}
[ -z "$make_seeds" ] || "$build/fuzz/fuzz_make_seeds" "$seeds" >/dev/null
# Files of the fixtures up to 64 KiB (bigger ones slow every mutation down).
small() { find "$@" -type f -size -65k 2>/dev/null; }
i=0
for f in $(small "$shared/fixtures/bundles" -name '*.mlir') $(small "$root/test/ir" -name '*.mlir'); do
  cp "$f" "$seeds/mlir_parser/$((i++))_$(basename "$f")"
done
# Portable artifacts: the fixtures' jax.export files, the reader's VHLO targets and the
# StableHLO project's VHLO test vectors.
for f in $(small "$shared/fixtures/bundles" -path '*/portable/*.mlirbc') \
  $(small "$root/test/ir/data/vhlo_targets" -name '*.mlirbc') \
  $(small "$shared/conformance/vhlo" -name '*.mlir.bc'); do
  cp "$f" "$seeds/vhlo_reader/$((i++))_$(basename "$f")"
done
for f in $(small "$shared/fixtures/bundles" -name manifest.yaml); do
  cp "$f" "$seeds/manifest/$((i++))_manifest.yaml"
done
for f in $(small "$shared/fixtures" -name '*.safetensors'); do
  cp "$f" "$seeds/safetensors/$((i++))_$(basename "$f")"
done
# The protocol tests' request bodies (the lines between "request:" and "expect:").
awk -v dir="$seeds/http_infer" '
  /^request:/ { body = ""; on = 1; next }
  /^expect:/ { if (on) { n++; printf "%s", body > (dir "/case_" n ".json"); close(dir "/case_" n ".json") } on = 0; next }
  on { body = body $0 "\n" }' "$root/test/protocol/http_requests.cases"
# Raw requests for the HTTP parser: a piece-size byte, then a connection's bytes
# (frontend/http_request_parser.h's cases: valid, pipelined, chunked, compressed, malformed).
hr="$seeds/http_request"
printf '\0POST /v2/models/m/infer HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}' >"$hr/post"
printf '\3GET /v2 HTTP/1.1\r\nHost: h\r\n\r\nGET /v2/health/live HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n' >"$hr/pipelined"
printf '\1POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;e=1\r\nabc\r\n0\r\nT: t\r\n\r\n' >"$hr/chunked"
printf '\0POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello' >"$hr/two_lengths"
printf '\0POST /x HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\nExpect: 100-continue\r\n\r\n' >"$hr/fold"
{ printf '\0POST /x HTTP/1.1\r\nHost: h\r\nContent-Encoding: gzip\r\nContent-Length: 26\r\n\r\n'
  printf 'hello hello' | gzip -c; } >"$hr/gzip"

status=0
cd "$build"
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  mkdir -p "$corpus"
  log="$build/fuzz_$t.log"
  set +e
  "$build/fuzz/fuzz_$t" "$corpus" "$seeds/$t" -max_total_time="$seconds" -max_len=65536 \
    -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 -artifact_prefix="$build/$t-" \
    "${mode[@]}" >"$log" 2>&1
  rc=$?
  set -e
  result=ok
  if [ "$keep_going" = 1 ]; then
    # The last status line: "#<runs>: cov: ... exec/s <n> oom/timeout/crash: <a>/<b>/<c> ...".
    last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
    runs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
    eps=$(sed -E 's/.* exec\/s ([0-9]+) .*/\1/' <<<"$last")
    failed=$(sed -E 's/.*oom\/timeout\/crash: ([0-9]+\/[0-9]+\/[0-9]+).*/\1/' <<<"$last")
    if [ "$failed" != 0/0/0 ] || [ $rc -ne 0 ]; then
      result="FAILED (oom/timeout/crash $failed, exit $rc; inputs $build/$t-*, see $log)"
      status=1
    fi
  else
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    if [ $rc -ne 0 ]; then result="FAILED (exit $rc, see $log)"; status=1; fi
  fi
  files=$(find "$corpus" -type f | wc -l)
  bytes=$(du -sb "$corpus" | cut -f1)
  printf '%-14s %6ss  runs %10s  exec/s %7s  corpus %6s files %9s bytes  %s\n' \
    "$t" "$seconds" "$runs" "$eps" "$files" "$bytes" "$result"
done
exit $status
