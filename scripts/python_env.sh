#!/usr/bin/env bash
# python_env.sh: creates the project's Python virtual environment .venv (git-ignored) from a
# lock file with exact versions and hashes (default python/requirements.lock: the exporter
# python/reactant_export, its tests and their test clients). Called by setup.sh.
# Idempotent: skipped when the venv's stamp holds the lock's sha256.
# Usage: scripts/python_env.sh [LOCK [VENV]]   (bench/ uses its own lock and venv)
# Python: $RS_PYTHON, else python3 (Debian 12: CPython 3.11, which every pinned wheel targets).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lock="${1:-$root/python/requirements.lock}"
venv="${2:-$root/.venv}"
py="${RS_PYTHON:-python3}"
want="$(sha256sum "$lock" | cut -d' ' -f1)"
stamp="$venv/.lock-sha256"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "setup: $(basename "$venv") matches $(basename "$lock")"
  exit 0
fi
echo "setup: creating $venv from $lock"
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-input \
  --require-hashes --no-deps --only-binary=:all: -r "$lock"
echo "$want" > "$stamp"
