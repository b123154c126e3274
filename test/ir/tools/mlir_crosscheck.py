# test/ir/tools/mlir_crosscheck.py - does MLIR itself accept what printGeneric writes?
#
# Run where jax/jaxlib are installed (the GPU machine), on a directory written by
# rs_ir_emit_printed:
#   build-ir/test/ir/rs_ir_emit_printed build-ir/xla_check $(find ../shared/fixtures -name '*.mlir') \
#       ../shared/conformance/interpret/*.mlir ../shared/conformance/interpret/chlo/*.mlir \
#       ../shared/conformance/testdata/*.mlir
#   python3 test/ir/tools/mlir_crosscheck.py build-ir/xla_check OUT_DIR
# For every pair it parses (and verifies) our printed module with MLIR, with every
# dialect JAX registers (stablehlo, chlo, func, sdy; others unregistered), converts the
# fixture modules to XLA computations, and compares MLIR's own generic printing of the
# original with that of ours. Prints the counts; OUT_DIR/report.txt lists every failure
# and difference. Known, benign differences: func arg_attrs/res_attrs of empty
# dictionaries are dropped, chlo.top_k spells its default is_stable = true, inherent
# attributes of unregistered test ops print as properties, zero-element constants print
# as dense<>. The quant dialect is not in jaxlib's Python bindings, so quantized
# modules cannot be checked there.
import collections
import os
import sys

from jax._src.interpreters import mlir as jmlir
from jaxlib.mlir import ir

try:
    from jax._src.lib import _jax as xc
except ImportError:
    from jax._src.lib import xla_client as xc

d, out = sys.argv[1], sys.argv[2]
to_xla = getattr(getattr(xc, 'mlir', None), 'mlir_module_to_xla_computation', None)
entries = [l.split(' ', 1) for l in open(os.path.join(d, 'manifest.txt')).read().splitlines()]
counts = collections.Counter()
lines = []
ctx = jmlir.make_ir_context()
ctx.allow_unregistered_dialects = True
for i, name in entries:
    with ctx:
        printed = open(f'{d}/{i}.printed.mlir').read()
        try:
            ours = ir.Module.parse(printed)
        except Exception as e:
            counts['printed_fails_in_mlir'] += 1
            lines.append(f'PRINTED FAIL {name}\n{str(e)[:600]}')
            continue
        counts['printed_parses_in_mlir'] += 1
        if '/fixtures/' in name and to_xla is not None:
            try:
                to_xla(printed, use_tuple_args=False, return_tuple=False)
                counts['fixture_converts_to_xla'] += 1
            except Exception as e:
                counts['fixture_xla_fail'] += 1
                lines.append(f'XLA FAIL {name}\n{str(e)[:400]}')
        try:
            orig = ir.Module.parse(open(f'{d}/{i}.orig.mlir').read())
        except Exception:
            counts['original_not_parsable_by_mlir'] += 1
            continue
        ga = orig.operation.get_asm(print_generic_op_form=True, enable_debug_info=False)
        gb = ours.operation.get_asm(print_generic_op_form=True, enable_debug_info=False)
        if ga == gb:
            counts['identical_to_mlir'] += 1
            continue
        counts['differs_from_mlir'] += 1
        la, lb = ga.splitlines(), gb.splitlines()
        for k in range(max(len(la), len(lb))):
            x = la[k] if k < len(la) else '<none>'
            y = lb[k] if k < len(lb) else '<none>'
            if x != y:
                lines.append(f'DIFF {name}\n  mlir: {x.strip()[:400]}\n  ours: {y.strip()[:400]}')
                break
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, 'report.txt'), 'w') as f:
    f.write(str(dict(counts)) + '\n' + '\n'.join(lines) + '\n')
print(dict(counts))
