"""docs/openapi.yaml against a live worker with schemathesis: a bounded run (fixed seed, a
few hundred generated requests, examples and fuzzing phases) in which no answer may be a 5xx,
every status code, content type, header and body must be one the document states, a
schema-violating request must be refused, and unsupported methods must get 405 with `Allow`.
`positive_data_acceptance` is left out: a request that matches the schema can still be wrong
for the model (a shape the model does not take) and is rightly refused with 400."""

import os
import re
import subprocess
import sys
import urllib.request

from conftest import ROOT

SPEC = os.path.join(ROOT, "docs", "openapi.yaml")
MAX_EXAMPLES = 10  # per operation
SEED = 20


def test_the_rest_api_matches_its_openapi_description(worker):
    schemathesis = os.path.join(os.path.dirname(sys.executable), "schemathesis")
    run = subprocess.run(
        [schemathesis, "run", SPEC, "--url", f"http://{worker.http_url}",
         "--phases", "examples,fuzzing", "-n", str(MAX_EXAMPLES), "--seed", str(SEED),
         "--checks", "all", "--exclude-checks", "positive_data_acceptance",
         "--workers", "1", "--request-timeout", "30", "--no-color"],
        capture_output=True, text=True, timeout=240, cwd=worker.dir)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out + worker.log()
    counted = re.search(r"(\d+) generated, (\d+) passed", out)
    assert counted, out
    generated, passed = int(counted.group(1)), int(counted.group(2))
    assert generated == passed and 100 <= generated <= 400, out
    # The worker is still up and answering after the run.
    with urllib.request.urlopen(f"http://{worker.http_url}/v2/health/live", timeout=10) as r:
        assert r.status == 200
    assert worker.proc.poll() is None
