"""Triton's perf_analyzer (the perf-analyzer wheel, .tools/perf_analyzer) against digits_cnn,
REQUESTS requests at concurrency 2 (a few seconds) over gRPC and HTTP, with tensors inline and
in system shared memory: it must finish with status 0, print no error, report exactly those
requests, and the worker's statistics must count exactly that many successes and no failure.
perf_analyzer reads the model's configuration first (ModelConfig / GET
/v2/models/{m}/config, docs/protocols.md). A fixed request count, not time windows: its
stability rule (throughput within a ratio over three windows) measures the machine's load,
not the server's answers."""

import csv
import re
import subprocess

import pytest
import tritonclient.http as httpclient

from conftest import start_worker

REQUESTS = 3000


@pytest.fixture(scope="module")
def worker(server_binary, tmp_path_factory):
    # perf_analyzer names its shared memory objects "/<tensor>..." (no prefix of its own).
    with start_worker(server_binary, tmp_path_factory,
                      endpoints={"shared_memory": "system", "shared_memory_prefix": "/"}) as s:
        yield s


def success_and_fail(worker):
    client = httpclient.InferenceServerClient(worker.http_url)
    try:
        (m,) = client.get_inference_statistics("digits_cnn")["model_stats"]
        stats = m["inference_stats"]
        return stats["success"]["count"], stats["fail"]["count"]
    finally:
        client.close()


@pytest.mark.parametrize("protocol", ["grpc", "http"])
@pytest.mark.parametrize("memory", ["none", "system"])
def test_perf_analyzer_runs_clean(worker, perf_analyzer_binary, tmp_path, protocol, memory):
    url = worker.grpc_url if protocol == "grpc" else worker.http_url
    report = tmp_path / "report.csv"
    before = success_and_fail(worker)
    run = subprocess.run(
        [perf_analyzer_binary, "-m", "digits_cnn", "-u", url, "-i", protocol,
         "--shared-memory", memory, "--concurrency-range", "2",
         "--request-count", str(REQUESTS), "-f", str(report)],
        capture_output=True, text=True, timeout=240)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "error" not in out.lower() and "unable" not in out.lower(), out
    assert re.search(rf"Request count: {REQUESTS}\n", out), out
    with open(report) as f:
        (row,) = list(csv.DictReader(f))
    assert row["Concurrency"] == "2"
    assert float(row["Inferences/Second"]) > 0, row
    success, fail = success_and_fail(worker)
    assert (success - before[0], fail - before[1]) == (REQUESTS, 0), out
