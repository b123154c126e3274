#!/usr/bin/env bash
# deploy_tools_env.sh: installs the tools and schemas of the deployment check (test/deploy,
# docs/deploy.md "Checking the manifests") into .tools/deploy (git-ignored), every input pinned
# in deploy/lock/tools.lock; run by setup.sh after python_env.sh (it needs .venv's PyYAML).
#   bin/helm, bin/kubeconform       go install from the Go module proxy at the locked versions
#   schemas/kubernetes/vK-local-strict/   the Kubernetes JSON schemas of one release (a wheel)
#   schemas/crds/<group>/<kind>_<version>.json   KServe's and Prometheus Operator's CRDs,
#                                   converted by scripts/crd_schemas.py
# The go command checks every module against the Go checksum database as usual; this script
# also refuses a module whose go.sum hash differs from the lock's.
# Idempotent: a Go tool is skipped when its binary's build info names the locked module,
# version and hash; the schemas when their stamp holds the hash of the lock and the scripts.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lock="$root/deploy/lock/tools.lock"
dest="$root/.tools/deploy"
py="$root/.venv/bin/python"
command -v go >/dev/null || PATH="/usr/local/go/bin:$PATH"
if ! command -v go >/dev/null; then
  echo "setup: the go command is needed to build helm and kubeconform (not on PATH)" >&2
  exit 1
fi
# -mod=mod: the modules' own go.mod and go.sum decide the dependencies (checked against the
# checksum database); GOTOOLCHAIN=local: the machine's Go builds, no toolchain is fetched.
export GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local GOBIN="$dest/bin"
mkdir -p "$dest/bin"

# FIELD (Sum: the go.sum hash, Dir: the unpacked module) of MODULE@VERSION as the go command
# downloaded and verified it.
module_field() { # MODULE VERSION FIELD
  (cd "$dest" && go mod download -json "$1@$2") |
    "$py" -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$3"
}
check_sum() { # MODULE VERSION H1
  local got
  got="$(module_field "$1" "$2" Sum)"
  if [ "$got" != "$3" ]; then
    echo "setup: $1@$2 has go.sum hash $got; deploy/lock/tools.lock expects $3" >&2
    exit 1
  fi
}

# The schemas' stamp: the contents (not the paths) of the lock and the two scripts.
schemas_want="$(cat "$lock" "$root/scripts/deploy_tools_env.sh" "$root/scripts/crd_schemas.py" |
  sha256sum | cut -d' ' -f1)"
schemas_stamp="$dest/schemas/.stamp"
schemas_ok=false
[ -f "$schemas_stamp" ] && [ "$(cat "$schemas_stamp")" = "$schemas_want" ] && schemas_ok=true
$schemas_ok || { rm -rf "$dest/schemas.new"; mkdir -p "$dest/schemas.new/crds"; }

while read -r kind name version hash extra; do
  case "$kind" in
    '' | '#'*) continue ;;
    go-install)
      bin="$dest/bin/$(basename "$extra")"
      # `go version -m` prints the build's main module as "<tab>mod<tab>PATH<tab>VERSION<tab>H1".
      if [ -x "$bin" ] && go version -m "$bin" 2>/dev/null |
          grep -qxF "$(printf '\tmod\t%s\t%s\t%s' "$name" "$version" "$hash")"; then
        echo "setup: $(basename "$bin") $version present"
        continue
      fi
      check_sum "$name" "$version" "$hash"
      echo "setup: building $name/$extra@$version into $dest/bin (a few minutes on 2 cores)"
      start=$SECONDS
      (cd "$dest" && go install "$name/$extra@$version")
      echo "setup: $(basename "$bin") built in $((SECONDS - start)) s"
      ;;
    go-crds)
      $schemas_ok && continue
      check_sum "$name" "$version" "$hash"
      dir="$(module_field "$name" "$version" Dir)"
      IFS=, read -ra files <<<"$extra"
      "$py" "$root/scripts/crd_schemas.py" "$dest/schemas.new/crds" "${files[@]/#/$dir/}" >/dev/null
      ;;
    wheel)
      $schemas_ok && continue
      tmp="$(mktemp -d)"
      echo "$name==$version --hash=$hash" >"$tmp/requirements.txt"
      "$py" -m pip download -q --disable-pip-version-check --no-input --no-deps --require-hashes \
        --only-binary=:all: -r "$tmp/requirements.txt" -d "$tmp"
      sub="v$extra-local-strict"
      # The wheel's schemas name themselves https://kubernetes.io/api/... and refer to
      # /api/_definitions.json; without their $id, and with that reference made relative,
      # kubeconform resolves it to the _definitions.json beside them, offline.
      "$py" - "$tmp"/*.whl "$sub" "$dest/schemas.new/kubernetes/$sub" <<'PY'
import json, os, sys, zipfile
wheel, sub, out = sys.argv[1:]
prefix = f"kubernetes_validate/kubernetes-json-schema/{sub}/"
os.makedirs(out)
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and n.endswith(".json")]
    if not names:
        sys.exit(f"setup: {wheel} has no {prefix}")
    for n in names:
        schema = json.loads(z.read(n))
        schema.pop("$id", None)
        text = json.dumps(schema, sort_keys=True)
        text = text.replace('"/api/_definitions.json#', '"_definitions.json#')
        with open(os.path.join(out, os.path.basename(n)), "w") as f:
            f.write(text + "\n")
PY
      rm -rf "$tmp"
      echo "$extra" >"$dest/schemas.new/kubernetes/VERSION"
      ;;
    *)
      echo "setup: deploy/lock/tools.lock: unknown kind '$kind'" >&2
      exit 1
      ;;
  esac
done <"$lock"

if $schemas_ok; then
  echo "setup: deployment schemas match $(basename "$lock")"
else
  echo "$schemas_want" >"$dest/schemas.new/.stamp"
  rm -rf "$dest/schemas"
  mv "$dest/schemas.new" "$dest/schemas"
  echo "setup: deployment schemas written to $dest/schemas"
fi
