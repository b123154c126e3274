#!/usr/bin/env bash
# perf_analyzer_env.sh: installs Triton's perf_analyzer into .tools/perf_analyzer (git-ignored)
# for the client tests (python/client_tests/test_perf_analyzer.py) and
# bench/perf_analyzer_bench.sh; run by scripts/setup.sh after scripts/python_env.sh.
#
# The binary comes from the perf-analyzer wheel pinned with its hash in
# python/perf_analyzer.lock, with libcudart.so from the nvidia-cuda-runtime-cu12 wheel pinned
# there too (perf_analyzer opens it for any shared memory, system shared memory included; its
# objects are named "/<tensor>...", so the worker it measures needs
# endpoints.shared_memory_prefix: "/", docs/operations.md). It is linked against glibc 2.38
# and GCC 13's libstdc++, newer than
# Debian 12's, so it runs on Debian 13's libc6, libstdc++6 and libgcc-s1: those packages are
# downloaded with a private apt configuration (apt checks them against the archive's signed
# index with the system's debian-archive-keyring), unpacked under .tools/perf_analyzer/runtime
# (not installed: the system's libc is untouched), and the binary is started through their
# own dynamic loader by the wrapper .tools/perf_analyzer/bin/perf_analyzer. Other libraries
# (libssl, libz) are the system's.
# Idempotent: skipped when the stamp holds the lock's sha256.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lock="$root/python/perf_analyzer.lock"
dest="$root/.tools/perf_analyzer"
py="${RS_PYTHON:-python3}"
want="$(sha256sum "$lock" "$0" | sha256sum | cut -d' ' -f1)"
stamp="$dest/.stamp"
if [ -x "$dest/bin/perf_analyzer" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "setup: perf_analyzer matches $(basename "$lock")"
  exit 0
fi
echo "setup: installing perf_analyzer into $dest"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$py" -m pip download -q --disable-pip-version-check --no-input --no-deps --require-hashes \
  --only-binary=:all: --platform manylinux_2_38_x86_64 --platform manylinux2014_x86_64 \
  --python-version 3.11 \
  -r "$lock" -d "$tmp/wheel"
mkdir -p "$tmp/apt/lists/partial" "$tmp/apt/cache/archives/partial" "$tmp/apt/parts"
cat > "$tmp/apt/parts/trixie.sources" <<'SOURCES'
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
apt_opts=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$tmp/apt/parts"
  -o Dir::State::Lists="$tmp/apt/lists" -o Dir::Cache="$tmp/apt/cache"
  -o Dir::State::status=/dev/null -o Acquire::Languages=none -o APT::Sandbox::User=root
  -o Debug::NoLocking=true)
apt-get -qq "${apt_opts[@]}" update
(cd "$tmp" && apt-get -qq "${apt_opts[@]}" download libc6 libstdc++6 libgcc-s1)
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/runtime"
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$dest/runtime"; done
"$py" -m zipfile -e "$tmp"/wheel/perf_analyzer-*.whl "$dest/wheel"
chmod +x "$dest/wheel/perf_analyzer/bin/perf_analyzer"
# libcudart.so, which perf_analyzer opens (by that name) whenever it uses shared memory.
"$py" -m zipfile -e "$tmp"/wheel/nvidia_cuda_runtime_cu12-*.whl "$tmp/cudart"
libs="$dest/runtime/usr/lib/x86_64-linux-gnu"
cp "$tmp"/cudart/nvidia/cuda_runtime/lib/libcudart.so.12 "$libs/"
ln -s libcudart.so.12 "$libs/libcudart.so"
cat > "$dest/bin/perf_analyzer" <<'WRAPPER'
#!/bin/sh
# Runs the perf-analyzer wheel's binary on the Debian 13 C and C++ runtime beside it
# (scripts/perf_analyzer_env.sh says why).
here="$(cd "$(dirname "$0")/.." && pwd)"
libs="$here/runtime/usr/lib/x86_64-linux-gnu"
exec "$libs/ld-linux-x86-64.so.2" --library-path "$libs:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" \
  "$here/wheel/perf_analyzer/bin/perf_analyzer" "$@"
WRAPPER
chmod +x "$dest/bin/perf_analyzer"
ls "$tmp"/*.deb | xargs -n1 basename > "$dest/runtime/PACKAGES"
"$dest/bin/perf_analyzer" --version
echo "$want" > "$stamp"
