#!/usr/bin/env bash
# serve.sh: the main job. Installs what is missing, builds, and runs `reactant-server serve`
# on the example model repository with the CPU backend (HTTP 8000, gRPC 8001, metrics 8002).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/build.sh"
exec "$root/build/src/tools/reactant-server" serve --config "$root/examples/node.yaml" "$@"
