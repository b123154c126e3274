#!/usr/bin/env bash
# Validation records on the GPU machine (docs/validation.md "On the H200"). Two steps:
#   test/validation/gpu_validation.sh stage [BUILD_DIR]   here: copy reactant-server, the shared
#       libraries it loads (not the C/C++ runtime), digits_cnn + iris_mlp and their CPU goldens
#       into .device/valid (ignored by git; carried to the GPU machine)
#   .device/valid/gpu_validation.sh run                    there: serve on the PJRT backend
#       (regulated, numerics f32), record, restart + check (gRPC and HTTP), numerics auto,
#       one changed weight; prints every verdict; logs, record and reports go to $OUT
set -u
if [ "${1:-}" = stage ]; then
  set -e
  cd "$(dirname "$0")/../.."
  build=${2:-build}
  D=.device/valid
  rm -rf "$D"
  mkdir -p "$D/bin" "$D/lib" "$D/repo" "$D/golden" "$D/golden_iris"
  cp "$build/src/tools/reactant-server" "$D/bin/"
  ldd "$D/bin/reactant-server" | awk '/=> \// {print $3}' | sort -u |
    grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt)\.so' |
    xargs -r -I{} cp -L {} "$D/lib/"
  for m in digits_cnn iris_mlp; do
    mkdir -p "$D/repo/$m"
    cp ../shared/fixtures/bundles/$m/{manifest.yaml,model*.mlir,weights.safetensors} "$D/repo/$m/"
  done
  cp ../shared/fixtures/golden/digits_cnn/b{1,4,8}.safetensors "$D/golden/"
  cp ../shared/fixtures/golden/iris_mlp/b8.safetensors "$D/golden_iris/"
  cp test/validation/gpu_validation.sh "$D/"
  strip --strip-unneeded "$D"/bin/* "$D"/lib/* 2>/dev/null || true
  du -sh "$D"
  exit 0
fi
[ "${1:-}" = run ] || { echo "usage: $0 stage [BUILD_DIR] | run"; exit 2; }
D=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$D/lib
RS=$D/bin/reactant-server
W=/tmp/validation-gpu
OUTDIR=${OUT:-/tmp/validation-out}
rm -rf "$W"; mkdir -p "$W" "$OUTDIR"; cp -r "$D/repo" "$W/repo"; cd "$W"
cat > node.yaml <<EOF
model_repo: $W/repo
base_port: 18101
metrics_base_port: 18102
global:
  model_control_mode: static
  endpoints: {host: 127.0.0.1, http_port: 18100}
  runtime: {backend: cuda, allow_cpu_fallback: false, profile: regulated, numerics: f32}
EOF
SERVER=
start() { # start TAG [ENV=VALUE]
  local tag=$1; shift
  env "$@" "$RS" serve --config node.yaml > "$OUTDIR/serve_$tag.log" 2>&1 & SERVER=$!
  for i in $(seq 1 600); do
    grep -q "serving grpc" "$OUTDIR/serve_$tag.log" && return 0
    kill -0 $SERVER 2>/dev/null || { echo "server $tag exited"; tail -5 "$OUTDIR/serve_$tag.log"; return 1; }
    sleep 0.2
  done
  echo "server $tag did not come up"; return 1
}
stop() { kill $SERVER; wait $SERVER; }
t0=$(date +%s.%N)
start first || exit 1
echo "== startup $(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s"
grep -E "GPU backend ready|TF32 probe numerics|model loaded" "$OUTDIR/serve_first.log" | cut -c1-260
echo "== evidence"
python3 - <<'EOF'
import json, urllib.request
d = json.load(urllib.request.urlopen("http://127.0.0.1:18100/v2/evidence"))
print(json.dumps({"backend": d["backend"], "tf32_probe": d["tf32_probe"],
                  "digits_cnn": {k: d["models"]["digits_cnn"][k] for k in ("batch_sizes", "numerics", "programs")}}, indent=1))
EOF
echo "== record"
"$RS" validate record --url 127.0.0.1:18101 --out record.json --outputs-dir outputs \
  --golden digits_cnn="$D/golden" --golden iris_mlp="$D/golden_iris"; echo "exit $?"
stop
echo "== restart + check"
start second || exit 1
grep -c "executable cache: hit" "$OUTDIR/serve_second.log"
"$RS" validate check record.json; echo "exit $?"
"$RS" validate check record.json --protocol http --url 127.0.0.1:18100 > /dev/null; echo "http exit $?"
stop
echo "== numerics auto"
start auto INFERENCE_SERVER_RUNTIME_NUMERICS=auto || exit 1
"$RS" validate check record.json --report report_auto.json; echo "exit $?"
stop
echo "== weight"
python3 - <<'EOF'
import json, struct
path = "repo/digits_cnn/weights.safetensors"
data = bytearray(open(path, "rb").read())
n = struct.unpack_from("<Q", data)[0]
begin = 8 + n + json.loads(data[8:8 + n])["fc.bias"]["data_offsets"][0]
(b0,) = struct.unpack_from("<f", data, begin)
struct.pack_into("<f", data, begin, b0 + 1.0)
open(path, "wb").write(data)
EOF
start weight || exit 1
"$RS" validate check record.json --report report_weight.json; echo "exit $?"
stop
cp record.json report_*.json "$OUTDIR/"
