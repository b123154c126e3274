#!/usr/bin/env bash
# test.sh: installs what is missing, builds, and runs every test (ctest). Benchmarks and
# soaks are not part of it (see docs/).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure --timeout 1500 "$@"
