"""The tools of the deployment tests (test/deploy) and the metric names their queries use.

helm, kubeconform and the schemas come from scripts/deploy_tools_env.sh (.tools/deploy),
promtool from Debian's prometheus package (.tools/prometheus); scripts/setup.sh installs both.
Missing on CI (CI set, as .ci/run has it) they fail the test; run by hand without setup they
skip it, saying what to run."""

import json
import os
import re
import subprocess

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, ".tools")
HELM = os.path.join(TOOLS, "deploy", "bin", "helm")
KUBECONFORM = os.path.join(TOOLS, "deploy", "bin", "kubeconform")
PROMTOOL = os.path.join(TOOLS, "prometheus", "usr", "bin", "promtool")
SCHEMAS = os.path.join(TOOLS, "deploy", "schemas")
CHART = os.path.join(ROOT, "deploy", "helm", "reactant-server")
KSERVE = os.path.join(ROOT, "deploy", "kserve")
ALERTS = os.path.join(ROOT, "deploy", "monitoring", "alerts.yaml")
DASHBOARD = os.path.join(ROOT, "deploy", "monitoring", "grafana-dashboard.json")


def require(*paths):
    """Fails (CI) or skips (by hand) the test unless every path exists."""
    missing = [p for p in paths if not os.path.exists(p)]
    if not missing:
        return
    message = (f"missing {', '.join(os.path.relpath(p, ROOT) for p in missing)}: "
               "scripts/setup.sh installs them")
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def run(args, **kwargs):
    """Runs a command; returns the CompletedProcess (text, both streams captured)."""
    return subprocess.run(args, capture_output=True, text=True, stdin=subprocess.DEVNULL, **kwargs)


def kubernetes_version():
    """The Kubernetes release whose schemas setup unpacked (schemas/kubernetes/VERSION)."""
    with open(os.path.join(SCHEMAS, "kubernetes", "VERSION")) as f:
        return f.read().strip()


def kubeconform_args():
    """kubeconform -strict over the offline schemas: Kubernetes' and the converted CRDs'."""
    k8s = os.path.join(SCHEMAS, "kubernetes")
    crds = os.path.join(SCHEMAS, "crds")
    return [KUBECONFORM, "-strict", "-summary", "-output", "json",
            "-kubernetes-version", kubernetes_version(),
            "-schema-location",
            k8s + "/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/"
            "{{ .ResourceKind }}{{ .KindSuffix }}.json",
            "-schema-location",
            crds + "/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"]


# PromQL words that are not series: keywords and operators spelled as words.
_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
             "unless", "offset", "atan2", "inf", "nan"}
# Series Prometheus writes itself for every target, not the server.
SCRAPE_SERIES = {"up"}


def metric_names(expr):
    """The series names a PromQL expression reads (a set), Grafana variables allowed.

    Strings, label matchers ({...}), ranges ([5m]), grouping clauses (by (...), on (...)...)
    and Grafana variables ($model, ${x}) are removed first; what remains that is a name and
    not a function call, an aggregation or a keyword is a series name."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\$\{[^}]*\}|\$\w+", " ", e)
    names = set()
    for m in re.finditer(r"(?<![\w.])[A-Za-z_:][A-Za-z0-9_:]*", e):
        if re.match(r"\s*\(", e[m.end():]) or m.group(0).lower() in _KEYWORDS:
            continue
        names.add(m.group(0))
    return names


def dashboard_exprs(dashboard):
    """Every PromQL expression of a Grafana dashboard (dict): its panels' targets (rows'
    nested panels included) and its query variables (label_values(SERIES, label) reads SERIES;
    query_result(EXPR) reads EXPR)."""
    exprs = []

    def walk(panels):
        for p in panels:
            exprs.extend(t["expr"] for t in p.get("targets", []) if t.get("expr"))
            walk(p.get("panels", []))

    walk(dashboard.get("panels", []))
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = re.fullmatch(r"\s*label_values\((.*),\s*\w+\s*\)\s*", q)
        if m:
            exprs.append(m.group(1))
        elif (m := re.fullmatch(r"\s*query_result\((.*)\)\s*", q)):
            exprs.append(m.group(1))
    return exprs


def alert_exprs(path=ALERTS):
    """The expr of every rule in a Prometheus rules file."""
    with open(path) as f:
        rules = yaml.safe_load(f)
    return [r["expr"] for g in rules["groups"] for r in g["rules"]]


def load_dashboard(path=DASHBOARD):
    with open(path) as f:
        return json.load(f)


def exposition_families(text):
    """{family name: type} from the `# TYPE` lines of a Prometheus text exposition."""
    families = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[:2] == ["#", "TYPE"]:
            families[parts[2]] = parts[3]
    return families


def series_exported(name, families):
    """Whether a query's series name is one the exposition's families give: a counter's,
    gauge's or untyped family's own name; a summary's name, _sum or _count; a histogram's
    _bucket, _sum or _count (a histogram's bare name is no series)."""
    kind = families.get(name)
    if kind in ("counter", "gauge", "untyped", "summary"):
        return True
    for suffix, kinds in (("_bucket", ("histogram",)), ("_sum", ("histogram", "summary")),
                          ("_count", ("histogram", "summary"))):
        if name.endswith(suffix) and families.get(name[:-len(suffix)]) in kinds:
            return True
    return False
