# digits_top3: a meta model (docs/hooks.md "Meta models"). It has no program of its own: run
# calls digits_probs (a model of this repository, listed in meta.calls, so internal to this
# meta: clients do not see it) and keeps the three likeliest classes of each row.
import numpy as np


def run(inputs, call):
    probs = call("digits_probs", {"pixels": inputs["pixels"]})["probs"]
    classes = np.argsort(-probs, axis=1, kind="stable")[:, :3]
    return {"classes": classes.astype(np.int64),
            "scores": np.take_along_axis(probs, classes, axis=1)}


register_meta_model("digits_top3", run=run)
