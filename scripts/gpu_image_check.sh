#!/usr/bin/env bash
# gpu_image_check.sh: the GPU release image's contents on the GPU machine, serving the
# fixtures against their GPU goldens (docs/deploy.md, "The GPU image on a GPU host").
#
#   scripts/gpu_image_check.sh stage LAYOUT [BUILD_DIR]   here: the fixtures and golden
#       requests (scripts/gpu_acceptance.sh stage) into .device/gpu-accept, and the image
#       split by scripts/image/gpu_layer.py into .device/gpu-image: every layer but the gpu
#       one as its blob, the gpu layer's tar headers and small files, the digests
#   scripts/gpu_image_check.sh run [SITE]                 on the GPU machine: the image put
#       together in .device/gpu-image/root, the gpu layer's large files read from SITE (a
#       site-packages with the locked wheels installed; default that machine's
#       /opt/torch/.venv), accepted only if the rebuilt layer's sha256 is the image's diff_id
#       and every other blob its manifest digest; then the image's reactant-server, started
#       through the image's own dynamic loader with the image's libraries, PJRT plugin and
#       CUDA runtime, and the host's driver (libcuda) only, as the NVIDIA container toolkit
#       gives a container; then `scripts/gpu_acceptance.sh goldens` against it
# stage leaves .device/gpu-accept.tar.xz and .device/gpu-image.tar.xz (git-ignored): carry
# both with the run.
set -euo pipefail
cd "$(dirname "$0")/.."
IMG=.device/gpu-image

stage() {
  local layout=$1 build=${2:-build}
  [ -f "$layout/index.json" ] || { echo "gpu_image_check: $layout is not an OCI layout" >&2; exit 1; }
  bash scripts/gpu_acceptance.sh stage "$build"
  # The image brings its own binary and libraries; the staged ones are not used.
  rm -rf .device/gpu-accept/lib .device/gpu-accept/bin .device/gpu-accept/bare
  python3 scripts/image/gpu_layer.py split "$layout" "$IMG/stage"
  # One xz file each: the carrier's limit is on bytes moved.
  tar -C .device -cJf .device/gpu-accept.tar.xz gpu-accept
  tar -C .device -cJf .device/gpu-image.tar.xz gpu-image
  rm -rf .device/gpu-accept "$IMG"
  ls -la .device
}

run() {
  local site=${1:-/opt/torch/.venv/lib/python3.12/site-packages} root loader drv digest
  root="$PWD/$IMG/root"
  local t
  for t in gpu-accept gpu-image; do
    [ ! -f ".device/$t.tar.xz" ] || { rm -rf ".device/$t"; tar -C .device -xJf ".device/$t.tar.xz"; }
  done
  python3 scripts/image/gpu_layer.py assemble "$IMG/stage" "$site" "$root" || exit 1
  # The loader file itself: the image's /lib64 link is absolute, so outside a chroot it
  # names the host's loader.
  loader=$(find "$root/lib" "$root/usr/lib" -type f -name 'ld-linux-x86-64.so.2' 2>/dev/null | head -1)
  [ -n "$loader" ] || { echo "gpu_image_check: no dynamic loader in the image" >&2; exit 1; }
  # The host's driver library, alone in a folder of its own (what the container toolkit mounts).
  drv="$PWD/$IMG/driver"
  rm -rf "$drv"; mkdir -p "$drv"
  local cuda
  cuda=$(ldconfig -p | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
  [ -n "$cuda" ] || { echo "gpu_image_check: no libcuda.so.1 on this host" >&2; exit 1; }
  ln -s "$(readlink -f "$cuda")" "$drv/libcuda.so.1"
  digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifest_digest"])' "$IMG/stage/gpu_layer.json")
  mkdir -p "$IMG/bin"
  cat >"$IMG/bin/reactant-server" <<EOF
#!/bin/sh
# The image's reactant-server with the image's libraries (only the driver from the host).
export PJRT_PLUGIN_LIBRARY_PATH=$root/opt/reactant-server/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so
export REACTANT_IMAGE_IDENTITY_FILE=$root/usr/share/reactant-server/image.json
export REACTANT_IMAGE_DIGEST=$digest
exec $loader --library-path $root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:$drv $root/usr/bin/reactant-server "\$@"
EOF
  chmod +x "$IMG/bin/reactant-server"
  "$IMG/bin/reactant-server" --version
  RS_GPU_BIN="$PWD/$IMG/bin" bash scripts/gpu_acceptance.sh goldens
}

case "${1:-}" in
stage) shift; stage "$@" ;;
run) shift; run "$@" ;;
*) echo "usage: $0 stage LAYOUT [BUILD_DIR] | run [SITE]" >&2; exit 2 ;;
esac
