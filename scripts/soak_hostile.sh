#!/usr/bin/env bash
# soak_hostile.sh (scripts/soak.sh hostile): the mixed soak of a worker under attack
# (docs/testing.md, "Soak under attack"). Not part of
# the test suite. Starts `reactant-server serve` on the example repository (CPU backend;
# HTTP $RS_SOAK_PORT (default 18900), gRPC the next port, metrics the one after), then:
#   1. SECONDS (default 300) of valid traffic alone: loadgen, 16 clients over both protocols,
#      answers verified against the first answer per payload: the baseline p99;
#   2. SECONDS of the same traffic while scripts/soak_attackers.py runs 1,000 slowloris
#      connections (one byte every 4 s), RFC 9112 framing attacks, JSON and gzip bombs,
#      shared-memory probes, connections reset after their request and gRPC calls cancelled
#      after they are sent (cancellations), with the server's resident memory sampled every 10 s.
# Prints per phase loadgen's report (valid requests answered correctly, p50/p99, RSS samples),
# the attackers' counts, the requests the server counted per status, the p99 ratio, and
# whether the server is still alive (crashes: 0).
# Exits 1 if a valid request was not answered correctly, an attack got an unexpected answer,
# the p99 under attack is more than twice the baseline's, a phase's resident memory grew by
# more than 5% after its first minute (lowest sample of the last 60 s over the second minute's,
# client/rss_trend.h), or the server died.
# Usage: scripts/soak.sh hostile [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-300}"
bin="$root/build/src/tools/reactant-server"
work="$(mktemp -d)"
port="${RS_SOAK_PORT:-18900}"
grpc_port=$((port + 1))
metrics_port=$((port + 2))
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
ulimit -n "$(ulimit -Hn)"
cat >"$work/node.yaml" <<YAML
model_repo: $root/examples/model_repo
base_port: $grpc_port
metrics_base_port: $metrics_port
global:
  endpoints: {host: 127.0.0.1, http_port: $port}
  runtime: {backend: cpu}
YAML
"$bin" serve --config "$work/node.yaml" --log-level warn >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  curl -fs "http://127.0.0.1:$metrics_port/readyz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/server.log"; exit 1; }
  sleep 0.1
done
curl -fs "http://127.0.0.1:$metrics_port/readyz" >/dev/null ||
  { echo "soak: the server is not ready after 60 s" >&2; cat "$work/server.log" >&2; exit 1; }
status=0
load() {
  "$bin" loadgen --model iris_mlp --protocol both --http-url "127.0.0.1:$port" \
    --grpc-url "127.0.0.1:$grpc_port" --concurrency 16 --duration "$seconds" \
    --metrics-url "127.0.0.1:$metrics_port" --rss-interval 10 >"$work/$1.txt" 2>&1 || status=1
  echo "== $1"
  cat "$work/$1.txt"
}
# loadgen's line "valid N ok N latency ms: p50 A p90 B p99 C max D": C, in ms.
p99() { grep -Eo 'latency ms: .* p99 [0-9.]+' "$work/$1.txt" | grep -Eo '[0-9.]+$' | head -1; }
load baseline
python3 "$root/scripts/soak_attackers.py" --port "$port" --grpc-port "$grpc_port" --duration "$seconds" \
  >"$work/attackers.txt" 2>&1 &
attackers=$!
load under_attack
wait "$attackers" || status=1
echo "== attackers"
cat "$work/attackers.txt"
echo "== requests by status (worker_requests_total)"
curl -fs "http://127.0.0.1:$metrics_port/metrics" | grep '^worker_requests_total{' || true
echo "== summary"
base=$(p99 baseline)
attacked=$(p99 under_attack)
ratio=$(awk -v a="$attacked" -v b="$base" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
echo "p99 baseline: ${base} ms; under attack: ${attacked} ms; ratio $ratio (goal <= 2)"
awk -v r="$ratio" 'BEGIN { exit !(r != "n/a" && r <= 2) }' || { echo "p99 ratio: FAILED"; status=1; }
# loadgen's "rss growth after the first minute: G% (lowest sample ...)", per phase.
for phase in baseline under_attack; do
  growth=$(grep -Eo 'rss growth after the first minute: [-0-9.]+' "$work/$phase.txt" | grep -Eo '[-0-9.]+$' || true)
  if [ -n "$growth" ] && awk -v g="$growth" 'BEGIN { exit !(g <= 5) }'; then
    echo "rss $phase: flat after the first minute (growth $growth% <= 5%)"
  else
    echo "rss $phase: FAILED or not measured (growth '$growth'; runs shorter than two minutes have none)"
    status=1
  fi
done
if kill -0 "$pid" 2>/dev/null; then
  echo "server alive: yes (crashes: 0)"
  kill -TERM "$pid"
  if wait "$pid"; then echo "server exit: 0"; else echo "server exit: $?"; status=1; fi
else
  echo "server alive: no (crashed)"
  tail -20 "$work/server.log"
  status=1
fi
pid=
exit $status
