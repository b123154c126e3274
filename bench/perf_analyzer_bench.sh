#!/usr/bin/env bash
# bench/perf_analyzer_bench.sh: Triton's perf_analyzer against digits_cnn over gRPC at
# concurrency 1, 8 and 32, each printed as perf_analyzer reports it, then one summary table
# (throughput and latency percentiles, from its CSV). Starts `SERVER serve` on
# examples/model_repo (CPU backend, loopback, gRPC on $PORT, metrics on $PORT + 1).
# perf_analyzer is .tools/perf_analyzer/bin/perf_analyzer (scripts/perf_analyzer_env.sh).
# Figures go to docs/performance.md with the date, commit and machine; never run in tests.
# perf_analyzer's stability rule (the last three windows' throughput and latency within
# STABILITY percent of one another) is 10% by default; on a shared machine that rarely holds,
# so STABILITY defaults to 30.
# usage: bench/perf_analyzer_bench.sh [SERVER] [MEASUREMENT_MS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/bench/worker.sh"
SERVER=${1:-$root/build/src/tools/reactant-server}
WINDOW_MS=${2:-5000}
PORT=${PORT:-18411}
STABILITY=${STABILITY:-30}
PA=${PERF_ANALYZER:-$root/.tools/perf_analyzer/bin/perf_analyzer}
[ -x "$PA" ] || bash "$root/scripts/perf_analyzer_env.sh"
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cat >"$work/node.yaml" <<YAML
model_repo: $root/examples/model_repo
base_port: $PORT
metrics_base_port: $((PORT + 1))
global:
  endpoints: {host: 127.0.0.1, http_port: 0}
  runtime: {backend: cpu, executable_cache: false}
YAML
bench_start_worker "$SERVER" "$work/node.yaml" $((PORT + 1)) "$work/server.log"
bench_header "$SERVER" "$root" "stability $STABILITY%"
for c in 1 8 32; do
  echo
  echo "## concurrency $c"
  "$PA" -m digits_cnn -u "127.0.0.1:$PORT" -i grpc --concurrency-range "$c" \
    --measurement-interval "$WINDOW_MS" --stability-percentage "$STABILITY" -f "$work/c$c.csv"
done
echo
echo "## summary (digits_cnn, gRPC, batch 1)"
printf '%-12s %12s %10s %10s %10s %10s\n' concurrency infer/s p50_us p90_us p99_us avg_us
for c in 1 8 32; do
  python3 - "$work/c$c.csv" <<'PY'
import csv, sys
row = next(csv.DictReader(open(sys.argv[1])))
avg = sum(int(row[k]) for k in ("Client Send", "Network+Server Send/Recv", "Server Queue",
                                "Server Compute Input", "Server Compute Infer",
                                "Server Compute Output", "Client Recv"))
print(f'{row["Concurrency"]:<12} {float(row["Inferences/Second"]):12.1f} {row["p50 latency"]:>10} '
      f'{row["p90 latency"]:>10} {row["p99 latency"]:>10} {avg:>10}')
PY
done
