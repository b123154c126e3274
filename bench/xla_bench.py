#!/usr/bin/env python3
"""Times XLA (jaxlib) on the same model.b{N}.mlir text and golden inputs that
`reactant-server bench` uses, printing lines in the same form.

usage: xla_bench.py BUNDLE_DIR GOLDEN_DIR BATCH [--platform cpu|cuda] [--transfers]
                    [--min-seconds S] [--warmup N] [--in-flight K]

Arguments are the manifest's executable_inputs from GOLDEN_DIR/b{N}.safetensors (reshaped
to the argument shapes) then the weights in __metadata__.argument_order, all placed on the
device once; each timed execute waits for its results (block_until_ready).

--platform cpu (default): XLA:CPU; its thread count is XLA's own (it follows the process's
  CPU affinity, so run it under taskset).
--platform cuda: XLA:GPU through the jax CUDA plugin; XLA_FLAGS reaches the compile as usual
  (scripts/gpu_acceptance.sh passes the server's flags, e.g. --xla_gpu_autotune_level=0).
--transfers: each timed call also uploads the executable inputs from host memory
  (jax.device_put) and reads every output back into host memory (numpy), as a serving
  request does: the "bare execute" that a server's latency is compared with. The line then
  also says whether the outputs equal GOLDEN_DIR/b{N}.gpu.safetensors (cuda) or
  b{N}.safetensors (cpu) bit for bit.
--in-flight K (with --transfers): after the timed calls above, K calls are kept in flight
  (each uploads, executes and reads back; a call's outputs are read only once K - 1 later
  calls have been launched) for another min-seconds, and a second line prints the throughput
  in calls/s: the device's rate with its transfers overlapped, as a server with K batches in
  flight would see it at best.
"""
import os
import statistics
import sys
import time

if "-h" in sys.argv or "--help" in sys.argv or len(sys.argv) < 4:
    print(__doc__.strip())
    sys.exit(0 if len(sys.argv) >= 2 and sys.argv[1] in ("-h", "--help") else 2)
PLATFORM = sys.argv[sys.argv.index("--platform") + 1] if "--platform" in sys.argv else "cpu"
os.environ.setdefault("JAX_PLATFORMS", PLATFORM)
import jax  # noqa: E402
import numpy as np  # noqa: E402

from bench_inputs import Cell, load_file, manifest_inputs  # noqa: E402


def compile_text(text, dev):
    backend = dev.client
    try:
        from jax._src.lib import _jax as xc
    except ImportError:
        from jax._src.lib import xla_client as xc
    opts = xc.CompileOptions()
    dl = xc.DeviceList((dev,))
    if hasattr(backend, "compile_and_load"):
        return backend.compile_and_load(text, dl, opts)
    return backend.compile(text, dl, opts)


def main():
    bundle, golden_dir, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    min_seconds = float(sys.argv[sys.argv.index("--min-seconds") + 1]) if "--min-seconds" in sys.argv else 2.0
    warmup = int(sys.argv[sys.argv.index("--warmup") + 1]) if "--warmup" in sys.argv else 3
    cell = Cell(bundle, golden_dir, batch)
    name, text = cell.name, cell.text
    transfers = "--transfers" in sys.argv
    dev = jax.devices(PLATFORM)[0]
    exe = compile_text(text, dev)
    shapes = None
    try:
        shapes = [a.shape for a in exe.input_shapes] if hasattr(exe, "input_shapes") else None
    except Exception:
        shapes = None
    host = list(cell.host)
    # Inputs stored as [1] for scalars or flattened: reshape to the program's shapes when known.
    if shapes:
        host = [h.reshape(s) if h.size == int(np.prod(s)) else h for h, s in zip(host, shapes)]
    args = [jax.device_put(h, dev) for h in host]
    n_inputs = cell.n_inputs

    def block(out):
        """Waits for every array of an execute result, whatever its jaxlib shape."""
        if hasattr(out, "disassemble_into_single_device_arrays"):
            out = out.disassemble_into_single_device_arrays()
        if isinstance(out, (list, tuple)):
            for o in out:
                block(o)
        elif hasattr(out, "block_until_ready"):
            out.block_until_ready()

    # The loaded executable's calling convention changed across jaxlib releases: try each
    # form once and keep the first that the installed jaxlib accepts.
    calls = []
    if hasattr(exe, "execute_sharded"):
        calls += [lambda: exe.execute_sharded(args), lambda: exe.execute_sharded([[a] for a in args])]
    if hasattr(exe, "execute"):
        calls.append(lambda: exe.execute(args))
    errors = []
    for call in calls:
        try:
            block(call())
        except TypeError as e:
            errors.append(str(e).splitlines()[0])
            continue
        break
    else:
        sys.exit("no execute form accepted: " + "; ".join(errors))

    def leaves(out):
        """The arrays of an execute result, in order, whatever its jaxlib shape."""
        if hasattr(out, "disassemble_into_single_device_arrays"):
            out = out.disassemble_into_single_device_arrays()
        if isinstance(out, (list, tuple)):
            return [a for o in out for a in leaves(o)]
        return [out]

    fetched = []

    def run():
        if not transfers:
            block(call())
            return
        # Upload the request's inputs, execute, read every output back: one serving request.
        args[:n_inputs] = [jax.device_put(h, dev) for h in host[:n_inputs]]
        fetched[:] = [np.asarray(a) for a in leaves(call())]

    for _ in range(warmup):
        run()
    times, start = [], time.perf_counter()
    while len(times) < 5 or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    check = ""
    if transfers:
        gfile = os.path.join(golden_dir, f"b{batch}.gpu.safetensors" if PLATFORM == "cuda" else f"b{batch}.safetensors")
        want = load_file(gfile) if os.path.exists(gfile) else {}
        outs = [k for k in want if k not in manifest_inputs(bundle)]
        same = len(outs) == len(fetched) and all(
            np.asarray(want[k]).reshape(-1).view(np.uint8).tobytes() == f.reshape(-1).view(np.uint8).tobytes()
            for k, f in zip(outs, fetched))
        check = f"  transfers yes  golden {'bit-identical' if same else 'DIFFERENT'} ({os.path.basename(gfile)})"
    print(f"{name:<14} b{batch:<4} xla:{PLATFORM} cpus {len(os.sched_getaffinity(0)):<3} iterations "
          f"{len(times):<6} median {statistics.median(times):10.4f} ms  min {min(times):10.4f} ms{check}",
          flush=True)
    if transfers and "--in-flight" in sys.argv:
        k = int(sys.argv[sys.argv.index("--in-flight") + 1])
        pending, calls_done, start = [], 0, time.perf_counter()
        while calls_done < 5 or time.perf_counter() - start < min_seconds:
            args[:n_inputs] = [jax.device_put(h, dev) for h in host[:n_inputs]]
            pending.append(leaves(call()))
            if len(pending) >= k:
                fetched[:] = [np.asarray(a) for a in pending.pop(0)]
                calls_done += 1
        for out in pending:
            fetched[:] = [np.asarray(a) for a in out]
            calls_done += 1
        elapsed = time.perf_counter() - start
        print(f"{name:<14} b{batch:<4} xla:{PLATFORM} in flight {k:<2} calls {calls_done:<6} "
              f"throughput {calls_done / elapsed:10.1f} calls/s", flush=True)


if __name__ == "__main__":
    main()
