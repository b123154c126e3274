# bench/worker.sh: sourced by the benchmark scripts that measure one worker.
# bench_start_worker SERVER NODE_YAML METRICS_PORT LOG: starts `SERVER serve --config NODE_YAML`
#   in the background (its output in LOG), sets `pid`, and waits up to 60 s for /readyz on
#   METRICS_PORT; prints LOG and exits 1 when it does not become ready.
# bench_header SERVER ROOT [EXTRA...]: one `# ...` line naming the server's version, the
#   commit of ROOT, the cores, the date, the load average and EXTRA.
bench_start_worker() {
  local server=$1 node=$2 metrics_port=$3 log=$4 ready=
  "$server" serve --config "$node" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do
    curl -sf "127.0.0.1:$metrics_port/readyz" >/dev/null && ready=1 && break
    sleep 0.2
  done
  [ -n "$ready" ] || { cat "$log"; echo "server did not become ready" >&2; exit 1; }
}

bench_header() {
  local server=$1 root=$2
  shift 2
  echo "# $("$server" --version | head -1), commit $(git -C "$root" rev-parse --short=12 HEAD)," \
    "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(date -u +%F)," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)$(printf ', %s' "$@")"
}
