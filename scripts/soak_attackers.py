#!/usr/bin/env python3
"""soak_attackers.py: the hostile traffic of scripts/soak_hostile.sh against one worker's HTTP port.

Runs for --duration seconds, then prints one line per attack with its counts:
  slowloris   --slowloris connections, each sending a request head one byte every 4 s and
              opening a new connection when the server closes one (its head deadline)
  framing     RFC 9112 smuggling cases in turn (two Content-Length values, chunked with
              identity, space before a colon, missing/duplicate Host, obsolete folding,
              Content-Length with chunked); each must get 400 and a closed connection
  json_bomb   a JSON infer body of --json-bomb-mib MiB (nested arrays, wrong shape): within
              the body limit, so the cause is the shape: must get 400
  json_big    a JSON infer body over the body limit (--json-big-mib MiB): the cause is the
              size: must get 413
  gzip_bomb   a gzip body of a few hundred KiB that inflates to 600 MiB: must get 413
  shm_probe   shared-memory registrations of /dev/shm keys that are not the client's
              (any answer is fine; the server must stay up)
  cancel      infer requests whose connection is reset right after sending them
  grpc_cancel gRPC ModelInfer calls (--grpc-port) cancelled right after they are sent
              (HTTP/2 RST_STREAM CANCEL): the server must stay up
The bodies are built before any attack starts: building them blocks the event loop for
seconds, long enough for the server to close the connections of the other attacks as idle.
Exit status 1 when a framing case or a bomb got an unexpected answer.
"""
import argparse
import asyncio
import gzip
import json
import socket
import struct
import sys
import time
import zlib

FRAMING = [
    b"POST /v2/models/{m}/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    b"POST /v2/models/{m}/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
    b"POST /v2/models/{m}/infer HTTP/1.1\r\nHost: x\r\nContent-Length : 2\r\n\r\n{}",
    b"POST /v2/models/{m}/infer HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
    b"POST /v2/models/{m}/infer HTTP/1.1\r\nHost: x\r\nHost: y\r\nContent-Length: 2\r\n\r\n{}",
    b"POST /v2/models/{m}/infer HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\nContent-Length: 2\r\n\r\n{}",
    b"POST /v2/models/{m}/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
]


async def read_reply(reader, timeout=30.0):
    """Status code of one response and whether the server closed the connection after it."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    if length:
        await asyncio.wait_for(reader.readexactly(length), timeout)
    try:
        rest = await asyncio.wait_for(reader.read(1), 5.0)
        closed = rest == b""
    except asyncio.TimeoutError:
        closed = False
    return status, closed


class Counts(dict):
    def add(self, key, n=1):
        self[key] = self.get(key, 0) + n


async def slowloris(args, counts, stop):
    async def one():
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection(args.host, args.port)
            except OSError:
                counts.add("connect_failed")
                await asyncio.sleep(1)
                continue
            counts.add("connections")
            head = f"POST /v2/models/{args.model}/infer HTTP/1.1\r\nHost: x\r\n".encode() * 100
            try:
                for b in head:
                    if stop.is_set():
                        break
                    writer.write(bytes([b]))
                    await writer.drain()
                    try:
                        got = await asyncio.wait_for(reader.read(4096), 4.0)
                        if got == b"" or got:
                            counts.add("closed_by_server")
                            break
                    except asyncio.TimeoutError:
                        pass
            except (ConnectionError, OSError):
                counts.add("closed_by_server")
            writer.close()
    await asyncio.gather(*(one() for _ in range(args.slowloris)))


async def framing(args, counts, failures, stop):
    i = 0
    while not stop.is_set():
        k = i % len(FRAMING)
        case = FRAMING[k].replace(b"{m}", args.model.encode())
        i += 1
        try:
            reader, writer = await asyncio.open_connection(args.host, args.port)
            writer.write(case)
            await writer.drain()
            status, closed = await read_reply(reader)
            writer.close()
            if status == 400 and closed:
                counts.add("rejected_and_closed")
            else:
                counts.add("unexpected")
                failures.append(f"framing case {k}: status {status} closed {closed}")
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
            counts.add("unexpected")
            failures.append(f"framing case {k}: {e!r}")
        await asyncio.sleep(0.2)


async def post_body(args, body, headers):
    reader, writer = await asyncio.open_connection(args.host, args.port)
    head = f"POST /v2/models/{args.model}/infer HTTP/1.1\r\nHost: x\r\n{headers}Content-Length: {len(body)}\r\n\r\n"
    # The answer is read while the body is sent: a body over the limit is refused (413) on
    # its head, and the connection is closed before the rest is read.
    reply = asyncio.create_task(read_reply(reader, timeout=120))
    writer.write(head.encode())
    writer.write(body)
    try:
        await writer.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass
    status, _ = await reply
    writer.close()
    return status


def json_bomb(mib):
    """Nested arrays of small numbers, `mib` MiB: a DOM parser would need about 20x the text."""
    row = b"[" + b",".join([b"1"] * 1000) + b"]"
    head = b'{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":['
    return head + b",".join([row] * ((mib << 20) // (len(row) + 1) + 1)) + b"]}]}"


def gzip_bomb():
    """A few hundred KiB of gzip that inflate to 600 MiB of zeros."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + 15)
    zeros = bytes(1 << 20)
    return b"".join(comp.compress(zeros) for _ in range(600)) + comp.flush()


def post_blocking(args, body, headers):
    """post_body on a blocking socket, for a body the server refuses on its head: the 413 is
    read even after the send fails (asyncio drops what is unread when a write fails)."""
    s = socket.create_connection((args.host, args.port))
    try:
        s.settimeout(120)
        s.sendall(f"POST /v2/models/{args.model}/infer HTTP/1.1\r\nHost: x\r\n{headers}"
                  f"Content-Length: {len(body)}\r\n\r\n".encode())
        try:
            s.sendall(body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        head = b""
        while b"\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                raise asyncio.IncompleteReadError(head, None)
            head += chunk
        return int(head[9:12])
    finally:
        s.close()


async def bombs(args, bodies, counts, failures, stop):
    cases = [("json_bomb", bodies["json_bomb"], "Content-Type: application/json\r\n", 400),
             ("json_big", bodies["json_big"], "Content-Type: application/json\r\n", 413),
             ("gzip_bomb", bodies["gzip_bomb"], "Content-Encoding: gzip\r\n", 413)]
    while not stop.is_set():
        for name, body, headers, expected in cases:
            try:
                if expected == 413:
                    s = await asyncio.to_thread(post_blocking, args, body, headers)
                else:
                    s = await post_body(args, body, headers)
                counts.add(f"{name}_{s}")
                if s != expected:
                    failures.append(f"{name}: status {s}, expected {expected}")
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
                counts.add(f"{name}_error")
                failures.append(f"{name}: {e!r}")
        await asyncio.sleep(2)


async def shm_probes(args, counts, stop):
    keys = ["/dev/shm/none", "/reactant_soak_missing", "/../etc/passwd", "/sem.x"]
    i = 0
    while not stop.is_set():
        key = keys[i % len(keys)]
        i += 1
        body = json.dumps({"key": key, "offset": 0, "byte_size": 64}).encode()
        try:
            reader, writer = await asyncio.open_connection(args.host, args.port)
            writer.write(
                f"POST /v2/systemsharedmemory/region/probe{i}/register HTTP/1.1\r\nHost: x\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
            await writer.drain()
            status, _ = await read_reply(reader)
            counts.add(f"status_{status}")
            writer.close()
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
            counts.add("error")
        await asyncio.sleep(0.5)


async def cancels(args, counts, stop):
    body = json.dumps({"inputs": [{"name": "features", "shape": [1, 4], "datatype": "FP32",
                                   "data": [0.1, 0.2, 0.3, 0.4]}]}).encode()
    while not stop.is_set():
        try:
            s = socket.create_connection((args.host, args.port))
            s.sendall(f"POST /v2/models/{args.model}/infer HTTP/1.1\r\nHost: x\r\n"
                      f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.close()  # a reset before the answer
            counts.add("reset")
        except OSError:
            counts.add("error")
        await asyncio.sleep(0.1)


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def pb(field, payload):
    """A length-delimited protobuf field."""
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def h2_frame(kind, flags, stream, payload):
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def hpack_literal(name, value):
    """A header field as a literal without indexing, new name, no Huffman (RFC 7541 6.2.2)."""
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


async def grpc_cancels(args, counts, stop):
    """ModelInfer calls cancelled by the client at once: HEADERS, DATA, then RST_STREAM."""
    tensor = pb(1, b"features") + pb(2, b"FP32") + pb(3, varint(1) + varint(4))
    request = (pb(1, args.model.encode()) + pb(3, b"cancelled") + pb(5, tensor) +
               pb(7, struct.pack("<4f", 0.1, 0.2, 0.3, 0.4)))
    message = b"\x00" + len(request).to_bytes(4, "big") + request
    headers = b"".join(hpack_literal(n, v) for n, v in [
        (b":method", b"POST"), (b":scheme", b"http"),
        (b":path", b"/inference.GRPCInferenceService/ModelInfer"), (b":authority", b"x"),
        (b"content-type", b"application/grpc"), (b"te", b"trailers")])
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(args.host, args.grpc_port)
            writer.write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(4, 0, 0, b""))
            drain = asyncio.create_task(reader.read(1 << 20))
            for stream in range(1, 200, 2):
                if stop.is_set():
                    break
                writer.write(h2_frame(1, 0x4, stream, headers) + h2_frame(0, 0x1, stream, message))
                await writer.drain()
                await asyncio.sleep(0.001 * (stream % 5))  # some calls reach a handler first
                writer.write(h2_frame(3, 0, stream, (8).to_bytes(4, "big")))  # RST_STREAM CANCEL
                await writer.drain()
                counts.add("cancelled")
                await asyncio.sleep(0.05)
            drain.cancel()
            writer.close()
        except OSError:
            counts.add("error")
            await asyncio.sleep(1)


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--model", default="iris_mlp")
    p.add_argument("--duration", type=float, default=300)
    p.add_argument("--slowloris", type=int, default=1000)
    p.add_argument("--json-bomb-mib", type=int, default=32)
    p.add_argument("--json-big-mib", type=int, default=80)
    p.add_argument("--grpc-port", type=int, default=0)
    args = p.parse_args()
    stop = asyncio.Event()
    failures = []
    bodies = {"json_bomb": json_bomb(args.json_bomb_mib), "json_big": json_bomb(args.json_big_mib),
              "gzip_bomb": gzip_bomb()}
    c = {k: Counts() for k in ["slowloris", "framing", "bombs", "shm_probe", "cancel", "grpc_cancel"]}
    tasks = [
        asyncio.create_task(slowloris(args, c["slowloris"], stop)),
        asyncio.create_task(framing(args, c["framing"], failures, stop)),
        asyncio.create_task(bombs(args, bodies, c["bombs"], failures, stop)),
        asyncio.create_task(shm_probes(args, c["shm_probe"], stop)),
        asyncio.create_task(cancels(args, c["cancel"], stop)),
    ]
    if args.grpc_port:
        tasks.append(asyncio.create_task(grpc_cancels(args, c["grpc_cancel"], stop)))
    await asyncio.sleep(args.duration)
    stop.set()
    await asyncio.wait(tasks, timeout=60)
    for name, counts in c.items():
        print(f"attack {name}: " + " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    for f in failures[:20]:
        print(f"attack failure: {f}")
    print(f"attack failures: {len(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
