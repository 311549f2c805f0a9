"""Test-session settings: the verifier runs after every pass (a broken rewrite
fails at the pass that made it), and compiled code is cached on disk in a
folder of this session's own, so tests start cold and never touch the user's
cache.

The suite runs on whatever device ``MLFUSE_DEVICE`` names (``MLFUSE_DEVICE=cuda
pytest tests/unit`` runs the numerics on a GPU). Tests about the CPU target
itself (its object code, its plans, the default device) carry the ``cpu``
marker: they run with the CPU as the default device, in their subprocesses too.
"""

import os
import tempfile

import pytest


def pytest_configure(config):
    os.environ["MLFUSE_VERIFY"] = "2"
    os.environ["MLFUSE_CACHE_DIR"] = tempfile.mkdtemp(prefix="mlfuse-test-cache-")
    config.addinivalue_line(
        "markers", "cpu: the test is about the CPU target; it runs with cpu as the default device"
    )


@pytest.fixture(autouse=True)
def _cpu_default(request, monkeypatch):
    if request.node.get_closest_marker("cpu") is None:
        yield
        return
    from mlfuse.targets import set_default_device

    monkeypatch.delenv("MLFUSE_DEVICE", raising=False)
    set_default_device(None)  # MLFUSE_DEVICE unset: cpu
    yield
    set_default_device(None)
