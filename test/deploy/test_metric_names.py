"""Every series the Grafana dashboard and the alerting rules query is one the server exports:
a real `reactant-server serve` on the example repository (plus a bundle whose weights are cut
short, so that the load-failure series exists) answers one request, its /metrics is scraped,
and each name parsed from the queries must be a family there (a histogram through its
_bucket, _sum or _count). A panel or an alert left naming a series the server no longer has
fails here."""

import importlib.util
import json
import os
import shutil
import urllib.request

import pytest

from deploy_tools import (ROOT, SCRAPE_SERIES, alert_exprs, dashboard_exprs, exposition_families,
                          load_dashboard, metric_names, series_exported)


def _server_module():
    """reactant_export's Server (python/reactant_export/_server.py), loaded by itself: the
    package's __init__ imports JAX, which this test does not need."""
    path = os.path.join(ROOT, "python", "reactant_export", "_server.py")
    spec = importlib.util.spec_from_file_location("reactant_export_server", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_metric_names_parses_queries():
    assert metric_names('sum by (model, le) (rate(worker_request_latency_seconds_bucket'
                        '{model=~"$model", status!="a{b}"}[$__rate_interval]))') == {
                            "worker_request_latency_seconds_bucket"}
    assert metric_names("increase(a_total[1h]) > 0 and (time() - process_start_time_seconds) "
                        "> 3.6e3") == {"a_total", "process_start_time_seconds"}
    assert metric_names("sum(x) by (instance) / on (instance) group_left (model) y == bool 1"
                        ) == {"x", "y"}
    assert metric_names('up{job=~".*reactant-server.*"} == 0') == {"up"}


def test_series_exported_strips_suffixes_by_type():
    families = {"h_seconds": "histogram", "s_seconds": "summary", "c_total": "counter",
                "g": "gauge"}
    assert [n for n in ["h_seconds_bucket", "h_seconds_sum", "h_seconds_count", "s_seconds",
                        "s_seconds_sum", "s_seconds_count", "c_total", "g"]
            if not series_exported(n, families)] == []
    assert [n for n in ["h_seconds", "s_seconds_bucket", "c_total_count", "g_sum", "c",
                        "missing_total"] if series_exported(n, families)] == []


@pytest.fixture(scope="module")
def exposition(tmp_path_factory):
    """/metrics of a worker on examples/model_repo and a broken bundle after one digits_cnn
    request."""
    binary = os.environ.get("REACTANT_SERVER")
    if not binary:
        pytest.fail("REACTANT_SERVER must name the built reactant-server (ctest sets it)")
    work = tmp_path_factory.mktemp("worker")
    repo = work / "model_repo"
    shutil.copytree(os.path.join(ROOT, "examples", "model_repo"), repo)
    shutil.copytree(repo / "iris_mlp", repo / "broken")
    weights = repo / "broken" / "weights.safetensors"
    weights.write_bytes(weights.read_bytes()[:64])
    with _server_module().Server(str(repo), binary=binary,
                                 log_path=str(work / "server.log")) as server:
        with open(os.path.join(ROOT, "examples", "requests", "digit_0.json"), "rb") as f:
            body = f.read()
        request = urllib.request.Request(
            f"http://{server.http_url}/v2/models/digits_cnn/infer", data=body,
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as r:
            assert r.status == 200
            assert json.load(r)["model_name"] == "digits_cnn"
        with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics",
                                    timeout=10) as r:
            return r.read().decode()


def test_dashboard_and_alerts_name_exported_series(exposition):
    families = exposition_families(exposition)
    assert families["worker_request_latency_seconds"] == "histogram"
    assert families["worker_model_load_failures_total"] == "counter"
    exprs = dashboard_exprs(load_dashboard()) + alert_exprs()
    names = set().union(*(metric_names(e) for e in exprs))
    # The promised panels' series, each parsed from the queries.
    assert {"worker_requests_total", "worker_request_latency_seconds_bucket",
            "worker_queue_depth", "worker_batch_size_bucket", "worker_batch_size_sum",
            "worker_executable_cache_misses_total", "worker_model_state"} <= names
    missing = sorted(n for n in names - SCRAPE_SERIES if not series_exported(n, families))
    assert missing == [], f"queried but not exported by the server: {missing}"
