import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # reactant_export from this checkout
sys.path.insert(0, HERE)  # models.py
os.environ.setdefault("JAX_PLATFORMS", "cpu")


@pytest.fixture(scope="session")
def server_binary():
    path = os.environ.get("REACTANT_SERVER")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("REACTANT_SERVER is not set to the built reactant-server "
                    "(ctest sets it; see docs/export-jax.md)")
    return path
