#!/usr/bin/env bash
# bench/grpc_overhead.sh: time one gRPC ModelInfer round trip spends outside the model's
# compute, on loopback, CPU backend. Starts `SERVER serve` with MODEL (a bundle folder, e.g.
# ../shared/fixtures/bundles/iris_mlp), warms up for 1 s, then runs `LOADGEN loadgen` with
# CLIENTS clients for SECONDS s and reads the worker's /metrics before and after the run:
#   p50 p90 (loadgen, us), req/s, server us/request (worker_request_latency_seconds: arrival
#   at the service to answer), compute us/dispatch (worker_compute_seconds_total), and
#   overhead = p50 - compute per dispatch (meaningful with 1 client: one request per dispatch),
#   and the CPU time per request of the server (process_cpu_seconds_total) and of the loadgen.
# Extra loadgen flags go in LOADGEN_FLAGS. The server and the loadgen binaries may differ, to
# compare a change of one side alone.
# usage: bench/grpc_overhead.sh SERVER LOADGEN MODEL_DIR [CLIENTS] [SECONDS]  (never in tests)
set -euo pipefail
SERVER=$1
LOADGEN=$2
BUNDLE=$3
CLIENTS=${4:-1}
SECONDS_RUN=${5:-5}
PORT=${PORT:-18401}
THREADS=${THREADS:-1}
name=$(basename "$BUNDLE")
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/repo" && ln -s "$(cd "$BUNDLE" && pwd)" "$work/repo/$name"
cat >"$work/node.yaml" <<YAML
model_repo: $work/repo
base_port: $PORT
metrics_base_port: $((PORT + 1))
global:
  endpoints: {host: 127.0.0.1, http_port: 0}
  runtime: {backend: cpu, cpu_threads: $THREADS}
YAML
"$SERVER" serve --config "$work/node.yaml" >"$work/server.log" 2>&1 &
pid=$!
ready=
for _ in $(seq 150); do
  curl -sf "127.0.0.1:$((PORT + 1))/readyz" >/dev/null && ready=1 && break
  sleep 0.2
done
[ -n "$ready" ] || { echo "server not ready after 30 s:"; tail -5 "$work/server.log"; exit 1; }
metric() { # sum of the samples of series $1 for this model (or of the unlabelled series)
  awk -v s="$1" -v m="model=\"$name\"" '$1 ~ "^"s"[{ ]" && (index($1, m) || $1 !~ /model=/) {t += $2}
    END {printf "%.9f", t}' "$2"
}
scrape() { curl -sf "127.0.0.1:$((PORT + 1))/metrics" >"$1"; }
"$LOADGEN" loadgen --model "$name" --grpc-url "127.0.0.1:$PORT" -c "$CLIENTS" --duration 1 \
  --no-verify ${LOADGEN_FLAGS:-} >/dev/null
scrape "$work/m0"
/usr/bin/time -f "%U %S" -o "$work/lg.time" \
  "$LOADGEN" loadgen --model "$name" --grpc-url "127.0.0.1:$PORT" -c "$CLIENTS" \
  --duration "$SECONDS_RUN" --no-verify ${LOADGEN_FLAGS:-} >"$work/lg.txt"
scrape "$work/m1"
d() { awk -v a="$(metric "$1" "$work/m0")" -v b="$(metric "$1" "$work/m1")" 'BEGIN {printf "%.9f", b - a}'; }
lat_sum=$(d worker_request_latency_seconds_sum)
lat_n=$(d worker_request_latency_seconds_count)
comp=$(d worker_compute_seconds_total)
disp=$(d worker_dispatch_total)
cpu=$(d process_cpu_seconds_total)
lg_cpu=$(awk '{print $1 + $2}' "$work/lg.time")
awk -v lat_sum="$lat_sum" -v lat_n="$lat_n" -v comp="$comp" -v disp="$disp" -v cpu="$cpu" \
  -v lg_cpu="$lg_cpu" '
  /req\/s/ {rps = $(NF-1); n = $2}
  /latency ms/ {for (i = 1; i < NF; i++) {if ($i == "p50") p50 = $(i + 1) * 1000; if ($i == "p90") p90 = $(i + 1) * 1000}}
  END {
    srv = lat_n > 0 ? lat_sum / lat_n * 1e6 : 0; cmp = disp > 0 ? comp / disp * 1e6 : 0
    printf "p50_us %.0f p90_us %.0f req_s %.0f server_us %.1f compute_us %.1f overhead_us %.0f",
      p50, p90, rps, srv, cmp, p50 - cmp
    printf " server_cpu_us %.1f loadgen_cpu_us %.1f\n", cpu / lat_n * 1e6, lg_cpu / n * 1e6
  }' "$work/lg.txt"
