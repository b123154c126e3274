"""The Helm chart, the KServe manifests and the alerting rules, checked offline: helm lint and
helm template (CPU values, GPU values), kubeconform -strict over every rendered manifest and
deploy/kserve/*.yaml against the Kubernetes and CRD schemas of .tools/deploy, the chart's
digest-only rule, the rendered node file against the server's own loader, and promtool on the
alerting rules and the dashboard's queries (docs/deploy.md "Checking the manifests")."""

import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest
import yaml

from deploy_tools import (ALERTS, CHART, HELM, KSERVE, KUBECONFORM, PROMTOOL, ROOT, SCHEMAS,
                          dashboard_exprs, kubeconform_args, load_dashboard, require, run)

DIGEST = "sha256:" + "ab" * 32
VALUES = os.path.join(CHART, "values.yaml")
VALUES_GPU = os.path.join(CHART, "values-gpu.yaml")
PROFILES = {
    "cpu": ["-f", VALUES],
    "gpu": ["-f", VALUES, "-f", VALUES_GPU],
    "gpu-servicemonitor": ["-f", VALUES, "-f", VALUES_GPU, "--set", "serviceMonitor.enabled=true"],
}


@pytest.fixture(scope="module", autouse=True)
def tools():
    require(HELM, KUBECONFORM, PROMTOOL, os.path.join(SCHEMAS, ".stamp"))


def template(*args):
    return run([HELM, "template", "rel", CHART, "--namespace", "ml", *args])


def rendered(profile, *extra):
    """The objects helm template renders for a profile of values, with image.digest set."""
    r = template(*PROFILES[profile], "--set", f"image.digest={DIGEST}", *extra)
    assert r.returncode == 0, r.stderr
    return r.stdout, [d for d in yaml.safe_load_all(r.stdout) if d]


def kinds(objects):
    return sorted(f"{o['kind']}/{o['metadata']['name']}" for o in objects)


def container(objects):
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    (c,) = deployment["spec"]["template"]["spec"]["containers"]
    return deployment, c


@pytest.mark.parametrize("profile", ["cpu", "gpu"])
def test_helm_lint(profile):
    r = run([HELM, "lint", "--strict", CHART, *PROFILES[profile],
             "--set", f"image.digest={DIGEST}"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in r.stdout


@pytest.mark.parametrize("profile", PROFILES)
def test_rendered_manifests_validate(profile, tmp_path):
    text, objects = rendered(profile)
    expected = ["ConfigMap/rel-reactant-server-node", "Deployment/rel-reactant-server",
                "PersistentVolumeClaim/rel-reactant-server-cache-autotune",
                "PersistentVolumeClaim/rel-reactant-server-cache-executable",
                "PodDisruptionBudget/rel-reactant-server", "Service/rel-reactant-server"]
    if profile == "gpu-servicemonitor":
        expected = sorted(expected + ["ServiceMonitor/rel-reactant-server"])
    assert kinds(objects) == expected
    manifest = tmp_path / "rendered.yaml"
    manifest.write_text(text)
    r = run(kubeconform_args() + [str(manifest)])
    assert r.returncode == 0, r.stdout + r.stderr
    summary = json.loads(r.stdout)["summary"]
    assert summary == {"valid": len(expected), "invalid": 0, "errors": 0, "skipped": 0}


def test_kserve_manifests_validate():
    files = sorted(glob.glob(os.path.join(KSERVE, "*.yaml")))
    assert [os.path.basename(f) for f in files] == ["cluster-serving-runtime.yaml",
                                                    "inference-service.yaml"]
    r = run(kubeconform_args() + files)
    assert r.returncode == 0, r.stdout + r.stderr
    # The runtime file: its node-file ConfigMap and the ClusterServingRuntime.
    assert json.loads(r.stdout)["summary"] == {"valid": 3, "invalid": 0, "errors": 0,
                                               "skipped": 0}


def test_kubeconform_refuses_an_unknown_field(tmp_path):
    """-strict with these schemas refuses a misspelt field, in a core kind and in a CRD's."""
    _, objects = rendered("cpu")
    deployment, c = container(objects)
    c["readinesProbe"] = c.pop("readinessProbe")
    with open(os.path.join(KSERVE, "inference-service.yaml")) as f:
        isvc = yaml.safe_load(f)
    isvc["spec"]["predictor"]["model"]["storageUrl"] = "pvc://x"
    manifest = tmp_path / "bad.yaml"
    manifest.write_text(yaml.safe_dump_all([deployment, isvc]))
    r = run(kubeconform_args() + [str(manifest)])
    assert r.returncode == 1
    out = json.loads(r.stdout)
    assert out["summary"] == {"valid": 0, "invalid": 2, "errors": 0, "skipped": 0}
    messages = " ".join(res["msg"] for res in out["resources"])
    assert "readinesProbe" in messages and "storageUrl" in messages


def test_image_by_digest_and_its_identity():
    _, objects = rendered("cpu")
    _, c = container(objects)
    assert c["image"] == f"ghcr.io/reactant-server/reactant-server@{DIGEST}"
    assert c["env"] == [{"name": "REACTANT_GATEWAY_LISTEN_HTTP", "value": "0.0.0.0:8000"},
                        {"name": "REACTANT_GATEWAY_LISTEN_GRPC", "value": "0.0.0.0:8001"},
                        {"name": "REACTANT_GATEWAY_LISTEN_METRICS", "value": "0.0.0.0:8002"},
                        {"name": "REACTANT_IMAGE_DIGEST", "value": DIGEST}]
    _, objects = rendered("gpu")
    _, c = container(objects)
    assert c["image"] == f"ghcr.io/reactant-server/reactant-server-gpu@{DIGEST}"
    assert c["resources"]["limits"]["nvidia.com/gpu"] == 1


def test_a_tag_without_digest_is_refused_unless_allowed():
    r = template("-f", VALUES, "--set", "image.tag=0.1.0")
    assert r.returncode == 1
    assert ("image.digest is empty: the chart deploys images by digest only (image.digest: "
            "sha256:...); set image.allowTag: true with image.tag to use a tag") in r.stderr
    r = template("-f", VALUES, "--set", "image.digest=0.1.0")
    assert r.returncode == 1
    assert ('image.digest "0.1.0" is not a digest: expected sha256: followed by 64 lower-case '
            "hex digits") in r.stderr
    r = template("-f", VALUES, "--set", "image.tag=0.1.0", "--set", "image.allowTag=true")
    assert r.returncode == 0, r.stderr
    _, c = container([d for d in yaml.safe_load_all(r.stdout) if d])
    assert c["image"] == "ghcr.io/reactant-server/reactant-server:0.1.0"
    assert "REACTANT_IMAGE_DIGEST" not in {e["name"] for e in c["env"]}  # no digest to report


def node_files(objects):
    return {o["metadata"]["name"]: yaml.safe_load(o["data"]["node.yaml"])
            for o in objects if o["kind"] == "ConfigMap"}


def test_caches_outside_the_model_volume():
    _, objects = rendered("gpu")
    node = node_files(objects)["rel-reactant-server-node"]
    assert node == {
        "model_repo": "/models", "base_port": 9001, "metrics_base_port": 9101, "gpus": 1,
        "global": {"cache_dir": "/var/cache/reactant-server/executables",
                   "endpoints": {"host": "0.0.0.0"},
                   "runtime": {"backend": "cuda", "allow_cpu_fallback": False,
                               "autotune_cache_dir": "/var/cache/reactant-server/autotune"}}}
    _, c = container(objects)
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    assert mounts["models"] == {"name": "models", "mountPath": "/models", "readOnly": True}
    assert mounts["cache-executable"]["mountPath"] == "/var/cache/reactant-server/executables"
    assert mounts["cache-autotune"]["mountPath"] == "/var/cache/reactant-server/autotune"
    with open(os.path.join(KSERVE, "cluster-serving-runtime.yaml")) as f:
        kserve = node_files([d for d in yaml.safe_load_all(f) if d])["reactant-server-kserve-node"]
    assert kserve["model_repo"] == "/mnt/models"
    assert kserve["global"]["cache_dir"] == "/var/cache/reactant-server/executables"
    assert (kserve["global"]["runtime"]["autotune_cache_dir"]
            == "/var/cache/reactant-server/autotune")


@pytest.fixture(scope="module")
def server_binary():
    binary = os.environ.get("REACTANT_SERVER")
    if not binary:
        pytest.fail("REACTANT_SERVER must name the built reactant-server (ctest sets it)")
    return binary


def pod(profile, *extra):
    """(node file text, container spec) of the chart rendered for a profile, or of the KServe
    runtime ("kserve")."""
    if profile == "kserve":
        with open(os.path.join(KSERVE, "cluster-serving-runtime.yaml")) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        (text,) = [d["data"]["node.yaml"] for d in docs if d["kind"] == "ConfigMap"]
        (runtime,) = [d for d in docs if d["kind"] == "ClusterServingRuntime"]
        (c,) = runtime["spec"]["containers"]
        return text, c
    _, objects = rendered(profile, *extra)
    (text,) = [o["data"]["node.yaml"] for o in objects if o["kind"] == "ConfigMap"]
    return text, container(objects)[1]


@pytest.mark.parametrize("profile", ["cpu", "gpu", "kserve"])
def test_node_file_loads(profile, tmp_path, server_binary):
    """The server's own loader accepts the node file, its model_repo pointed at the example
    repository (the loader wants the directory to exist); `serve --worker` names a worker the
    file lacks, so it stops after loading the file, before serving anything."""
    text, _ = pod(profile)
    values = yaml.safe_load(text)
    assert values["model_repo"] == ("/mnt/models" if profile == "kserve" else "/models")
    values["model_repo"] = os.path.join(ROOT, "examples", "model_repo")
    node = tmp_path / "node.yaml"
    node.write_text(yaml.safe_dump(values))
    r = run([server_binary, "serve", "--config", str(node), "--worker", "no-such-worker"])
    assert r.returncode == 1
    log = r.stdout + r.stderr
    assert re.search(r"configuration error: .*no-such-worker", log), log


def test_alerting_rules():
    r = run([PROMTOOL, "check", "rules", ALERTS])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS: 8 rules found" in r.stdout


def test_dashboard_queries_parse(tmp_path):
    """Every dashboard query is valid PromQL (as a recording rule, with Grafana's variables
    given values)."""
    exprs = dashboard_exprs(load_dashboard())
    assert len(exprs) == 17
    rules = [{"record": f"dashboard:query{i}",
              "expr": e.replace("$__rate_interval", "5m").replace("$model", ".*")}
             for i, e in enumerate(exprs)]
    path = tmp_path / "dashboard_rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    r = run([PROMTOOL, "check", "rules", str(path)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in r.stdout


# docs/deploy.md "Monitoring": the alerting rules as a Prometheus Operator PrometheusRule.
PROMETHEUS_RULE_COMMAND = (
    "{ printf 'apiVersion: monitoring.coreos.com/v1\\nkind: PrometheusRule\\nmetadata:\\n  "
    "name: reactant-server\\nspec:\\n'; grep -v '^#' deploy/monitoring/alerts.yaml | "
    "sed 's/^/  /'; } > prometheus-rule.yaml")


def test_the_documented_prometheus_rule_validates(tmp_path):
    with open(os.path.join(ROOT, "docs", "deploy.md")) as f:
        assert PROMETHEUS_RULE_COMMAND in f.read()
    command = PROMETHEUS_RULE_COMMAND.replace("deploy/monitoring/alerts.yaml", ALERTS)
    r = run(["bash", "-c", command], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rule = yaml.safe_load((tmp_path / "prometheus-rule.yaml").read_text())
    with open(ALERTS) as f:
        assert rule["spec"] == yaml.safe_load(f)
    r = run(kubeconform_args() + [str(tmp_path / "prometheus-rule.yaml")])
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["summary"] == {"valid": 1, "invalid": 0, "errors": 0,
                                               "skipped": 0}


def test_lock_pins_every_input():
    """Each line of deploy/lock/tools.lock names an exact version and a hash."""
    with open(os.path.join(ROOT, "deploy", "lock", "tools.lock")) as f:
        lines = [l.split() for l in f if l.strip() and not l.startswith("#")]
    assert [l[0] for l in lines] == ["go-install", "go-install", "go-crds", "go-crds", "wheel"]
    for kind, _, version, digest, _ in lines:
        assert re.fullmatch(r"v?\d+\.\d+\.\d+", version)
        pattern = r"sha256:[0-9a-f]{64}" if kind == "wheel" else r"h1:[A-Za-z0-9+/]{43}="
        assert re.fullmatch(pattern, digest)


def free_ports(n):
    """n distinct loopback ports that were free a moment ago."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def http_status(port, path, body=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except OSError:
        return None, b""


@pytest.mark.parametrize("profile", ["cpu", "kserve"])
def test_the_container_serves_as_rendered(profile, tmp_path, server_binary):
    """The container as rendered (its args, environment and node file) run here: the startup,
    liveness and readiness probes answer 200 where they point, a digit is classified on the
    HTTP port, and SIGTERM drains it. The ports are moved to free loopback ports, the model
    volume to a copy of the example repository and the cache volumes to temporary folders."""
    text, c = pod(profile)
    named = {p["name"]: p["containerPort"] for p in c["ports"]}
    listen = {e["name"]: e["value"] for e in c["env"]
              if e["name"].startswith("REACTANT_GATEWAY_LISTEN_")}
    public = sorted({int(v.rsplit(":", 1)[1]) for v in listen.values()})
    node = yaml.safe_load(text)
    repo = tmp_path / "models"
    shutil.copytree(os.path.join(ROOT, "examples", "model_repo"), repo)
    node["model_repo"] = str(repo)
    node["global"]["endpoints"]["host"] = "127.0.0.1"
    node["global"]["cache_dir"] = str(tmp_path / "executables")
    node["global"]["runtime"]["autotune_cache_dir"] = str(tmp_path / "autotune")
    path = tmp_path / "node.yaml"
    path.write_text(yaml.safe_dump(node))
    assert c["args"] == ["node", "/etc/reactantserver/node.yaml"]

    def probe_port(probe, moved):
        port = probe["httpGet"]["port"]
        return moved[named[port] if isinstance(port, str) else port]

    def start(moved):
        """The node on the ports `moved` gives; None when it exits before its startup probe
        answers 200 (a port taken meanwhile by another process)."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("INFERENCE_SERVER_", "REACTANT_"))}
        for e in c["env"]:
            value = e["value"]
            if e["name"] in listen:
                value = f"127.0.0.1:{moved[int(value.rsplit(':', 1)[1])]}"
            env[e["name"]] = value
        env["REACTANT_CPU_WORKERS"] = "1"
        with open(tmp_path / "node.log", "w") as log:
            proc = subprocess.Popen([server_binary, "node", str(path)], env=env, stdout=log,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        startup = c["startupProbe"]
        deadline = time.monotonic() + 120
        while http_status(probe_port(startup, moved), startup["httpGet"]["path"])[0] != 200:
            if proc.poll() is not None:
                return None
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                pytest.fail("no 200 from the startup probe in 120 s:\n"
                            + (tmp_path / "node.log").read_text())
            time.sleep(0.1)
        return proc

    for _ in range(3):
        moved = dict(zip(public, free_ports(len(public))))
        proc = start(moved)
        if proc:
            break
    else:
        pytest.fail("the node exited before it was ready:\n" + (tmp_path / "node.log").read_text())
    http = moved[named.get("http", named.get("http1"))]
    try:
        for probe in ("livenessProbe", "readinessProbe"):
            p = c[probe]
            assert http_status(probe_port(p, moved), p["httpGet"]["path"])[0] == 200, probe
        with open(os.path.join(ROOT, "examples", "requests", "digit_0.json"), "rb") as f:
            status, body = http_status(http, "/v2/models/digits_cnn/infer", f.read())
        assert status == 200, body
        outputs = {o["name"]: o for o in json.loads(body)["outputs"]}
        probs = outputs["probs"]["data"]
        assert probs.index(max(probs)) == 5  # digit_0.json is a '5' (docs/getting-started.md)
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=60)
    assert rc == 0, (tmp_path / "node.log").read_text()
