#!/usr/bin/env bash
# The GPU test command (docs/gpu.md). Two steps:
#   test/pjrt/gpu_check.sh stage [BUILD_DIR]   here: copy reactant-gpu-check, the shared
#       libraries it needs that a CUDA image lacks (ldd), and the fixture bundles and
#       goldens into .device/gpu-check (ignored by git; carried to the GPU machine)
#   test/pjrt/gpu_check.sh run                 on the GPU machine: run the check, print
#       every figure, keep the log in $OUT/gpu_check.log when $OUT is set
set -euo pipefail
cd "$(dirname "$0")/../.."
DEST=.device/gpu-check
case "${1:-}" in
stage)
  BUILD=${2:-build-pjrt}
  SHARED=${RS_SHARED_DIR:-../shared}
  rm -rf "$DEST"
  mkdir -p "$DEST/bin" "$DEST/lib" "$DEST/fixtures/bundles" "$DEST/fixtures/golden"
  cp "$BUILD/src/tools/reactant-gpu-check" "$DEST/bin/"
  # Everything but the C/C++ runtime, which the GPU image has in a newer version.
  ldd "$DEST/bin/reactant-gpu-check" | awk '/=> \// {print $3}' |
    grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt)\.so' |
    xargs -r -I{} cp -L {} "$DEST/lib/"
  for b in "$SHARED"/fixtures/bundles/*/; do
    name=$(basename "$b")
    mkdir -p "$DEST/fixtures/bundles/$name/generic"
    cp "$b"manifest.yaml "$b"model*.mlir "$DEST/fixtures/bundles/$name/"
    [ -f "$b"weights.safetensors ] && cp "$b"weights.safetensors "$DEST/fixtures/bundles/$name/"
    cp "$b"generic/*.mlir "$DEST/fixtures/bundles/$name/generic/"
  done
  for g in "$SHARED"/fixtures/golden/*/; do
    name=$(basename "$g")
    mkdir -p "$DEST/fixtures/golden/$name"
    cp "$g"b*.safetensors "$DEST/fixtures/golden/$name/"
  done
  du -sh "$DEST"
  ;;
run)
  export LD_LIBRARY_PATH="$PWD/$DEST/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  LOG=${OUT:-/tmp}/gpu_check.log
  {
    echo "== machine"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
    ls -d /opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/{bin/ptxas,nvvm/libdevice} 2>&1 || true
    echo "== reactant-gpu-check"
    start=$(date +%s.%N)
    rc=0
    "$DEST/bin/reactant-gpu-check" --fixtures "$DEST/fixtures" --runs "${RUNS:-20}" || rc=$?
    echo "== wall $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s, exit status $rc"
  } 2>&1 | tee "$LOG"
  ;;
*)
  echo "usage: $0 stage [BUILD_DIR] | run" >&2
  exit 2
  ;;
esac
