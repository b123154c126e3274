"""`reactant-server node`: CPU workers and the gateway in front of them, on free loopback ports
(docs/node.md), as a context manager for the client tests that talk to a gateway."""

import json
import os
import re
import socket
import subprocess
import tempfile
import time
import urllib.request

from reactant_export._server import Server, _merged, free_port


def _free_run(count):
    """The first of `count` consecutive loopback ports that are free now, or None."""
    base = free_port()
    sockets = []
    try:
        for port in range(base, base + count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(s)
            s.bind(("127.0.0.1", port))
    except OSError:
        return None
    finally:
        for s in sockets:
            s.close()
    return base


class Node(Server):
    """`reactant-server node` on model_repo with CPU workers named `names` (worker i on
    base_port + i) and the embedded gateway on free ports, round robin; ready once the
    gateway reports every worker ready. `settings`: further keys of the node file's `global`
    section, as reactant_export.Server takes them; grpc_url and http_url are the gateway's."""

    def __init__(self, model_repo, binary=None, log_path=None, names=("w0", "w1"),
                 settings=None, ready_timeout=180.0, attempts=5):
        super().__init__(model_repo, binary=binary, attempts=attempts,
                         ready_timeout=ready_timeout, log_path=log_path, settings=settings)
        self.names = list(names)

    def metrics(self):
        """The gateway's /metrics: its own series and every worker's, labelled worker=<name>."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics",
                                    timeout=10) as r:
            return r.read().decode()

    def served(self, model):
        """{worker name: requests it answered OK for `model`} (worker_requests_total)."""
        out = {name: 0 for name in self.names}
        for line in self.metrics().splitlines():
            if not line.startswith("worker_requests_total{"):
                continue
            labels = dict(re.findall(r'(\w+)="([^"]*)"', line[:line.rindex("}")]))
            if labels.get("model") == model and labels.get("status") == "OK":
                out[labels["worker"]] += int(float(line.rsplit(" ", 1)[1]))
        return out

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="rs_client_node_")
        if self.log_path is None:
            self.log_path = os.path.join(self.dir, "node.log")
        for _ in range(self.attempts):
            base, metrics_base = _free_run(len(self.names)), _free_run(len(self.names))
            self.grpc_port, self.http_port, self.metrics_port = free_port(), free_port(), free_port()
            ports = {self.grpc_port, self.http_port, self.metrics_port}
            if base is None or metrics_base is None or len(ports) != 3:
                continue
            worker = _merged({"endpoints": {"host": "127.0.0.1"},
                              "runtime": {"executable_cache": False}}, self.settings)
            node = os.path.join(self.dir, "node.yaml")
            with open(node, "w") as f:  # JSON is YAML's flow style
                f.write(f"model_repo: {json.dumps(self.model_repo)}\n"
                        f"base_port: {base}\nmetrics_base_port: {metrics_base}\n"
                        f"global: {json.dumps(worker)}\n"
                        f"workers: {json.dumps([{'name': n} for n in self.names])}\n")
            gateway = os.path.join(self.dir, "gateway.yml")
            with open(gateway, "w") as f:
                f.write("scheduling: {mode: round_robin}\n")
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("REACTANT_", "INFERENCE_SERVER_"))}
            env.update({"REACTANT_GATEWAY_LISTEN_GRPC": self.grpc_url,
                        "REACTANT_GATEWAY_LISTEN_HTTP": self.http_url,
                        "REACTANT_GATEWAY_LISTEN_METRICS": f"127.0.0.1:{self.metrics_port}",
                        "REACTANT_GATEWAY_HEALTH_INTERVAL_SECONDS": "0.2",
                        "REACTANT_GATEWAY_FILE": gateway})
            log = open(self.log_path, "a")
            self.proc = subprocess.Popen([self.binary, "node", node, "--log-format", "text"],
                                         stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env)
            log.close()
            if self._wait_ready():
                return self
            self.stop()
        raise RuntimeError(f"reactant-server node did not become ready:\n{self.log()}")

    def _all_ready(self):
        try:
            text = self.metrics()
        except OSError:
            return False
        return all(f'gateway_worker_ready{{worker="{n}"}} 1' in text for n in self.names)

    def _wait_ready(self):
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            if self._all_ready():
                return True
            time.sleep(0.2)
        return False
