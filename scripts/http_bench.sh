#!/usr/bin/env bash
# http_bench.sh: HTTP request throughput and latency of one server build on loopback, the
# figures docs/performance.md ("HTTP transport") compares. Starts `serve` on the example
# repository (CPU backend, HTTP on port 18800, gRPC 18801, metrics 18802), then runs
# `loadgen --protocol http` against iris_mlp for SECONDS (default 10) at 1, 8 and 64
# clients (http_json and http_binary requests of 1 row, answers verified), and stops it.
# Usage: scripts/http_bench.sh [SECONDS] [SERVER_BINARY]   (default: build/src/tools/reactant-server)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-10}"
server="${2:-$root/build/src/tools/reactant-server}"
client="$root/build/src/tools/reactant-server"
work="$(mktemp -d)"
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cat >"$work/node.yaml" <<YAML
model_repo: $root/examples/model_repo
base_port: 18801
metrics_base_port: 18802
global:
  endpoints: {host: 127.0.0.1, http_port: 18800}
  runtime: {backend: cpu}
YAML
"$server" serve --config "$work/node.yaml" --log-level warn >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  curl -fs http://127.0.0.1:18802/readyz >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/server.log"; exit 1; }
  sleep 0.1
done
echo "server: $server"
for c in 1 8 64; do
  echo "== $c client(s), $seconds s"
  "$client" loadgen --model iris_mlp --protocol http --http-url 127.0.0.1:18800 \
    --grpc-url 127.0.0.1:18801 --concurrency "$c" --duration "$seconds" |
    grep -E 'throughput|latency|p50|p99|http_json|http_binary' || true
done
