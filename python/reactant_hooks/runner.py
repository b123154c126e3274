"""reactant-server's hook runner: one Python process that serves the hooks of one bundle.

The server starts it as `python -I -B runner.py <bundle dir> <fd> [--path DIR]... [--allow NAME]...`
(docs/hooks.md, "Process model" and "Environment") with a connected unix stream socket on <fd>:
each `--path` (hooks.python_path) goes on sys.path after the bundle directory, and `--allow`
(hooks.allowed_packages) restricts the top-level modules the bundle's own code may import. It
talks to the server in frames:

    4-byte little-endian length, then that many bytes of body

A body that opens with "{" is JSON; any other is a binary calls or results frame (below). A
frame may carry one file descriptor (SCM_RIGHTS, attached to the frame's first byte).

    runner -> server   {"ok": true, "name", "preprocess": bool, "postprocess": bool,
                        "python": "3.11.7", "packages": ["numpy==2.4.6", ...]}
                       or {"ok": false, "error": "<last line of the exception>"}
    server -> runner   a calls frame, with the process's segment attached when it is new
    runner -> server   a results frame, one result per call, or {"ok": false, "error": "..."}
                       for the whole frame

The segment is a sealed memfd the server makes and passes with the first calls frame (and
again, larger, when a frame does not fit): mapped once here, its request area holds the
calls' tensors and its reply area receives the results' tensors. Results larger than the
reply area go in a memfd of their own attached to the results frame. Binary frames (all
little-endian, as src/hooks/hook_binary.h):

    calls:   u8 1, u8 stage (0 preprocess, 1 postprocess, 2 run), u8 flags (1: a new
             segment is attached), u8 0, u32 calls, u64 request bytes used, u64 reply area
             offset, u64 reply area size; per call u32 tensor count and the tensor records
    results: u8 2, u8 flags (1: the tensors are in the attached memfd), u16 0, u32 results;
             per result u8 status (0 ok, 1 raised, 2 bad result), u32 n, then n tensor
             records or n bytes of UTF-8 error text
    tensor record: u8 datatype code, u8 rank, u16 name length, u64 offset, u64 nbytes,
             rank x i64 dims, the name (codes: 1 BOOL, 2..5 UINT8..UINT64, 6..9 INT8..INT64,
             10 FP16, 11 FP32, 12 FP64, 13 BYTES)

Numeric tensors are row-major, native little-endian; BYTES tensors are in the KServe
serialized form (per element a 4-byte little-endian length, then the bytes). Several calls in
one frame are the requests that waited for this process together; the hook still runs once
per call, on that call's tensors only.

A meta model (register_meta_model(name, run=...)) is called with stage "run"; its
run(inputs, call) may call call(model, inputs), which sends JSON frames with a memfd each:

    runner -> server   {"op": "call", "index": <call in the frame>, "model": name,
                        "tensors": [...]} + memfd
    server -> runner   {"ok": true, "tensors": [...]} + memfd, or {"ok": false, "error": "..."}

each tensor described by {"name", "datatype", "shape", "offset", "nbytes"} in its memfd, and
returns the model's outputs (or raises SubCallError with the server's message).

model.py runs in a module of its own whose globals hold `register_model` and
`register_meta_model` (the names the reference's model.jl sees); it must call register_model
once. A hook takes and returns a dict name -> numpy array.
"""

import importlib.machinery
import importlib.metadata
import json
import mmap
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
# The binary frames' datatype codes (index = code).
_CODES = ("", "BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32",
          "INT64", "FP16", "FP32", "FP64", "BYTES")
_CODE = {name: code for code, name in enumerate(_CODES) if name}
_NUMPY_OF_CODE = [_NUMPY.get(name) for name in _CODES]
_CODE_OF_DTYPE = {dtype: _CODE[name] for dtype, name in _DATATYPE.items()}
_BYTES_CODE = _CODE["BYTES"]
_STAGES = ("preprocess", "postprocess", "run")
_MAX_FRAME = 64 << 20  # a frame's header is small; this bounds a corrupt length
_MAX_RANK = 64  # the server's limit (src/protocol/wire_tensor.h)
_ALIGN = 64  # tensors start at multiples of this in the segment's areas
_LENGTH = struct.Struct("<I")
_CALLS = struct.Struct("<BBBBIQQQ")
_RECORD = struct.Struct("<BBHQQ")
_RESULTS = struct.Struct("<BBHI")
_RESULT = struct.Struct("<BI")
_DIMS = [struct.Struct(f"<{rank}q") for rank in range(_MAX_RANK + 1)]


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


_ANCILLARY = socket.CMSG_SPACE(struct.calcsize("i"))


def _recv_frame(sock):
    """The next frame: (a dict for JSON or the bytes of a binary body, the attached fd or
    None). The server sends one frame and waits for the answer, so one read usually holds
    it all."""
    data, ancdata, _, _ = sock.recvmsg(16384, _ANCILLARY, socket.MSG_CMSG_CLOEXEC)
    fd = None
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds = struct.unpack(f"{len(payload) // 4}i", payload[:len(payload) // 4 * 4])
            fd = fds[0] if fds else None
            for extra in fds[1:]:
                os.close(extra)
    if not data:
        raise EOFError
    if len(data) < 4:
        data += _recv_exact(sock, 4 - len(data))
    (length,) = _LENGTH.unpack_from(data, 0)
    if length > _MAX_FRAME:
        raise ValueError(f"frame of {length} bytes")
    if len(data) < 4 + length:
        data += _recv_exact(sock, 4 + length - len(data))
    elif len(data) > 4 + length:
        raise ValueError("the server sent a second frame before this one was answered")
    body = data[4:]
    if body[:1] == b"{":
        return json.loads(body), fd
    return body, fd


def _send_body(sock, body, fd=None):
    head = _LENGTH.pack(len(body))
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))] if fd is not None \
        else []
    sent = sock.sendmsg([head, body], anc)
    if sent < 4 + len(body):
        sock.sendall((head + body)[sent:])


def _send_frame(sock, message, fd=None):
    _send_body(sock, json.dumps(message).encode(), fd)


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
    """Copies each tensor a JSON frame describes out of `view` (the server checked every
    range)."""
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


def _payloads(result, stage):
    """The tensors of a hook's result as (name, UTF-8 name, datatype code, shape, payload),
    the payload a C-contiguous array or the serialized BYTES elements; HookResultError for
    what the server cannot carry."""
    if not isinstance(result, dict):
        raise HookResultError(f"{stage} returned {type(result).__name__}, expected a dict "
                              "name -> numpy array")
    out = []
    for name, value in result.items():
        if not isinstance(name, str):
            raise HookResultError(f"{stage} returned a key of type {type(name).__name__}, "
                                  "expected str")
        encoded = name.encode("utf-8")
        if len(encoded) > 0xFFFF:
            raise HookResultError(f"{stage} returned a name of {len(encoded)} bytes")
        array = value if type(value) is np.ndarray else np.asarray(value)
        shape = array.shape
        if len(shape) > _MAX_RANK:
            raise HookResultError(f"{stage} output '{name}': rank {len(shape)} above "
                                  f"{_MAX_RANK}")
        if array.dtype.kind in "OSU":
            flat = [_as_bytes(v) for v in array.reshape(-1)]
            out.append((name, encoded, _BYTES_CODE, shape,
                        b"".join(struct.pack("<I", len(v)) + v for v in flat)))
            continue
        dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
        code = _CODE_OF_DTYPE.get(dtype)
        if code is None:
            raise HookResultError(f"{stage} output '{name}': numpy dtype {array.dtype} has "
                                  "no KServe datatype")
        out.append((name, encoded, code, shape, np.ascontiguousarray(array, dtype=dtype)))
    return out


def _encode_outputs(result, stage, pieces, offset):
    """Lays the hook's result out after `offset` (appending to `pieces`) for a JSON frame;
    returns (descriptors, the offset after it)."""
    blobs, descriptors = [], []
    for name, _, code, shape, payload in _payloads(result, stage):
        blob = payload if isinstance(payload, bytes) else payload.tobytes()
        descriptors.append({"name": name, "datatype": _CODES[code], "shape": list(shape),
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


class _Segment:
    """The shared segment the server passes (see the module comment), mapped once."""

    def __init__(self):
        self.bytes = None  # a uint8 array over the whole mapping
        self.view = None  # a memoryview of it

    def attach(self, fd):
        try:
            size = os.fstat(fd).st_size
            mapping = mmap.mmap(fd, size)
            self.bytes = np.frombuffer(mapping, dtype=np.uint8)
            self.view = memoryview(mapping)
        finally:
            os.close(fd)


def _parse_calls(body):
    """A calls frame: (stage code, flags, request bytes used, reply area offset, reply area
    size, calls), each call a list of (name, code, shape, offset, nbytes)."""
    _, stage, flags, _, count, used, reply_offset, reply_size = _CALLS.unpack_from(body, 0)
    pos = _CALLS.size
    calls = []
    for _ in range(count):
        (n,) = _LENGTH.unpack_from(body, pos)
        pos += 4
        records = []
        for _ in range(n):
            code, rank, name_length, offset, nbytes = _RECORD.unpack_from(body, pos)
            pos += _RECORD.size
            shape = _DIMS[rank].unpack_from(body, pos)
            pos += 8 * rank
            name = body[pos:pos + name_length].decode("utf-8")
            pos += name_length
            records.append((name, code, shape, offset, nbytes))
        calls.append(records)
    return stage, flags, used, reply_offset, reply_size, calls


def _inputs_of(records, buffer):
    """The tensors of one call as arrays over `buffer`, the frame's private copy of the
    request area (the server checked every range)."""
    tensors = {}
    for name, code, shape, offset, nbytes in records:
        if code == _BYTES_CODE:
            count = 1
            for d in shape:
                count *= d
            data = memoryview(buffer)[offset:offset + nbytes]
            tensors[name] = _decode_bytes(data, count).reshape(shape)
        elif nbytes == 0:
            tensors[name] = np.empty(shape, dtype=_NUMPY_OF_CODE[code])
        else:
            dtype = _NUMPY_OF_CODE[code]
            tensors[name] = np.frombuffer(buffer, dtype, nbytes // dtype.itemsize,
                                          offset).reshape(shape)
    return tensors


def _reply(results, segment, reply_offset, reply_size):
    """The results frame for `results` ((status, error text) or (0, payloads) per call) and
    the memfd it carries (None when the tensors fit the reply area and were written there)."""
    placed, end = [], 0  # (offset, bytes) per tensor
    for status, payloads in results:
        if status:
            continue
        for payload in payloads:
            data = payload[4]
            data = memoryview(data) if type(data) is bytes else data.data.cast("B")
            offset = (end + _ALIGN - 1) & ~(_ALIGN - 1)
            end = offset + len(data)
            placed.append((offset, data))
    fd = None
    if segment.view is not None and end <= reply_size:
        view = segment.view
        for offset, data in placed:
            if data:
                view[reply_offset + offset:reply_offset + offset + len(data)] = data
    else:
        fd = os.memfd_create("reactant_hook_out", os.MFD_CLOEXEC)
        os.ftruncate(fd, end)
        for offset, data in placed:
            written = 0
            while written < len(data):
                written += os.pwrite(fd, data[written:], offset + written)
    parts = [_RESULTS.pack(2, 0 if fd is None else 1, 0, len(results))]
    k = 0
    for status, what in results:
        if status:
            text = what.encode("utf-8", "replace")
            parts.append(_RESULT.pack(status, len(text)))
            parts.append(text)
            continue
        parts.append(_RESULT.pack(0, len(what)))
        for _, encoded, code, shape, _ in what:
            offset, data = placed[k]
            k += 1
            parts.append(_RECORD.pack(code, len(shape), len(encoded), offset, len(data)))
            parts.append(_DIMS[len(shape)].pack(*shape))
            parts.append(encoded)
    return b"".join(parts), fd


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
    """Runs `hook` on each call's tensors in `buffer`: per call (0, payloads) or (status,
    error text), status 1 for a hook that raised, 2 for a result the server cannot carry. A
    meta model's run (stage "run") also receives a `call` that asks the server over `sock`."""
    results = []
    for index, records in enumerate(calls):
        try:
            inputs = _inputs_of(records, buffer)
        except Exception as exc:
            results.append((2, _last_line(exc)))
            continue
        try:
            result = hook(inputs, _sub_caller(sock, index)) if stage == "run" else \
                hook(inputs)
        except Exception as exc:
            results.append((1, _last_line(exc)))
            continue
        try:
            results.append((0, _payloads(result, stage)))
        except Exception as exc:
            results.append((2, _last_line(exc)))
    return results


def _environment():
    packages = sorted(f"{d.metadata['Name']}=={d.version}"
                      for d in importlib.metadata.distributions() if d.metadata["Name"])
    return {"python": platform.python_version(), "implementation": sys.implementation.name,
            "packages": packages}


class _AllowedPackages:
    """A sys.meta_path finder that refuses the bundle's imports of packages not allowed.

    It checks only top-level modules (a submodule's package was checked when it was
    imported) and only imports made by the bundle's own code: a file under the bundle
    directory or a hooks.python_path directory. So an allowed package's own imports of its
    dependencies keep working. Allowed: the listed names, the standard library, numpy (the
    runner's own dependency) and modules found in the bundle or hooks.python_path
    directories. A guard against accidental dependencies, not a sandbox: the bundle's code
    can still reach anything installed (importlib internals, sys.modules).
    """

    def __init__(self, allowed, roots):
        self.allowed = set(allowed) | {"numpy"}
        self.roots = [os.path.join(os.path.realpath(r), "") for r in roots]
        self.listed = "[" + ", ".join(allowed) + "]"

    def _from_bundle(self):
        """True when the innermost caller outside the import machinery is the bundle's code."""
        machinery = os.path.join(os.path.dirname(importlib.__file__), "")
        frame = sys._getframe(2)
        while frame is not None:
            name = frame.f_code.co_filename
            if not (name.startswith("<frozen importlib") or name.startswith(machinery)):
                break
            frame = frame.f_back
        if frame is None:
            return False
        path = os.path.realpath(frame.f_code.co_filename)
        return any(path.startswith(root) for root in self.roots)

    def find_spec(self, name, path=None, target=None):
        """None lets the other finders import `name`; an import refused raises ImportError."""
        if "." in name or name in self.allowed or name in sys.stdlib_module_names or \
                name in sys.builtin_module_names:
            return None
        if importlib.machinery.PathFinder.find_spec(name, self.roots) is not None:
            return None  # the bundle's own module or one of hooks.python_path
        if not self._from_bundle():
            return None
        raise ImportError(f"module '{name}' is not in hooks.allowed_packages {self.listed}",
                          name=name)


def _options(argv):
    """The --path and --allow options after the bundle and the fd: (paths, allowed)."""
    paths, allowed = [], []
    for flag, value in zip(argv[0::2], argv[1::2]):
        if flag == "--path":
            paths.append(value)
        elif flag == "--allow":
            allowed.append(value)
        else:
            raise ValueError(f"runner.py: unknown option {flag!r} (expected --path or --allow)")
    return paths, allowed


def _load(bundle, paths=(), allowed=()):
    registry = Registry()
    path = os.path.join(bundle, "model.py")
    with open(path, "rb") as f:
        source = f.read()
    sys.path[0:0] = [bundle, *paths]
    if allowed:
        sys.meta_path.insert(0, _AllowedPackages(allowed, [bundle, *paths]))
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
        model = _load(bundle, *_options(sys.argv[3:]))
    except BaseException as exc:  # the server reports the import failure as the load error
        _send_frame(sock, {"ok": False, "error": _last_line(exc)})
        return 1
    hello = {"ok": True, "name": model["name"],
             "preprocess": model["preprocess"] is not None,
             "postprocess": model["postprocess"] is not None,
             "meta": model.get("run") is not None}
    hello.update(_environment())
    _send_frame(sock, hello)
    segment = _Segment()
    while True:
        try:
            request, fd_in = _recv_frame(sock)
        except EOFError:
            return 0
        if isinstance(request, dict):  # calls come as binary frames only
            if fd_in is not None:
                os.close(fd_in)
            _send_frame(sock, {"ok": False, "error": "expected a calls frame"})
            continue
        code, flags, used, reply_offset, reply_size, calls = _parse_calls(request)
        if fd_in is not None:
            if flags & 1:
                segment.attach(fd_in)
            else:
                os.close(fd_in)
        stage = _STAGES[code] if code < len(_STAGES) else str(code)
        hook = model.get(stage)
        if hook is None:
            _send_frame(sock, {"ok": False, "error": f"no {stage} hook is registered"})
            continue
        # The frame's own copy: a hook may modify its arrays, and nothing it keeps refers to
        # the segment, which the next frame overwrites.
        buffer = bytearray(segment.view[:used]) if used else bytearray()
        body, fd_out = _reply(_serve(hook, stage, calls, buffer, sock), segment, reply_offset,
                              reply_size)
        try:
            _send_body(sock, body, fd_out)
        finally:
            if fd_out is not None:
                os.close(fd_out)


if __name__ == "__main__":
    sys.exit(main())
