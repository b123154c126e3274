#!/usr/bin/env bash
# setup.sh: installs the Debian 12 packages reactant-server needs to build and test.
# Idempotent: packages already present are skipped. Needs root (or sudo).
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config git curl ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev
  libeigen3-dev libcpp-httplib-dev libssl-dev libarchive-dev
  # The HTTP transport: Boost.Asio and Beast (headers), zlib for compressed bodies.
  libboost-dev zlib1g-dev
  prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev clang-format
  # The IR and pass tests (test/ir/*.mlir, test/passes/*.mlir): LLVM's lit, FileCheck, not.
  llvm-14-tools
  # scripts/fuzz.sh only: clang with libFuzzer and the sanitizer runtimes.
  clang libclang-rt-14-dev
  # python/ (the JAX exporter) and its tests: the .venv below.
  python3 python3-venv
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Tests only: promtool and a Prometheus server (Debian's `prometheus`, a 19 MB download)
# check the /metrics output (test/hardening/metrics_test.cc). The package is unpacked into
# .tools/prometheus, not installed, so no system service is enabled or started.
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools/prometheus"
if [ ! -x "$tools/usr/bin/promtool" ] || [ ! -x "$tools/usr/bin/prometheus" ]; then
  echo "setup: unpacking Debian's prometheus into $tools (tests only)"
  tmp="$(mktemp -d)"
  (cd "$tmp" && { apt-get download prometheus >/dev/null 2>&1 ||
     { $SUDO apt-get update -qq && apt-get download prometheus >/dev/null; }; })
  mkdir -p "$tools"
  dpkg-deb -x "$tmp"/prometheus_*.deb "$tools"
  rm -rf "$tmp"
fi
# The Python virtual environment .venv from python/requirements.lock (scripts/python_env.sh).
bash "$root/scripts/python_env.sh"
# Triton's perf_analyzer for the client tests, with the C/C++ runtime its wheel needs.
bash "$root/scripts/perf_analyzer_env.sh"
# The deployment tests (test/deploy): helm and kubeconform built from the Go module proxy, the
# Kubernetes and CRD schemas, all pinned in deploy/lock/tools.lock, into .tools/deploy. A cold
# build of helm takes a few minutes of 2 cores (docs/deploy.md "Checking the manifests").
bash "$root/scripts/deploy_tools_env.sh"
echo "setup: all build dependencies present"
