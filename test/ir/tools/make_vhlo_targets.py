#!/usr/bin/env python3
# test/ir/tools/make_vhlo_targets.py - StableHLO portable artifacts at several VHLO
# target versions, as test data for our own portable-artifact (VHLO bytecode) reader.
#
# How to run (from the repository root; needs Python 3.12 and the pinned jax/jaxlib):
#   python3 -m venv /tmp/vhlo-venv
#   /tmp/vhlo-venv/bin/pip install --require-hashes -r test/ir/tools/requirements-vhlo.txt
#   /tmp/vhlo-venv/bin/python test/ir/tools/make_vhlo_targets.py
# Options: --fixtures DIR (default ../shared/fixtures/bundles, the same place the C++
# tests take RS_SHARED_DIR from), --out DIR (default test/ir/data/vhlo_targets),
# --allow-other-jax (run with another jax/jaxlib than the pinned one: the bytes will
# differ, so only for experiments).
#
# What it does, all with jaxlib's own MLIR and StableHLO Python bindings:
#  1. Source modules. For each fixture in FIXTURES it reads <bundle>/model.b1.mlir,
#     removes the Shardy content (every sdy.* op, and every sdy.* attribute of an op or
#     of a func's arg_attrs/res_attrs), verifies, and writes the module as jaxlib prints
#     it (pretty form, no locations) to OUT/<name>.mlir. A fixture with chlo ops (which
#     have no VHLO form) also gets a derived module OUT/<name>_nochlo.mlir: the one XLA's
#     own serializer (jax._src.lib._jax.mlir.serialize_portable_artifact, what
#     jax.export calls) makes of it at the current version, read back with StableHLO's
#     deserializer. That is where chlo.erfc becomes plain StableHLO and chlo.top_k a
#     stablehlo.composite with a decomposition function. The hand-written modules
#     OUT/hand_*.mlir are inputs: this script reads them and never rewrites them.
#  2. For each source module and each target in TARGETS (plus the current version of
#     jaxlib's StableHLO) it calls stablehlo.serialize_portable_artifact_str(text,
#     target) and writes OUT/<name>.<target>.mlirbc. The same bytes must come from
#     serialize_portable_artifact(module, target); that is checked. A failure is
#     recorded (exception text plus the MLIR error diagnostics, which the str API only
#     prints to stderr, collected through the module API with a diagnostic handler),
#     never faked.
#  3. For each artifact it writes OUT/<name>.<target>.roundtrip.mlir: what
#     deserialize_portable_artifact_str gives back (MLIR bytecode of the StableHLO
#     module), parsed and printed by jaxlib, pretty form, without locations. It must
#     equal deserialize_portable_artifact(context, artifact) printed the same way.
#  4. For each artifact it reads the artifact itself into the MLIR context (the VHLO
#     dialect is registered there, so this gives the VHLO module exactly as stored,
#     no upgrade) to list the VHLO op names it contains, and writes that module in
#     generic form with its locations as OUT/<name>.<target>.vhlo.mlir when the text is
#     at most VHLO_TEXT_LIMIT bytes.
#  5. Writes OUT/README.md: versions, the (module x target) table with the bytecode
#     version and producer string read from each file's header, the failures, the op
#     names, and what a reader's author must know about the round-trip text.
# Files in OUT that this script wrote before and no longer writes are removed; the
# hand-written hand_*.mlir are never touched. Running it twice gives the same bytes.
import argparse
import collections
import difflib
import glob
import os
import re
import sys

import jax
import jaxlib
from jax._src.interpreters import mlir as jmlir
from jax._src.lib import _jax
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

PINNED = {'jax': '0.11.2', 'jaxlib': '0.11.2'}
FIXTURES = ['iris_mlp', 'digits_cnn', 'op_zoo', 'tf32_algo', 'tiny_bert']
TARGETS = ['0.9.0', '1.0.0', '1.5.0', '1.10.0']  # the current version is added
ARTIFACT_LIMIT = 100 * 1024  # a module with a bigger artifact is skipped at all targets
VHLO_TEXT_LIMIT = 32 * 1024  # the .vhlo.mlir dumps are written only up to this size
GENERATED = re.compile(r'.*\.(mlirbc|roundtrip\.mlir|vhlo\.mlir)$')

# Why a (module, target) pair fails, in words. Matched against the collected
# diagnostics; written by hand from the diagnostics of this script's own runs.
EXPLAIN = [
    (re.compile(r"failed to legalize unresolved target materialization"),
     'the module contains chlo ops (chlo.top_k in op_zoo, chlo.erfc in tiny_bert), which '
     'have no VHLO form. StableHLO\'s own serializer does not legalize them (XLA\'s, used by '
     'jax.export, does: see the `_nochlo` module), so the conversion to VHLO fails at the '
     'first use of a chlo result (the location is that use).'),
    (re.compile(r"'vhlo\.dot_general_v2' that was explicitly marked illegal"),
     'an explicit dot algorithm (`algorithm = <...>`) needs vhlo.dot_general_v2, from '
     '1.6.0 on; dot_general_v1 has no algorithm fields.'),
    (re.compile(r"'vhlo\.composite_v\d' that was explicitly marked illegal"),
     'stablehlo.composite (vhlo.composite_v1) exists from 0.19.0 on.'),
]

# What the round-trip text does differently from the source, as seen in this data at
# jaxlib 0.11.2 (checked by hand against the files; the per-artifact "same as source"
# column of the table is computed). Kept here so that README.md can be regenerated.
NOTES = r'''
## What a reader's author must know

Observed in this data at jaxlib 0.11.2 (written by hand from the files; the tables above
are computed).

* **Default-valued attributes are dropped on the way back.** VHLO stores every
  attribute explicitly (see the `.vhlo.mlir` dumps: custom_call has `backend_config = ""`,
  `called_computations = []` and so on), and StableHLO's deserializer removes the ones
  equal to their default. Dropped here: dot_general `precision = [DEFAULT, DEFAULT]`;
  convolution `stride`/`lhs_dilate`/`rhs_dilate` of all 1, `reverse` of all false,
  `precision_config` of all DEFAULT; reduce_window `base_dilations`/`window_dilations`
  of all 1 and `padding` of all 0; gather `indices_are_sorted = false`. Kept: anything
  non-default (hand_data's convolution keeps `reverse = [false, true]` and
  `precision_config = [HIGHEST, DEFAULT]`). A reader may keep or drop defaults, but its
  IR must give an absent attribute the default value; compare with the round trip
  after normalizing that.
* **The round-trip text of a module is the same at every target** (the table says so
  per module). An old target changes only which VHLO op versions are stored, e.g.
  `dot_general_v1` up to 1.5.0 and `dot_general_v2` from 1.10.0 here, `gather_v1` at
  0.9.0/1.0.0 and `gather_v2` from 1.5.0, `exponential`/`tanh`/`cosine`/`log_plus_one`
  `_v1` up to 1.5.0 and `_v2` (with `result_accuracy`) from 1.10.0, `custom_call_v1` up
  to 1.10.0 and `custom_call_v2` at 1.20.0, `composite_v1` up to 1.10.0 and
  `composite_v2` at 1.20.0. Reading upgrades to the newest version, filling defaults,
  which are then dropped again.
* **Bytecode version 0 at 0.9.0, 6 everywhere else.** Version 0 files have no Properties
  section: the VHLO op attributes are in each op's attribute dictionary. The `.vhlo.mlir`
  dumps still print them as properties `<{...}>`, because they print the module as MLIR
  holds it in memory, not the bytes.
* **func visibility.** `sym_visibility` is always stored, as a `string_v1`: `"public"` or
  `"private"` as written, and `""` (empty) when the source gave none (hand_data's
  `func.func @main`); that round-trips to no visibility keyword (public by default).
* **Module attributes stay builtin.** `mhlo.num_partitions`, `mhlo.num_replicas`,
  `mhlo.frontend_attributes`, `test.flag` are stored as builtin attributes in the module's
  attribute dictionary (`}) {mhlo.num_partitions = 1 : i32, ...}` in the dumps), not as
  VHLO attributes; func `arg_attrs`/`res_attrs` (e.g. `jax.result_info`) are VHLO
  (`#vhlo.array_v1<[#vhlo.dict_v1<{#vhlo.string_v1<...> = ...}>]>`), an empty
  `arg_attrs` is `#vhlo.array_v1<[]>`. The module name is `builtin.module`'s `sym_name`;
  hand_data has none.
* **Locations.** Every artifact carries locations `loc("-":line:col)`: file name `-`,
  line:col into the source `.mlir` here exactly as written (the serializer parsed that
  text; for hand_*.mlir, comments included). The dumps show them; the round-trip files
  are printed without them.
* **Compare with the source as printed**, not as hand-written: hand_consts writes
  `1.401298e-45`, MLIR prints `1.401300e-45` (same f32 bits); SSA names are renumbered.
* **VHLO spelling.** The TF32 type prints as `!vhlo.tf31_v1` (the mnemonic in
  VhloTypes.td; types are stored by code, so the bytes do not spell it). Dimension
  lists are `#vhlo.tensor_v1<dense<...> : tensor<Nxi64>>`, booleans `#vhlo.bool_v1<...>`,
  enums e.g. `#vhlo<precision_v1 DEFAULT>`, `#vhlo<api_version_v1 API_VERSION_ORIGINAL>`.
* **The `_nochlo` modules** are themselves a deserializer's output (XLA's serializer,
  then StableHLO's deserializer), so their round trip equals them. op_zoo_nochlo's
  `chlo.top_k` is a `stablehlo.composite "chlo.top_k"` whose decomposition is the private
  function `@chlo.top_k.impl` (a symbol name with dots).
* **Stderr.** When `serialize_portable_artifact_str` fails, MLIR prints the diagnostics
  to stderr (the str API has its own context); the script collects the same ones again
  through the module API for the failure list.
'''


def parse_args():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, '..', '..', '..'))
    p = argparse.ArgumentParser(
        description='Write StableHLO portable artifacts at several VHLO targets (see the comment at the top).')
    p.add_argument('--fixtures', default=os.path.join(root, '..', 'shared', 'fixtures', 'bundles'))
    p.add_argument('--out', default=os.path.join(root, 'test', 'ir', 'data', 'vhlo_targets'))
    p.add_argument('--allow-other-jax', action='store_true')
    return p.parse_args()


class Diagnostics:
    """Collects the MLIR diagnostics emitted in one context."""

    def __init__(self, ctx):
        self.lines = []
        self.handle = ctx.attach_diagnostic_handler(self._on)

    def _on(self, d):
        self.lines.append(f'{d.location}: {str(d.severity).split(".")[-1].lower()}: {d.message}')
        return True  # handled: do not print to stderr

    def take(self):
        lines, self.lines = self.lines, []
        return lines


def strip_sdy(ctx, text):
    """The module without sdy.* ops and sdy.* attributes, printed without locations."""
    with ctx:
        module = ir.Module.parse(text)
        dead = []

        def visit(op):
            if op.name.startswith('sdy.'):
                dead.append(op)
                return ir.WalkResult.SKIP
            for name in [a if isinstance(a, str) else a.name for a in op.attributes]:
                if name.startswith('sdy.'):
                    del op.attributes[name]
            for key in ('arg_attrs', 'res_attrs'):
                if key not in op.attributes:
                    continue
                dicts = []
                for d in ir.ArrayAttr(op.attributes[key]):
                    d = ir.DictAttr(d)
                    items = [d[i] for i in range(len(d))]
                    dicts.append(ir.DictAttr.get(
                        {n.name: n.attr for n in items if not n.name.startswith('sdy.')}))
                op.attributes[key] = ir.ArrayAttr.get(dicts)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        for op in dead:
            op.erase()
        if not module.operation.verify():
            raise RuntimeError('module does not verify after removing sdy')
        out = module.operation.get_asm(enable_debug_info=False)
        if 'sdy' in out:
            raise RuntimeError('sdy content left after stripping')
        return out


def without_chlo(ctx, text, current):
    """The module after XLA's own pre-serialization passes (chlo legalized)."""
    artifact = _jax.mlir.serialize_portable_artifact(text, current)
    left = []
    with ctx:
        module = stablehlo.deserialize_portable_artifact(ctx, artifact)

        def visit(op):
            if op.name.startswith('chlo.'):
                left.append(op.name)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        out = module.operation.get_asm(enable_debug_info=False)
    if left:
        raise RuntimeError(f'chlo ops left after XLA serialization: {left}')
    return out


def prefix_varint(data, pos):
    """MLIR bytecode's PrefixVarInt at data[pos]: (value, next position)."""
    first = data[pos]
    if first == 0:
        return int.from_bytes(data[pos + 1:pos + 9], 'little'), pos + 9
    extra = (first & -first).bit_length() - 1  # trailing zero bits = bytes that follow
    raw = int.from_bytes(data[pos:pos + 1 + extra], 'little')
    return raw >> (extra + 1), pos + 1 + extra


def header(data):
    """(bytecode version, byte 4 in hex, producer string) of an MLIR bytecode file."""
    if data[:4] != b'ML\xefR':
        raise RuntimeError('not MLIR bytecode')
    version, pos = prefix_varint(data, 4)
    end = data.index(b'\0', pos)
    return version, f'0x{data[4]:02x}', data[pos:end].decode()


SECTION_NAMES = ['String', 'Dialect', 'AttrType', 'AttrTypeOffset', 'IR', 'Resource',
                 'ResourceOffset', 'DialectVersions', 'Properties']


def sections(data):
    """Top-level section names in file order (only the section headers are read)."""
    _, pos = prefix_varint(data, 4)
    pos = data.index(b'\0', pos) + 1
    names = []
    while pos < len(data):
        ident = data[pos]
        length, pos = prefix_varint(data, pos + 1)
        if ident & 0x80:  # aligned: alignment, then 0xCB padding up to it
            align, pos = prefix_varint(data, pos)
            while pos % align:
                pos += 1
        names.append(SECTION_NAMES[ident & 0x7f])
        pos += length
    if pos != len(data):
        raise RuntimeError('sections overrun the file')
    return names


def vhlo_ops(ctx, artifact):
    """(sorted op-name counts, generic text with locations) of the stored VHLO module."""
    counts = collections.Counter()
    with ctx:
        module = ir.Module.parse(artifact)

        def visit(op):
            counts[op.name] += 1
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        text = module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
    return sorted(counts.items()), text


def roundtrip(ctx, artifact):
    """deserialize_portable_artifact_str's module, printed pretty without locations."""
    plain = stablehlo.deserialize_portable_artifact_str(artifact)
    with ctx:
        text = ir.Module.parse(plain).operation.get_asm(enable_debug_info=False)
        other = stablehlo.deserialize_portable_artifact(ctx, artifact).operation.get_asm(
            enable_debug_info=False)
    if text != other:
        raise RuntimeError('deserialize_portable_artifact_str and deserialize_portable_artifact differ')
    return text


def serialize(ctx, diags, text, target):
    """(artifact bytes, None) or (None, failure lines)."""
    try:
        artifact = stablehlo.serialize_portable_artifact_str(text, target)
    except Exception as e:  # the str API prints its diagnostics to stderr: redo for them
        with ctx:
            module = ir.Module.parse(text)
            diags.take()
            try:
                stablehlo.serialize_portable_artifact(module, target)
                extra = ['(serialize_portable_artifact succeeded where the str API failed)']
            except Exception as e2:
                extra = [f'serialize_portable_artifact: {e2}']
        errors = [l for l in diags.take() if ': error: ' in l]
        return None, [f'serialize_portable_artifact_str: {e}'] + extra + errors
    with ctx:
        again = stablehlo.serialize_portable_artifact(ir.Module.parse(text), target)
    if again != artifact:
        raise RuntimeError(f'{target}: the str and module APIs give different bytes')
    return artifact, None


def write(path, data, written):
    mode = 'wb' if isinstance(data, bytes) else 'w'
    with open(path, mode, **({} if mode == 'wb' else {'encoding': 'utf-8', 'newline': '\n'})) as f:
        f.write(data)
    written.add(os.path.basename(path))


def short(line, n=300):
    return line if len(line) <= n else line[:n] + ' ...'


def main():
    args = parse_args()
    versions = {'jax': jax.__version__, 'jaxlib': jaxlib.__version__}
    if versions != PINNED and not args.allow_other_jax:
        sys.exit(f'need {PINNED}, have {versions} (pip install --require-hashes -r '
                 'test/ir/tools/requirements-vhlo.txt, or --allow-other-jax)')
    current = stablehlo.get_current_version()
    minimum = stablehlo.get_minimum_version()
    targets = TARGETS + ([current] if current not in TARGETS else [])
    print(f'jax {versions["jax"]}, jaxlib {versions["jaxlib"]}, StableHLO current {current}, minimum {minimum}')

    ctx = jmlir.make_ir_context()
    diags = Diagnostics(ctx)
    os.makedirs(args.out, exist_ok=True)
    written = set()

    # 1. source modules, in README order: fixtures (each followed by its _nochlo
    # form), then the hand-written ones
    sources = []  # (name, text, origin)
    for name in FIXTURES:
        path = os.path.join(args.fixtures, name, 'model.b1.mlir')
        with open(path, encoding='utf-8') as f:
            text = strip_sdy(ctx, f.read())
        write(os.path.join(args.out, name + '.mlir'), text, written)
        sources.append((name, text, f'fixture `{name}/model.b1.mlir`, sdy removed'))
        if re.search(r'\bchlo\.', text):
            derived = without_chlo(ctx, text, current)
            write(os.path.join(args.out, name + '_nochlo.mlir'), derived, written)
            sources.append((name + '_nochlo', derived,
                            f'`{name}.mlir` through XLA\'s serializer at {current} and back (chlo legalized)'))
    for path in sorted(glob.glob(os.path.join(args.out, 'hand_*.mlir'))):
        name = os.path.basename(path)[:-len('.mlir')]
        if '.' in name:
            continue
        with open(path, encoding='utf-8') as f:
            text = f.read()
        with ctx:
            if not ir.Module.parse(text).operation.verify():
                sys.exit(f'{path} does not verify')
        written.add(name + '.mlir')
        sources.append((name, text, 'hand-written'))

    # 2-4. artifacts, round trips, VHLO op lists
    results = {}  # (name, target) -> dict
    skipped = {}
    source_texts = {}  # name -> the source as jaxlib prints it, without locations
    for name, text, _ in sources:
        with ctx:
            source_printed = ir.Module.parse(text).operation.get_asm(enable_debug_info=False)
        source_texts[name] = source_printed
        per = {}
        for target in targets:
            artifact, failure = serialize(ctx, diags, text, target)
            if failure:
                per[target] = {'failure': failure}
                print(f'{name} {target}: FAILED')
                continue
            version, byte4, producer = header(artifact)
            if producer != f'StableHLO_v{target}':
                raise RuntimeError(f'{name} {target}: producer {producer!r}')
            ops, vtext = vhlo_ops(ctx, artifact)
            rt = roundtrip(ctx, artifact)
            per[target] = {'artifact': artifact, 'version': version, 'byte4': byte4,
                           'producer': producer, 'sections': sections(artifact), 'ops': ops, 'vhlo': vtext, 'roundtrip': rt,
                           'same_as_source': rt == source_printed}
            print(f'{name} {target}: {len(artifact)} bytes, bytecode v{version}')
        big = [t for t, r in per.items() if 'artifact' in r and len(r['artifact']) > ARTIFACT_LIMIT]
        if big:
            skipped[name] = f'artifact over {ARTIFACT_LIMIT} bytes at {", ".join(big)}'
            continue
        for target, r in per.items():
            results[(name, target)] = r
            if 'artifact' not in r:
                continue
            base = os.path.join(args.out, f'{name}.{target}')
            write(base + '.mlirbc', r['artifact'], written)
            write(base + '.roundtrip.mlir', r['roundtrip'], written)
            if len(r['vhlo'].encode()) <= VHLO_TEXT_LIMIT:
                write(base + '.vhlo.mlir', r['vhlo'], written)
                r['vhlo_file'] = True

    # stale generated files from an earlier run
    for path in glob.glob(os.path.join(args.out, '*')):
        base = os.path.basename(path)
        if base in written or base == 'README.md':
            continue
        if GENERATED.match(base) or (base.endswith('.mlir') and not base.startswith('hand_')):
            os.remove(path)

    write(os.path.join(args.out, 'README.md'),
          readme(versions, current, minimum, targets, sources, source_texts, results, skipped), written)
    total = sum(os.path.getsize(os.path.join(args.out, b)) for b in written)
    print(f'{len(written)} files, {total} bytes in {args.out}')


def readme(versions, current, minimum, targets, sources, source_texts, results, skipped):
    names = [n for n, _, _ in sources if n not in skipped]
    out = []
    w = out.append
    w('# VHLO target test data\n')
    w('StableHLO portable artifacts (MLIR bytecode in the VHLO dialect) of the same modules at')
    w('several VHLO target versions, with the StableHLO text each came from and the module')
    w('jaxlib\'s own deserializer gives back. Test data for our portable-artifact reader')
    w('(format notes: `shared/reference/vhlo-bytecode.md`). Everything here except the')
    w('hand-written `hand_*.mlir` is written by `test/ir/tools/make_vhlo_targets.py` (how to')
    w('run it is at its top); do not edit those files by hand, rerun the script.\n')
    w(f'* jax {versions["jax"]}, jaxlib {versions["jaxlib"]} (pinned with hashes in '
      '`test/ir/tools/requirements-vhlo.txt`)')
    w(f'* StableHLO current version reported by jaxlib: **{current}** (minimum {minimum})')
    w(f'* targets: {", ".join(targets)}')
    w('* artifacts: `stablehlo.serialize_portable_artifact_str(text, target)`; the module API')
    w('  `serialize_portable_artifact(module, target)` gives the same bytes (checked).\n')
    w('## Files\n')
    w('| file | what |')
    w('|---|---|')
    w('| `<name>.mlir` | the source module (StableHLO text) |')
    w('| `<name>.<target>.mlirbc` | the portable artifact for that target |')
    w('| `<name>.<target>.roundtrip.mlir` | `deserialize_portable_artifact_str` of it, parsed and '
      'printed by jaxlib (pretty, no locations): the expected decoded module |')
    w(f'| `<name>.<target>.vhlo.mlir` | the VHLO module exactly as stored (jaxlib reads the artifact '
      f'with the VHLO dialect registered, no upgrade), generic form with locations; only where '
      f'that text is at most {VHLO_TEXT_LIMIT // 1024} KiB |\n')
    w('Source modules:\n')
    w('| name | origin |')
    w('|---|---|')
    for n, _, origin in sources:
        w(f'| `{n}` | {origin}{" (skipped: " + skipped[n] + ")" if n in skipped else ""} |')
    w('')
    w('## Table\n')
    w('Each cell: artifact size in bytes, bytecode version (byte 4 of the file, a PrefixVarInt),')
    w('`=` when the round-trip text equals the source as jaxlib prints it (without locations),')
    w('`~` when it differs; `FAIL` see below. The producer string of every artifact is')
    w('`StableHLO_v<target>`.\n')
    w('| module | ' + ' | '.join(targets) + ' |')
    w('|---|' + '---|' * len(targets))
    for n in names:
        cells = []
        for t in targets:
            r = results[(n, t)]
            if 'failure' in r:
                cells.append('FAIL')
            else:
                cells.append(f'{len(r["artifact"])} v{r["version"]} ({r["byte4"]}) '
                             f'{"=" if r["same_as_source"] else "~"}')
        w(f'| `{n}` | ' + ' | '.join(cells) + ' |')
    w('')
    producers = []
    for t in targets:
        for n in names:
            p = results[(n, t)].get('producer')
            if p is not None and p not in producers:
                producers.append(p)
    w('Producer strings seen: ' + ', '.join(f'`{p}`' for p in producers) + '.\n')
    layouts = collections.OrderedDict()
    for n in names:
        for t in targets:
            r = results[(n, t)]
            if 'sections' in r:
                layouts.setdefault(', '.join(r['sections']), set()).add(f'v{r["version"]}')
    w('Top-level sections in file order (read from the section headers):\n')
    for layout, vs in layouts.items():
        w(f'* bytecode {"/".join(sorted(vs))}: {layout}')
    w('')
    nodump = [f'`{n}.{t}`' for n in names for t in targets
              if 'artifact' in results[(n, t)] and not results[(n, t)].get('vhlo_file')]
    w('Artifacts without a `.vhlo.mlir` dump (text over the limit): '
      + (', '.join(nodump) if nodump else 'none') + '.\n')
    w('Round-trip text differing between targets of one module (otherwise all equal):\n')
    any_diff = False
    for n in names:
        texts = [(t, results[(n, t)]['roundtrip']) for t in targets if 'roundtrip' in results[(n, t)]]
        groups = collections.OrderedDict()
        for t, text in texts:
            groups.setdefault(text, []).append(t)
        if len(groups) > 1:
            any_diff = True
            w(f'* `{n}`: ' + '; '.join(', '.join(ts) for ts in groups.values()))
    if not any_diff:
        w('* none')
    w('')
    w('## Failures\n')
    w('Identical failures of one module at several targets are listed once (the messages')
    w('differ only in the version they name). Messages are cut at 300 characters.\n')
    groups = collections.OrderedDict()  # (module, normalized lines) -> [targets]
    for n in names:
        for t in targets:
            r = results[(n, t)]
            if 'failure' in r:
                key = (n, tuple(l.replace(t, '<target>') for l in r['failure']))
                groups.setdefault(key, []).append(t)
    if not groups:
        w('None.\n')
    for (n, lines), ts in groups.items():
        why = next((e for p, e in EXPLAIN if any(p.search(l) for l in lines)), 'see the diagnostics')
        w(f'* **`{n}` at {", ".join(ts)}**: {why}\n')
        w('  ```')
        for l in lines:
            w('  ' + short(l))
        w('  ```')
    if skipped:
        w('\nSkipped modules: ' + '; '.join(f'`{n}`: {why}' for n, why in skipped.items()))
    w('')
    w('## Round trip versus source\n')
    w('For each module whose round-trip text is not the source as jaxlib prints it, the')
    w(f'differing lines (`diff`, no context; source `-`, round trip `+`) at the newest target')
    w('that has an artifact. Lines are cut at 300 characters.\n')
    for n, text, _ in sources:
        if n in skipped:
            continue
        have = [t for t in targets if 'roundtrip' in results[(n, t)]]
        if not have or results[(n, have[-1])]['same_as_source']:
            continue
        printed = source_texts[n]
        rt = results[(n, have[-1])]['roundtrip']
        diff = [l for l in difflib.unified_diff(printed.splitlines(), rt.splitlines(), lineterm='', n=0)
                if not l.startswith(('---', '+++'))]
        w(f'`{n}` at {have[-1]}:\n')
        w('```diff')
        for l in diff:
            w(short(l))
        w('```\n')
    w('')
    w('## VHLO ops in each artifact\n')
    w('Op names with their counts, read from the stored VHLO module (every op, nested')
    w('regions included).\n')
    for n in names:
        for t in targets:
            r = results[(n, t)]
            if 'ops' in r:
                w(f'* `{n}.{t}`: ' + ', '.join(f'{o} {c}' for o, c in r['ops']))
    w(NOTES)
    return '\n'.join(out).rstrip('\n') + '\n'


if __name__ == '__main__':
    main()
