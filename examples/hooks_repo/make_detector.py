"""Writes the two programs of the two-stage detector example (docs/hooks.md "A two-stage
detector"): detector_stage1 (backbone and proposals) and detector_stage2 (a head over the kept
boxes), both with hand-set weights, so that the example finds and classifies bright squares on a
dark background without any training. The meta model detector (its own manifest.yaml and
model.py, written by hand) calls them and runs NMS in between.

    .venv/bin/python examples/hooks_repo/make_detector.py

Stage 1 takes a grayscale image f32 [n, 32, 32, 1] (0 dark, up to 1 bright). Its anchors lie on
the stride-4 grid: anchor a = 8 * i + j has its centre at (4 j + 2, 4 i + 2) in pixel
coordinates, where pixel (row y, column x) covers [x, x + 1) x [y, y + 1). The backbone is one
convolution (16 x 16 window centred on the anchor, stride 4) with seven hand-set kernels:

    mass      1                      the window's summed intensity M
    sum_u     u                      first moments (u, v: offsets of a pixel's centre from the
    sum_v     v                      anchor's centre, in pixels)
    sum_uu    u^2                    second moments
    sum_vv    v^2
    ring      1 on the window's 1-pixel border
    centre    1/16 on the anchor's own 4 x 4 cell

A square (any rectangle) of uniform intensity and integer extent lying alone in the window has
its centre at the moments' mean, and a side s with variance (s^2 - 1) / 12 (the pixels' centres
are uniform over s integers), so its box is exact: centre +- sqrt(12 var + 1) / 2 on each axis.
The objectness is sigmoid(10 * centre - 40 * ring - 2): high when the anchor's cell is bright,
far below the meta's threshold of 0.5 when a pixel of a square touches the window's border (a
square cut by the window, whose moments would give only the cut part). Every anchor whose
window holds the whole square proposes the same exact box, which is what NMS suppresses.
Coverage: a lone square of intensity 1 and side 3..11, or of intensity 0.3 and side 7..11, is
found exactly at every position; a side up to 14 where some window's 14 x 14 interior holds
it. Outside that a lone square is missed, not given a wrong box (a sweep of every position,
sides 1..16, intensities 1, 0.5, 0.3); two squares within one window may give a wrong box.

Stage 2 takes, per kept box, its 4 x 4 ROI-pooled crop of the image and its (width, height)
(the meta prepares both in numpy) and answers the logits and probabilities of three classes:
0 "small" (bright, side below 7.5), 1 "large" (bright, side 7.5 and above), 2 "dim" (mean
intensity below 0.5). Its hand-set head: m = the crop's mean, t = tanh(2 (s - 7.5)) with s the
mean of width and height, then logits = [10 m - 5 - 2 t, 10 m - 5 + 2 t, 5 - 10 m]; decisive
outside 0.4 < m < 0.6.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
import reactant_export as rx  # noqa: E402

SIZE = 32        # image side
STRIDE = 4       # anchor grid step
GRID = SIZE // STRIDE  # 8 x 8 = 64 anchors
WINDOW = 16      # the backbone's window per anchor
K = 4            # boxes per image that stage 2 takes (the meta's fixed K)
BINS = 4         # ROI pooling grid per box
BATCH_SIZES = [1, 4]
CHANNELS = ["mass", "sum_u", "sum_v", "sum_uu", "sum_vv", "ring", "centre"]


def stage1_params():
    k = np.arange(WINDOW, dtype=np.float32)
    offset = k + np.float32(0.5) - np.float32(WINDOW / 2)  # pixel centre - anchor centre
    v, u = np.meshgrid(offset, offset, indexing="ij")      # v along rows, u along columns
    ring = np.ones((WINDOW, WINDOW), np.float32)
    ring[1:-1, 1:-1] = 0
    centre = np.zeros((WINDOW, WINDOW), np.float32)
    lo = (WINDOW - STRIDE) // 2
    centre[lo:lo + STRIDE, lo:lo + STRIDE] = 1.0 / (STRIDE * STRIDE)
    kernel = np.stack([np.ones_like(u), u, v, u * u, v * v, ring, centre], axis=-1)
    anchor = np.arange(GRID, dtype=np.float32) * STRIDE + STRIDE / 2
    ay, ax = np.meshgrid(anchor, anchor, indexing="ij")
    return {
        "backbone": {"kernel": kernel[:, :, None, :].astype(np.float32)},  # HWIO [16,16,1,7]
        "anchors": np.stack([ax, ay], axis=-1).astype(np.float32),          # [8, 8, 2] (x, y)
        "objectness": {"centre": np.float32(10.0), "ring": np.float32(-40.0),
                       "bias": np.float32(-2.0)},
    }


def stage1(image, p):
    pad = (WINDOW - STRIDE) // 2
    f = jax.lax.conv_general_dilated(
        image, p["backbone"]["kernel"], window_strides=(STRIDE, STRIDE),
        padding=((pad, pad), (pad, pad)), dimension_numbers=("NHWC", "HWIO", "NHWC"))
    mass, su, sv, suu, svv, ring, centre = (f[..., c] for c in range(len(CHANNELS)))
    present = mass > 1e-3
    m = jnp.where(present, mass, 1.0)
    mu, mv = su / m, sv / m
    side_u = jnp.sqrt(jnp.maximum(12.0 * (suu / m - mu * mu) + 1.0, 0.0))
    side_v = jnp.sqrt(jnp.maximum(12.0 * (svv / m - mv * mv) + 1.0, 0.0))
    cx = p["anchors"][..., 0] + mu
    cy = p["anchors"][..., 1] + mv
    boxes = jnp.stack([cx - side_u / 2, cy - side_v / 2, cx + side_u / 2, cy + side_v / 2], -1)
    boxes = jnp.where(present[..., None], boxes, 0.0)
    o = p["objectness"]
    scores = jax.nn.sigmoid(o["centre"] * centre + o["ring"] * ring + o["bias"])
    n = image.shape[0]
    return {"boxes": boxes.reshape(n, GRID * GRID, 4), "scores": scores.reshape(n, GRID * GRID),
            "features": f}


def stage2_params():
    return {
        "pool": np.full((BINS, BINS), 1.0 / (BINS * BINS), np.float32),  # crop -> mean m
        "size": np.array([0.5, 0.5], np.float32),                        # (w, h) -> side s
        "size_threshold": np.float32(7.5),
        "size_gain": np.float32(2.0),
        "head": {"w": np.array([[10.0, 10.0, -10.0], [-2.0, 2.0, 0.0]], np.float32),
                 "b": np.array([-5.0, -5.0, 5.0], np.float32)},
    }


def stage2(crops, sizes, p):
    m = jnp.einsum("nkij,ij->nk", crops, p["pool"])
    s = sizes @ p["size"]
    t = jnp.tanh(p["size_gain"] * (s - p["size_threshold"]))
    logits = jnp.stack([m, t], -1) @ p["head"]["w"] + p["head"]["b"]
    return {"logits": logits, "probs": jax.nn.softmax(logits, axis=-1)}


def main():
    provenance = {"generator": "examples/hooks_repo/make_detector.py"}
    rx.export_bundle(
        stage1, stage1_params(), [np.zeros((1, SIZE, SIZE, 1), np.float32)],
        name="detector_stage1", dir=os.path.join(HERE, "detector_stage1"),
        batch_sizes=BATCH_SIZES, input_names=["image"],
        output_names=["boxes", "features", "scores"],  # jax's order of the dict's keys
        provenance=provenance, overwrite=True,
        description="The detector's stage 1: a hand-set moment backbone over 16x16 windows "
                    "and 64 anchor proposals (boxes, objectness) for bright squares; "
                    "internal to the meta model detector")
    rx.export_bundle(
        stage2, stage2_params(),
        [np.zeros((1, K, BINS, BINS), np.float32), np.zeros((1, K, 2), np.float32)],
        name="detector_stage2", dir=os.path.join(HERE, "detector_stage2"),
        batch_sizes=BATCH_SIZES, input_names=["crops", "sizes"],
        output_names=["logits", "probs"], provenance=provenance, overwrite=True,
        description="The detector's stage 2: a hand-set head over the K kept boxes' pooled "
                    "crops and sizes (small, large, dim); internal to the meta model detector")


if __name__ == "__main__":
    main()
