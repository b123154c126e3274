# digits_top3: a meta model (docs/hooks.md "Meta models"). It has no program of its own: run
# calls digits_softmax (a model of this repository, listed in meta.calls) and keeps the three
# likeliest classes of each row.
import numpy as np


def run(inputs, call):
    probs = call("digits_softmax", {"pixels": inputs["pixels"]})["probs"]
    classes = np.argsort(-probs, axis=1, kind="stable")[:, :3]
    return {"classes": classes.astype(np.int64),
            "scores": np.take_along_axis(probs, classes, axis=1)}


register_meta_model("digits_top3", run=run)
