"""Test-session settings: the verifier runs after every pass (a broken rewrite
fails at the pass that made it), and compiled code is cached on disk in a
folder of this session's own, so tests start cold and never touch the user's
cache."""

import os
import tempfile


def pytest_configure(config):
    os.environ["MLFUSE_VERIFY"] = "2"
    os.environ["MLFUSE_CACHE_DIR"] = tempfile.mkdtemp(prefix="mlfuse-test-cache-")
