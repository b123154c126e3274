#!/usr/bin/env bash
# Two GPUs behind one endpoint (docs/node.md "Two GPUs"): `reactant-server node` with
# `gpus: auto` on the nvidia-h200-x2 machine. Two steps:
#   scripts/gpu_two_gpus.sh stage [BUILD_DIR]   here: scripts/gpu_acceptance.sh stage (binary,
#       libraries, bundles, golden inputs and GPU goldens), test/validation/gpu_validation.sh
#       stage and, when build-fuzz/ holds them, the fuzz targets with their seeds, packed into
#       .device/x2.tar.gz (one archive: the device tool carries at most 64 MiB)
#   scripts/gpu_two_gpus.sh run                 on the GPU machine: unpack; start every fuzz
#       target for 600 s in the background (the machine's spare cores, docs/testing.md); run
#       the checks below, then the validation records (docs/validation.md "On the H200");
#       prints one PASS/FAIL line per check and the throughput table; logs go to $OUT
#   scripts/gpu_two_gpus.sh fuzz-report         on the same machine, later: waits for the
#       fuzz targets and prints runs, exec/s, corpus size and the verdict of each
# Checks: every fixture request through the embedded gateway (round_robin, each request sent
# twice so each worker serves it once, confirmed from the workers' own counters) and straight
# to each worker: bit-identical to golden/<model>/b{N}.gpu.safetensors (regulated profile,
# runtime.autotune false, numerics auto); resnet_bench throughput with 64 clients on two
# GPUs (round_robin; lpt_packing + spread) vs one GPU; SIGKILL of one worker under load.
set -uo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

stage() {
  set -e
  bash scripts/gpu_acceptance.sh stage "${1:-build}"
  bash test/validation/gpu_validation.sh stage "${1:-build}"
  rm -rf .device/valid/bin .device/valid/lib  # the same as gpu-accept's, linked at run time
  local parts=(gpu-accept valid) fz=build-fuzz t
  rm -rf .device/fuzz
  if [ -x "$fz/fuzz/fuzz_grpc_infer" ]; then
    mkdir -p .device/fuzz/bin .device/fuzz/lib .device/fuzz/seeds .device/fuzz/manifests
    for t in $FUZZ_TARGETS; do cp "$fz/fuzz/fuzz_$t" .device/fuzz/bin/; done
    ldd .device/fuzz/bin/* | awk '/=> \// {print $3}' | sort -u |
      grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt)\.so' | while read -r l; do
      [ -e ".device/gpu-accept/lib/$(basename "$l")" ] || cp -L "$l" .device/fuzz/lib/
    done
    cp -r "$fz/seeds/." .device/fuzz/seeds/
    for m in iris_mlp tiny_bert; do cp ../shared/fixtures/bundles/$m/manifest.yaml .device/fuzz/manifests/$m.yaml; done
    strip --strip-unneeded .device/fuzz/bin/* .device/fuzz/lib/* 2>/dev/null || true
    parts+=(fuzz)
  fi
  tar -C .device -czf .device/x2.tar.gz "${parts[@]}"
  du -sh .device/x2.tar.gz
}

FUZZ_TARGETS="mlir_parser manifest safetensors http_infer binary_header grpc_infer"
FUZZ_WORK=/tmp/fuzz-x2
PASS=0
FAIL=0
check() { # check NAME OK(0|1) DETAIL
  if [ "$2" = 0 ]; then PASS=$((PASS + 1)); echo "PASS $1: $3"; else FAIL=$((FAIL + 1)); echo "FAIL $1: $3"; fi
}
GW_GRPC=18001
W_GRPC=18100  # worker i: gRPC 18100+i, metrics 18200+i
W_METRICS=18200
GW_METRICS=18002

# requests_on PORT: the worker's worker_requests_total summed over its series.
requests_on() {
  python3 - "$1" <<'EOF'
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode()
print(int(sum(float(l.split()[-1]) for l in text.splitlines() if l.startswith("worker_requests_total{"))))
EOF
}

# start_node TAG GPUS MODE FILL MODELS PROFILE: node file + gateway file, waits for /readyz.
start_node() {
  local tag=$1 gpus=$2 mode=$3 fill=$4 models=$5 profile=$6
  # Plumbing check without GPUs: two (or one) pretend devices, CPU fallback.
  [ -n "${RS_TWO_GPUS_PLUMBING:-}" ] && [ "$gpus" = auto ] && gpus=2
  cat >"$WORK/$tag.node.yaml" <<EOF
model_repo: "$WORK/repo"
base_port: $W_GRPC
metrics_base_port: $W_METRICS
gpus: $gpus
global:
  model_control_mode: static
  models_include: $models
  endpoints: {host: 127.0.0.1, http_port: 0}
  runtime:
    backend: cuda
    allow_cpu_fallback: ${RS_TWO_GPUS_PLUMBING:-false}  # true: plumbing check on a machine without GPUs
    profile: $profile
    batch_sizes: all  # explicit: each request runs the program of its own batch size, as the goldens did
    numerics: auto
    autotune: false
    mem_fraction: 0.4
    executable_cache: true
  scheduler: {discipline: fifo}
EOF
  cat >"$WORK/$tag.gateway.yml" <<EOF
listen: {grpc: "127.0.0.1:$GW_GRPC", http: "127.0.0.1:18000", metrics: "127.0.0.1:$GW_METRICS"}
scheduling: {mode: $mode, routing_fill_mode: $fill, default_replicas: all}
EOF
  REACTANT_GATEWAY_FILE="$WORK/$tag.gateway.yml" LD_LIBRARY_PATH="$LIB" \
    setsid "$BIN/reactant-server" node "$WORK/$tag.node.yaml" >"$LOGDIR/$tag.log" 2>&1 &
  NODE_PID=$!
  local t0=$SECONDS
  for _ in $(seq 1 1800); do
    if python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$GW_METRICS/readyz', timeout=1)" 2>/dev/null; then
      echo "node $tag ready after $((SECONDS - t0)) s"
      return 0
    fi
    kill -0 "$NODE_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "node $tag did not become ready"; tail -20 "$LOGDIR/$tag.log"
  return 1
}
stop_node() {
  kill -TERM "$NODE_PID" 2>/dev/null
  wait "$NODE_PID"
  echo "node stopped, exit $?"
}

infer() { # infer PORT MODEL INPUT OUTPUT
  LD_LIBRARY_PATH="$LIB" "$BIN/reactant-server" infer --model "$2" --input "$3" --output "$4" \
    --url "127.0.0.1:$1" >"$WORK/infer.txt" 2>&1
}

identity() {
  local g name n before0 before1 gw0 gw1 want verdicts
  for g in "$FIX"/golden/*/b*.in.safetensors; do
    name=$(basename "$(dirname "$g")")
    n=$(basename "$g" .in.safetensors)
    want="$(dirname "$g")/$n.gpu.safetensors"
    verdicts=""
    before0=$(requests_on $W_METRICS)
    before1=$(requests_on $((W_METRICS + 1)))
    for k in a b; do
      infer $GW_GRPC "$name" "$g" "$WORK/out/gw_$k.$name.$n.safetensors" ||
        { verdicts+=" gateway:$k request failed $(head -c 200 "$WORK/infer.txt")"; continue; }
      verdicts+=" gateway:$k $(python3 "$HELP" compare "$WORK/out/gw_$k.$name.$n.safetensors" "$want")"
    done
    gw0=$(($(requests_on $W_METRICS) - before0))
    gw1=$(($(requests_on $((W_METRICS + 1))) - before1))
    for i in 0 1; do
      infer $((W_GRPC + i)) "$name" "$g" "$WORK/out/w$i.$name.$n.safetensors" ||
        { verdicts+=" worker$i: request failed"; continue; }
      verdicts+=" worker$i: $(python3 "$HELP" compare "$WORK/out/w$i.$name.$n.safetensors" "$want")"
    done
    local bad=0
    case "$verdicts" in *DIFFERS* | *failed*) bad=1 ;; esac
    [ "$gw0" = 1 ] && [ "$gw1" = 1 ] || bad=1
    check "two GPUs $name $n vs $n.gpu.safetensors" $bad \
      "gateway sent one to each worker (worker0 +$gw0, worker1 +$gw1);$verdicts"
  done
}

# throughput TAG: resnet_bench, 64 gRPC clients through the public port, 20 s; sets IPS.
throughput() {
  LD_LIBRARY_PATH="$LIB" "$BIN/reactant-server" loadgen --model resnet_bench --grpc-url 127.0.0.1:$GW_GRPC \
    --concurrency 64 --duration "${RS_LOAD_SECONDS:-20}" --rows 1 --payloads 8 --no-verify >"$LOGDIR/load_$1.txt" 2>&1
  IPS=$(grep -oE "[0-9.]+ req/s" "$LOGDIR/load_$1.txt" | head -1 | cut -d' ' -f1)
  echo "throughput $1: ${IPS:-?} images/s ($(grep -iE 'error|p50' "$LOGDIR/load_$1.txt" | head -3 | tr '\n' ' '))"
}

# fuzz_start: every target for 600 s in its own process session (it outlives this call).
# The targets were built with RS_SHARED_DIR=/work/shared: the two manifests they read go there.
fuzz_start() {
  [ -d .device/fuzz ] || { echo "fuzz: not staged"; return; }
  local t root=$PWD
  mkdir -p /work/shared/fixtures/bundles/iris_mlp /work/shared/fixtures/bundles/tiny_bert
  for t in iris_mlp tiny_bert; do cp ".device/fuzz/manifests/$t.yaml" /work/shared/fixtures/bundles/$t/manifest.yaml; done
  rm -rf "$FUZZ_WORK"
  mkdir -p "$FUZZ_WORK"
  for t in $FUZZ_TARGETS; do
    mkdir -p "$FUZZ_WORK/corpus/$t" "$FUZZ_WORK/seeds/$t"
    cp -r ".device/fuzz/seeds/$t/." "$FUZZ_WORK/seeds/$t/" 2>/dev/null
    (cd "$FUZZ_WORK" && LD_LIBRARY_PATH="$root/.device/fuzz/lib:$root/.device/gpu-accept/lib" setsid \
      "$root/.device/fuzz/bin/fuzz_$t" "corpus/$t" "seeds/$t" -max_total_time="${FUZZ_SECONDS:-600}" -max_len=65536 \
      -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 -artifact_prefix="$FUZZ_WORK/$t-" \
      >"$FUZZ_WORK/fuzz_$t.log" 2>&1 &) >/dev/null 2>&1 </dev/null
  done
  sleep 1
  echo "fuzz: started $(pgrep -fc 'fuzz/bin/fuzz_') targets for ${FUZZ_SECONDS:-600} s"
}

fuzz_report() {
  local t runs eps files bytes result status=0
  while pgrep -f 'fuzz/bin/fuzz_' >/dev/null; do sleep 2; done
  echo "| target | seconds | runs | exec/s | corpus files | corpus bytes | result |"
  echo "|---|---|---|---|---|---|---|"
  for t in $FUZZ_TARGETS; do
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$FUZZ_WORK/fuzz_$t.log" | grep -o '[0-9]*$')
    eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$FUZZ_WORK/fuzz_$t.log" | grep -o '[0-9]*$')
    files=$(find "$FUZZ_WORK/corpus/$t" -type f | wc -l)
    bytes=$(du -sb "$FUZZ_WORK/corpus/$t" | cut -f1)
    result=ok
    if grep -qE "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY:" "$FUZZ_WORK/fuzz_$t.log" ||
      ls "$FUZZ_WORK/$t-"* >/dev/null 2>&1 || [ -z "$runs" ]; then
      result="FAILED: $(grep -m1 -E 'ERROR|runtime error|SUMMARY' "$FUZZ_WORK/fuzz_$t.log" | cut -c1-160)"
      status=1
    fi
    echo "| $t | ${FUZZ_SECONDS:-600} | ${runs:-?} | ${eps:-?} | $files | $bytes | $result |"
  done
  [ -n "${OUT:-}" ] && tar -C "$FUZZ_WORK" -czf "$OUT/fuzz_logs.tar.gz" $(cd "$FUZZ_WORK" && ls fuzz_*.log) \
    $(cd "$FUZZ_WORK" && ls | grep -E -- '-(crash|leak|timeout|oom)-' || true)
  return $status
}

run() {
  tar -C .device -xzf .device/x2.tar.gz
  fuzz_start
  local DEST=.device/gpu-accept
  LIB="$PWD/$DEST/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  BIN=$PWD/$DEST/bin
  FIX=$PWD/$DEST/fixtures
  HELP=$PWD/scripts/gpu_acceptance.py
  WORK=$(mktemp -d /tmp/two-gpus.XXXX)
  LOGDIR=$WORK/logs
  mkdir -p "$LOGDIR" "$WORK/out"
  cp -r "$FIX/bundles" "$WORK/repo"
  echo "== machine"
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader

  echo "== node, gpus: auto, regulated profile, autotune off, round_robin"
  start_node regulated auto round_robin run "[]" regulated ||
    { check "node with two GPU workers starts" 1 "see log"; return; }
  grep -E "\[supervisor\]|GPU backend ready" "$LOGDIR/regulated.log" | cut -c1-300 | head -12
  local devices
  devices=$(grep -oE "worker '[a-z0-9]+' started pid=[0-9]+ device=[^ ]+" "$LOGDIR/regulated.log" | grep -oE 'device=[^ ]+' | sort -u | wc -l)
  check "node: two workers, each with its own GPU" \
    $([ "$devices" = 2 ] && [ "$(grep -c 'GPU backend ready' "$LOGDIR/regulated.log")" = 2 ]; echo $?) \
    "$devices distinct devices; $(grep -oE "worker '[a-z0-9]+' started pid=[0-9]+ device=[^ ]+" "$LOGDIR/regulated.log" | tr '\n' ';')"
  identity

  echo "== SIGKILL of worker1 under load (16 clients, digits_cnn, 30 s)"
  LD_LIBRARY_PATH="$LIB" "$BIN/reactant-server" loadgen --model digits_cnn --grpc-url 127.0.0.1:$GW_GRPC \
    --concurrency 16 --duration 30 --rows 1 --payloads 8 >"$LOGDIR/load_kill.txt" 2>&1 &
  local lg=$!
  sleep 8
  local victim before_restart
  victim=$(pgrep -f "serve --config .* --worker worker1" | head -1)
  kill -KILL "$victim"
  local killed_at=$SECONDS
  echo "killed worker1 pid $victim"
  local back=""
  for _ in $(seq 1 200); do
    if python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$((W_METRICS + 1))/readyz', timeout=1)" 2>/dev/null; then
      back=$((SECONDS - killed_at)); break
    fi
    sleep 0.1
  done
  sleep 5
  before_restart=$(requests_on $((W_METRICS + 1)) 2>/dev/null || echo 0)
  wait $lg
  cat "$LOGDIR/load_kill.txt" | head -30
  grep -E "\[supervisor\].*(exit|restart|start)" "$LOGDIR/regulated.log" | tail -4 | cut -c1-250
  check "SIGKILL: the supervisor restarts worker1 and it serves again" \
    $([ -n "$back" ] && [ "${before_restart:-0}" -gt 0 ]; echo $?) \
    "ready again ${back:-never} s after the kill; requests served by the new worker1 within 5 s: ${before_restart:-0}"
  stop_node

  echo "== throughput, resnet_bench, 64 clients (profile none: coalescing on, all batch sizes)"
  start_node rr auto round_robin run "[resnet_bench]" none && throughput two_gpus_round_robin
  local rr=$IPS
  stop_node
  start_node lpt auto lpt_packing spread "[resnet_bench]" none && throughput two_gpus_lpt_spread
  local lpt=$IPS
  stop_node
  start_node one 1 round_robin run "[resnet_bench]" none && throughput one_gpu
  local one=$IPS
  stop_node
  echo "| setup | images/s | vs one GPU |"
  echo "|---|---|---|"
  for row in "one GPU:$one" "two GPUs, round_robin:$rr" "two GPUs, lpt_packing + spread:$lpt"; do
    echo "| ${row%%:*} | ${row##*:} | $(awk -v a="${row##*:}" -v b="$one" 'BEGIN {if (b > 0) printf "%.2fx", a / b; else print "?"}') |"
  done
  [ -n "${OUT:-}" ] && tar -C "$WORK" -czf "$OUT/two_gpus_logs.tar.gz" logs
  echo "== two GPUs: $PASS passed, $FAIL failed"

  if [ -d .device/valid ] && [ -z "${RS_TWO_GPUS_PLUMBING:-}" ]; then
    echo "== validation records on the H200 (test/validation/gpu_validation.sh)"
    ln -sfn ../gpu-accept/bin .device/valid/bin
    ln -sfn ../gpu-accept/lib .device/valid/lib
    bash .device/valid/gpu_validation.sh run 2>&1 | cut -c1-400
  fi
}

case "${1:-}" in
stage) stage "${2:-}" ;;
run) run 2>&1 | tee "${OUT:-/tmp}/two_gpus.log" ;;
identity) # the identity checks alone (regulated node, two GPUs)
  (tar -C .device -xzf .device/x2.tar.gz gpu-accept
    DEST=.device/gpu-accept LIB="$PWD/$DEST/lib" BIN=$PWD/$DEST/bin FIX=$PWD/$DEST/fixtures
    HELP=$PWD/scripts/gpu_acceptance.py WORK=$(mktemp -d /tmp/two-gpus.XXXX) LOGDIR=$WORK/logs
    mkdir -p "$LOGDIR" "$WORK/out" && cp -r "$FIX/bundles" "$WORK/repo"
    start_node regulated auto round_robin run "[]" regulated && identity
    grep -m2 "Effective configuration" "$LOGDIR/regulated.log" | grep -oE "runtime.batch_sizes=[a-z]+|scheduler.coalescing=[a-z]+|runtime.profile=[a-z]+|runtime.autotune=[a-z]+" | sort | uniq -c
    stop_node
    echo "== identity: $PASS passed, $FAIL failed") 2>&1 | tee "${OUT:-/tmp}/identity.log" ;;
fuzz-report) fuzz_report 2>&1 | tee "${OUT:-/tmp}/fuzz_report.log" ;;
*)
  echo "usage: $0 stage [BUILD_DIR] | run | fuzz-report" >&2
  exit 2
  ;;
esac
