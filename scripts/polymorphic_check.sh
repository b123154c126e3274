#!/usr/bin/env bash
# polymorphic_check.sh: serves the shape-polymorphic test bundles (test/data/bundles: mlp_poly
# and encoder_poly, one model.mlir each, refined at load) beside their per-size twins
# (mlp_sized, encoder_sized: the same functions and weights exported once per size) on one
# backend, sends every compiled size and shape variant the same request through both, and
# compares the answers byte for byte (docs/shape_polymorphism.md, "Checking a backend").
# Prints one line per case and a summary; exits 1 if any answer differs or fails.
# Usage: scripts/polymorphic_check.sh [cpu|cuda] [BINARY]
#   cuda: runtime.backend cuda, the plugin found as docs/gpu.md says (RS_PJRT_PLUGIN sets
#   runtime.pjrt_plugin); BINARY defaults to build/src/tools/reactant-server.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
backend="${1:-cpu}"
bin="${2:-$root/build/src/tools/reactant-server}"
[ -x "$bin" ] || { echo "polymorphic_check: $bin not built" >&2; exit 1; }
work="$(mktemp -d)"
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
grpc=$(port); http=$(port); metrics=$(port)
plugin=""
[ -n "${RS_PJRT_PLUGIN:-}" ] && plugin=", pjrt_plugin: \"$RS_PJRT_PLUGIN\""
cat >"$work/node.yaml" <<YAML
model_repo: "$root/test/data/bundles"
base_port: $grpc
metrics_base_port: $metrics
global:
  endpoints: {host: 127.0.0.1, http_port: $http}
  runtime: {backend: $backend, executable_cache: false$plugin}
  models_include: [mlp_poly, mlp_sized, encoder_poly, encoder_sized]
YAML
"$bin" serve --config "$work/node.yaml" --log-level warn >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 1800); do
  curl -fs "http://127.0.0.1:$metrics/readyz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { echo "polymorphic_check: the server exited" >&2; cat "$work/server.log" >&2; exit 1; }
  sleep 0.1
done
curl -fs "http://127.0.0.1:$metrics/readyz" >/dev/null || { echo "polymorphic_check: not ready" >&2; cat "$work/server.log" >&2; exit 1; }

# request NAME SHAPE...: a safetensors request file with input "x" of that shape, FP32
# values sin(0.37 i) (deterministic, the same for both bundles).
request() {
  python3 - "$work/$1.safetensors" "${@:2}" <<'PY'
import json, math, struct, sys
path, shape = sys.argv[1], [int(d) for d in sys.argv[2:]]
n = 1
for d in shape:
    n *= d
data = struct.pack("<%df" % n, *[math.sin(0.37 * i) for i in range(n)])
head = json.dumps({"x": {"dtype": "F32", "shape": shape, "data_offsets": [0, len(data)]}}).encode()
head += b" " * (-len(head) % 8)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(head)) + head + data)
PY
}

status=0
cases=0
# check POLY SIZED NAME SHAPE...: the same request to both models, answers compared.
check() {
  local poly=$1 sized=$2 name=$3
  shift 3
  request "$name" "$@"
  cases=$((cases + 1))
  for m in "$poly" "$sized"; do
    if ! "$bin" infer --model "$m" --url "127.0.0.1:$grpc" --input "$work/$name.safetensors" \
        --output "$work/$name.$m.out" --max-values 0 >"$work/$name.$m.log" 2>&1; then
      echo "FAIL $name: $m: $(tail -1 "$work/$name.$m.log")"
      status=1
      return
    fi
  done
  # The files differ in their __metadata__ (the model's name): compare the tensors.
  if python3 - "$work/$name.$poly.out" "$work/$name.$sized.out" <<'PY'; then
import json, struct, sys
def tensors(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    head = json.loads(b[8:8 + n])
    head.pop("__metadata__", None)
    body = b[8 + n:]
    return {k: (v["dtype"], v["shape"], body[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in head.items()}
sys.exit(0 if tensors(sys.argv[1]) == tensors(sys.argv[2]) else 1)
PY
    echo "PASS $name [$*]: $poly and $sized answer the same bytes"
  else
    echo "FAIL $name [$*]: $poly and $sized differ"
    status=1
  fi
}

echo "== backend $backend"
for b in 1 2 3 4 8; do check mlp_poly mlp_sized "mlp_b$b" "$b" 8; done
for s in 4 8; do
  for b in 1 2 3; do check encoder_poly encoder_sized "encoder_b${b}_s$s" "$b" "$s" 8; done
done
echo "== $cases cases: $([ $status -eq 0 ] && echo 'all equal' || echo 'FAILED')"
exit $status
