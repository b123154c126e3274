"""reactant-server's hook runner: one Python process that serves the hooks of one bundle.

The server starts it as `python -I -B runner.py <bundle dir> <fd>` (docs/hooks.md, "Process
model") with a connected unix stream socket on <fd>, and talks to it in frames:

    4-byte little-endian length, then that many bytes of JSON

A frame that carries tensors also carries one file descriptor (SCM_RIGHTS, attached to the
frame's first byte): a memfd holding the tensors back to back, each described in the JSON by
{"name", "datatype", "shape", "offset", "nbytes"}. Numeric tensors are row-major, native
little-endian; BYTES tensors are in the KServe serialized form (per element a 4-byte
little-endian length, then the bytes).

    runner -> server   {"ok": true, "name", "preprocess": bool, "postprocess": bool,
                        "python": "3.11.7", "packages": ["numpy==2.4.6", ...]}
                       or {"ok": false, "error": "<last line of the exception>"}
    server -> runner   {"op": "preprocess" | "postprocess", "calls": [{"tensors": [...]}, ...]}
                       + one memfd holding every call's tensors
    runner -> server   {"ok": true, "results": [{"ok": true, "tensors": [...]} or
                        {"ok": false, "kind": "raised" | "bad_result", "error": "..."}, ...]}
                       + one memfd holding every result's tensors, one result per call
                       or {"ok": false, "error": "..."} for the whole frame

Several calls in one frame are the requests that waited for this process together; the hook
still runs once per call, on that call's tensors only.

A meta model (register_meta_model(name, run=...)) is called with op "run"; its
run(inputs, call) may call call(model, inputs), which sends

    runner -> server   {"op": "call", "index": <call in the frame>, "model": name,
                        "tensors": [...]} + memfd
    server -> runner   {"ok": true, "tensors": [...]} + memfd, or {"ok": false, "error": "..."}

and returns the model's outputs (or raises SubCallError with the server's message).

model.py runs in a module of its own whose globals hold `register_model` and
`register_meta_model` (the names the reference's model.jl sees); it must call register_model
once. A hook takes and returns a dict name -> numpy array.
"""

import importlib.metadata
import json
import os
import platform
import socket
import struct
import sys
import traceback

try:
    import numpy as np
except ImportError as _numpy_missing:  # reported to the server in place of the hello
    np = None
    _NUMPY_ERROR = f"{type(_numpy_missing).__name__}: {_numpy_missing} (the hook interpreter " \
        f"{sys.executable} needs numpy: set hooks.python, docs/hooks.md)"

# KServe V2 datatype -> numpy dtype (little-endian, as the server lays tensors out).
_NUMPY = {} if np is None else {
    "BOOL": np.dtype(np.bool_),
    "INT8": np.dtype("<i1"),
    "INT16": np.dtype("<i2"),
    "INT32": np.dtype("<i4"),
    "INT64": np.dtype("<i8"),
    "UINT8": np.dtype("<u1"),
    "UINT16": np.dtype("<u2"),
    "UINT32": np.dtype("<u4"),
    "UINT64": np.dtype("<u8"),
    "FP16": np.dtype("<f2"),
    "FP32": np.dtype("<f4"),
    "FP64": np.dtype("<f8"),
}
_DATATYPE = {dtype: name for name, dtype in _NUMPY.items()}
_MAX_FRAME = 64 << 20  # a request's JSON is small; this bounds a corrupt length


class HookResultError(Exception):
    """A hook returned something that is not a dict of arrays the server can carry."""


class Registry:
    def __init__(self):
        self.model = None

    def register_model(self, name, preprocess=None, postprocess=None):
        if self.model is not None:
            raise RuntimeError("register_model called twice")
        for what, fn in (("preprocess", preprocess), ("postprocess", postprocess)):
            if fn is not None and not callable(fn):
                raise TypeError(f"register_model: {what} is not callable")
        self.model = {"name": name, "preprocess": preprocess, "postprocess": postprocess}

    def register_meta_model(self, name, run=None):
        if self.model is not None:
            raise RuntimeError("register_meta_model called after another registration")
        if not callable(run):
            raise TypeError("register_meta_model: run is not callable")
        self.model = {"name": name, "preprocess": None, "postprocess": None, "run": run}


def _last_line(exc):
    lines = traceback.format_exception_only(type(exc), exc)
    text = lines[-1].strip() if lines else type(exc).__name__
    return text.replace("\n", " ")


def _recv_exact(sock, n):
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise EOFError
        out += chunk
    return bytes(out)


def _recv_frame(sock):
    head, fds, _, _ = socket.recv_fds(sock, 4, 1)
    if not head:
        raise EOFError
    if len(head) < 4:
        head += _recv_exact(sock, 4 - len(head))
    (length,) = struct.unpack("<I", head)
    if length > _MAX_FRAME:
        raise ValueError(f"frame of {length} bytes")
    body = _recv_exact(sock, length)
    return json.loads(body), (fds[0] if fds else None)


def _send_frame(sock, message, fd=None):
    body = json.dumps(message).encode()
    frame = struct.pack("<I", len(body)) + body
    sent = socket.send_fds(sock, [frame], [fd]) if fd is not None else sock.send(frame)
    if sent < len(frame):
        sock.sendall(frame[sent:])


def _decode_bytes(buffer, count):
    out = np.empty(count, dtype=object)
    pos = 0
    for i in range(count):
        (n,) = struct.unpack_from("<I", buffer, pos)
        pos += 4
        out[i] = bytes(buffer[pos:pos + n])
        pos += n
    return out


def _read_all(fd):
    """The whole memfd `fd` (closed after), as a memoryview."""
    if fd is None:
        return memoryview(b"")
    try:
        size = os.fstat(fd).st_size
        return memoryview(os.pread(fd, size, 0) if size else b"")
    finally:
        os.close(fd)


def _tensors_from(descriptors, view):
    """Copies each described tensor out of `view` (the server checked every range)."""
    tensors = {}
    for d in descriptors:
        shape = tuple(d["shape"])
        data = view[d["offset"]:d["offset"] + d["nbytes"]]
        if d["datatype"] == "BYTES":
            count = int(np.prod(shape, dtype=np.int64))
            tensors[d["name"]] = _decode_bytes(data, count).reshape(shape)
        else:
            array = np.frombuffer(data, dtype=_NUMPY[d["datatype"]])
            tensors[d["name"]] = array.reshape(shape).copy()
    return tensors


def _as_bytes(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, np.bytes_):
        return bytes(value)
    raise HookResultError(f"element of type {type(value).__name__} (BYTES takes bytes or str)")


def _encode_outputs(result, stage, pieces, offset):
    """Lays the hook's result out after `offset` (appending to `pieces`); returns
    (descriptors, the offset after it)."""
    if not isinstance(result, dict):
        raise HookResultError(f"{stage} returned {type(result).__name__}, expected a dict "
                              "name -> numpy array")
    blobs, descriptors = [], []
    for name, value in result.items():
        if not isinstance(name, str):
            raise HookResultError(f"{stage} returned a key of type {type(name).__name__}, "
                                  "expected str")
        array = np.asarray(value)
        if array.dtype.kind in "OSU":
            flat = [_as_bytes(v) for v in array.reshape(-1)]
            blob = b"".join(struct.pack("<I", len(v)) + v for v in flat)
            datatype = "BYTES"
        else:
            dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
            datatype = _DATATYPE.get(np.dtype(dtype))
            if datatype is None:
                raise HookResultError(f"{stage} output '{name}': numpy dtype {array.dtype} has "
                                      "no KServe datatype")
            blob = np.ascontiguousarray(array, dtype=dtype).tobytes()
        descriptors.append({"name": name, "datatype": datatype, "shape": list(array.shape),
                            "offset": offset, "nbytes": len(blob)})
        blobs.append(blob)
        offset += len(blob)
    pieces.extend(blobs)  # only a result that encoded whole takes its place
    return descriptors, offset


def _shared(pieces):
    """A memfd holding `pieces` back to back."""
    fd = os.memfd_create("reactant_hook_out", os.MFD_CLOEXEC)
    blob = memoryview(b"".join(pieces))
    written = 0
    while written < len(blob):
        written += os.pwrite(fd, blob[written:], written)
    return fd


class SubCallError(Exception):
    """A meta model's call of another model failed; the message is the server's."""


def _sub_caller(sock, index):
    """The `call(name, inputs)` a meta model's run receives for call `index` of a frame."""
    def call(name, inputs):
        if not isinstance(inputs, dict):
            raise TypeError("call: inputs must be a dict name -> numpy array")
        pieces = []
        descriptors, _ = _encode_outputs(inputs, f"call('{name}')", pieces, 0)
        fd = _shared(pieces)
        try:
            _send_frame(sock, {"op": "call", "index": index, "model": str(name),
                               "tensors": descriptors}, fd)
        finally:
            os.close(fd)
        reply, fd_in = _recv_frame(sock)
        buffer = _read_all(fd_in)
        if not reply.get("ok"):
            raise SubCallError(reply.get("error", "the call failed"))
        return _tensors_from(reply.get("tensors", []), buffer)
    return call


def _serve(hook, stage, calls, buffer, sock=None):
    """Runs `hook` on each call's tensors in `buffer`; the reply frame and its memfd. A meta
    model's run (stage "run") also receives a `call` that asks the server over `sock`."""
    results, pieces, offset = [], [], 0
    for index, call in enumerate(calls):
        try:
            inputs = _tensors_from(call.get("tensors", []), buffer)
        except Exception as exc:
            results.append({"ok": False, "kind": "bad_result", "error": _last_line(exc)})
            continue
        try:
            result = hook(inputs, _sub_caller(sock, index)) if stage == "run" else \
                hook(inputs)
        except Exception as exc:
            results.append({"ok": False, "kind": "raised", "error": _last_line(exc)})
            continue
        try:
            descriptors, offset = _encode_outputs(result, stage, pieces, offset)
        except Exception as exc:
            results.append({"ok": False, "kind": "bad_result", "error": _last_line(exc)})
            continue
        results.append({"ok": True, "tensors": descriptors})
    return {"ok": True, "results": results}, _shared(pieces)


def _environment():
    packages = sorted(f"{d.metadata['Name']}=={d.version}"
                      for d in importlib.metadata.distributions() if d.metadata["Name"])
    return {"python": platform.python_version(), "implementation": sys.implementation.name,
            "packages": packages}


def _load(bundle):
    registry = Registry()
    path = os.path.join(bundle, "model.py")
    with open(path, "rb") as f:
        source = f.read()
    sys.path.insert(0, bundle)
    namespace = {"__name__": "model", "__file__": path,
                 "register_model": registry.register_model,
                 "register_meta_model": registry.register_meta_model}
    exec(compile(source, path, "exec"), namespace)
    if registry.model is None:
        raise RuntimeError("model.py did not call register_model")
    return registry.model


def main():
    bundle, fd = sys.argv[1], int(sys.argv[2])
    sock = socket.socket(fileno=fd)
    if np is None:
        _send_frame(sock, {"ok": False, "error": _NUMPY_ERROR})
        return 1
    try:
        model = _load(bundle)
    except BaseException as exc:  # the server reports the import failure as the load error
        _send_frame(sock, {"ok": False, "error": _last_line(exc)})
        return 1
    hello = {"ok": True, "name": model["name"],
             "preprocess": model["preprocess"] is not None,
             "postprocess": model["postprocess"] is not None,
             "meta": model.get("run") is not None}
    hello.update(_environment())
    _send_frame(sock, hello)
    while True:
        try:
            request, fd_in = _recv_frame(sock)
        except EOFError:
            return 0
        stage = request.get("op")
        buffer = _read_all(fd_in)
        hook = model.get(stage) if stage in ("preprocess", "postprocess", "run") else None
        if hook is None:
            _send_frame(sock, {"ok": False, "error": f"no {stage} hook is registered"})
            continue
        reply, fd_out = _serve(hook, stage, request.get("calls", []), buffer, sock)
        try:
            _send_frame(sock, reply, fd_out)
        finally:
            os.close(fd_out)

if __name__ == "__main__":
    sys.exit(main())
