#!/usr/bin/env python3
"""Writes the shape-polymorphic bundle fixtures (docs/bundles.md, "Shape-polymorphic model.mlir").

Two small models, each exported twice with the same weights: once as one shape-polymorphic
model.mlir (jax.export with jax.export.symbolic_shape) and once as per-size programs, so the
tests can check that the refined programs serve bit for bit what the per-size files serve.

  mlp_poly / mlp_sized          x f32 [n, 8] -> dense 16 relu -> dense 4 -> y f32 [n, 4];
                                batch sizes 1, 2, 4, 8; symbolic shape "b, 8"
  encoder_poly / encoder_sized  x f32 [n, s, 8] -> + positions[:s], one 2-head self-attention
                                layer and a 16-wide MLP, each with a residual and a layer norm
                                -> y f32 [n, s, 8]; input_shapes [{s: 4}, {s: 8}], batch sizes
                                1 and 3; symbolic shape "b, s, 8" with the constraint
                                "s <= 16" (the positions table has 16 rows), which jax.export
                                writes as a shape_assertion

Writes, relative to test/data:
  bundles/<model>_poly/    manifest.yaml, weights.safetensors, model.mlir (StableHLO text,
                           `?` on the symbolic axes)
  bundles/<model>_sized/   the same manifest and weights, model.b{N}.mlir (mlp) or
                           model.v{i}.b{N}.mlir (encoder): jax.export at each static shape
  golden/<model>_poly/b{N}.safetensors, v{i}.b{N}.safetensors: input x and JAX's CPU output y

Run from the repository root with jax 0.10.2 on the CPU (the venv of scripts/setup.sh):
  JAX_PLATFORMS=cpu .venv/bin/python test/data/tools/make_polymorphic_fixture.py
Locations carry op names only (jax_traceback_in_locations_limit 0), so the output does not
depend on where the checkout is.
"""

import json
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "python"))
from reactant_export import _safetensors  # noqa: E402

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_traceback_in_locations_limit", 0)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GENERATOR = "test/data/tools/make_polymorphic_fixture.py"


def normal(rng, *shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# --- mlp -------------------------------------------------------------------------------------

MLP_SIZES = [1, 2, 4, 8]


def mlp_weights():
    rng = np.random.default_rng(1101)
    return [("w1", normal(rng, 8, 16)), ("b1", normal(rng, 16, scale=0.1)),
            ("w2", normal(rng, 16, 4)), ("b2", normal(rng, 4, scale=0.1))]


def mlp(x, w1, b1, w2, b2):
    h = jax.nn.relu(x @ w1 + b1)
    return h @ w2 + b2


MLP_MANIFEST = """format_version: "2.0"
name: {name}
description: "two-layer MLP (8 -> 16 relu -> 4); random weights"
executable_inputs:
  - {{name: "x", dtype: "f32", shape: "fn", dims: {{f: 8}}}}
executable_outputs:
  - {{name: "y", dtype: "f32", shape: "cn", dims: {{c: 4}}}}
batching: {{compiled_batch_sizes: [1, 2, 4, 8]}}
provenance: {{exporter: "jax {jax}", generator: "{generator}"}}
"""

# --- encoder ---------------------------------------------------------------------------------

WIDTH = 8
HEADS = 2
MAX_SEQ = 16
SEQ_LENGTHS = [4, 8]
ENCODER_SIZES = [1, 3]


def encoder_weights():
    rng = np.random.default_rng(2202)
    return [("positions", normal(rng, MAX_SEQ, WIDTH, scale=0.1)),
            ("qkv.w", normal(rng, WIDTH, 3 * WIDTH)), ("qkv.b", normal(rng, 3 * WIDTH, scale=0.05)),
            ("o.w", normal(rng, WIDTH, WIDTH)), ("o.b", normal(rng, WIDTH, scale=0.05)),
            ("ln1.g", (1.0 + normal(rng, WIDTH, scale=0.05))), ("ln1.b", normal(rng, WIDTH, scale=0.05)),
            ("mlp.w1", normal(rng, WIDTH, 2 * WIDTH)), ("mlp.b1", normal(rng, 2 * WIDTH, scale=0.05)),
            ("mlp.w2", normal(rng, 2 * WIDTH, WIDTH)), ("mlp.b2", normal(rng, WIDTH, scale=0.05)),
            ("ln2.g", (1.0 + normal(rng, WIDTH, scale=0.05))), ("ln2.b", normal(rng, WIDTH, scale=0.05))]


def layer_norm(h, g, b):
    mean = jnp.mean(h, axis=-1, keepdims=True)
    var = jnp.mean((h - mean) ** 2, axis=-1, keepdims=True)
    return (h - mean) * jax.lax.rsqrt(var + np.float32(1e-5)) * g + b


def encoder(x, positions, qkv_w, qkv_b, o_w, o_b, ln1_g, ln1_b, w1, b1, w2, b2, ln2_g, ln2_b):
    n, s, _ = x.shape
    head = WIDTH // HEADS
    x = x + positions[:s][None, :, :]
    q, k, v = jnp.split(x @ qkv_w + qkv_b, 3, axis=-1)

    def heads(t):
        return t.reshape(n, s, HEADS, head).transpose(0, 2, 1, 3)

    q, k, v = heads(q), heads(k), heads(v)
    scores = jnp.einsum("nhqd,nhkd->nhqk", q, k) / np.float32(np.sqrt(head))
    attn = jnp.einsum("nhqk,nhkd->nhqd", jax.nn.softmax(scores, axis=-1), v)
    attn = attn.transpose(0, 2, 1, 3).reshape(n, s, WIDTH)
    h = layer_norm(x + attn @ o_w + o_b, ln1_g, ln1_b)
    m = jax.nn.relu(h @ w1 + b1) @ w2 + b2
    return layer_norm(h + m, ln2_g, ln2_b)


ENCODER_MANIFEST = """format_version: "2.0"
name: {name}
description: "one transformer encoder layer (2-head attention, MLP, layer norms) over a variable sequence axis s; random weights"
executable_inputs:
  - {{name: "x", dtype: "f32", shape: "dsn", dims: {{d: 8, s: -1}}}}
executable_outputs:
  - {{name: "y", dtype: "f32", shape: "dsn", dims: {{d: 8, s: -1}}}}
batching: {{compiled_batch_sizes: [1, 3]}}
input_shapes: [{{s: 4}}, {{s: 8}}]
provenance: {{exporter: "jax {jax}", generator: "{generator}"}}
"""

# ---------------------------------------------------------------------------------------------


def write_bundle(d, manifest, weights):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "manifest.yaml"), "w") as f:
        f.write(manifest.format(name=os.path.basename(d), jax=jax.__version__,
                                generator=GENERATOR))
    _safetensors.write(os.path.join(d, "weights.safetensors"), weights,
                      {"argument_order": json.dumps([n for n, _ in weights])})


def export_text(fn, specs):
    return jax.export.export(jax.jit(fn), platforms=["cpu"])(*specs).mlir_module()


def weight_specs(arrays):
    return [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]


def make(model, fn, manifest, weights, variants, sizes, poly_spec, constraints, input_shape):
    """variants: the sequence lengths (None for a single-shape bundle); input_shape(n, s)."""
    arrays = [a for _, a in weights]
    poly_dir = os.path.join(ROOT, "bundles", model + "_poly")
    sized_dir = os.path.join(ROOT, "bundles", model + "_sized")
    golden_dir = os.path.join(ROOT, "golden", model + "_poly")
    for d in (poly_dir, sized_dir):
        write_bundle(d, manifest, weights)
    os.makedirs(golden_dir, exist_ok=True)
    symbolic = jax.export.symbolic_shape(poly_spec, constraints=constraints)
    with open(os.path.join(poly_dir, "model.mlir"), "w") as f:
        f.write(export_text(fn, [jax.ShapeDtypeStruct(symbolic, jnp.float32)] +
                            weight_specs(arrays)))
    rng = np.random.default_rng(33)
    jitted = jax.jit(fn)
    for v, s in enumerate(variants or [None]):
        for n in sizes:
            shape = input_shape(n, s)
            stem = (f"v{v}." if variants else "") + f"b{n}"
            with open(os.path.join(sized_dir, f"model.{stem}.mlir"), "w") as f:
                f.write(export_text(fn, [jax.ShapeDtypeStruct(shape, jnp.float32)] +
                                    weight_specs(arrays)))
            x = normal(rng, *shape, scale=1.0)
            y = np.asarray(jitted(x, *arrays))
            _safetensors.write(os.path.join(golden_dir, stem + ".safetensors"),
                              [("x", x), ("y", y)])
            print(f"{model}: {stem} x{list(shape)} -> y{list(y.shape)}")


def main():
    make("mlp", mlp, MLP_MANIFEST, mlp_weights(), None, MLP_SIZES, "b, 8", (),
         lambda n, s: (n, 8))
    make("encoder", encoder, ENCODER_MANIFEST, encoder_weights(), SEQ_LENGTHS, ENCODER_SIZES,
         "b, s, 8", ("s <= 16",), lambda n, s: (n, s, WIDTH))


if __name__ == "__main__":
    main()
