#!/usr/bin/env python3
"""Writes the multi-shape bundle fixture text_encoder_ms (docs/bundles.md, "Multi-shape bundles").

A small text encoder with a variable sequence axis `s`: token + position embedding, one
two-head self-attention layer with a residual and layer norm, a masked mean-pool and a dense
tanh head. Random weights from a fixed seed. Exported with JAX at two sequence lengths
(input_shapes [{s: 8}, {s: 16}]) and two batch sizes (1 and 4): four programs
model.v{i}.b{N}.mlir per bundle.

Writes, relative to test/data:
  bundles/text_encoder_ms/           manifest.yaml, weights.safetensors, model.v{i}.b{N}.mlir as
                                     StableHLO text (jax.jit(f).lower(...).as_text())
  bundles/text_encoder_ms_portable/  the same bundle whose model.v{i}.b{N}.mlir are StableHLO
                                     portable artifacts: jax.export(...).mlir_module_serialized
                                     (VHLO bytecode, starts with the MLIR bytecode magic ML\\xefR)
  golden/text_encoder_ms/v{i}.b{N}.safetensors  inputs (named as the manifest's inputs) and the
                                     outputs JAX computes for them on the CPU

Run it from the repository root with the pinned versions below (a Python 3.12 venv):
  python -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax==0.11.2 jaxlib==0.11.2
  JAX_PLATFORMS=cpu /tmp/jaxenv/bin/python test/data/tools/make_multishape_fixture.py
Versions used for the checked-in files: Python 3.12.1, jax 0.11.2, jaxlib 0.11.2, numpy 2.5.5,
ml_dtypes 0.7.0. The output is deterministic for these versions (fixed seeds, CPU lowering),
except that the portable artifacts' debug locations name this script by its absolute path: run
from another checkout, they differ in those bytes only.
"""

import json
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

# The exporter's safetensors writer (python/reactant_export), the one the bundles are written
# with.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "python"))
from reactant_export import _safetensors  # noqa: E402

jax.config.update("jax_platforms", "cpu")

MODEL = "text_encoder_ms"
VOCAB = 64
WIDTH = 16
HEADS = 2
CLASSES = 4
MAX_SEQ = 16
SEQ_LENGTHS = [8, 16]  # input_shapes variants, in order: v0 is s=8, v1 is s=16
BATCH_SIZES = [1, 4]
WEIGHT_SEED = 20240611
INPUT_SEED = 7

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def make_weights():
    """Weights in argument order (name, float32 array)."""
    rng = np.random.default_rng(WEIGHT_SEED)

    def normal(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    return [
        ("embed.tokens", normal(VOCAB, WIDTH, scale=0.5)),
        ("embed.positions", normal(MAX_SEQ, WIDTH, scale=0.1)),
        ("attn.qkv.w", normal(WIDTH, 3 * WIDTH)),
        ("attn.qkv.b", normal(3 * WIDTH, scale=0.05)),
        ("attn.o.w", normal(WIDTH, WIDTH)),
        ("attn.o.b", normal(WIDTH, scale=0.05)),
        ("ln.g", (1.0 + normal(WIDTH, scale=0.05)).astype(np.float32)),
        ("ln.b", normal(WIDTH, scale=0.05)),
        ("head.w", normal(WIDTH, CLASSES, scale=0.5)),
        ("head.b", normal(CLASSES, scale=0.05)),
    ]


def encoder(input_ids, attention_mask, tokens, positions, qkv_w, qkv_b, o_w, o_b, ln_g, ln_b,
            head_w, head_b):
    """input_ids, attention_mask: i32 [n, s]. Returns hidden f32 [n, s, WIDTH], pooled f32
    [n, WIDTH], logits f32 [n, CLASSES]."""
    n, s = input_ids.shape
    hi = jax.lax.Precision.HIGHEST
    x = jnp.take(tokens, input_ids, axis=0) + positions[:s][None, :, :]
    qkv = jnp.einsum("nsd,de->nse", x, qkv_w, precision=hi) + qkv_b
    q, k, v = jnp.split(qkv, 3, axis=-1)
    head = WIDTH // HEADS

    def heads(t):
        return t.reshape(n, s, HEADS, head).transpose(0, 2, 1, 3)

    q, k, v = heads(q), heads(k), heads(v)
    mask = attention_mask.astype(jnp.float32)
    scores = jnp.einsum("nhqd,nhkd->nhqk", q, k, precision=hi) / np.float32(np.sqrt(head))
    scores = scores + (1.0 - mask)[:, None, None, :] * np.float32(-1e9)
    probs = jax.nn.softmax(scores, axis=-1)
    attn = jnp.einsum("nhqk,nhkd->nhqd", probs, v, precision=hi)
    attn = attn.transpose(0, 2, 1, 3).reshape(n, s, WIDTH)
    h = x + jnp.einsum("nsd,de->nse", attn, o_w, precision=hi) + o_b
    mean = jnp.mean(h, axis=-1, keepdims=True)
    var = jnp.mean((h - mean) ** 2, axis=-1, keepdims=True)
    hidden = (h - mean) * jax.lax.rsqrt(var + np.float32(1e-5)) * ln_g + ln_b
    pooled = jnp.sum(hidden * mask[:, :, None], axis=1) / jnp.maximum(
        jnp.sum(mask, axis=1, keepdims=True), np.float32(1.0))
    logits = jnp.tanh(jnp.dot(pooled, head_w, precision=hi) + head_b)
    return hidden, pooled, logits


MANIFEST = """format_version: "2.0"
name: text_encoder_ms
description: "text encoder with a variable sequence axis s: embedding, one 2-head attention layer, masked mean-pool, dense head; random weights"
executable_inputs:
  - {name: "input_ids", dtype: "i32", shape: "sn", dims: {s: -1}}
  - {name: "attention_mask", dtype: "i32", shape: "sn", dims: {s: -1}}
executable_outputs:
  - {name: "hidden", dtype: "f32", shape: "dsn", dims: {d: 16, s: -1}}
  - {name: "pooled", dtype: "f32", shape: "dn", dims: {d: 16}}
  - {name: "logits", dtype: "f32", shape: "cn", dims: {c: 4}}
batching: {compiled_batch_sizes: [1, 4]}
input_shapes: [{s: 8}, {s: 16}]
provenance: {exporter: "jax 0.11.2", generator: "test/data/tools/make_multishape_fixture.py"}
"""


def golden_inputs(rng, n, s):
    ids = rng.integers(0, VOCAB, size=(n, s), dtype=np.int32)
    mask = np.ones((n, s), dtype=np.int32)
    for row in range(n):
        # Row r keeps its first s - 3 * r tokens (at least 1): padding varies across rows.
        keep = max(1, s - 3 * row)
        mask[row, keep:] = 0
    return ids, mask


def main():
    weights = make_weights()
    names = [name for name, _ in weights]
    arrays = [array for _, array in weights]
    text_dir = os.path.join(ROOT, "bundles", MODEL)
    portable_dir = os.path.join(ROOT, "bundles", MODEL + "_portable")
    golden_dir = os.path.join(ROOT, "golden", MODEL)
    for d in (text_dir, portable_dir, golden_dir):
        os.makedirs(d, exist_ok=True)
    for d in (text_dir, portable_dir):
        with open(os.path.join(d, "manifest.yaml"), "w") as f:
            f.write(MANIFEST.replace("name: text_encoder_ms", "name: " + os.path.basename(d)))
        _safetensors.write(os.path.join(d, "weights.safetensors"), weights,
                          {"argument_order": json.dumps(names)})

    jitted = jax.jit(encoder, keep_unused=True)
    rng = np.random.default_rng(INPUT_SEED)
    for v, s in enumerate(SEQ_LENGTHS):
        for n in BATCH_SIZES:
            specs = [jax.ShapeDtypeStruct((n, s), jnp.int32)] * 2 + [
                jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]
            program = f"model.v{v}.b{n}.mlir"
            with open(os.path.join(text_dir, program), "w") as f:
                f.write(jitted.lower(*specs).as_text())
            exported = jax.export.export(jitted, platforms=["cpu"])(*specs)
            with open(os.path.join(portable_dir, program), "wb") as f:
                f.write(exported.mlir_module_serialized)
            ids, mask = golden_inputs(rng, n, s)
            hidden, pooled, logits = (np.asarray(t) for t in jitted(ids, mask, *arrays))
            _safetensors.write(os.path.join(golden_dir, f"v{v}.b{n}.safetensors"),
                              [("input_ids", ids), ("attention_mask", mask), ("hidden", hidden),
                               ("pooled", pooled), ("logits", logits)])
            print(f"{program}: s={s} n={n} logits[0]={logits[0]}")


if __name__ == "__main__":
    main()
