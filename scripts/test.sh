#!/usr/bin/env bash
# test.sh: installs what is missing, builds, and runs every test (ctest), RS_TEST_JOBS at a
# time (default: one per core). Each GoogleTest test is its own ctest entry, labelled with its
# folder: `scripts/test.sh -L scheduler` runs one folder, `-R Suite.Name` one test. Benchmarks
# and soaks are not part of it (see docs/).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure --timeout 1500 -j "${RS_TEST_JOBS:-$(nproc)}" "$@"
