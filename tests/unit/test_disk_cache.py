"""The disk cache of compiled code: a second process loads what the first
compiled; corrupt entries are recompiled; MLFUSE_CACHE=0 turns it off; the
cache stays within its bound."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from mlfuse.runtime import disk_cache
from mlfuse.targets.cpu import elf_loader

pytestmark = pytest.mark.cpu  # the CPU target itself (see tests/conftest.py)

PROGRAM = textwrap.dedent(
    """
    import sys
    import numpy as np
    from mlfuse import Tensor
    from mlfuse.targets.cpu.target import CpuTarget

    if sys.argv[1] == "no-compile":  # everything must come from the disk cache
        import mlfuse.driver

        def refuse(*args, **kwargs):
            raise SystemExit("compiled something")
        CpuTarget.compile = refuse
        mlfuse.driver.compile_module = refuse
        mlfuse.driver.run_passes = refuse
    import mlfuse
    x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    y = x.softmax(1) * 2 + x.T.sum(1)
    s = mlfuse.schedule(y)  # what the loaded schedule says it does
    print(len(s), sorted(s.buffers), [i.writes for i in s])
    print(repr(y.numpy().round(5).tolist()))
    if sys.argv[1] == "no-compile":
        # linked without LLVM where the ELF loader serves (x86-64 Linux)
        print("llvmlite.binding" in sys.modules, file=sys.stderr)
    """
)


def run(tmp_path, mode: str, **env) -> subprocess.CompletedProcess:
    e = dict(os.environ, MLFUSE_CACHE_DIR=str(tmp_path), **env)
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, mode], capture_output=True, text=True, env=e, timeout=300
    )


def entries(tmp_path) -> list[str]:
    return sorted(
        os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs if not f.startswith(".")
    )


def test_a_second_process_loads_the_compiled_schedule(tmp_path):
    first = run(tmp_path, "compile")
    assert first.returncode == 0, first.stderr
    assert entries(tmp_path)
    second = run(tmp_path, "no-compile")
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert second.stderr.split()[-1] == str(not elf_loader.supported_host())


def test_corrupt_entries_are_recompiled(tmp_path):
    first = run(tmp_path, "compile")
    for p in entries(tmp_path):
        with open(p, "r+b") as f:
            f.seek(-8, os.SEEK_END)
            f.write(b"garbage!")
    assert run(tmp_path, "no-compile").returncode != 0  # nothing intact to load
    again = run(tmp_path, "compile")
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert run(tmp_path, "no-compile").stdout == first.stdout  # rewritten


def test_off_switch_and_bad_values(tmp_path):
    off = run(tmp_path, "compile", MLFUSE_CACHE="0")
    assert off.returncode == 0, off.stderr
    assert not entries(tmp_path)
    bad = run(tmp_path, "compile", MLFUSE_CACHE="yes")
    assert "MLFUSE_CACHE must be 0 (off) or 1 (on), got 'yes'" in bad.stderr


def test_entries_check_their_key_and_payload(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFUSE_CACHE_DIR", str(tmp_path))
    disk_cache.put("kind", "a key", b"payload")
    assert disk_cache.get("kind", "a key") == b"payload"
    assert disk_cache.get("kind", "another key") is None
    (path,) = entries(tmp_path)
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-1])  # torn
    assert disk_cache.get("kind", "a key") is None
    assert not entries(tmp_path)  # dropped, not trusted


def test_the_cache_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFUSE_CACHE_DIR", str(tmp_path))
    for i in range(10):
        disk_cache.put("kind", f"key {i}", bytes(1000))
        os.utime(entries(tmp_path)[0])  # an old entry is used again
    disk_cache.evict(5000)
    left = entries(tmp_path)
    assert 3 <= len(left) <= 4
    total = sum(os.path.getsize(p) for p in left)
    assert total <= 5000


@pytest.mark.parametrize("value", ["-1", "lots"])
def test_bad_bound(monkeypatch, value):
    monkeypatch.setenv("MLFUSE_CACHE_MAX_MB", value)
    with pytest.raises(ValueError, match="MLFUSE_CACHE_MAX_MB must be a non-negative integer"):
        disk_cache.max_bytes()
