#!/usr/bin/env bash
# build.sh: installs missing Debian packages (setup.sh), configures and builds into build/.
# Usage: scripts/build.sh [extra cmake args]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/setup.sh"
jobs="${RS_BUILD_JOBS:-$(nproc)}"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$root/build" -j "$jobs"
