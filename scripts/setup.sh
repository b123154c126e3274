#!/usr/bin/env bash
# setup.sh: installs the Debian 12 packages reactant-server needs to build and test.
# Idempotent: packages already present are skipped. Needs root (or sudo).
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config git curl ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev
  libeigen3-dev libcpp-httplib-dev libssl-dev
  prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev clang-format
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: all build dependencies present"
