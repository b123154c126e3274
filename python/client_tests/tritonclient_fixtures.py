"""pytest fixtures of the tritonclient tests: `protocol` (each of PROTOCOLS) and `client` (a
tritonclient of that protocol connected to the `worker`, closed after the test). Imported by the
test files that use tritonclient; test_kserve.py must not import it (the two clients' protobuf
modules cannot share one process)."""

import pytest

from clients import PROTOCOLS, connect


@pytest.fixture(params=PROTOCOLS)
def protocol(request):
    return request.param


@pytest.fixture
def client(protocol, worker):
    c = connect(protocol, worker)
    yield c
    c.close()
