#!/usr/bin/env bash
# bench/model_analyzer_bench.sh: Triton's Model Analyzer (`model-analyzer profile`) in remote
# launch mode against a running worker: digits_cnn as the server configures it (no
# configuration search, no model reload), batch 1 at concurrency 1 and 8, measured by
# perf_analyzer; then its results table (metrics-model-inference.csv). Starts `SERVER serve`
# on examples/model_repo (CPU backend, loopback: gRPC $PORT, metrics $PORT + 1, HTTP
# $PORT + 2). Model Analyzer comes from bench/.venv-model-analyzer (bench/model_analyzer.lock,
# made here when missing), perf_analyzer from .tools/perf_analyzer
# (scripts/perf_analyzer_env.sh). Its reports stay in OUT (default a temporary folder).
# Figures go to docs/performance.md with the date, commit and machine; never run in tests.
# usage: bench/model_analyzer_bench.sh [SERVER] [CONCURRENCY]   (CONCURRENCY: default 1,8)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/bench/worker.sh"
SERVER=${1:-$root/build/src/tools/reactant-server}
CONCURRENCY=${2:-1,8}
PORT=${PORT:-18421}
PA=${PERF_ANALYZER:-$root/.tools/perf_analyzer/bin/perf_analyzer}
VENV=$root/bench/.venv-model-analyzer
[ -x "$PA" ] || bash "$root/scripts/perf_analyzer_env.sh"
bash "$root/scripts/python_env.sh" "$root/bench/model_analyzer.lock" "$VENV" >&2
work=$(mktemp -d)
OUT=${OUT:-$work/out}
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cat >"$work/node.yaml" <<YAML
model_repo: $root/examples/model_repo
base_port: $PORT
metrics_base_port: $((PORT + 1))
global:
  models_include: [digits_cnn]
  endpoints: {host: 127.0.0.1, http_port: $((PORT + 2))}
  runtime: {backend: cpu, executable_cache: false}
YAML
bench_start_worker "$SERVER" "$work/node.yaml" $((PORT + 1)) "$work/server.log"
bench_header "$SERVER" "$root" "$("$VENV/bin/pip" show triton-model-analyzer | grep '^Version' | sed 's/Version: /model-analyzer /')"
mkdir -p "$OUT"
"$VENV/bin/model-analyzer" profile --triton-launch-mode remote \
  --triton-grpc-endpoint "127.0.0.1:$PORT" --triton-http-endpoint "127.0.0.1:$((PORT + 2))" \
  --triton-metrics-url "http://127.0.0.1:$((PORT + 1))/metrics" \
  --model-repository "$root/examples/model_repo" --profile-models digits_cnn \
  --run-config-search-disable --reload-model-disable --batch-sizes 1 \
  --concurrency "$CONCURRENCY" --perf-analyzer-path "$PA" \
  --output-model-repository-path "$OUT/models" --override-output-model-repository \
  --checkpoint-directory "$OUT/checkpoints" --export-path "$OUT"
echo
echo "## Model Analyzer's results (digits_cnn, gRPC, batch 1)"
cat "$OUT/results/metrics-model-inference.csv"
