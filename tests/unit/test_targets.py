"""The target seam: the registry, devices on tensors, CPU buffers and the pointer-array ABI."""

import ast
from pathlib import Path

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor, driver, dtypes, graph, targets
from mlfuse.targets import Buffer, CompiledKernel, Target, get_target
from mlfuse.targets.cpu import CpuBuffer, CpuTarget

pytestmark = pytest.mark.cpu  # the CPU target itself (see tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]


class OtherCpu(CpuTarget):
    """A second device for tests: the CPU under another name."""

    name = "other"


@pytest.fixture
def other():
    targets.register_target("other", OtherCpu)
    try:
        yield get_target("other")
    finally:
        targets.unregister_target("other")


@pytest.fixture
def default_device():
    yield
    mlfuse.set_default_device(None)


# -- the registry -------------------------------------------------------------


def test_cpu_is_registered_and_is_the_default():
    assert "cpu" in mlfuse.devices()
    t = get_target("cpu")
    assert isinstance(t, Target) and t.name == "cpu"
    assert get_target("cpu") is t and get_target(None) is t and get_target(t) is t
    assert mlfuse.get_default_device() == "cpu"


def test_the_cpu_pipeline_and_what_it_adds():
    t = get_target("cpu")
    assert t.kernel_pipeline[:5] == (
        "legalize-float-types",
        "expand-math",
        "merge-sums",
        "cpu-optimize-plan",
        "convert-kernel-to-loops",
    )
    assert t.kernel_pipeline[-1] == "cpu-entry-points"
    assert {"cpu-optimize-plan", "convert-parallel-to-cpu", "cpu-entry-points"} <= set(t.passes())
    assert {"llvm", "llvm-opt", "asm"} <= set(t.emitters())
    from mlfuse.passes import PASSES, all_passes, get_pass

    assert "convert-parallel-to-cpu" not in PASSES  # target-specific: only through the target
    assert "cpu-entry-points" in all_passes()
    assert get_pass("cpu-entry-points").name == "cpu-entry-points"


def test_unknown_device_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown device 'tpu'; known devices: cpu"):
        get_target("tpu")
    with pytest.raises(TypeError, match="a device is a name"):
        get_target(3)  # type: ignore[arg-type]


def test_default_device_setting(default_device, other):
    mlfuse.set_default_device("other")
    assert mlfuse.get_default_device() == "other"
    assert Tensor([1.0, 2.0]).device == "other"
    assert Tensor.zeros(3).device == "other"
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        mlfuse.set_default_device("tpu")
    assert mlfuse.get_default_device() == "other"  # unchanged by the failed call
    mlfuse.set_default_device(None)
    assert mlfuse.get_default_device() == "cpu"


def test_default_device_from_the_environment(monkeypatch, other):
    monkeypatch.setenv("MLFUSE_DEVICE", "other")
    assert mlfuse.get_default_device() == "other"
    monkeypatch.setenv("MLFUSE_DEVICE", "tpu")
    with pytest.raises(ValueError, match=r"MLFUSE_DEVICE='tpu' is not a known device"):
        mlfuse.get_default_device()
    with pytest.raises(ValueError, match="MLFUSE_DEVICE"):
        Tensor([1.0])  # not silently the CPU


def test_registering_and_unregistering(other):
    assert "other" in mlfuse.devices()
    with pytest.raises(ValueError, match="already registered"):
        targets.register_target("other", OtherCpu)
    with pytest.raises(ValueError, match="device names"):
        targets.register_target("bad name", OtherCpu)
    targets.register_target("liar", CpuTarget)
    try:
        with pytest.raises(ValueError, match="registered as 'liar' calls itself 'cpu'"):
            get_target("liar")
    finally:
        targets.unregister_target("liar")
    with pytest.raises(ValueError, match="unknown device 'liar'"):
        targets.unregister_target("liar")


def test_a_target_must_implement_the_whole_protocol():
    class Half(Target):
        name = "half"
        kernel_pipeline = ()

        def compile(self, module):
            return {}

    with pytest.raises(TypeError, match="abstract"):
        Half()  # type: ignore[abstract]


# -- CPU buffers --------------------------------------------------------------


def test_cpu_buffers():
    cpu = get_target("cpu")
    a = cpu.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::2])  # not contiguous
    assert isinstance(a, Buffer) and isinstance(a, CpuBuffer)
    assert (a.device, a.size, a.dtype, a.nbytes) == ("cpu", 4, dtypes.float32, 16)
    host = cpu.to_numpy(a)
    np.testing.assert_array_equal(host, [0, 2, 3, 5])
    host[0] = 99  # a copy: the buffer does not change
    assert cpu.to_numpy(a)[0] == 0
    b = cpu.alloc(4, dtypes.float32)
    cpu.copy(b, a)
    np.testing.assert_array_equal(cpu.to_numpy(b), [0, 2, 3, 5])
    c = cpu.clone(b)
    assert c is not b and cpu.to_numpy(c).tolist() == [0, 2, 3, 5]
    with pytest.raises(ValueError, match="does not fit"):
        cpu.copy(cpu.alloc(3, dtypes.float32), a)
    with pytest.raises(ValueError, match="does not fit"):
        cpu.copy(cpu.alloc(4, dtypes.int32), a)
    cpu.free(c)
    with pytest.raises(ValueError, match="was freed"):
        cpu.to_numpy(c)
    with pytest.raises(TypeError, match="not supported"):
        cpu.from_numpy(np.zeros(3, np.complex64))


def test_buffers_of_another_device_are_refused(other):
    cpu = get_target("cpu")
    theirs = other.from_numpy(np.ones(3, np.float32))
    assert theirs.device == "other"
    with pytest.raises(ValueError, match="is not a buffer of device 'cpu'"):
        cpu.to_numpy(theirs)


def test_launch_checks_its_buffers():
    x = Tensor(np.ones(8, np.float32))
    compiled = graph.compiled_for(graph.collect([(x * 2).node]))
    k = compiled.program.launches[0].kernel
    assert isinstance(k, CompiledKernel) and k.num_buffers == 2
    cpu = get_target("cpu")
    out, inp = cpu.alloc(8, dtypes.float32), x.node.buffer
    with pytest.raises(ValueError, match="takes 2 buffers, got 1"):
        cpu.launch(k, [out])
    freed = cpu.alloc(8, dtypes.float32)
    cpu.free(freed)
    with pytest.raises(ValueError, match="buffer 0 was freed"):
        cpu.launch(k, [freed, inp])
    with pytest.raises(ValueError, match="must be CPU buffers"):
        cpu.launch(k, [out, Buffer("cpu", 8, dtypes.float32)])
    cpu.launch(k, [out, inp])
    cpu.synchronize()
    np.testing.assert_array_equal(cpu.to_numpy(out), np.full(8, 2, np.float32))


def test_the_executor_checks_its_inputs(other):
    x = Tensor(np.ones(8, np.float32))
    program = graph.compiled_for(graph.collect([(x * 2).node])).program
    with pytest.raises(ValueError, match="expected 1 input buffers, got 0"):
        program.run([])
    wrong = other.from_numpy(np.ones(8, np.float32))
    with pytest.raises(ValueError, match="input 0: expected a cpu buffer of 8 float32 elements"):
        program.run([wrong])


# -- kernels with any number of buffers ----------------------------------------


@pytest.mark.parametrize("shape", ["chain", "tree"])
def test_sum_of_2000_inputs(monkeypatch, shape):
    """More buffers than a C call through ctypes can take (1,024): one kernel, one
    pointer array; summed one after the other (a 2,000-deep graph) or as a tree."""
    monkeypatch.setenv("MLFUSE_VERIFY", "0")  # the IR of 2,000 loads is verified elsewhere
    xs = [np.random.default_rng(i).standard_normal(4).astype(np.float32) for i in range(2000)]
    level = [Tensor(x) for x in xs]
    if shape == "chain":
        total = level[0]
        for t in level[1:]:
            total = total + t
    else:
        while len(level) > 1:
            level = [
                level[i] + level[i + 1] if i + 1 < len(level) else level[i]
                for i in range(0, len(level), 2)
            ]
        total = level[0]
    items = mlfuse.schedule(total)
    assert len(items) == 1 and len(items[0].inputs) == 2000
    np.testing.assert_allclose(
        total.numpy(), np.sum(np.array(xs, np.float64), 0), rtol=1e-4, atol=1e-4
    )


# -- devices on tensors -------------------------------------------------------


def test_tensors_know_their_device():
    x = Tensor([1.0, 2.0])
    assert x.device == "cpu" and Tensor([1.0], device="cpu").device == "cpu"
    assert x.to("cpu") is x
    assert (x + 1).device == "cpu" and x.sum().device == "cpu"
    for t in (
        Tensor.full((2,), 3.0, device="cpu"),
        Tensor.zeros(2, device="cpu"),
        Tensor.ones(2, device="cpu"),
        Tensor.arange(3, device="cpu"),
        Tensor.eye(2, device="cpu"),
        Tensor.randn(2, seed=0, device="cpu"),
        Tensor.rand(2, seed=0, device="cpu"),
        Tensor.uniform(2, seed=0, device="cpu"),
        Tensor.zeros_like(x),
    ):
        assert t.device == "cpu"


def test_unknown_devices_are_errors():
    with pytest.raises(ValueError, match="unknown device 'tpu'; known devices: cpu"):
        Tensor([1.0], device="tpu")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        Tensor([1.0]).to("tpu")
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        Tensor.zeros(3, device="gpu")


def test_creation_on_another_device(other):
    for t in (
        Tensor([1.0, 2.0], device="other"),
        Tensor.full((2,), 3.0, device="other"),
        Tensor.zeros(2, device="other"),
        Tensor.ones(2, device="other"),
        Tensor.arange(3, device="other"),
        Tensor.eye(2, device="other"),
        Tensor.randn(2, seed=0, device="other"),
        Tensor.rand(2, seed=0, device="other"),
        Tensor.uniform(2, seed=0, device="other"),
    ):
        assert t.device == "other"
        assert Tensor.ones_like(t).device == "other" and Tensor.full_like(t, 2).device == "other"
        assert Tensor.zeros_like(t, device="cpu").device == "cpu"
    x = Tensor([1.0, 2.0], device="other")
    assert (x * 2 + 1).device == "other"  # scalars join the tensor's device
    assert (x + np.array([1.0, 1.0], np.float32)).device == "other"
    assert Tensor(x, device="cpu").device == "cpu"


def test_ops_across_devices_name_both(other):
    a, b = Tensor([1.0, 2.0]), Tensor([3.0, 4.0], device="other")
    msg = r"expected all tensors to be on the same device, but found cpu and other"
    with pytest.raises(ValueError, match=msg):
        a + b
    with pytest.raises(ValueError, match=r"^matmul: .*cpu and other"):
        Tensor.ones(2, 2) @ Tensor.ones(2, 2, device="other")
    with pytest.raises(ValueError, match="where: .*same device"):
        (a > 1).where(a, b)
    t = Tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="assign: .*same device"):
        t.assign(b)


def test_to_another_device_copies_lazily(other):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = Tensor(x)
    b = (a * 2).to("other")
    assert b.device == "other" and not b.node.realized and b.node.op == "copy"
    c = (b + 1).sum(1)
    assert c.device == "other"
    np.testing.assert_allclose(c.numpy(), (x * 2 + 1).sum(1))
    assert b.node.realized and b.node.buffer.device == "other"
    back = c.to("cpu")
    np.testing.assert_allclose((back * 1).numpy(), (x * 2 + 1).sum(1))
    assert back.device == "cpu"


def test_compiled_kernels_are_cached_per_target(other):
    x = np.linspace(0, 1, 37, dtype=np.float32)
    before = set(driver._cache)
    np.testing.assert_allclose((Tensor(x) * 3.5 - 1).numpy(), x * 3.5 - 1, rtol=1e-6)
    np.testing.assert_allclose(
        (Tensor(x, device="other") * 3.5 - 1).numpy(), x * 3.5 - 1, rtol=1e-6
    )
    new = set(driver._cache) - before
    cpu_keys = {k for t, k in new if t == "cpu"}
    other_keys = {k for t, k in new if t == "other"}
    assert other_keys and other_keys <= cpu_keys | {k for t, k in before if t == "cpu"}


def test_lazy_copy_verifier_knows_the_registered_devices(other):
    from xdsl.dialects.builtin import f32
    from xdsl.ir import Block
    from xdsl.utils.exceptions import VerifyException

    from mlfuse.dialects import lazy

    x = Block(arg_types=[lazy.tensor_type((4,), f32)]).args[0]
    for device in ("cpu", "other"):
        lazy.CopyOp(x, device).verify()
    with pytest.raises(
        VerifyException,
        match=r"unknown device 'tpu' \(known: cpu, cuda, cuda_sim, cuda_emu, other\)",
    ):
        lazy.CopyOp(x, "tpu").verify()


# -- only the CPU folder knows the CPU ----------------------------------------


def _imports(path: Path) -> set[str]:
    mods = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            mods.add(node.module)
    return mods


def test_nothing_outside_a_target_folder_imports_it_or_llvmlite():
    package = ROOT / "mlfuse"
    folders = {name: package / "targets" / name for name in ("cpu", "cuda")}
    checked = 0
    for path in package.rglob("*.py"):
        where = path.relative_to(ROOT)
        inside = next((n for n, f in folders.items() if f in path.parents), None)
        checked += inside is None
        for mod in _imports(path):
            if inside is None:
                assert not mod.startswith("llvmlite"), f"{where} imports {mod}"
            for name in folders:
                if name != inside:
                    assert not mod.startswith(f"mlfuse.targets.{name}"), f"{where} imports {mod}"
    assert checked > 20
    for name in ("driver.py", "runtime/executor.py", "tools/mlfuse_opt.py"):
        text = (package / name).read_text()
        assert "targets.cpu" not in text and "llvmlite" not in text, name


def test_cpu_buffers_are_aligned_and_recycled():
    """Buffers start on a 64-byte line; freed memory serves the next allocation
    of the same size (no page faults on re-running a program), and a buffer's
    contents never reach the user except by copy."""
    from mlfuse import dtypes
    from mlfuse.targets.cpu.buffer import POOL

    t = get_target("cpu")
    a = t.alloc(1000, dtypes.float32)
    assert a.ptr % 64 == 0
    ptr = a.ptr
    out = t.to_numpy(a)
    t.free(a)
    assert a.ptr is None and POOL.held >= 4000
    b = t.alloc(1000, dtypes.float32)
    assert b.ptr == ptr  # the same memory again
    b.host()[:] = 7
    assert not np.shares_memory(out, b.host())
    c = t.from_numpy(np.arange(250, dtype=np.int32))  # another size: fresh memory
    assert c.ptr % 64 == 0 and c.ptr != ptr
    np.testing.assert_array_equal(t.to_numpy(c), np.arange(250))
    del b  # dropped without free(): back to the pool too
    assert t.alloc(1000, dtypes.float32).ptr == ptr


def test_cpu_packs_large_right_operands_of_products():
    """Right operands of 8 MiB and more (AVX-512: 32 registers of 64 bytes) or
    1 MiB and more (AVX2: 16 registers of 32 bytes) are packed into
    register-block-wide panels (on AVX2 for products of 64 rows or more);
    smaller ones, and widths the panel does not divide, are read as they are.
    The base protocol never packs."""
    from mlfuse.targets.cpu.optimize_plan import host_vectors
    from mlfuse.targets.cpu.target import CpuTarget

    panel_for = CpuTarget.panel_for
    # AVX-512: panels of 4 vectors of 16 floats, from 8 MiB
    assert panel_for(1024, 4096, 4, 64, 32) == 64
    assert panel_for(4096, 1024, 4, 64, 32) == 64
    assert panel_for(1024, 1024, 4, 64, 32) is None  # 4 MiB
    assert panel_for(4096, 1000, 4, 64, 32) is None  # no whole panels
    # AVX2: panels of 2 vectors of 8 floats, from 1 MiB
    assert panel_for(1024, 1024, 4, 32, 16) == 16
    assert panel_for(512, 512, 4, 32, 16) == 16
    assert panel_for(256, 1024, 4, 32, 16) == 16
    assert panel_for(256, 256, 4, 32, 16) is None  # 256 KiB
    assert panel_for(1024, 1000, 4, 32, 16) is None
    assert panel_for(1 << 16, 16, 4, 32, 16) is None  # one panel: already packed
    # ... and only for products of 64 rows or more (a matrix-vector product reads B once)
    assert panel_for(1024, 1024, 4, 32, 16, rows=64) == 16
    assert panel_for(1024, 1024, 4, 32, 16, rows=8) is None
    assert panel_for(1024, 4096, 4, 64, 32, rows=8) == 64  # (AVX-512 as before)

    t = get_target("cpu")
    assert t.contraction_panel(1024, 4096, 4) == panel_for(1024, 4096, 4, *host_vectors())
    assert Target.contraction_panel(t, 4096, 4096, 4) is None
