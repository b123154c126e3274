"""tritonclient's HTTP and gRPC clients side by side: the tests run each case over both."""

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

PROTOCOLS = ["http", "grpc"]
MODULES = {"http": httpclient, "grpc": grpcclient}

# The wire datatypes of the numpy dtypes the tests send.
WIRE = {np.dtype(np.float32): "FP32", np.dtype(np.int32): "INT32"}


def connect(protocol, worker):
    """A tritonclient InferenceServerClient of `protocol` on `worker`."""
    url = worker.http_url if protocol == "http" else worker.grpc_url
    return MODULES[protocol].InferenceServerClient(url=url)


def inputs(protocol, named_arrays, binary=True):
    """InferInputs of `protocol` holding (name, array) pairs; `binary` picks HTTP's binary
    extension or JSON data (gRPC always sends raw contents)."""
    out = []
    for name, array in named_arrays:
        x = MODULES[protocol].InferInput(name, list(array.shape), WIRE[array.dtype])
        if protocol == "http":
            x.set_data_from_numpy(array, binary_data=binary)
        else:
            x.set_data_from_numpy(array)
        out.append(x)
    return out


def outputs(protocol, names, binary=True):
    """InferRequestedOutputs of `protocol` for `names`, in that order."""
    if protocol == "http":
        return [httpclient.InferRequestedOutput(n, binary_data=binary) for n in names]
    return [grpcclient.InferRequestedOutput(n) for n in names]
