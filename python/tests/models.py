"""The four models the tests export: an MLP (plain jax), a small CNN (flax.linen), a
transformer encoder block (flax.nnx: attention, layer norm, GELU) and a text model with a
variable sequence axis (plain jax). Small, random weights from fixed seeds."""

import jax
import jax.numpy as jnp
import numpy as np


# --- MLP: plain function, a nested dict of parameters -----------------------------------------

def mlp_params():
    rng = np.random.default_rng(1)
    return {
        "hidden": {"w": rng.standard_normal((4, 16)).astype(np.float32) * 0.5,
                   "b": rng.standard_normal(16).astype(np.float32) * 0.1},
        "out": {"w": rng.standard_normal((16, 3)).astype(np.float32) * 0.5,
                "b": rng.standard_normal(3).astype(np.float32) * 0.1},
    }


def mlp(x, p):
    h = jax.nn.relu(x @ p["hidden"]["w"] + p["hidden"]["b"])
    logits = h @ p["out"]["w"] + p["out"]["b"]
    return {"logits": logits, "probs": jax.nn.softmax(logits, axis=-1)}


# --- CNN: flax.linen ---------------------------------------------------------------------------

def cnn():
    from flax import linen as nn

    class SmallCNN(nn.Module):
        @nn.compact
        def __call__(self, x):  # x: [n, 8, 8, 1] NHWC
            x = nn.Conv(features=4, kernel_size=(3, 3), padding="SAME")(x)
            x = nn.relu(x)
            x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
            x = nn.Conv(features=8, kernel_size=(3, 3), padding="VALID")(x)
            x = nn.relu(x)
            x = x.reshape((x.shape[0], -1))
            return nn.Dense(features=10)(x)

    module = SmallCNN()
    variables = module.init(jax.random.PRNGKey(2), jnp.zeros((1, 8, 8, 1), jnp.float32))
    return module, variables


# --- Transformer encoder block: flax.nnx -------------------------------------------------------

def encoder_block(width=16, heads=2, seq=6):
    from flax import nnx

    class EncoderBlock(nnx.Module):
        def __init__(self, rngs):
            self.attn = nnx.MultiHeadAttention(num_heads=heads, in_features=width,
                                               decode=False, rngs=rngs)
            self.ln1 = nnx.LayerNorm(width, rngs=rngs)
            self.ff1 = nnx.Linear(width, 2 * width, rngs=rngs)
            self.ff2 = nnx.Linear(2 * width, width, rngs=rngs)
            self.ln2 = nnx.LayerNorm(width, rngs=rngs)

        def __call__(self, x):  # x: [n, seq, width]
            x = self.ln1(x + self.attn(x))
            return self.ln2(x + self.ff2(nnx.gelu(self.ff1(x))))

    return EncoderBlock(nnx.Rngs(3))


# --- Variable sequence axis: plain jax ---------------------------------------------------------

VOCAB, WIDTH, MAX_SEQ = 32, 8, 16


def seq_params():
    rng = np.random.default_rng(4)
    return {
        "tokens": rng.standard_normal((VOCAB, WIDTH)).astype(np.float32) * 0.5,
        "positions": rng.standard_normal((MAX_SEQ, WIDTH)).astype(np.float32) * 0.1,
        "head": [rng.standard_normal((WIDTH, 2)).astype(np.float32),
                 rng.standard_normal(2).astype(np.float32) * 0.1],
    }


def seq_model(ids, mask, p):
    """ids, mask: i32 [n, s]. Returns hidden [n, s, WIDTH] and pooled logits [n, 2]."""
    s = ids.shape[1]
    x = jnp.take(p["tokens"], ids, axis=0) + p["positions"][:s][None]
    hidden = jnp.tanh(x)
    m = mask.astype(jnp.float32)
    pooled = jnp.sum(hidden * m[:, :, None], axis=1) / jnp.maximum(
        jnp.sum(m, axis=1, keepdims=True), 1.0)
    return hidden, pooled @ p["head"][0] + p["head"][1]
