#!/usr/bin/env bash
# image.sh: the release images, built without a container engine (docs/deploy.md, "The
# release image").
#
#   scripts/image.sh lock                 refresh deploy/lock/release.lock.json from HEAD
#   scripts/image.sh cpu|gpu [OUT]        build the image as an OCI layout (default
#                                         build-image/VARIANT); prints its digest
#   scripts/image.sh tiny OUT             a layout of one small layer (the verify-image tests)
#   scripts/image.sh check-repro [VARIANT]  two builds in two folders; same digest or exit 1
#   scripts/image.sh keygen DIR           an Ed25519 signing key pair: DIR/release-signing.{pem,pub}
#   scripts/image.sh sign OUT KEY [VARIANT]  the signed attestation OUT/attestation.dsse.json
#   scripts/image.sh push OUT DEST        skopeo copy to docker://DEST, digest kept
#
# Every input comes from the lock: the source commit (cloned from this repository), the
# Debian packages (apt, each .deb checked against its sha256) and, for gpu, the wheels (pip,
# each checked against its sha256). An input whose hash differs is refused by name.
# RS_IMAGE_WORK: the work folder (default build-image/work-VARIANT); RS_IMAGE_LOCK: the lock.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
here="$root/scripts/image"
lock="${RS_IMAGE_LOCK:-$root/deploy/lock/release.lock.json}"
cache="${RS_IMAGE_CACHE:-$root/build-image/cache}"
uid=65532
# Debian's Python runs the helpers: its zlib compresses the layers (a recorded build tool).
py=/usr/bin/python3
die() { echo "image: $*" >&2; exit 1; }
jqr() { jq -r "$1" "$lock"; }

# build_binary WORK COMMIT: reactant-server of COMMIT, built in WORK/src and stripped to
# WORK/reactant-server. The compiler sees only paths relative to the build folder: with
# ccache through CCACHE_BASEDIR, without it through -ffile-prefix-map.
build_binary() {
  local work="$1" commit="$2" src="$1/src" epoch
  rm -rf "$src"
  git clone -q --no-checkout "$root" "$src"
  git -C "$src" checkout -q "$commit"
  epoch="$(git -C "$src" log -1 --format=%ct)"
  local flags=() launcher=() map
  if command -v ccache >/dev/null && [ -z "${CCACHE_DISABLE:-}" ]; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  else
    # The same relative names ccache gives (GCC tries the last matching map first).
    map="-ffile-prefix-map=$src/=../ -ffile-prefix-map=$src/build/="
    flags=("-DCMAKE_CXX_FLAGS=$map" "-DCMAKE_C_FLAGS=$map")
  fi
  SOURCE_DATE_EPOCH="$epoch" CCACHE_BASEDIR="$src" cmake -S "$src" -B "$src/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRS_BUILD_TESTS=OFF "${launcher[@]}" "${flags[@]}" \
    >"$work/cmake.log"
  SOURCE_DATE_EPOCH="$epoch" CCACHE_BASEDIR="$src" \
    ninja -C "$src/build" -j "${RS_BUILD_JOBS:-$(nproc)}" reactant-server >"$work/ninja.log"
  strip --strip-all -o "$work/reactant-server" "$src/build/src/tools/reactant-server"
}

# fetch_wheels REQUIREMENTS: downloads its wheels (pip, no dependencies) into the cache.
fetch_wheels() {
  mkdir -p "$cache/wheels"
  local plats=() v
  for v in 12 17 18 24 25 26 27 28; do plats+=(--platform "manylinux_2_${v}_x86_64"); done
  "$root/.venv/bin/pip" download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    "${plats[@]}" --platform manylinux2014_x86_64 --platform manylinux2010_x86_64 \
    --python-version 3.12 -d "$cache/wheels" -r "$1"
}

# extract_wheels DIR: every locked gpu wheel unzipped into DIR (one site-packages tree).
extract_wheels() {
  local name version file sha
  mkdir -p "$1"
  while read -r name version file sha; do
    "$py" "$here/lock.py" check "$lock" wheel "$name" "$cache/wheels/$file"
    unzip -q -o "$cache/wheels/$file" -d "$1"
  done < <("$py" "$here/lock.py" wheels "$lock" gpu)
}

# The driver's libraries, which the NVIDIA container runtime mounts from the host.
host_provided=(--host-provided libcuda.so.1 --host-provided libnvidia-ml.so.1)

# gpu_elf_files SITE: the shared libraries of the wheels whose closure the image must hold.
# NVSHMEM's bootstrap and transport modules (MPI, PMIx, UCX, libfabric, InfiniBand) are
# loaded only for multi-node runs, which the image does not offer: their libraries are not in
# it.
gpu_elf_files() {
  find "$1" -name '*.so*' -type f ! -name 'nvshmem_bootstrap_*' ! -name 'nvshmem_transport_*' |
    LC_ALL=C sort
}

# gpu_lib_dirs SITE: "--loaded-dir=DIR" for each lib/ folder of the NVIDIA wheels.
gpu_lib_dirs() {
  find "$1/nvidia" -mindepth 2 -maxdepth 2 -name lib -type d | LC_ALL=C sort | sed 's/^/--loaded-dir=/'
}

cmd_lock() {
  local commit version epoch work="$root/build-image/lock"
  [ -z "$(git -C "$root" status --porcelain --untracked-files=no -- . ':!deploy/lock')" ] ||
    echo "image: warning: the working tree has uncommitted changes; the lock names HEAD" >&2
  commit="$(git -C "$root" rev-parse HEAD)"
  epoch="$(git -C "$root" log -1 --format=%ct "$commit")"
  version="$(sed -n 's/^project(reactant_server VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")"
  mkdir -p "$work"
  echo "image: building reactant-server at $commit"
  build_binary "$work" "$commit"
  "$py" "$here/elf_closure.py" --root / "$work/reactant-server" >"$work/cpu.closure"
  echo "image: fetching the gpu wheels"
  fetch_wheels "$root/deploy/lock/gpu-wheels.txt"
  rm -rf "$work/site-packages"
  local req
  while read -r req; do
    unzip -q -o "$cache/wheels/${req%%==*}-${req#*==}-"*.whl -d "$work/site-packages"
  done < <(sed 's/#.*//; /^ *$/d; s/-/_/g' "$root/deploy/lock/gpu-wheels.txt" | tr -d ' ')
  local gpu_files=() loaded=()
  mapfile -t gpu_files < <(gpu_elf_files "$work/site-packages")
  mapfile -t loaded < <(gpu_lib_dirs "$work/site-packages")
  { "$py" "$here/elf_closure.py" --root / "${host_provided[@]}" "${loaded[@]}" \
      "$work/reactant-server" "${gpu_files[@]}" | grep -v "^$work/"; } >"$work/gpu.closure"
  "$py" "$here/lock.py" refresh --out "$lock" --commit "$commit" --version "$version" \
    --epoch "$epoch" --wheels-in "$root/deploy/lock/gpu-wheels.txt" --wheel-dir "$cache/wheels" \
    --closure "cpu=$work/cpu.closure" --closure "gpu=$work/gpu.closure"
  echo "image: wrote $lock ($(jq '.debian.packages | length' "$lock") Debian packages," \
    "$(jq '.wheels | length' "$lock") wheels, commit ${commit:0:12})"
}

# stage_debs VARIANT DIR: every locked .deb of VARIANT fetched, checked and extracted into DIR.
stage_debs() {
  local name version file sha have
  mkdir -p "$cache/debs" "$2"
  while read -r name version file sha; do
    [ -f "$cache/debs/$file" ] ||
      (cd "$cache/debs" && apt-get download -q -o APT::Sandbox::User=root "$name=$version" >/dev/null)
    "$py" "$here/lock.py" check "$lock" deb "$name" "$cache/debs/$file"
    dpkg-deb -x "$cache/debs/$file" "$2"
  done < <("$py" "$here/lock.py" debs "$lock" "$1")
}

# write_spec VARIANT WORK LAYERS...: the layout spec (scripts/image/oci_layout.py).
write_spec() {
  local variant="$1" work="$2"; shift 2
  local lock_sha env health
  lock_sha="$(sha256sum "$lock" | cut -d' ' -f1)"
  env='["PATH=/usr/local/bin:/usr/bin:/bin"]'
  if [ "$variant" = gpu ]; then
    env='["PATH=/usr/local/bin:/usr/bin:/bin",
          "PJRT_PLUGIN_LIBRARY_PATH=/opt/reactant-server/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so",
          "NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"]'
  fi
  health='{"Test": ["CMD", "/usr/bin/reactant-server", "probe", "--url", "http://127.0.0.1:8002/readyz"],
           "Interval": 10000000000, "Timeout": 3000000000, "StartPeriod": 600000000000, "Retries": 3}'
  jq -n --argjson epoch "$(jqr .source.source_date_epoch)" --arg version "$(jqr .version)" \
    --arg commit "$(jqr .source.commit)" --arg lock_sha "$lock_sha" --arg variant "$variant" \
    --argjson env "$env" --argjson health "$health" --args '{
    epoch: $epoch, ref_name: ($version + "-" + $variant),
    layers: [$ARGS.positional[] | split("|") | {dir: .[0], created_by: .[1],
             owners: {"var/cache/reactant-server": [65532, 65532]}}],
    config: {User: "65532:65532", Env: $env, Entrypoint: ["/usr/bin/reactant-server"],
             Cmd: ["serve", "--config", "/etc/reactant-server/node.yaml"], WorkingDir: "/",
             ExposedPorts: {"8000/tcp": {}, "8001/tcp": {}, "8002/tcp": {}},
             Volumes: {"/models": {}, "/var/cache/reactant-server": {}},
             StopSignal: "SIGTERM", Healthcheck: $health},
    annotations: {"org.opencontainers.image.title": "reactant-server",
                  "org.opencontainers.image.version": $version,
                  "org.opencontainers.image.revision": $commit,
                  "org.opencontainers.image.created": ($epoch | todate),
                  "dev.reactant-server.image.variant": $variant,
                  "dev.reactant-server.lock.sha256": $lock_sha}}' "$@" >"$work/spec.json"
}

# check_build_packages: the compiler and -dev packages here are the lock's.
check_build_packages() {
  local name version have
  while read -r name version; do
    have="$(dpkg-query -W -f='${Version}' "$name" 2>/dev/null || true)"
    [ "$have" = "$version" ] || die "the lock was made with $name $version, this machine has" \
      "'${have:-none}': the binary would differ (apt-get install $name=$version, or refresh the lock)"
  done < <("$py" "$here/lock.py" build-packages "$lock")
}

cmd_build() {
  local variant="$1" out="${2:-$root/build-image/$1}"
  local work="${RS_IMAGE_WORK:-$root/build-image/work-$variant}" t0=$SECONDS
  [ -f "$lock" ] || die "no lock at $lock: run scripts/image.sh lock"
  out="$(realpath -m "$out")"
  local commit; commit="$(jqr .source.commit)"
  git -C "$root" cat-file -e "$commit^{commit}" 2>/dev/null ||
    die "the lock names commit $commit, which this repository does not have"
  check_build_packages
  rm -rf "$work"; mkdir -p "$work"
  work="$(realpath "$work")"
  stage_debs "$variant" "$work/debs"
  echo "image: building reactant-server at ${commit:0:12}"
  build_binary "$work" "$commit"
  install -D -m 0755 "$work/reactant-server" "$work/debs/usr/bin/reactant-server"
  local sys="$work/layers/system" app="$work/layers/app" gpu="$work/layers/gpu"
  local closure_args=(usr/bin/reactant-server)
  if [ "$variant" = gpu ]; then
    extract_wheels "$gpu/opt/reactant-server/site-packages"
    cp -al "$gpu/opt" "$work/debs/"
    while read -r f; do closure_args+=("${f#"$work/debs"}"); done \
      < <(gpu_elf_files "$work/debs/opt/reactant-server/site-packages")
    while read -r f; do closure_args+=("${f%%=*}=${f#*="$work/debs"}"); done \
      < <(gpu_lib_dirs "$work/debs/opt/reactant-server/site-packages")
  fi
  "$py" "$here/elf_closure.py" --root "$work/debs" "${host_provided[@]}" "${closure_args[@]}" |
    grep -v '^/opt/' >"$work/closure"
  mkdir -p "$sys"
  (cd "$work/debs" && grep -v '^/usr/bin/reactant-server$' "$work/closure" |
     sed 's|^/||' | xargs cp -a --parents -t "$sys")
  local name version file sha
  while read -r name version file sha; do
    # Packages of one source (libgcc-s1, libstdc++6) link their doc folder to another's.
    [ ! -f "$work/debs/usr/share/doc/$name/copyright" ] ||
      install -D -m 0644 "$work/debs/usr/share/doc/$name/copyright" "$sys/usr/share/doc/$name/copyright"
  done < <("$py" "$here/lock.py" debs "$lock" "$variant")
  # proc, sys and dev: mount points (a container runtime mounts them; a chroot needs them).
  mkdir -p "$sys/etc" "$sys/tmp" "$sys/proc" "$sys/sys" "$sys/dev" "$sys/models" \
    "$sys/var/cache/reactant-server"
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nreactant:x:%d:%d:reactant-server:/var/cache/reactant-server:/usr/sbin/nologin\n' \
    "$uid" "$uid" >"$sys/etc/passwd"
  printf 'root:x:0:\nreactant:x:%d:\n' "$uid" >"$sys/etc/group"
  install -D -m 0755 "$work/reactant-server" "$app/usr/bin/reactant-server"
  install -D -m 0644 "$root/deploy/image/node-$variant.yaml" "$app/etc/reactant-server/node.yaml"
  mkdir -p "$app/usr/share/reactant-server"
  jq -n --arg version "$(jqr .version)" --arg commit "$commit" --arg variant "$variant" \
    --arg lock_sha256 "$(sha256sum "$lock" | cut -d' ' -f1)" \
    '{version: $version, commit: $commit, lock_sha256: $lock_sha256, variant: $variant}' \
    >"$app/usr/share/reactant-server/image.json"
  local layers=("$sys|Debian 12 libraries of reactant-server (deploy/lock), users, volumes")
  [ "$variant" = gpu ] && layers+=("$gpu|PJRT plugin and NVIDIA CUDA 13 runtime wheels (deploy/lock)")
  layers+=("$app|reactant-server ${commit:0:12}, node file, image.json")
  write_spec "$variant" "$work" "${layers[@]}"
  local digest; digest="$("$py" "$here/oci_layout.py" --spec "$work/spec.json" --out "$out")"
  echo "image: $variant image $digest in $out ($(du -sb "$out/blobs" | cut -f1) bytes of blobs," \
    "$((SECONDS - t0)) s)"
}

cmd_tiny() {
  local out="$1" work; work="$(mktemp -d)"
  mkdir -p "$work/layer/usr/share/reactant-server" "$work/layer/etc"
  echo '{"variant": "tiny"}' >"$work/layer/usr/share/reactant-server/image.json"
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\n' >"$work/layer/etc/passwd"
  jq -n --arg dir "$work/layer" '{epoch: 0, ref_name: "tiny", layers: [{dir: $dir,
    created_by: "a few files"}], config: {User: "65532:65532"}, annotations: {}}' >"$work/spec.json"
  "$py" "$here/oci_layout.py" --spec "$work/spec.json" --out "$out"
  rm -rf "$work"
}

cmd_check_repro() {
  local variant="${1:-cpu}" a b
  for d in a b; do
    RS_IMAGE_WORK="$root/build-image/repro-$d/work" cmd_build "$variant" "$root/build-image/repro-$d/out-$d"
  done
  a="$(jq -r '.manifests[0].digest' "$root/build-image/repro-a/out-a/index.json")"
  b="$(jq -r '.manifests[0].digest' "$root/build-image/repro-b/out-b/index.json")"
  if [ "$a" = "$b" ]; then
    echo "image: check-repro: both builds of the $variant image are $a"
    return 0
  fi
  echo "image: check-repro: the builds differ: $a and $b; blobs only in one:" >&2
  diff <(ls "$root/build-image/repro-a/out-a/blobs/sha256") \
       <(ls "$root/build-image/repro-b/out-b/blobs/sha256") >&2 || true
  echo "image: explain a layer with: diffoscope build-image/repro-a/out-a/blobs/sha256/X" \
    "build-image/repro-b/out-b/blobs/sha256/Y" >&2
  return 1
}

cmd_keygen() {
  mkdir -p "$1"
  [ ! -e "$1/release-signing.pem" ] || die "$1/release-signing.pem exists; not overwriting it"
  (umask 077 && openssl genpkey -algorithm ed25519 -out "$1/release-signing.pem")
  openssl pkey -in "$1/release-signing.pem" -pubout -out "$1/release-signing.pub"
  echo "image: wrote $1/release-signing.pem (keep it private) and $1/release-signing.pub"
}

cmd_sign() {
  local out="$1" key="$2" variant="${3:-}"
  [ -n "$variant" ] || variant="$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' \
    "$out/index.json" | sed 's/.*-//')"
  "$py" "$here/attest.py" --layout "$out" --lock "$lock" --variant "$variant" --key "$key" \
    --out "$out/attestation.dsse.json" ${RS_IMAGE_BUILDER_ID:+--builder-id "$RS_IMAGE_BUILDER_ID"}
}

cmd_push() {
  local ref; ref="$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' "$1/index.json")"
  skopeo copy --preserve-digests --digestfile "$1.pushed-digest" "oci:$1:$ref" "docker://$2"
  echo "image: pushed $(cat "$1.pushed-digest") to $2"
}

case "${1:-}" in
  lock) cmd_lock ;;
  cpu|gpu) cmd_build "$1" "${2:-}" ;;
  tiny) [ $# -eq 2 ] || die "usage: image.sh tiny OUT"; cmd_tiny "$2" ;;
  check-repro) cmd_check_repro "${2:-cpu}" ;;
  keygen) [ $# -eq 2 ] || die "usage: image.sh keygen DIR"; cmd_keygen "$2" ;;
  sign) [ $# -ge 3 ] || die "usage: image.sh sign OUT KEY [VARIANT]"; cmd_sign "$2" "$3" "${4:-}" ;;
  push) [ $# -eq 3 ] || die "usage: image.sh push OUT DEST"; cmd_push "$2" "$3" ;;
  *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
