#!/usr/bin/env python3
"""soak_attackers.py: the hostile traffic of scripts/soak_hostile.sh against one worker's HTTP port.

Runs for --duration seconds, then prints one line per attack with its counts:
  slowloris   --slowloris connections, each sending a request head one byte every 4 s and
              opening a new connection when the server closes one (its head deadline)
  framing     RFC 9112 smuggling cases in turn (two Content-Length values, chunked with
              identity, space before a colon, missing/duplicate Host, obsolete folding,
              Content-Length with chunked); each must get 400 and a closed connection
  json_bomb   a JSON infer body of --json-bomb-mib MiB (nested arrays, wrong shape): must
              get an answer (400 or 413), never a dropped connection
  gzip_bomb   a gzip body of a few hundred KiB that inflates to 600 MiB: must get 413
  shm_probe   shared-memory registrations of /dev/shm keys that are not the client's
              (any answer is fine; the server must stay up)
  cancel      infer requests whose connection is reset right after sending them
Exit status 1 when a framing case or a bomb got an unexpected answer.
"""
import argparse
import asyncio
import gzip
import json
import socket
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
        case = FRAMING[i % len(FRAMING)].replace(b"{m}", args.model.encode())
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
                failures.append(f"framing case {i % len(FRAMING)}: status {status} closed {closed}")
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
            counts.add("unexpected")
            failures.append(f"framing case {i % len(FRAMING)}: {e!r}")
        await asyncio.sleep(0.2)


async def post_body(args, body, headers):
    reader, writer = await asyncio.open_connection(args.host, args.port)
    head = f"POST /v2/models/{args.model}/infer HTTP/1.1\r\nHost: x\r\n{headers}Content-Length: {len(body)}\r\n\r\n"
    writer.write(head.encode())
    writer.write(body)
    await writer.drain()
    status, _ = await read_reply(reader, timeout=120)
    writer.close()
    return status


async def bombs(args, counts, failures, stop):
    n = args.json_bomb_mib << 20
    # Nested arrays of small numbers: a DOM parser would need about 20x the text.
    row = b"[" + b",".join([b"1"] * 1000) + b"]"
    json_bomb = b'{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":['
    parts, size = [], len(json_bomb)
    while size < n:
        parts.append(row)
        size += len(row) + 1
    json_bomb += b",".join(parts) + b"]}]}"
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + 15)
    zeros = bytes(1 << 20)
    gz = b"".join(comp.compress(zeros) for _ in range(600)) + comp.flush()
    while not stop.is_set():
        try:
            s = await post_body(args, json_bomb, "Content-Type: application/json\r\n")
            counts.add(f"json_bomb_{s}")
            if s not in (400, 413):
                failures.append(f"json bomb: status {s}")
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
            counts.add("json_bomb_error")
            failures.append(f"json bomb: {e!r}")
        try:
            s = await post_body(args, gz, "Content-Encoding: gzip\r\n")
            counts.add(f"gzip_bomb_{s}")
            if s != 413:
                failures.append(f"gzip bomb: status {s}")
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
            counts.add("gzip_bomb_error")
            failures.append(f"gzip bomb: {e!r}")
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


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--model", default="iris_mlp")
    p.add_argument("--duration", type=float, default=300)
    p.add_argument("--slowloris", type=int, default=1000)
    p.add_argument("--json-bomb-mib", type=int, default=32)
    args = p.parse_args()
    stop = asyncio.Event()
    failures = []
    c = {k: Counts() for k in ["slowloris", "framing", "bombs", "shm_probe", "cancel"]}
    tasks = [
        asyncio.create_task(slowloris(args, c["slowloris"], stop)),
        asyncio.create_task(framing(args, c["framing"], failures, stop)),
        asyncio.create_task(bombs(args, c["bombs"], failures, stop)),
        asyncio.create_task(shm_probes(args, c["shm_probe"], stop)),
        asyncio.create_task(cancels(args, c["cancel"], stop)),
    ]
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
