#!/usr/bin/env bash
# soak.sh: the issue-8 acceptance load (docs/testing.md), not part of the test suite.
#   1. serve digits_cnn (regulated profile: every request runs the same program, so answers
#      are checked bit for bit) and drive it with `reactant-server loadgen` for DURATION
#      seconds (default 300) over both protocols, 20% malformed requests of every kind,
#      shared memory included, sampling the server's resident memory every 10 s;
#   2. start the load again and send SIGTERM in the middle of it: every valid request must
#      succeed or get UNAVAILABLE, and the server must exit 0.
# Usage: scripts/soak.sh [DURATION] [BUILD_DIR]   (BUILD_DIR default build/, holding
#        src/tools/reactant-server). Exit 1 if any check fails.
#        scripts/soak.sh hostile [SECONDS]: the mixed soak under attack instead (slowloris,
#        framing attacks, JSON and gzip bombs, shm probes, cancellations; scripts/soak_hostile.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${1:-}" = hostile ]; then
  shift
  exec "$root/scripts/soak_hostile.sh" "$@"
fi
duration="${1:-300}"
build="${2:-$root/build}"
bin="$build/src/tools/reactant-server"
[ -x "$bin" ] || { echo "soak: $bin not built" >&2; exit 1; }
model="${RS_SOAK_MODEL:-digits_cnn}"
concurrency="${RS_SOAK_CONCURRENCY:-4}"
work="$(mktemp -d)"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
grpc=$(port); http=$(port); metrics=$(port)
cat >"$work/node.yaml" <<YAML
model_repo: "$root/../shared/fixtures/bundles"
base_port: $grpc
metrics_base_port: $metrics
global:
  endpoints: {host: 127.0.0.1, http_port: $http, shared_memory: system}
  runtime: {executable_cache: false, profile: regulated, numerics: f32}
  models_include: [$model]
YAML
start_server() {
  "$bin" serve --config "$work/node.yaml" --exit-timeout-secs 30 >>"$work/server.log" 2>&1 &
  server=$!
  for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$metrics/readyz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "soak: server did not become ready" >&2; cat "$work/server.log" >&2; exit 1
}
loadgen() {
  "$bin" loadgen --model "$model" --protocol both --grpc-url "127.0.0.1:$grpc" \
    --http-url "127.0.0.1:$http" --concurrency "$concurrency" --malformed 0.2 --shm "$@"
}
status=0

echo "== soak: $model, $duration s, $concurrency clients, 20% malformed, shared memory"
start_server
if loadgen --duration "$duration" --metrics-url "127.0.0.1:$metrics" --rss-interval 10 \
    >"$work/soak.txt" 2>&1; then :; else status=1; fi
cat "$work/soak.txt"
growth=$(grep -o 'rss growth after the first minute: [-0-9.]*' "$work/soak.txt" | grep -o '[-0-9.]*$' || echo "")
if [ -n "$growth" ] && python3 -c "import sys; sys.exit(0 if float('$growth') <= 5 else 1)"; then
  echo "rss: flat after the first minute (growth $growth% <= 5%)"
else
  echo "rss: FAILED or not measured (growth '$growth')"; status=1
fi
kill -0 $server 2>/dev/null || { echo "soak: the server died"; status=1; }

echo "== SIGTERM during load"
loadgen --duration 60 --stop-when-unreachable 20 >"$work/sigterm.txt" 2>&1 &
load=$!
sleep 8
t0=$(date +%s.%N)
kill -TERM $server
set +e
wait $server
rc=$?
set -e
t1=$(date +%s.%N)
if wait $load; then :; else status=1; fi
cat "$work/sigterm.txt"
printf 'server exit status %s after %.2f s\n' "$rc" "$(python3 -c "print($t1 - $t0)")"
[ "$rc" -eq 0 ] || status=1
grep -E 'received SIGTERM|draining|shutdown complete' "$work/server.log" || true
grep -c 'request failed' "$work/server.log" | sed 's/^/request error lines logged: /'
rm -rf "$work"
exit $status
