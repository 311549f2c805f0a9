"""The CPU's object loader: kernels from the disk cache linked without LLVM
compute what the compiled ones did; objects it cannot link go to MCJIT."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mlfuse.targets.cpu import elf_loader, objects

pytestmark = pytest.mark.cpu  # the CPU target itself (see tests/conftest.py)

PROGRAM = textwrap.dedent(
    """
    import sys
    import numpy as np
    import mlfuse
    import mlfuse.nn.functional as F
    from mlfuse import Tensor

    if sys.argv[1] == "load":
        import mlfuse.driver

        def refuse(*args, **kwargs):
            raise SystemExit("compiled something")
        mlfuse.driver.compile_module = refuse
    rng = np.random.default_rng(0)
    a = Tensor(rng.standard_normal((33, 20)))  # float64: pow calls libm's pow
    b = Tensor(rng.integers(-50, 50, (33, 20)).astype(np.int32))
    c = Tensor(rng.standard_normal((2, 8, 12, 12)).astype(np.float32))
    w = Tensor(rng.standard_normal((8, 8, 3, 3)).astype(np.float32))
    outs = [
        a.abs() ** a,
        (b // 7 + b % 5).float() * 0.5,
        a.float().softmax(1).cumsum(1),
        a.float() @ a.float().T,
        F.max_pool2d(F.conv2d(c, w, padding=1).relu(), 2),
        (a.exp() + 1).log().sin(),
    ]
    mlfuse.realize(*outs)
    for o in outs:
        print(repr(o.numpy().astype(np.float64).round(6).tolist()))
    if sys.argv[1] == "load":
        print("llvmlite.binding" in sys.modules, file=sys.stderr)
    """
)


def run(tmp_path, mode: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, MLFUSE_CACHE_DIR=str(tmp_path))
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, mode], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.mark.skipif(not elf_loader.supported_host(), reason="the ELF loader serves x86-64 Linux")
def test_loaded_kernels_compute_what_compiled_ones_did(tmp_path):
    first = run(tmp_path, "compile")
    assert first.returncode == 0, first.stderr
    second = run(tmp_path, "load")
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert second.stderr.split()[-1] == "False"  # linked without LLVM


def _some_object() -> bytes:
    import mlfuse
    from mlfuse import Tensor

    x = Tensor(np.arange(64, dtype=np.float64).reshape(8, 8))
    y = (x.abs() ** 0.5 + x.exp().sum(1, keepdim=True)).realize()
    kernels = {k.name: k for k in mlfuse.runtime.compile_cache.kernels.values()}
    # (the process may hold other targets' kernels too: those have no object code)
    data = objects.save({"k": next(k for k in kernels.values() if getattr(k, "object_code", 0))})
    assert data is not None and y.shape == (8, 8)
    return data


def test_bad_objects_are_refused_with_a_reason():
    with pytest.raises(elf_loader.UnsupportedObject, match="ELF"):
        elf_loader.LoadedObject(b"not an object file at all" * 4)
    obj = _some_object().partition(b"\0")[2]
    wrong_machine = obj[:18] + (183).to_bytes(2, "little") + obj[20:]  # aarch64
    if elf_loader.supported_host():
        with pytest.raises(elf_loader.UnsupportedObject, match="x86-64"):
            elf_loader.LoadedObject(wrong_machine)
        linked = elf_loader.LoadedObject(obj)
        assert all(linked.address(n) for n in linked.symbols)
        assert linked.address("no such symbol") == 0


def test_objects_the_loader_refuses_are_linked_by_mcjit(monkeypatch):
    data = _some_object()

    def refuse(_):
        raise elf_loader.UnsupportedObject("elf loader: refused for the test")

    monkeypatch.setattr(elf_loader, "LoadedObject", refuse)
    loaded = objects.load(data)
    assert loaded and all(type(k.engine).__name__ == "ExecutionEngine" for k in loaded.values())
