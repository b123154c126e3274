#!/usr/bin/env bash
# hooks_bench.sh: throughput of a model behind a model.py postprocess against the same program
# without hooks (docs/performance.md "Hooks"). One CPU worker serves digits_cnn and digits_post
# (digits_cnn's program with a numpy softmax postprocess, made in a temporary repository);
# `reactant-server loadgen` drives each over loopback gRPC with CLIENTS concurrent clients for
# SECONDS, alternating ROUNDS times, and prints requests per second and the ratio.
#   bench/hooks_bench.sh [CLIENTS=16] [SECONDS=5] [ROUNDS=2] [PROCESSES=2]
# REACTANT_SERVER: the binary (default build/src/tools/reactant-server); HOOKS_PYTHON: the
# hooks' interpreter (hooks.python; default the server's own choice, docs/hooks.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
server="${REACTANT_SERVER:-$root/build/src/tools/reactant-server}"
clients="${1:-16}" seconds="${2:-5}" rounds="${3:-2}" processes="${4:-2}"
work="$(mktemp -d /tmp/hooks_bench.XXXXXX)"
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
digits="$root/examples/model_repo/digits_cnn"
mkdir -p "$work/repo/digits_post"
cp -r "$digits" "$work/repo/digits_cnn"
cp "$digits"/model.b*.mlir "$digits/weights.safetensors" "$work/repo/digits_post/"
grep -v '^name:\|^description:\|^batching:\|^provenance:' "$digits/manifest.yaml" \
  > "$work/repo/digits_post/manifest.yaml"
cat >> "$work/repo/digits_post/manifest.yaml" <<'YAML'
client_outputs:
  - {name: "probs", dtype: "f32", shape: "cn", dims: {c: 10}}
batching: {compiled_batch_sizes: [1, 4, 8]}
YAML
cat > "$work/repo/digits_post/model.py" <<'PY'
import numpy as np

def postprocess(outputs):
    logits = outputs["logits"]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return {"probs": (e / e.sum(axis=1, keepdims=True)).astype(np.float32)}

register_model("digits_post", postprocess=postprocess)
PY
port=$((20000 + RANDOM % 20000))
cat > "$work/node.yaml" <<YAML
model_repo: $work/repo
base_port: $((port + 1))
metrics_base_port: $((port + 2))
global:
  endpoints: {host: 127.0.0.1, http_port: $port}
  runtime: {backend: cpu, executable_cache: false}
  hooks: {processes_per_model: $processes${HOOKS_PYTHON:+, python: "$HOOKS_PYTHON"}}
YAML
"$server" serve --config "$work/node.yaml" > "$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 240); do
  curl -sf "http://127.0.0.1:$((port + 2))/readyz" > /dev/null && break
  sleep 0.25
done
rate() { # requests per second of model $1
  "$server" loadgen --model "$1" --grpc-url "127.0.0.1:$((port + 1))" -c "$clients" \
    --duration "$seconds" | awk '/req\/s/ {print $(NF-1)}'
}
echo "clients=$clients seconds=$seconds processes_per_model=$processes"
for r in $(seq 1 "$rounds"); do
  plain=$(rate digits_cnn)
  hooked=$(rate digits_post)
  echo "round $r: digits_cnn $plain req/s, digits_post $hooked req/s, ratio" \
    "$(awk -v a="$hooked" -v b="$plain" 'BEGIN {printf "%.2f", a / b}')"
done
