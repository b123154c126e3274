"""System shared memory with tritonclient.utils.shared_memory (Triton's own helper) over both
protocols: register, infer with inputs read from and outputs written to the regions, status,
unregister. The worker runs with `endpoints.shared_memory: system`; keys start with the
default `endpoints.shared_memory_prefix` `/rs_` (docs/protocols.md)."""

import os

import numpy as np
import pytest
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException

from clients import MODULES, PROTOCOLS, connect, inputs
from expected import DIGIT_0_CLASS, assert_same

IMAGE_BYTES = 8 * 8 * 4
OUT_BYTES = 10 * 4


@pytest.fixture(params=PROTOCOLS)
def protocol(request):
    return request.param


@pytest.fixture
def regions(protocol):
    """An input region holding one image and an output region for logits then probs."""
    tag = f"{protocol}_{os.getpid()}"
    made = {"in": shm.create_shared_memory_region(f"in_{tag}", f"/rs_in_{tag}", IMAGE_BYTES),
            "out": shm.create_shared_memory_region(f"out_{tag}", f"/rs_out_{tag}",
                                                   2 * OUT_BYTES)}
    yield tag, made
    for handle in made.values():
        shm.destroy_shared_memory_region(handle)


def status_of(protocol, client):
    """{name: (key, offset, byte_size)} of the peer's registered regions."""
    status = client.get_system_shared_memory_status()
    if protocol == "http":
        return {r["name"]: (r["key"], int(r["offset"]), int(r["byte_size"])) for r in status}
    return {name: (r.key, r.offset, r.byte_size) for name, r in status.regions.items()}


def test_infer_through_shared_memory(protocol, worker, regions, digit_0):
    tag, handles = regions
    client = connect(protocol, worker)
    mod = MODULES[protocol]
    try:
        inline = client.infer("digits_cnn", inputs(protocol, [("image", digit_0)]))
        shm.set_shared_memory_region(handles["in"], [digit_0])
        client.register_system_shared_memory(f"in_{tag}", f"/rs_in_{tag}", IMAGE_BYTES)
        client.register_system_shared_memory(f"out_{tag}", f"/rs_out_{tag}", 2 * OUT_BYTES)
        assert status_of(protocol, client) == {
            f"in_{tag}": (f"/rs_in_{tag}", 0, IMAGE_BYTES),
            f"out_{tag}": (f"/rs_out_{tag}", 0, 2 * OUT_BYTES)}

        image = mod.InferInput("image", [1, 8, 8, 1], "FP32")
        image.set_shared_memory(f"in_{tag}", IMAGE_BYTES)
        logits = mod.InferRequestedOutput("logits")
        logits.set_shared_memory(f"out_{tag}", OUT_BYTES, offset=0)
        probs = mod.InferRequestedOutput("probs")
        probs.set_shared_memory(f"out_{tag}", OUT_BYTES, offset=OUT_BYTES)
        result = client.infer("digits_cnn", [image], outputs=[logits, probs])

        # The reply carries no tensor bytes: over HTTP the entry is name, datatype and shape
        # (as Triton's), over gRPC it names where the output went.
        out = result.get_output("probs")
        if protocol == "http":
            assert out == {"name": "probs", "datatype": "FP32", "shape": [1, 10]}
        else:
            params = {k: v.string_param or v.int64_param for k, v in out.parameters.items()}
            assert params == {"shared_memory_region": f"out_{tag}",
                              "shared_memory_byte_size": OUT_BYTES,
                              "shared_memory_offset": OUT_BYTES}
            assert result.get_response().raw_output_contents == [b"", b""]
        got_logits = shm.get_contents_as_numpy(handles["out"], np.float32, [1, 10], offset=0)
        got_probs = shm.get_contents_as_numpy(handles["out"], np.float32, [1, 10],
                                              offset=OUT_BYTES)
        assert_same(got_logits, inline.as_numpy("logits"))
        assert_same(got_probs, inline.as_numpy("probs"))
        assert int(np.argmax(got_probs[0])) == DIGIT_0_CLASS

        client.unregister_system_shared_memory(f"in_{tag}")
        assert status_of(protocol, client) == {f"out_{tag}": (f"/rs_out_{tag}", 0,
                                                              2 * OUT_BYTES)}
        client.unregister_system_shared_memory()  # every region of this peer
        assert status_of(protocol, client) == {}

        # An unregistered region is refused by name, and the worker goes on serving.
        with pytest.raises(InferenceServerException) as e:
            client.infer("digits_cnn", [image])
        assert e.value.status() == ("400" if protocol == "http"
                                    else "StatusCode.FAILED_PRECONDITION")
        assert e.value.message() == (f"model 'digits_cnn': input 'image': shared memory region "
                                     f"\"in_{tag}\" is not registered")
        assert client.is_model_ready("digits_cnn")
    finally:
        client.unregister_system_shared_memory()
        client.close()


def test_a_key_outside_the_prefix_is_refused(protocol, worker):
    client = connect(protocol, worker)
    try:
        with pytest.raises(InferenceServerException) as e:
            client.register_system_shared_memory("passwd", "/etc/passwd", 64)
        assert e.value.status() == ("400" if protocol == "http"
                                    else "StatusCode.INVALID_ARGUMENT")
        assert e.value.message() == ('shared memory region "passwd": key "/etc/passwd" is not '
                                     "a POSIX shared memory object name ('/' followed by a "
                                     "name without '/')")
        assert status_of(protocol, client) == {}
    finally:
        client.close()


def test_cuda_shared_memory_is_empty(protocol, worker):
    """Triton's CUDA routes and RPCs, which perf_analyzer calls beside the system ones:
    nothing is registered (a named region is not found), unregistering succeeds, registering
    is refused; the same answers over both protocols."""
    client = connect(protocol, worker)
    try:
        status = client.get_cuda_shared_memory_status()
        if protocol == "http":
            assert status == []
        else:
            assert dict(status.regions) == {}
        with pytest.raises(InferenceServerException) as e:
            client.get_cuda_shared_memory_status("gpu0")
        assert e.value.status() == ("404" if protocol == "http" else "StatusCode.NOT_FOUND")
        assert e.value.message() == 'cuda shared memory region "gpu0" is not registered'
        client.unregister_cuda_shared_memory()
        client.unregister_cuda_shared_memory("gpu0")
        with pytest.raises(InferenceServerException) as e:
            client.register_cuda_shared_memory("gpu0", b"AAAA", 0, 64)
        assert e.value.status() == ("400" if protocol == "http"
                                    else "StatusCode.INVALID_ARGUMENT")
        assert e.value.message() == ('cuda shared memory region "gpu0": CUDA shared memory is '
                                     "not offered (system shared memory is)")
    finally:
        client.close()
