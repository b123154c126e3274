#!/usr/bin/env bash
# The GPU acceptance command for the server (docs/gpu.md "Server acceptance"). Two steps:
#   scripts/gpu_acceptance.sh stage [BUILD_DIR]   here: copy reactant-server and
#       reactant-gpu-check, every shared library they load except the C/C++ runtime (the GPU
#       image has newer ones), the fixture bundles and, per golden, the request inputs into
#       .device/gpu-accept (ignored by git; carried to the GPU machine)
#   scripts/gpu_acceptance.sh run                 on the GPU machine: serve every bundle
#       through `reactant-server serve` with runtime.backend cuda and check it over gRPC;
#       prints one line per check and a summary; the whole log goes to $OUT when set
#   scripts/gpu_acceptance.sh goldens             on the GPU machine: only the fixtures' answers
#       against their GPU goldens, byte for byte (RS_GPU_BIN: the server's folder)
#   scripts/gpu_acceptance.sh overhead            on the GPU machine: only the serving figures
#       (bare execute through jaxlib and reactant-gpu-check, 1-client overhead, coalescing)
#   scripts/gpu_acceptance.sh inflight            on the GPU machine: coalescing for 1 to 4
#       batches in flight (scheduler.max_batches_in_flight), autotuning on
#   scripts/gpu_acceptance.sh serving             on the GPU machine: the serving figures with
#       autotuning on (iris_mlp, resnet_bench, bert_bench) and the autotune cache's restarts
#   scripts/gpu_acceptance.sh serving-load        the same without the autotune cache's restarts
#   scripts/gpu_acceptance.sh compare BASE_BIN_DIR on the GPU machine: serving figures of this
#       build and of BASE_BIN_DIR/reactant-server, alternating on one machine
#   scripts/gpu_acceptance.sh sweep [DELAYS_US...] on the GPU machine: 32-client coalescing
#       for each coalescing wait
set -uo pipefail
cd "$(dirname "$0")/.."
DEST=.device/gpu-accept
HELP=scripts/gpu_acceptance.py
# python3 with jax and the CUDA plugin on the GPU machine (DESIGN.md "Testing on a GPU")
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3

stage() {
  local build=${1:-build-gpu} shared=${RS_SHARED_DIR:-../shared}
  set -e
  rm -rf "$DEST"
  mkdir -p "$DEST/bin" "$DEST/lib" "$DEST/fixtures/bundles" "$DEST/fixtures/golden"
  cp "$build/src/tools/reactant-server" "$DEST/bin/"
  # reactant-gpu-check (docs/gpu.md) from this build, else from the pjrt build
  cp "$(ls "$build/src/tools/reactant-gpu-check" build-pjrt/src/tools/reactant-gpu-check 2>/dev/null | head -1)" "$DEST/bin/"
  for exe in "$DEST"/bin/*; do
    ldd "$exe" | awk '/=> \// {print $3}'
  done | sort -u | grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt)\.so' |
    xargs -r -I{} cp -L {} "$DEST/lib/"
  for b in "$shared"/fixtures/bundles/*/; do
    name=$(basename "$b")
    mkdir -p "$DEST/fixtures/bundles/$name"
    cp "$b"manifest.yaml "$b"model*.mlir "$DEST/fixtures/bundles/$name/"
    [ -f "$b"weights.safetensors ] && cp "$b"weights.safetensors "$DEST/fixtures/bundles/$name/"
    # The same programs as StableHLO portable artifacts (run builds bundles of them).
    mkdir -p "$DEST/fixtures/portable/$name"
    cp "$b"portable/*.mlirbc "$DEST/fixtures/portable/$name/"
  done
  for g in "$shared"/fixtures/golden/*/; do
    name=$(basename "$g")
    mkdir -p "$DEST/fixtures/golden/$name"
    for gpu in "$g"b*.gpu.safetensors; do
      n=$(basename "$gpu" .gpu.safetensors)
      cp "$gpu" "$g$n.gpu_highest.safetensors" "$DEST/fixtures/golden/$name/"
      python3 "$HELP" split "$g$n.safetensors" "$gpu" "$DEST/fixtures/golden/$name/$n.in.safetensors" \
        "$shared/fixtures/bundles/$name/manifest.yaml"
    done
  done
  # reactant-gpu-check times only batch sizes with goldens: zero inputs and zero "goldens"
  # for resnet_bench b32 in a separate tree, for the bare batch-32 execute time only.
  local bare=$DEST/bare/golden/resnet_bench
  mkdir -p "$bare"
  python3 "$HELP" blank "$shared/fixtures/golden/resnet_bench/b1.safetensors" 32 "$bare/b32.safetensors"
  python3 "$HELP" blank "$shared/fixtures/golden/resnet_bench/b1.gpu.safetensors" 32 "$bare/b32.gpu.safetensors"
  cp "$bare/b32.gpu.safetensors" "$bare/b32.gpu_highest.safetensors"
  cp "$shared/fixtures/golden/resnet_bench/b1".{safetensors,gpu.safetensors,gpu_highest.safetensors} "$bare/"
  # The same for iris_mlp b1 and bert_bench b1 and b32 (`serving`'s bare execute times).
  local m
  for m in iris_mlp bert_bench; do
    mkdir -p "$DEST/bare/golden/$m"
    cp "$shared/fixtures/golden/$m/b1".{safetensors,gpu.safetensors,gpu_highest.safetensors} "$DEST/bare/golden/$m/"
  done
  bare=$DEST/bare/golden/bert_bench
  python3 "$HELP" blank "$shared/fixtures/golden/bert_bench/b1.safetensors" 32 "$bare/b32.safetensors"
  python3 "$HELP" blank "$shared/fixtures/golden/bert_bench/b1.gpu.safetensors" 32 "$bare/b32.gpu.safetensors"
  cp "$bare/b32.gpu.safetensors" "$bare/b32.gpu_highest.safetensors"
  strip --strip-unneeded "$DEST"/bin/* "$DEST"/lib/* 2>/dev/null || true
  du -sh "$DEST"
}

# --- on the GPU machine -------------------------------------------------------------
PORT=18001
PASS=0
FAIL=0
SERVER_PID=
check() { # check NAME OK(0|1) DETAIL
  if [ "$2" = 0 ]; then PASS=$((PASS + 1)); echo "PASS $1: $3"; else FAIL=$((FAIL + 1)); echo "FAIL $1: $3"; fi
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.2f", b - a}'; }

# serve TAG REPO NUMERICS [MODELS_INCLUDE_YAML]: starts the server, waits until it serves
# (or exits), sets START_S to the seconds from exec to the `serving` line.
serve() {
  local tag=$1 repo=$2 numerics=$3 include=${4:-[]}
  cat >"$WORK/$tag.yaml" <<EOF
model_repo: "$repo"
base_port: $PORT
metrics_base_port: $((PORT + 1))
global:
  model_control_mode: static
  models_include: $include
  endpoints: {host: 127.0.0.1, http_port: 0}
  runtime:
    backend: ${BACKEND:-cuda}
    allow_cpu_fallback: ${ALLOW_CPU_FALLBACK:-false}  # true only for a plumbing check without a GPU
    numerics: $numerics
    autotune: ${AUTOTUNE:-false}
    autotune_cache_dir: "${AUTOTUNE_DIR:-$WORK/autotune}"
    mem_fraction: 0.5
    preallocate: ${PREALLOCATE:-true}
    completion_polling: ${COMPLETION_POLLING:-true}
    batch_sizes: ${BATCH_SIZES:-all}
    executable_cache: true
    xla_flags: {xla_gpu_exclude_nondeterministic_ops: true}
  scheduler: {coalescing: ${COALESCING:-true}, max_queue_delay_microseconds: ${QUEUE_DELAY_US:-0}, max_batches_in_flight: ${IN_FLIGHT:-0}}
  grpc: {busy_poll_us: 20000}  # the cuda default, also for the cpu comparison
EOF
  local t0
  t0=$(now)
  LD_LIBRARY_PATH="$LIB" "$BIN/reactant-server" serve --config "$WORK/$tag.yaml" >"$LOGDIR/$tag.log" 2>&1 &
  SERVER_PID=$!
  START_S=
  for _ in $(seq 1 1200); do
    if grep -q "serving grpc=" "$LOGDIR/$tag.log"; then START_S=$(since "$t0"); break; fi
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  grep -E "GPU backend ready|TF32 probe|model load failed|models ready" "$LOGDIR/$tag.log" | cut -c1-400
  [ -n "$START_S" ]
}
stop() {
  [ -n "$SERVER_PID" ] && kill -TERM "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID"
  SERVER_PID=
}

# infer_all TAG KIND: every golden through gRPC into $WORK/out/TAG/, compared with
# b{N}.KIND.safetensors (KIND gpu or gpu_highest).
infer_all() {
  local tag=$1 kind=$2 g name n verdict rc
  mkdir -p "$WORK/out/$tag"
  for g in "$FIX"/golden/*/b*.in.safetensors; do
    name=$(basename "$(dirname "$g")")
    n=$(basename "$g" .in.safetensors)
    out="$WORK/out/$tag/$name.$n.safetensors"
    if ! LD_LIBRARY_PATH="$LIB" "$BIN/reactant-server" infer --model "$name" --input "$g" --output "$out" \
      --url 127.0.0.1:$PORT >"$WORK/infer.txt" 2>&1; then
      check "$tag $name $n" 1 "request failed: $(tr '\n' ' ' <"$WORK/infer.txt" | cut -c1-300)"
      continue
    fi
    verdict=$(python3 "$HELP" compare "$out" "$(dirname "$g")/$n.$kind.safetensors")
    rc=$?
    if [ "$kind" = gpu_highest ] && [ "$name" = tf32_algo ]; then
      # docs/gpu.md "Server acceptance": under f32 the numerics pass rewrites the explicit
      # TF32 algorithm to all-f32, while b{N}.gpu_highest kept it; not a pass/fail check.
      echo "NOTE $tag $name $n (TF32 algorithm rewritten to f32): vs $n.gpu_highest $verdict;" \
        "vs $n.gpu (TF32 kept) $(python3 "$HELP" compare "$out" "$(dirname "$g")/$n.gpu.safetensors")"
      continue
    fi
    check "$tag $name $n vs $n.$kind.safetensors" $rc "$verdict"
  done
}

# same_outputs A B [WHAT]: every output file of run A equals run B's byte for byte.
same_outputs() {
  local a=$1 b=$2 what=${3:-"executable cache: outputs of the warm start equal the cold start's"}
  local f bad=0 count=0
  for f in "$WORK/out/$a"/*.safetensors; do
    count=$((count + 1))
    python3 "$HELP" compare "$WORK/out/$b/$(basename "$f")" "$f" >/dev/null || bad=$((bad + 1))
  done
  check "$what" $((bad > 0 || count == 0)) "$count output files, $bad differ"
}

# portable_repo DIR: every fixture bundle with its programs as StableHLO portable artifacts
# (the fixtures' portable/model.b{N}.mlirbc as model.b{N}.mlir), as the reference exporter
# writes them; no executable cache entries from the text runs.
portable_repo() {
  local dir=$1 b name f
  rm -rf "$dir" && mkdir -p "$dir"
  for b in "$FIX"/bundles/*/; do
    name=$(basename "$b")
    mkdir -p "$dir/$name"
    cp "$b"manifest.yaml "$dir/$name/"
    [ -f "$b"weights.safetensors ] && cp "$b"weights.safetensors "$dir/$name/"
    for f in "$FIX/portable/$name"/*.mlirbc; do
      cp "$f" "$dir/$name/$(basename "$f" .mlirbc).mlir"
    done
  done
}

# server_split TAG [BEFORE_FILE]: saves the worker's per-request sums for resnet_bench to
# $LOGDIR/TAG.split and prints, over the requests since BEFORE_FILE, the server's own mean
# time per request (admission to answer) and its queue-wait and compute parts; the rest of
# the loadgen latency is gRPC transport and the client.
server_split() {
  python3 - "$LOGDIR/$1.split" "${2:-}" "$((PORT + 1))" <<'PY'
import json, re, sys, urllib.request as u
text = u.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[3]).read().decode()
names = ("worker_request_latency_seconds", "worker_request_queue_seconds",
         "worker_request_compute_seconds")
now = {}
for name in names:
    for kind in ("sum", "count"):
        now[name + "_" + kind] = sum(float(m.group(1)) for m in re.finditer(
            r'^%s_%s\{[^}]*model="resnet_bench"[^}]*\} (\S+)' % (name, kind), text, re.M))
json.dump(now, open(sys.argv[1], "w"))
if sys.argv[2]:
    before = json.load(open(sys.argv[2]))
    out = []
    for name in names:
        n = now[name + "_count"] - before[name + "_count"]
        s = now[name + "_sum"] - before[name + "_sum"]
        out.append("%s=%.1f" % (name.replace("worker_request_", "").replace("_seconds", ""),
                                1e6 * s / n if n else float("nan")))
    print("server split (mean us per request over the run): " + " ".join(out))
PY
}

# stages TAG MODEL [BEFORE_TAG]: saves the worker's per-stage sums for MODEL
# (worker_request_stage_seconds_total, docs/metrics.md "Where a request's time goes") to
# $LOGDIR/TAG.stages and prints, over the requests answered since BEFORE_TAG, the mean time per
# request of each stage, their sum and the server's mean latency (admission to answer).
stages() {
  python3 - "$LOGDIR/$1.stages" "$2" "${3:+$LOGDIR/$3.stages}" "$((PORT + 1))" <<'PY'
import json, re, sys, urllib.request as u
path, model, before_path, port = sys.argv[1:5]
text = u.urlopen("http://127.0.0.1:%s/metrics" % port).read().decode()
def total(name, extra=""):
    pattern = r'^%s\{[^}]*model="%s"%s[^}]*\} (\S+)' % (name, re.escape(model), extra)
    return sum(float(m.group(1)) for m in re.finditer(pattern, text, re.M))
order = ("decode", "queue", "gather", "upload", "execute", "readback", "scatter", "encode")
now = {s: total("worker_request_stage_seconds_total", r'[^}]*stage="%s"' % s) for s in order}
now["served"] = total("worker_requests_served_total")
now["latency_sum"] = total("worker_request_latency_seconds_sum")
now["latency_count"] = total("worker_request_latency_seconds_count")
json.dump(now, open(path, "w"))
if before_path:
    before = json.load(open(before_path))
    n = now["served"] - before["served"]
    if n <= 0:
        print("stages %s: no request answered" % model)
        sys.exit(0)
    parts = {s: 1e6 * (now[s] - before[s]) / n for s in order}
    lat_n = now["latency_count"] - before["latency_count"]
    lat = 1e6 * (now["latency_sum"] - before["latency_sum"]) / lat_n if lat_n else float("nan")
    print("stages %s (mean us per request over %d): %s; sum %.1f; server latency %.1f" % (
        model, n, " ".join("%s=%.1f" % (s, parts[s]) for s in order), sum(parts.values()), lat))
PY
}

loadgen() { # loadgen TAG CONCURRENCY SECONDS [MODEL [ROWS]]; LOADGEN_FLAGS: more flags
  LD_LIBRARY_PATH="$LIB" "$BIN/reactant-server" loadgen --model "${4:-resnet_bench}" --grpc-url 127.0.0.1:$PORT \
    --concurrency "$2" --duration "$3" --rows "${5:-1}" --payloads 8 --rtol 1e-3 ${LOADGEN_FLAGS:-} 2>&1 | tee "$LOGDIR/$1.txt"
}

# setup_work PREFIX: the paths of the carried tree (LIB, BIN, FIX) and a fresh work
# directory (WORK, LOGDIR) under /tmp.
setup_work() {
  # The carried libraries only for our binaries (python3 there keeps its own).
  LIB="$PWD/$DEST/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # RS_GPU_BIN: another folder holding reactant-server (scripts/gpu_image_check.sh puts the
  # release image's binary there, run through the image's own loader and libraries).
  BIN=${RS_GPU_BIN:-$PWD/$DEST/bin}
  FIX=$PWD/$DEST/fixtures
  WORK=$(mktemp -d "/tmp/$1.XXXX")
  LOGDIR=$WORK/logs
  mkdir -p "$LOGDIR" "$WORK/autotune"
}

# bare_execute: the bare execute times of resnet_bench b1 and b32, with no server: XLA through
# jaxlib (bench/xla_bench.py --platform cuda --transfers: input upload, execute, output read
# back, the same module text and the server's XLA flags; the figure the acceptance compares
# with) into $LOGDIR/bare_jax.log, and our own PJRT path (reactant-gpu-check, 200 runs each,
# runHost) into $LOGDIR/bare.log. Sets BARE_B1_US and BARE_B32_US (jaxlib medians, us).
bare_execute() {
  mkdir -p "$WORK/bare/bundles"
  cp -r "$FIX/bundles/resnet_bench" "$WORK/bare/bundles/"
  cp -r "$PWD/$DEST/bare/golden" "$WORK/bare/"
  LD_LIBRARY_PATH="$LIB" "$BIN/reactant-gpu-check" --fixtures "$WORK/bare" --model resnet_bench --runs 200 \
    >"$LOGDIR/bare.log" 2>&1
  local b
  : >"$LOGDIR/bare_jax.log"
  for b in 1 32; do
    jax_bare "$b" >>"$LOGDIR/bare_jax.log"
  done
  BARE_B1_US=$(jax_median_us 1)
  BARE_B32_US=$(jax_median_us 32)
}
# jax_bare BATCH: the last line of bench/xla_bench.py for resnet_bench at BATCH (the figure
# line: median and min ms), with the server's XLA flags, 2 s after 20 warm-up calls.
jax_bare() {
  XLA_FLAGS="--xla_gpu_autotune_level=0 --xla_gpu_exclude_nondeterministic_ops=true" \
    "$PY" bench/xla_bench.py "$WORK/bare/bundles/resnet_bench" "$WORK/bare/golden/resnet_bench" "$1" \
    --platform cuda --transfers --min-seconds 2 --warmup 20 2>&1 | tail -1
}
# median_us: the "median X" (ms) of the xla_bench lines on stdin, in us.
median_us() { awk '{for (i = 1; i < NF; i++) if ($i == "median") printf "%.1f", $(i + 1) * 1000}'; }
# jax_round BATCH: one more jax_bare while a server holds the GPU (jaxlib gets 20% of the
# device memory), appended to $LOGDIR/bare_jax_rounds.log; prints its median (us).
jax_round() {
  XLA_PYTHON_CLIENT_MEM_FRACTION=0.2 jax_bare "$1" | tee -a "$LOGDIR/bare_jax_rounds.log" | median_us
}
# median3 A B C: the middle value.
median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
# jax_median_us BATCH: the jaxlib median of $LOGDIR/bare_jax.log for that batch, in us.
jax_median_us() { awk -v b="b$1" '$2 == b' "$LOGDIR/bare_jax.log" | median_us; }
# loadgen_p50_us FILE / loadgen_rate FILE: the p50 latency (us) and the req/s of a loadgen log.
loadgen_p50_us() { awk '/latency ms/ {for (i = 1; i < NF; i++) if ($i == "p50") printf "%.0f", $(i + 1) * 1000}' "$1"; }
loadgen_rate() { sed -nE 's/^requests [0-9]+ in [0-9.]+ s: ([0-9.]+) req\/s.*/\1/p' "$1"; }

# serving_overhead: with a server running resnet_bench (coalescing on, no wait): 1 client for
# 5 s, the server's own split of that time, the overhead check against the jaxlib bare b1
# (bare_execute first), then 32 clients without a coalescing wait.
# Three alternating rounds of (jaxlib bare b1, 1 client for 5 s), so that a slow spell of the
# host falls on both sides; the check compares the medians of the rounds.
serving_overhead() {
  echo "== serving overhead (auto, warm, coalescing on; 3 rounds of jaxlib b1, then 1 client)"
  server_split before_c1
  local r p50s=() bares=()
  for r in 1 2 3; do
    bares+=("$(jax_round 1)")
    loadgen "loadgen_c1_r$r" 1 5
    p50s+=("$(loadgen_p50_us "$LOGDIR/loadgen_c1_r$r.txt")")
    echo "round $r: jaxlib b1 median ${bares[-1]} us, gRPC p50 ${p50s[-1]} us"
  done
  server_split after_c1 "$LOGDIR/before_c1.split"
  local p50 bare
  p50=$(median3 "${p50s[@]}")
  bare=$(median3 "${bares[@]}")
  check "serving overhead: gRPC p50 (1 client, resnet_bench b1) - bare jaxlib p50 < 100 us" \
    $(awk -v p="$p50" -v b="$bare" 'BEGIN {print (p != "" && b != "" && p - b < 100) ? 0 : 1}') \
    "median of 3 rounds: gRPC p50 $p50 us - jaxlib $bare us = $(awk -v p="$p50" -v b="$bare" 'BEGIN {printf "%.0f", p - b}') us (rounds: gRPC ${p50s[*]}; jaxlib ${bares[*]}; our runHost p50: $(grep "resnet_bench b1 timing p50" "$LOGDIR/bare.log" | sed -E 's/.*runHost \(one wait\) ([0-9.]+).*/\1/') us)"
  loadgen loadgen_c32 32 5
}

# coalescing REPO: 32 and 64 closed-loop clients with the coalescing wait (2000 us), so a
# batch waits up to 2 ms for rows to fill the b32 program (docs/scheduler.md); the check
# compares 32 clients with the jaxlib bare b32 throughput (bare_execute first; >= 80% wanted).
coalescing() {
  echo "== coalescing (auto, warm, 32 clients, scheduler.max_queue_delay_microseconds=2000; 3 rounds of jaxlib b32, then 32 clients)"
  QUEUE_DELAY_US=2000 serve auto_delay "$1" auto
  local r rates=() bares=()
  for r in 1 2 3; do
    bares+=("$(jax_round 32)")
    echo "coalescing c32 max_queue_delay_microseconds=2000, round $r:"
    loadgen "loadgen_c32_delay2000_r$r" 32 5
    rates+=("$(loadgen_rate "$LOGDIR/loadgen_c32_delay2000_r$r.txt")")
    echo "round $r: jaxlib b32 median ${bares[-1]} us, 32 clients ${rates[-1]} images/s"
  done
  local rate bare
  rate=$(median3 "${rates[@]}")
  bare=$(median3 "${bares[@]}")
  check "coalescing: 32 clients reach >= 80% of the bare b32 throughput" \
    $(awk -v r="$rate" -v u="$bare" 'BEGIN {print (r != "" && u != "" && r * u / 32e6 >= 0.8) ? 0 : 1}') \
    "median of 3 rounds: $rate images/s; bare jaxlib b32 $bare us = $(awk -v u="$bare" 'BEGIN {printf "%.0f", 32e6 / u}') images/s; $(awk -v r="$rate" -v u="$bare" 'BEGIN {printf "%.1f", 100 * r * u / 32e6}')% (rounds: ${rates[*]} images/s; jaxlib ${bares[*]} us)"
  echo "coalescing c64 max_queue_delay_microseconds=2000:"
  loadgen loadgen_c64_delay2000 64 5
  stop
}

# overhead: the serving figures alone (bare execute, 1-client overhead, coalescing), resnet_bench
# only: about 40 s instead of the whole run's 80.
overhead() {
  setup_work gpu-overhead
  bare_execute
  cat "$LOGDIR/bare_jax.log"
  grep -E "timing p50" "$LOGDIR/bare.log"
  mkdir -p "$WORK/repo" && cp -r "$FIX/bundles/resnet_bench" "$WORK/repo/"
  serve overhead "$WORK/repo" auto
  serving_overhead
  stop
  coalescing "$WORK/repo"
  echo "== gpu overhead: $PASS passed, $FAIL failed"
}

run() {
  setup_work gpu-accept
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

  echo "== bare execute, resnet_bench b1 and b32: jaxlib (upload, execute, read back; b32 has zero inputs: timing only), then reactant-gpu-check (runHost)"
  bare_execute
  cat "$LOGDIR/bare_jax.log"
  grep -E "timing p50|TF32 probe" "$LOGDIR/bare.log"

  # Bundles in a writable place: the executable cache lives in each bundle's .cache/.
  cp -r "$FIX/bundles" "$WORK/repo"

  echo "== numerics auto, cold start (every bundle compiled)"
  serve auto_cold "$WORK/repo" auto
  check "auto cold start serves" $? "start ${START_S:-never} s"
  local cold_s=$START_S
  local at_files
  at_files=$(find "$WORK/autotune" -type f | wc -l)
  infer_all auto gpu
  stop
  echo "autotune cache directory after the cold start: $at_files files (autotune off: XLA writes none)"

  echo "== numerics auto, warm start (executable cache)"
  serve auto_warm "$WORK/repo" auto
  check "auto warm start serves" $? "start ${START_S:-never} s"
  local warm_s=$START_S hits misses
  hits=$(grep -c "executable cache: hit" "$LOGDIR/auto_warm.log")
  misses=$(grep -c "executable cache: miss" "$LOGDIR/auto_warm.log")
  check "executable cache: warm start loads every program from the cache" $((misses > 0 || hits == 0)) \
    "hits=$hits misses=$misses (cold start: $(grep -c 'executable cache: miss' "$LOGDIR/auto_cold.log") misses)"
  infer_all auto_warm gpu
  same_outputs auto auto_warm
  local ratio
  ratio=$(awk -v c="$cold_s" -v w="$warm_s" 'BEGIN {printf "%.1f", c / w}')
  # Informational: these starts map the preallocated pool (about 1.1 s in each); the 5x check
  # is the bert_bench+resnet_bench pair below.
  echo "NOTE warm start vs cold start, all bundles, preallocate: true: cold $cold_s s, warm $warm_s s, ${ratio}x"
  serving_overhead
  stop
  coalescing "$WORK/repo"

  echo "== executable cache, bert_bench + resnet_bench only"
  # The check runs with preallocate: false. With preallocate: true (the default) the first
  # device allocation of either start maps the whole pool (mem_fraction 0.5: about 70 GiB,
  # about 1.1 s), the same in both starts and unrelated to the cache; that pair is printed as
  # a NOTE.
  local pre
  for pre in false true; do
    rm -rf "$WORK/repo2" && mkdir -p "$WORK/repo2"
    cp -r "$FIX/bundles/bert_bench" "$FIX/bundles/resnet_bench" "$WORK/repo2/"
    PREALLOCATE=$pre serve br_cold_$pre "$WORK/repo2" auto "[bert_bench, resnet_bench]"
    cold_s=$START_S
    stop
    PREALLOCATE=$pre serve br_warm_$pre "$WORK/repo2" auto "[bert_bench, resnet_bench]"
    warm_s=$START_S
    hits=$(grep -c "executable cache: hit" "$LOGDIR/br_warm_$pre.log")
    misses=$(grep -c "executable cache: miss" "$LOGDIR/br_warm_$pre.log")
    python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:$((PORT + 1))/metrics').read().decode())" | grep -E "^worker_executable_cache_(hits|misses)_total"
    stop
    ratio=$(awk -v c="$cold_s" -v w="$warm_s" 'BEGIN {printf "%.1f", c / w}')
    if [ "$pre" = false ]; then
      check "executable cache bert_bench+resnet_bench (preallocate: false): warm start >= 5x faster" \
        $(awk -v r="$ratio" -v m="$misses" 'BEGIN {print (r >= 5 && m == 0) ? 0 : 1}') \
        "cold $cold_s s, warm $warm_s s, ${ratio}x, hits=$hits misses=$misses"
    else
      echo "NOTE bert_bench+resnet_bench with preallocate: true (pool mapped in both starts): cold $cold_s s, warm $warm_s s, ${ratio}x, hits=$hits misses=$misses"
    fi
    grep -h "model loaded" "$LOGDIR/br_cold_$pre.log" "$LOGDIR/br_warm_$pre.log" | grep -oE "name=[a-z_]+|load_seconds=[0-9.]+" | paste - -
  done

  echo "== numerics f32"
  serve f32 "$WORK/repo" f32
  check "f32 start: TF32 probe pinned_exact=true" \
    $(grep -q "TF32 probe numerics=f32 tf32_active=[a-z]* pinned_exact=true" "$LOGDIR/f32.log"; echo $?) \
    "$(grep -o 'TF32 probe.*' "$LOGDIR/f32.log" | cut -c1-200)"
  grep -h "model loaded" "$LOGDIR/f32.log" | grep -oE "name=[a-z_0-9]+|numerics=.*" | paste - -
  infer_all f32 gpu_highest
  stop

  echo "== portable artifacts (VHLO bytecode), numerics auto and f32"
  portable_repo "$WORK/repo_portable"
  serve portable_auto "$WORK/repo_portable" auto
  check "portable bundles, auto: start serves" $? "start ${START_S:-never} s"
  infer_all portable_auto gpu
  same_outputs auto portable_auto "portable bundles, auto: every output equals the text bundle's"
  stop
  serve portable_f32 "$WORK/repo_portable" f32
  check "portable bundles, f32: start serves" $? "start ${START_S:-never} s"
  infer_all portable_f32 gpu_highest
  same_outputs f32 portable_f32 "portable bundles, f32: every output equals the text bundle's"
  stop

  echo "== numerics tf32"
  serve tf32 "$WORK/repo" tf32 "[iris_mlp]"
  check "tf32 starts and the probe reports TF32 active" \
    $(grep -q "TF32 probe numerics=tf32 tf32_active=true" "$LOGDIR/tf32.log"; echo $?) \
    "$(grep -o 'TF32 probe.*' "$LOGDIR/tf32.log" | cut -c1-200)"
  stop

  [ -n "${OUT:-}" ] && tar -C "$WORK" -czf "$OUT/gpu_acceptance_logs.tar.gz" logs
  echo "== gpu acceptance: $PASS passed, $FAIL failed"
  [ "$FAIL" = 0 ]
}

# serving: the serving figures with autotuning on (the default), iris_mlp, resnet_bench and
# bert_bench: the bare execute of each b1 program with the server's flags
# (reactant-gpu-check, device-resident inputs, complete event awaited), the 1-client gRPC
# p50 of each and its difference from the bare execute; coalescing with 32 and 64 clients
# (bert_bench 1-row, resnet_bench 8-row requests) against jaxlib's bare b32; then the
# autotune cache: cold start, restart with the executable cache, with only the autotune
# cache, with neither, every golden's output compared with the cold start's byte for byte.
SERVER_FLAGS="--xla_gpu_exclude_nondeterministic_ops=true"
serving() {
  setup_work gpu-serving
  export AUTOTUNE=true AUTOTUNE_DIR="$WORK/autotune"
  echo "== bare execute with the server's flags, autotuning on (reactant-gpu-check)"
  local m
  mkdir -p "$WORK/bare_at/bundles"
  for m in iris_mlp resnet_bench bert_bench; do cp -r "$FIX/bundles/$m" "$WORK/bare_at/bundles/"; done
  cp -r "$PWD/$DEST/bare/golden" "$WORK/bare_at/"
  LD_LIBRARY_PATH="$LIB" "$BIN/reactant-gpu-check" --fixtures "$WORK/bare_at" --model iris_mlp --model resnet_bench \
    --model bert_bench --runs 300 --xla-flags="$SERVER_FLAGS" >"$LOGDIR/bare_at.log" 2>&1
  grep -E "timing p50|ERROR|FAILED" "$LOGDIR/bare_at.log" | cut -c1-300
  mkdir -p "$WORK/repo"
  for m in iris_mlp resnet_bench bert_bench; do cp -r "$FIX/bundles/$m" "$WORK/repo/"; done
  local t0
  t0=$(now)
  serve at_cold "$WORK/repo" auto "[iris_mlp, resnet_bench, bert_bench]"
  check "autotune on: cold start serves" $? "start ${START_S:-never} s"
  local cold_s=$START_S
  infer_all_models at_cold "iris_mlp resnet_bench bert_bench"
  echo "== 1 client, b1, autotuning on"
  for m in iris_mlp resnet_bench bert_bench; do
    stages "at_c1_${m}_before" "$m"
    loadgen "at_c1_$m" 1 5 "$m" >/dev/null
    stages "at_c1_$m" "$m" "at_c1_${m}_before"
    local p50 bare
    p50=$(loadgen_p50_us "$LOGDIR/at_c1_$m.txt")
    bare=$(grep "$m b1 timing p50" "$LOGDIR/bare_at.log" | sed -E 's/.*execute ([0-9.]+).*/\1/')
    check "autotune on, $m b1, 1 client: gRPC p50 - bare execute p50 < 100 us" \
      $(awk -v p="$p50" -v b="$bare" 'BEGIN {print (p != "" && b != "" && p - b < 100) ? 0 : 1}') \
      "gRPC p50 $p50 us - bare execute $bare us = $(awk -v p="$p50" -v b="$bare" 'BEGIN {printf "%.0f", p - b}') us"
    # The same with a client that polls for its answer instead of sleeping (loadgen
    # --busy-poll): what the client's own wake-up adds to the figure above.
    stages "at_c1p_${m}_before" "$m"
    LOADGEN_FLAGS=--busy-poll loadgen "at_c1p_$m" 1 5 "$m" >/dev/null
    stages "at_c1p_$m" "$m" "at_c1p_${m}_before"
    p50=$(loadgen_p50_us "$LOGDIR/at_c1p_$m.txt")
    echo "NOTE autotune on, $m b1, 1 busy-polling client: gRPC p50 $p50 us - bare execute $bare us =" \
      "$(awk -v p="$p50" -v b="$bare" 'BEGIN {printf "%.0f", p - b}') us"
  done
  stop
  echo "== 1 client, b1 requests, autotuning on, the regulated profile's scheduling (coalescing off, batch_sizes: largest; informational)"
  COALESCING=false BATCH_SIZES=largest serve at_reg "$WORK/repo" auto "[iris_mlp, resnet_bench, bert_bench]" >/dev/null
  for m in iris_mlp resnet_bench bert_bench; do
    stages "at_reg_c1_${m}_before" "$m"
    loadgen "at_reg_c1_$m" 1 5 "$m" >/dev/null
    echo "regulated $m 1 client: gRPC p50 $(loadgen_p50_us "$LOGDIR/at_reg_c1_$m.txt") us (each request runs the largest program)"
    stages "at_reg_c1_$m" "$m" "at_reg_c1_${m}_before"
  done
  stop
  echo "== the same server on the CPU backend (what serving costs outside the device), iris_mlp"
  BACKEND=cpu serve at_cpu "$WORK/repo" auto "[iris_mlp]" >/dev/null
  stages at_cpu_before iris_mlp
  loadgen at_cpu_c1 1 5 iris_mlp | grep -E "latency"
  stages at_cpu iris_mlp at_cpu_before
  LOADGEN_FLAGS=--busy-poll loadgen at_cpu_c1p 1 5 iris_mlp | grep -E "latency" | sed 's/^/busy-polling client: /'
  stages at_cpu_p iris_mlp at_cpu
  stop
  echo "== coalescing, autotuning on, max_queue_delay_microseconds=2000"
  QUEUE_DELAY_US=2000 serve at_delay "$WORK/repo" auto "[iris_mlp, resnet_bench, bert_bench]"
  local c
  for c in 32 64; do
    for m in bert_bench:1 resnet_bench:8 iris_mlp:1; do
      stages "at_${m%%:*}_c${c}_before" "${m%%:*}"
      loadgen "at_${m%%:*}_c$c" $c 5 "${m%%:*}" "${m##*:}" | grep -E "^requests"
      stages "at_${m%%:*}_c$c" "${m%%:*}" "at_${m%%:*}_c${c}_before"
    done
    # bert_bench's answers without its 128 KiB `hidden` output: what the answer's bytes cost.
    echo "bert_bench 1-row, $c clients, only the output 'pooled' requested:"
    LOADGEN_FLAGS="--outputs pooled" loadgen "at_bert_pooled_c$c" $c 5 bert_bench 1 | grep -E "^requests"
    stages "at_bert_pooled_c$c" bert_bench "at_bert_bench_c$c"
  done
  stop
  for m in resnet_bench bert_bench; do
    mkdir -p "$WORK/bare/bundles" && cp -r "$FIX/bundles/$m" "$WORK/bare/bundles/"
  done
  echo "== bare b32 through jaxlib (same flags, autotuning on; K=1, then K calls in flight)"
  local k
  for m in resnet_bench bert_bench; do
    for k in 2 4; do
      XLA_FLAGS="$SERVER_FLAGS" "$PY" bench/xla_bench.py "$WORK/bare/bundles/$m" "$PWD/$DEST/bare/golden/$m" 32 \
        --platform cuda --transfers --min-seconds 2 --warmup 20 --in-flight $k 2>&1 | tail -2
    done
  done
  [ "${SERVING_LOAD_ONLY:-}" = 1 ] && { serving_end; return; }
  echo "== autotune cache"
  echo "after the cold start: $(find "$AUTOTUNE_DIR" -type f | wc -l) files in $AUTOTUNE_DIR: $(ls "$AUTOTUNE_DIR" | head -8 | tr '\n' ' ')"
  head -c 600 "$AUTOTUNE_DIR/xla_autotune_results.textproto" 2>/dev/null; echo
  grep -c "^results {" "$AUTOTUNE_DIR/xla_autotune_results.textproto" 2>/dev/null | sed 's/^/results in the file: /'
  serve at_warm "$WORK/repo" auto "[iris_mlp, resnet_bench, bert_bench]"
  local warm_s=$START_S
  infer_all_models at_warm "iris_mlp resnet_bench bert_bench"
  stop
  same_outputs at_cold at_warm "autotune on, restart with the executable cache: outputs equal the cold start's"
  rm -rf "$WORK"/repo/*/.cache
  serve at_tuned "$WORK/repo" auto "[iris_mlp, resnet_bench, bert_bench]"
  local tuned_s=$START_S
  grep -h "autotune cache" "$LOGDIR/at_tuned.log" | cut -c1-300
  infer_all_models at_tuned "iris_mlp resnet_bench bert_bench"
  stop
  same_outputs at_cold at_tuned "autotune on, restart with only the autotune cache: outputs equal the cold start's"
  rm -rf "$WORK"/repo/*/.cache "$AUTOTUNE_DIR"
  serve at_none "$WORK/repo" auto "[iris_mlp, resnet_bench, bert_bench]"
  local none_s=$START_S
  infer_all_models at_none "iris_mlp resnet_bench bert_bench"
  stop
  same_outputs at_cold at_none "autotune on, restart with neither cache: outputs equal the cold start's"
  echo "start times (s): cold $cold_s, executable cache $warm_s, autotune cache only $tuned_s, neither $none_s"
  serving_end
}
serving_end() {
  [ -n "${OUT:-}" ] && tar -C "$WORK" -czf "$OUT/gpu_serving_logs.tar.gz" logs
  echo "== gpu serving: $PASS passed, $FAIL failed"
}

# infer_all_models TAG "MODELS": every golden of MODELS through gRPC into $WORK/out/TAG/
# (no comparison with a golden: autotuning may pick other kernels than the goldens').
infer_all_models() {
  local tag=$1 g name n
  mkdir -p "$WORK/out/$tag"
  for name in $2; do
    for g in "$FIX"/golden/$name/b*.in.safetensors; do
      n=$(basename "$g" .in.safetensors)
      LD_LIBRARY_PATH="$LIB" "$BIN/reactant-server" infer --model "$name" --input "$g" \
        --output "$WORK/out/$tag/$name.$n.safetensors" --url 127.0.0.1:$PORT >"$WORK/infer.txt" 2>&1 ||
        check "$tag $name $n" 1 "request failed: $(tr '\n' ' ' <"$WORK/infer.txt" | cut -c1-300)"
    done
  done
}

# sweep [DELAYS_US...]: the 32-client coalescing figure for each coalescing wait (default
# 0 1000 2000 3000 5000 8000), resnet_bench only, warm cache; prints images/s and the share of
# the bare b32 execute throughput measured first.
sweep() {
  setup_work gpu-sweep
  mkdir -p "$WORK/repo"
  bare_execute
  local b32_us=$BARE_B32_US
  echo "bare resnet_bench b32 jaxlib median ${b32_us} us = $(awk -v u="$b32_us" 'BEGIN {printf "%.1f", 32e6 / u}') images/s"
  cp -r "$FIX/bundles/resnet_bench" "$WORK/repo/"
  local delays=("$@")
  [ ${#delays[@]} = 0 ] && delays=(0 1000 2000 3000 5000 8000)
  for d in "${delays[@]}"; do
    QUEUE_DELAY_US=$d serve "sweep_$d" "$WORK/repo" auto >/dev/null || { echo "delay $d: server did not start"; continue; }
    local rate
    loadgen "sweep_c32_$d" 32 5 >/dev/null
    rate=$(loadgen_rate "$LOGDIR/sweep_c32_$d.txt")
    echo "coalescing c32 max_queue_delay_microseconds=$d: $rate images/s = $(awk -v r="$rate" -v u="$b32_us" 'BEGIN {printf "%.1f", 100 * r * u / 32e6}')% of bare b32"
    stop
  done
}

# compare BASE_BIN_DIR: the serving figures of two server builds on one machine, rounds
# alternating (base, this build, base, this build): autotuning on, coalescing on, no wait;
# per build and round the 1-client p50 of iris_mlp and bert_bench b1, bert_bench 1-row at
# 64 clients and resnet_bench 8-row at 32 clients, each with the stage means. BASE_BIN_DIR
# holds the other build's reactant-server (same libraries); the clients are this build's.
compare() {
  local base=$1 round bin tag m
  setup_work gpu-compare
  export AUTOTUNE=true AUTOTUNE_DIR="$WORK/autotune"
  mkdir -p "$WORK/repo"
  for m in iris_mlp resnet_bench bert_bench; do cp -r "$FIX/bundles/$m" "$WORK/repo/"; done
  local this=$BIN
  for round in 1 2; do
    for bin in "$base" "$this"; do
      tag="r${round}_$([ "$bin" = "$base" ] && echo base || echo this)"
      BIN=$bin serve "$tag" "$WORK/repo" auto "[iris_mlp, resnet_bench, bert_bench]" >/dev/null ||
        { echo "$tag: server did not start"; continue; }
      for m in iris_mlp:1:1 bert_bench:1:1 bert_bench:64:1 resnet_bench:32:8; do
        IFS=: read -r name c rows <<<"$m"
        stages "${tag}_${name}_c${c}_before" "$name"
        loadgen "${tag}_${name}_c$c" "$c" 5 "$name" "$rows" >/dev/null
        echo "$tag $name ${rows}-row $c clients: $(grep -E '^requests' "$LOGDIR/${tag}_${name}_c$c.txt" | cut -d: -f2) p50 $(loadgen_p50_us "$LOGDIR/${tag}_${name}_c$c.txt") us"
        stages "${tag}_${name}_c$c" "$name" "${tag}_${name}_c${c}_before"
      done
      stop
    done
  done
  BIN=$this
}

# inflight: coalescing against the bare b32 execute, autotuning on, for each number of
# batches in flight (scheduler.max_batches_in_flight 1, 2, 3, 4) and coalescing wait (0 and
# 2000 us): bert_bench with 1-row and resnet_bench with 8-row requests, 32 and 64 clients,
# and iris_mlp 1-row at 64 clients (the request-rate ceiling). Prints each rate and its share
# of jaxlib's best bare b32 throughput (same flags, transfers included, 1 to 4 calls in
# flight). INFLIGHT_NS and INFLIGHT_DELAYS (space-separated) narrow the sweep.
inflight() {
  setup_work gpu-inflight
  export AUTOTUNE=true AUTOTUNE_DIR="$WORK/autotune"
  local m
  mkdir -p "$WORK/repo" "$WORK/bare/bundles"
  for m in iris_mlp resnet_bench bert_bench; do cp -r "$FIX/bundles/$m" "$WORK/repo/"; done
  # bare_us[m]: jaxlib's b32 time with transfers, one call at a time; bare_best[m]: its best
  # b32 throughput (calls/s) with 1 to 4 calls in flight, the figure the checks compare with.
  declare -A bare_us bare_best
  local k
  for m in resnet_bench bert_bench; do
    cp -r "$FIX/bundles/$m" "$WORK/bare/bundles/"
    bare_best[$m]=0
    for k in 1 2 3 4; do
      XLA_FLAGS="$SERVER_FLAGS" "$PY" bench/xla_bench.py "$WORK/bare/bundles/$m" \
        "$PWD/$DEST/bare/golden/$m" 32 --platform cuda --transfers --min-seconds 1.5 --warmup 20 \
        --in-flight $k >"$LOGDIR/bare_b32_$m.k$k.log" 2>&1
      tail -2 "$LOGDIR/bare_b32_$m.k$k.log"
      [ "$k" = 1 ] && bare_us[$m]=$(grep " median " "$LOGDIR/bare_b32_$m.k1.log" | tail -1 | median_us)
      bare_best[$m]=$(awk -v a="${bare_best[$m]}" '/throughput/ {t = $(NF - 1)} END {print (t > a) ? t : a}' "$LOGDIR/bare_b32_$m.k$k.log")
    done
    echo "bare $m b32 (jaxlib, autotuning on): ${bare_us[$m]} us one at a time; best in flight ${bare_best[$m]} calls/s = $(awk -v t="${bare_best[$m]}" 'BEGIN {printf "%.0f", 32 * t}') rows/s"
  done
  local n d c rate rows
  for d in ${INFLIGHT_DELAYS:-0 2000}; do
    for n in ${INFLIGHT_NS:-1 2 3 4}; do
      IN_FLIGHT=$n QUEUE_DELAY_US=$d serve "if_${n}_$d" "$WORK/repo" auto "[iris_mlp, resnet_bench, bert_bench]" >/dev/null ||
        { echo "in flight $n, delay $d: server did not start"; continue; }
      for c in 32 64; do
        for m in bert_bench resnet_bench; do
          rows=1; [ "$m" = resnet_bench ] && rows=8
          loadgen "if_${n}_${d}_${m}_c$c" $c 4 $m $rows >/dev/null
          rate=$(loadgen_rate "$LOGDIR/if_${n}_${d}_${m}_c$c.txt")
          echo "in_flight=$n delay=${d}us $m rows=$rows c=$c: $rate req/s = $(awk -v r="$rate" -v k="$rows" -v t="${bare_best[$m]}" 'BEGIN {printf "%.1f", 100 * r * k / (32 * t)}')% of bare b32 (best in flight); $(grep -E 'latency ms' "$LOGDIR/if_${n}_${d}_${m}_c$c.txt" | head -1)"
        done
      done
      loadgen "if_${n}_${d}_iris_c64" 64 4 iris_mlp 1 >/dev/null
      echo "in_flight=$n delay=${d}us iris_mlp rows=1 c=64: $(loadgen_rate "$LOGDIR/if_${n}_${d}_iris_c64.txt") req/s"
      stop
    done
  done
  # The regulated profile's scheduling (coalescing off, the largest program for every
  # request), 32 clients of 1-row requests: the rate against the device running b32 back to
  # back (jaxlib's b32 time, transfers included).
  for n in 1 2 3; do
    IN_FLIGHT=$n COALESCING=false BATCH_SIZES=largest serve "if_reg_$n" "$WORK/repo" auto "[resnet_bench, bert_bench]" >/dev/null ||
      { echo "regulated, in flight $n: server did not start"; continue; }
    for m in resnet_bench bert_bench; do
      loadgen "if_reg_${n}_$m" 32 4 $m 1 >/dev/null
      rate=$(loadgen_rate "$LOGDIR/if_reg_${n}_$m.txt")
      echo "regulated (coalescing off, batch_sizes largest) in_flight=$n $m c=32: $rate req/s = $(awk -v r="$rate" -v t="${bare_best[$m]}" 'BEGIN {printf "%.1f", 100 * r / t}')% of b32 back to back (best in flight)"
    done
    stop
  done
  [ -n "${OUT:-}" ] && tar -C "$WORK" -czf "$OUT/gpu_inflight_logs.tar.gz" logs
}

# goldens: every fixture bundle served (numerics auto, autotuning off as the goldens were
# made), every golden request through gRPC, each answer compared with b{N}.gpu byte for byte.
goldens() {
  setup_work gpu-goldens
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "== server: $BIN/reactant-server"
  cp -r "$FIX/bundles" "$WORK/repo"
  serve goldens "$WORK/repo" auto
  check "every fixture bundle served" $? "start ${START_S:-never} s"
  grep -E "GPU backend ready|image\.digest=|image=none" "$LOGDIR/goldens.log" | cut -c1-400
  infer_all goldens gpu
  stop
  echo "== gpu goldens: $PASS passed, $FAIL failed"
  [ "$FAIL" = 0 ]
}

case "${1:-}" in
stage) stage "${2:-}" ;;
goldens) goldens 2>&1 | tee "${OUT:-/tmp}/gpu_goldens.log" ;;
inflight) inflight 2>&1 | tee "${OUT:-/tmp}/gpu_inflight.log" ;;
run) run 2>&1 | tee "${OUT:-/tmp}/gpu_acceptance.log" ;;
overhead) overhead 2>&1 | tee "${OUT:-/tmp}/gpu_overhead.log" ;;
serving) serving 2>&1 | tee "${OUT:-/tmp}/gpu_serving.log" ;;
serving-load) SERVING_LOAD_ONLY=1 serving 2>&1 | tee "${OUT:-/tmp}/gpu_serving.log" ;;
compare) compare "$2" 2>&1 | tee "${OUT:-/tmp}/gpu_compare.log" ;;
sweep)
  shift
  sweep "$@" 2>&1 | tee "${OUT:-/tmp}/gpu_sweep.log"
  ;;
*)
  echo "usage: $0 stage [BUILD_DIR] | run | goldens | overhead | serving | serving-load | compare BASE_BIN_DIR | inflight | sweep [DELAYS_US...]" >&2
  exit 2
  ;;
esac
