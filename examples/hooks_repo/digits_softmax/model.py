# digits_softmax: the digits_cnn program (8x8 handwritten digits, ../../model_repo/digits_cnn)
# with pre/post-processing hooks (docs/hooks.md). Clients send the dataset's raw pixels
# (UINT8, 0..16); preprocess scales them to the [0, 1] floats the program was trained on;
# the program returns raw logits; postprocess applies the softmax and names the class.
import numpy as np

NAMES = np.array([b"zero", b"one", b"two", b"three", b"four", b"five", b"six", b"seven",
                  b"eight", b"nine"], dtype=object)


def preprocess(inputs):
    pixels = inputs["pixels"]
    if pixels.max(initial=0) > 16:
        raise ValueError(f"pixels must be in 0..16, got {int(pixels.max())}")
    return {"image": pixels.astype(np.float32) / np.float32(16)}


def postprocess(outputs):
    logits = outputs["logits"]
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    probs = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    label = probs.argmax(axis=1).astype(np.int64)
    return {"probs": probs, "label": label, "label_name": NAMES[label]}


register_model("digits_softmax", preprocess=preprocess, postprocess=postprocess)
