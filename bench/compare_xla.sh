#!/usr/bin/env bash
# bench/compare_xla.sh: our CPU executor side by side with XLA:CPU (jaxlib), same model text and
# golden inputs, on 2 cores (taskset -c 0,1, 2 threads) and 16 cores (taskset -c 0-15, 16
# threads); resnet_bench and bert_bench at batch 1 and 8, iris_mlp and digits_cnn at batch 1;
# then the bit-identical check over 1/2/4/16 threads. Each resnet/bert cell is measured in
# ROUNDS alternating rounds (ours, XLA, ours, XLA, ...; MIN_SECONDS each), so a slow spell of a
# shared host falls on both sides; a cell's figure is the median of its rounds' medians (min:
# the least min). Prints every measurement line, then a markdown table of those figures and
# ratios (ours / XLA).
#
# usage: bench/compare_xla.sh [DIR]   (DIR, default .device: bin/reactant-server, lib/*.so,
#        fixtures/{bundles,golden}/<model>; PYTHON: a python3 with jax, numpy, safetensors;
#        MIN_SECONDS, default 1.5; ROUNDS, default 3)
set -u
D=${1:-.device}
BIN="$D/bin/reactant-server"
export LD_LIBRARY_PATH="$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
F="$D/fixtures"
LOG=$(mktemp)
"$BIN" bench --help >/dev/null || { echo "cannot run $BIN"; exit 1; }
grep -m1 "model name" /proc/cpuinfo
nproc
run() { # label cpus threads model batch rounds
  local label=$1 cpus=$2 threads=$3 m=$4 b=$5 rounds=$6 line r
  for ((r = 1; r <= rounds; r++)); do
    line=$(taskset -c "$cpus" "$BIN" bench "$F/bundles/$m" --golden "$F/golden/$m" --batch "$b" \
      --threads "$threads" --min-seconds "${MIN_SECONDS:-1.5}" | grep "^$m ")
    echo "ours $label $line" | tee -a "$LOG"
    line=$(taskset -c "$cpus" "$PY" bench/xla_bench.py "$F/bundles/$m" "$F/golden/$m" "$b" \
      --min-seconds "${MIN_SECONDS:-1.5}" 2>&1 | tail -1)
    echo "xla  $label $line" | tee -a "$LOG"
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
"$PY" - "$LOG" <<'PYEOF'
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
print("| model | batch | cores | rounds | ours median ms | XLA:CPU median ms | ours/XLA | per round | ours min ms | XLA min ms |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (model, batch, cores), v in rows.items():
    o, x = fold(v.get("ours")), fold(v.get("xla"))
    if o and x:
        per = " ".join(f"{a[0] / b[0]:.2f}" for a, b in zip(v["ours"], v["xla"]))
        print(f"| {model} | {batch[1:]} | {cores} | {len(v['ours'])} | {o[0]:.3f} | {x[0]:.3f} | {o[0]/x[0]:.2f} | {per} | {o[1]:.3f} | {x[1]:.3f} |")
    else:
        print(f"| {model} | {batch[1:]} | {cores} | - | {o} | {x} | - | | | |")
PYEOF
