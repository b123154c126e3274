"""What the client tests expect of the worker of conftest.py, and how they compare tensors:
with the XLA:CPU goldens within a tolerance (../shared/fixtures/README.md "Comparing": another
executor sums in its own order), and bit for bit where one executor answers twice."""

import numpy as np

# |server - golden| <= ATOL + RTOL * max|golden|, per output.
ATOL = 1e-6
RTOL = 1e-5

# digits_cnn's class for examples/requests/digit_0.json.
DIGIT_0_CLASS = 5

# The server metadata's extensions with `endpoints.shared_memory: system` (Triton's names).
EXTENSIONS = ["binary_tensor_data", "model_repository", "statistics", "system_shared_memory"]


def assert_close(have, want):
    """`have` has `want`'s shape and dtype and lies within the tolerance above."""
    want = np.asarray(want)
    assert have.shape == want.shape and have.dtype == want.dtype, (have.shape, have.dtype)
    bound = ATOL + RTOL * float(np.max(np.abs(want)))
    diff = float(np.max(np.abs(have.astype(np.float64) - want.astype(np.float64))))
    assert diff <= bound, f"max |diff| {diff} > {bound}"


def assert_same(have, want):
    """Bit for bit: the same executor answers the same input identically on every path."""
    assert have.dtype == want.dtype and have.shape == want.shape, (have.shape, want.shape)
    assert have.tobytes() == want.tobytes()


def assert_digits_cnn_metadata(protocol, md):
    """`md`, tritonclient's get_model_metadata("digits_cnn") over `protocol` ("http": a dict,
    "grpc": the message), is digits_cnn's metadata exactly."""
    want_inputs = [("image", "FP32", [-1, 8, 8, 1])]
    want_outputs = [("logits", "FP32", [-1, 10]), ("probs", "FP32", [-1, 10])]
    if protocol == "http":
        assert md == {"name": "digits_cnn", "versions": ["1"], "platform": "cpu",
                      "inputs": [{"name": n, "datatype": d, "shape": s}
                                 for n, d, s in want_inputs],
                      "outputs": [{"name": n, "datatype": d, "shape": s}
                                  for n, d, s in want_outputs]}
    else:
        assert (md.name, list(md.versions), md.platform) == ("digits_cnn", ["1"], "cpu")
        assert [(t.name, t.datatype, list(t.shape)) for t in md.inputs] == want_inputs
        assert [(t.name, t.datatype, list(t.shape)) for t in md.outputs] == want_outputs


def assert_both_models_ready(protocol, index):
    """`index`, tritonclient's get_model_repository_index() over `protocol`, lists digits_cnn
    and iris_mlp, version 1, READY, exactly."""
    if protocol == "http":
        assert index == [{"name": "digits_cnn", "version": "1", "state": "READY"},
                         {"name": "iris_mlp", "version": "1", "state": "READY"}]
    else:
        assert [(m.name, m.version, m.state, m.reason) for m in index.models] == [
            ("digits_cnn", "1", "READY", ""), ("iris_mlp", "1", "READY", "")]
