#!/usr/bin/env python3
"""Times IREE (llvm-cpu, local-task driver) on the same model.b{N}.mlir text and golden inputs
that `reactant-server bench` and bench/xla_bench.py use, printing a line of the same form.

usage: iree_bench.py BUNDLE_DIR GOLDEN_DIR BATCH [--threads T] [--min-seconds S] [--warmup N]
                     [--keep DIR]

Runs in bench/.venv-iree (scripts/python_env.sh bench/iree.lock bench/.venv-iree).

The module text loses its Shardy annotations first (the sdy.mesh op and the sdy.sharding
argument attributes: single-device metadata that IREE's input pipeline has no dialect for);
nothing else changes. It is compiled with this venv's iree-compile:
  --iree-input-type=stablehlo --iree-hal-target-backends=llvm-cpu
  --iree-llvmcpu-target-cpu=host
(--keep DIR leaves the .mlir given to iree-compile and the .vmfb there.)

Arguments are the manifest's executable_inputs from GOLDEN_DIR/b{N}.safetensors then the
weights in __metadata__.argument_order (bench/bench_inputs.py), reshaped to the compiled
function's argument shapes and placed in device buffers once. Each timed call is one
synchronous invoke of the module's main through the VM (it returns once the results are
computed); the results stay in device buffers.

--threads T (default: the CPUs of the process's affinity): the local-task executor's worker
  count, --task_topology_group_count=T (IREE leaves those workers unpinned: run it under
  taskset, as for XLA:CPU).
--min-seconds S (default 2.0), --warmup N (default 3): after N untimed calls, calls until at
  least S seconds and 5 calls have passed; the line gives the median and the least.

After timing, the outputs of one more call are compared with the golden (XLA:CPU) outputs with
the tolerance of docs/accuracy.md: |iree - xla| <= 1e-5 + 1e-4 * |xla| for every float element,
integers equal. The line ends with the largest absolute difference and "within tolerance"; if
an element is outside it, the line says "OUTSIDE tolerance" and the exit status is 1.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

if "-h" in sys.argv or "--help" in sys.argv or len(sys.argv) < 4:
    print(__doc__.strip())
    sys.exit(0 if len(sys.argv) >= 2 and sys.argv[1] in ("-h", "--help") else 2)

import iree.runtime as rt  # noqa: E402
import numpy as np  # noqa: E402

from bench_inputs import Cell  # noqa: E402

COMPILE_FLAGS = ["--iree-input-type=stablehlo", "--iree-hal-target-backends=llvm-cpu",
                 "--iree-llvmcpu-target-cpu=host"]
ATOL, RTOL = 1e-5, 1e-4


def option(flag, default, kind):
    return kind(sys.argv[sys.argv.index(flag) + 1]) if flag in sys.argv else default


def strip_shardy(text):
    """The module without its sdy.mesh ops and sdy.sharding argument attributes."""
    text = re.sub(r"^\s*sdy\.mesh .*\n", "", text, flags=re.M)
    text = re.sub(r"sdy\.sharding = #sdy\.sharding<@[\w.]+, \[[^\]]*\]>", "", text)
    # Tidy the attribute dictionaries that held it: "{, a}", "{a, }", and empty "{}".
    text = text.replace("{, ", "{").replace(", }", "}")
    text = re.sub(r" \{\}(?=[,)])", "", text)
    if "sdy." in text:
        sys.exit("iree_bench: a Shardy annotation this script does not remove: "
                 + re.search(r".{0,40}sdy\..{0,40}", text).group(0))
    return text


def compile_module(text, keep):
    work = keep or tempfile.mkdtemp(prefix="iree_bench.")
    os.makedirs(work, exist_ok=True)
    src, out = os.path.join(work, "module.mlir"), os.path.join(work, "module.vmfb")
    with open(src, "w") as f:
        f.write(text)
    cmd = [sys.executable, "-m", "iree.compiler.tools.scripts.iree_compile", *COMPILE_FLAGS,
           src, "-o", out]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"iree_bench: iree-compile failed ({done.returncode}):\n{done.stderr[-4000:]}")
    data = open(out, "rb").read()
    if not keep:
        os.remove(src)
        os.remove(out)
        os.rmdir(work)
    return data


def argument_shapes(fn):
    """Shapes of the function's tensor arguments, from its ABI declaration."""
    decl = fn.reflection.get("iree.abi.declaration", "")
    args = decl.split("->", 1)[0]
    shapes = []
    for t in re.findall(r"%input\d+: tensor<([^>]*)>", args):
        dims = t.split("x")[:-1]
        shapes.append(tuple(int(d) for d in dims))
    return shapes


def compare(got, want):
    """(largest absolute difference, whether every element is within tolerance)."""
    worst, ok = 0.0, len(got) == len(want)
    for g, w in zip(got, want):
        g = g.reshape(w.shape) if g.size == w.size else g
        if g.shape != w.shape:
            return float("inf"), False
        if np.issubdtype(w.dtype, np.floating):
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            diff = np.abs(g64 - w64)
            if diff.size:
                worst = max(worst, float(diff.max()))
            ok = ok and bool(np.all(diff <= ATOL + RTOL * np.abs(w64)))
        else:
            ok = ok and bool(np.array_equal(g, w))
    return worst, ok


def main():
    bundle, golden_dir, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cpus = len(os.sched_getaffinity(0))
    threads = option("--threads", cpus, int)
    min_seconds = option("--min-seconds", 2.0, float)
    warmup = option("--warmup", 3, int)
    keep = option("--keep", None, str)
    cell = Cell(bundle, golden_dir, batch)

    vmfb = compile_module(strip_shardy(cell.text), keep)
    # Runtime flags are global and read when the driver creates its device: set them first.
    rt.flags.parse_flags(f"--task_topology_group_count={threads}")
    config = rt.Config("local-task")
    ctx = rt.SystemContext(config=config)
    module = rt.VmModule.copy_buffer(ctx.instance, vmfb)
    ctx.add_vm_module(module)
    fn = module.lookup_function("main")
    if fn is None:
        sys.exit(f"iree_bench: no main in the compiled module (functions {module.function_names})")

    shapes = argument_shapes(fn)
    if len(shapes) != len(cell.host):
        sys.exit(f"iree_bench: main takes {len(shapes)} tensors, the bundle gives {len(cell.host)}")
    host = [h.reshape(s) if h.size == int(np.prod(s)) else h for h, s in zip(cell.host, shapes)]
    device_args = [rt.asdevicearray(config.device, np.ascontiguousarray(h)) for h in host]
    arg_list = rt.VmVariantList(len(device_args))
    for a in device_args:
        arg_list.push_ref(a._buffer_view)
    n_results = len(cell.output_names)

    def call():
        results = rt.VmVariantList(n_results)
        ctx.vm_context.invoke(fn, arg_list, results)
        return results

    for _ in range(warmup):
        call()
    times, start = [], time.perf_counter()
    while len(times) < 5 or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1e3)

    results = call()
    got = [rt.DeviceArray(config.device, results.get_as_object(i, rt.HalBufferView)).to_host()
           for i in range(results.size)]
    worst, ok = compare(got, cell.expected)
    verdict = "within tolerance" if ok else "OUTSIDE tolerance"
    print(f"{cell.name:<14} b{batch:<4} iree:llvm-cpu threads {threads:<3} cpus {cpus:<3} iterations "
          f"{len(times):<6} median {statistics.median(times):10.4f} ms  min {min(times):10.4f} ms  "
          f"golden max abs diff {worst:.3g} ({verdict} {ATOL:g} + {RTOL:g} * |xla|, "
          f"{os.path.basename(cell.golden_file)})", flush=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
