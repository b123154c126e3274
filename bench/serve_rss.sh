#!/usr/bin/env bash
# bench/serve_rss.sh: peak resident memory of a worker serving bert_bench on the CPU backend
# (issue 4), against its parts measured with `reactant-server bench` in the same run:
#   weights      the bundle's weights.safetensors size
#   base         bench --batch 1 peak RSS minus the weights (process, programs, b1 activations)
#   activations  bench --batch 32 peak RSS minus bench --batch 1 peak RSS (one b32 execute)
# Serving: coalescing on with a 20 ms queue delay, 40 closed-loop gRPC clients for 15 s, so
# the largest program (b32) runs back to back; the worker's VmHWM is read from /proc.
# usage: bench/serve_rss.sh [BINARY] [BUNDLE_DIR]   (never part of the test suite)
set -euo pipefail
BIN=${1:-build/src/tools/reactant-server}
BUNDLE=${2:-../shared/fixtures/bundles/bert_bench}
THREADS=${THREADS:-2}
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
peak_kib() { /usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -1; }
weights=$(( $(stat -c %s "$BUNDLE/weights.safetensors") / 1024 ))
b1=$(peak_kib "$BIN" bench "$BUNDLE" --batch 1 --threads "$THREADS" --min-seconds 1 --warmup 1)
b32=$(peak_kib "$BIN" bench "$BUNDLE" --batch 32 --threads "$THREADS" --min-seconds 1 --warmup 1)
mkdir -p "$work/repo" && ln -s "$(cd "$BUNDLE" && pwd)" "$work/repo/bert_bench"
cat >"$work/node.yaml" <<YAML
model_repo: $work/repo
base_port: 18301
metrics_base_port: 18302
global:
  endpoints: {host: 127.0.0.1, http_port: 18300}
  runtime: {backend: cpu, batch_sizes: all, cpu_threads: $THREADS}
  scheduler: {coalescing: true, max_queue_delay_microseconds: 20000}
YAML
"$BIN" serve --config "$work/node.yaml" >"$work/server.log" 2>&1 &
pid=$!
ready=
for _ in $(seq 100); do curl -sf 127.0.0.1:18300/v2/health/ready >/dev/null && ready=1 && break; sleep 0.2; done
[ -n "$ready" ] || { echo "server not ready after 20 s:"; tail -5 "$work/server.log"; exit 1; }
"$BIN" loadgen --model bert_bench --grpc-url 127.0.0.1:18301 -c 40 --duration 15 --no-verify >"$work/loadgen.txt"
head -3 "$work/loadgen.txt"
hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
base=$((b1 - weights)); act=$((b32 - b1)); bound=$((base + weights + 2 * act))
echo "weights ${weights} KiB; base ${base} KiB; activations (one b32 execute) ${act} KiB"
echo "serving peak RSS ${hwm} KiB; bound base + weights + 2 x activations ${bound} KiB: $([ "$hwm" -le "$bound" ] && echo WITHIN || echo OVER)"
