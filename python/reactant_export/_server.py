"""Starting a reactant-server worker on free loopback ports (tests, verify)."""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request


def free_port():
    """A loopback TCP port that was free a moment ago (bind to port 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_server(binary=None):
    """The reactant-server binary: `binary`, $REACTANT_SERVER, or reactant-server on PATH."""
    path = binary or os.environ.get("REACTANT_SERVER") or shutil.which("reactant-server")
    if not path or not os.access(path, os.X_OK):
        raise FileNotFoundError("reactant-server not found: pass its path or set REACTANT_SERVER")
    return path


def _merged(base, extra):
    """`base` with the keys of `extra` set, nested dicts merged key by key."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


class Server:
    """`reactant-server serve` over model_repo on free ports, as a context manager.

    Ports are chosen by binding port 0; if another process takes one before the server binds
    it, the server fails to start and is started again on new ports (up to `attempts` times).
    `settings` holds further worker keys of the node file's `global` section as nested dicts,
    e.g. {"model_control_mode": "explicit", "endpoints": {"shared_memory": "system"}}
    (docs/configuration.md); the host and ports are this class's.

    `wait`: "ready" waits for the worker's readiness (`/readyz`: at least one model loaded);
    "started" only for the startup loads to finish, whatever their outcome (the HTTP port opens
    after them), so that a bundle that fails to load is reported at once."""

    def __init__(self, model_repo, binary=None, attempts=5, ready_timeout=120.0, log_path=None,
                 settings=None, wait="ready"):
        if wait not in ("ready", "started"):
            raise ValueError(f"wait must be 'ready' or 'started', not {wait!r}")
        self.wait = wait
        self.model_repo = os.path.abspath(model_repo)
        self.settings = settings or {}
        self.binary = find_server(binary)
        self.attempts = attempts
        self.ready_timeout = ready_timeout
        self.log_path = log_path
        self.proc = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        # The node file and (unless log_path points elsewhere) the log: a server that failed
        # to start raises from __enter__ and keeps them for inspection.
        shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def http_url(self):
        return f"127.0.0.1:{self.http_port}"

    @property
    def grpc_url(self):
        return f"127.0.0.1:{self.grpc_port}"

    def log(self):
        try:
            with open(self.log_path) as f:
                return f.read()
        except OSError:
            return ""

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="reactant_export_server_")
        if self.log_path is None:
            self.log_path = os.path.join(self.dir, "server.log")
        for _ in range(self.attempts):
            self.grpc_port, self.http_port, self.metrics_port = free_port(), free_port(), free_port()
            if len({self.grpc_port, self.http_port, self.metrics_port}) != 3:
                continue
            node = os.path.join(self.dir, "node.yaml")
            worker = _merged({"runtime": {"executable_cache": False}}, self.settings)
            worker = _merged(worker, {"endpoints": {"host": "127.0.0.1",
                                                    "http_port": self.http_port}})
            with open(node, "w") as f:  # JSON is YAML's flow style
                f.write(f"model_repo: {json.dumps(self.model_repo)}\n"
                        f"base_port: {self.grpc_port}\n"
                        f"metrics_base_port: {self.metrics_port}\n"
                        f"global: {json.dumps(worker)}\n")
            log = open(self.log_path, "a")
            self.proc = subprocess.Popen([self.binary, "serve", "--config", node],
                                         stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
            log.close()
            state = self._wait_ready()
            if state == "ready":
                return self
            self.stop()
            what = "ready" if self.wait == "ready" else "up (startup loads finished)"
            if state == "timeout":  # running but not ready: new ports would not help
                raise RuntimeError(f"reactant-server was not {what} within "
                                   f"{self.ready_timeout} s:\n{self.log()}")
        raise RuntimeError(f"reactant-server exited before it was {what} "
                           f"({self.attempts} attempts):\n{self.log()}")

    def _wait_ready(self):
        """Returns "ready", "exited" (e.g. a port taken before the server bound it) or
        "timeout"."""
        deadline = time.monotonic() + self.ready_timeout
        url = (f"http://127.0.0.1:{self.metrics_port}/readyz" if self.wait == "ready"
               else f"http://127.0.0.1:{self.http_port}/v2/health/live")
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return "exited"
            try:
                with urllib.request.urlopen(url, timeout=1) as r:
                    if r.status == 200:
                        return "ready"
            except OSError:
                pass
            time.sleep(0.1)
        return "timeout"

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
