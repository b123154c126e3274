#!/usr/bin/env bash
# bench/compare_xla.sh: our CPU executor side by side with XLA:CPU (jaxlib) and IREE (llvm-cpu),
# same model text and golden inputs, on 2 cores (taskset -c 0,1, 2 threads) and 16 cores
# (taskset -c 0-15, 16 threads); resnet_bench and bert_bench at batch 1 and 8, iris_mlp and
# digits_cnn at batch 1; then the bit-identical check over 1/2/4/16 threads. Each resnet/bert
# cell is measured in ROUNDS alternating rounds (ours, XLA, IREE, ours, XLA, IREE, ...;
# MIN_SECONDS each), so a slow spell of a shared host falls on every side; a cell's figure is the
# median of its rounds' medians (min: the least min). Prints every measurement line, then a
# markdown table of those figures and the ratios ours / XLA and ours / IREE.
#
# usage: bench/compare_xla.sh [DIR]
#   DIR (default .device): a staged tree, bin/reactant-server, lib/*.so,
#       fixtures/{bundles,golden}/<model>. Without DIR and without .device, or with BIN and
#       FIXTURES set: the development checkout, BIN default build/src/tools/reactant-server,
#       FIXTURES default ../shared/fixtures (bundles/ and golden/ under it).
#   PYTHON: a python3 with jax and numpy (default /opt/torch/.venv/bin/python3, else .venv's,
#       else python3); XLA is skipped, with a note, when it cannot import jax.
#   IREE_PYTHON: a python3 with iree-base-compiler/runtime (default bench/.venv-iree/bin/python,
#       made by scripts/python_env.sh bench/iree.lock bench/.venv-iree); IREE is skipped, with a
#       note, when it is missing or cannot import iree.runtime.
#   MIN_SECONDS, default 1.5; ROUNDS, default 3.
# Cells that need more cores than the machine has (the 16-core cells on a smaller one) are
# skipped with a note. Run it from the repository root.
set -u
if [ -n "${1:-}" ] || { [ -z "${BIN:-}${FIXTURES:-}" ] && [ -d .device ]; }; then
  D=${1:-.device}
  BIN="$D/bin/reactant-server"
  F="$D/fixtures"
  export LD_LIBRARY_PATH="$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  BIN=${BIN:-build/src/tools/reactant-server}
  F=${FIXTURES:-../shared/fixtures}
fi
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=.venv/bin/python
[ -x "$PY" ] || PY=python3
IPY=${IREE_PYTHON:-bench/.venv-iree/bin/python}
MIN=${MIN_SECONDS:-1.5}
LOG=$(mktemp)
"$BIN" bench --help >/dev/null || { echo "cannot run $BIN"; exit 1; }
[ -d "$F/bundles" ] && [ -d "$F/golden" ] || { echo "no bundles/ and golden/ under $F"; exit 1; }
XLA=1
"$PY" -c "import jax, numpy" 2>/dev/null || {
  XLA=0
  echo "note: XLA skipped: $PY cannot import jax and numpy (set PYTHON)"
}
IREE=1
if [ ! -x "$IPY" ] || ! "$IPY" -c "import iree.runtime, numpy" 2>/dev/null; then
  IREE=0
  echo "note: IREE skipped: no usable $IPY (scripts/python_env.sh bench/iree.lock bench/.venv-iree, or set IREE_PYTHON)"
fi
CORES=$(nproc)
echo "binary $BIN, fixtures $F"
grep -m1 "model name" /proc/cpuinfo
echo "$CORES"
run() { # label cpus threads model batch rounds
  local label=$1 cpus=$2 threads=$3 m=$4 b=$5 rounds=$6 line r
  if [ "$threads" -gt "$CORES" ]; then
    echo "note: $m b$b on $label cores skipped: this machine has $CORES"
    return
  fi
  for ((r = 1; r <= rounds; r++)); do
    line=$(taskset -c "$cpus" "$BIN" bench "$F/bundles/$m" --golden "$F/golden/$m" --batch "$b" \
      --threads "$threads" --min-seconds "$MIN" | grep "^$m ")
    echo "ours $label $line" | tee -a "$LOG"
    if [ "$XLA" = 1 ]; then
      line=$(taskset -c "$cpus" "$PY" bench/xla_bench.py "$F/bundles/$m" "$F/golden/$m" "$b" \
        --min-seconds "$MIN" 2>&1 | tail -1)
      echo "xla  $label $line" | tee -a "$LOG"
    fi
    if [ "$IREE" = 1 ]; then
      line=$(taskset -c "$cpus" "$IPY" bench/iree_bench.py "$F/bundles/$m" "$F/golden/$m" "$b" \
        --threads "$threads" --min-seconds "$MIN" 2>&1 | tail -1)
      echo "iree $label $line" | tee -a "$LOG"
    fi
  done
}
for m in resnet_bench bert_bench; do
  for b in 1 8; do
    run 2 0,1 2 "$m" "$b" "${ROUNDS:-3}"
    run 16 0-15 16 "$m" "$b" "${ROUNDS:-3}"
  done
done
for m in iris_mlp digits_cnn; do
  run 1 0 1 "$m" 1 1
  run 16 0-15 16 "$m" 1 1
done
for m in iris_mlp digits_cnn resnet_bench bert_bench; do
  "$BIN" bench "$F/bundles/$m" --golden "$F/golden/$m" --check-threads 1,2,4,16 | grep -v "^cpu\|^bundle"
done
python3 - "$LOG" <<'PYEOF'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    m = re.search(r"median\s+([0-9.]+) ms\s+min\s+([0-9.]+)", line)
    if len(f) < 4 or not m:
        print("unparsed:", line.strip()); continue
    key = (f[2], f[3], f[1])  # model, batch, cores
    rows.setdefault(key, {}).setdefault(f[0], []).append((float(m.group(1)), float(m.group(2))))
def fold(rounds):  # median of the rounds' medians, least min
    return (statistics.median(r[0] for r in rounds), min(r[1] for r in rounds)) if rounds else None
def ms(x, i):
    return f"{x[i]:.3f}" if x else "-"
def ratio(v, o, other):  # (folded ratio, per-round ratios) of ours over `other`
    x = fold(v.get(other))
    if not (o and x):
        return "-", ""
    return f"{o[0] / x[0]:.2f}", " ".join(f"{a[0] / b[0]:.2f}" for a, b in zip(v["ours"], v[other]))
print("| model | batch | cores | rounds | ours median ms | XLA:CPU median ms | ours/XLA | per round "
      "| IREE median ms | ours/IREE | per round | ours min ms | XLA min ms | IREE min ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for (model, batch, cores), v in rows.items():
    o, x, i = fold(v.get("ours")), fold(v.get("xla")), fold(v.get("iree"))
    rx, px = ratio(v, o, "xla")
    ri, pi = ratio(v, o, "iree")
    print(f"| {model} | {batch[1:]} | {cores} | {len(v.get('ours', []))} | {ms(o, 0)} | {ms(x, 0)} | {rx} | {px} "
          f"| {ms(i, 0)} | {ri} | {pi} | {ms(o, 1)} | {ms(x, 1)} | {ms(i, 1)} |")
PYEOF
