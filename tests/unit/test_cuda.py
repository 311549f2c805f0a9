"""The CUDA target: grid plans, their numerics (on cuda_sim everywhere, on the GPU
where there is one), PTX, and the driver runtime.

The whole numerics suite runs on any device with ``MLFUSE_DEVICE``:
``MLFUSE_DEVICE=cuda python -m pytest tests/unit/test_ops.py`` on a GPU machine,
``MLFUSE_DEVICE=cuda_sim`` anywhere.
"""

import numpy as np
import pytest
from xdsl.dialects.builtin import NoneAttr

from mlfuse import Tensor, graph
from mlfuse.dialects import kernel
from mlfuse.loop_nest import BLOCK, THREAD, LoopPlan
from mlfuse.targets import get_target
from mlfuse.targets.cuda import driver as cuda_driver
from mlfuse.targets.cuda.map_plan import grid_threads, largest_divisor, row_threads

HAS_GPU = cuda_driver.available()
gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU or driver here")
EMULATOR = ["cuda_emu"] if get_target("cuda_emu").available() else []
DEVICES = ["cuda_sim", *EMULATOR] + (["cuda"] if HAS_GPU else [])


def _module(t: Tensor):
    """The kernel-dialect module (kernels and schedule) realizing ``t``."""
    return graph.compiled_for(graph.collect([t.node])).module.clone()


def _plan(text: str) -> LoopPlan:
    """A loop plan from its text, as kernel.func prints it."""
    from xdsl.parser import Parser

    from mlfuse.dialects.kernel import parse_plan
    from mlfuse.driver import make_context

    return parse_plan(Parser(make_context(), text))


def _rng(seed=0):
    return np.random.default_rng(seed)


def _close(got, want, rtol=2e-5, atol=2e-5):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# -- the workloads, against float64 numpy, on each GPU device --------------------


@pytest.mark.parametrize("device", DEVICES)
def test_elementwise_chain(device):
    x = _rng().standard_normal((64, 96)).astype(np.float32)
    y = _rng(1).standard_normal((96,)).astype(np.float32)
    got = ((Tensor(x, device=device) * 2 + Tensor(y, device=device)).relu() - 0.5).numpy()
    _close(got, np.maximum(x * 2.0 + y, 0) - 0.5)


@pytest.mark.parametrize("device", DEVICES)
def test_copies_carry_what_a_view_shows(device):
    """A realized transpose, slice or constant moved to another device is its
    values, not its buffer (the buffer holds other elements, or one)."""
    x = np.arange(12.0).reshape(3, 4)
    t = Tensor(x).T.realize()
    _close(t.to(device).exp().numpy(), np.exp(x.T))
    _close(Tensor(x)[1:, ::2].realize().to(device).numpy() * 1, x[1:, ::2])
    c = Tensor.full((2, 3), 4.0).realize()
    _close((c.to(device) * 2).to("cpu").numpy(), np.full((2, 3), 8.0))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(64, 256), (7, 24), (3, 997), (5, 1)], ids=str)
def test_row_and_column_sums(device, shape):
    x = _rng().standard_normal(shape).astype(np.float32)
    t = Tensor(x, device=device)
    x64 = x.astype(np.float64)
    _close(t.sum(1).numpy(), x64.sum(1), rtol=1e-5, atol=1e-4)
    _close(t.sum(0).numpy(), x64.sum(0), rtol=1e-5, atol=1e-4)
    _close(t.max(1).numpy(), x.max(1))
    _close(t.sum().numpy(), x64.sum(), rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_softmax_and_layernorm_in_one_kernel_each(device):
    x = _rng().standard_normal((32, 512)).astype(np.float32)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(1, keepdims=True))
    t = Tensor(x, device=device)
    sm = t.softmax(1)
    assert sum(isinstance(op, kernel.FuncOp) for op in _module(sm).ops) == 1
    _close(sm.numpy(), e / e.sum(1, keepdims=True))
    mean = t.mean(1, keepdim=True)
    c = t - mean
    ln = c / ((c * c).mean(1, keepdim=True) + 1e-5).sqrt()
    m = x64.mean(1, keepdims=True)
    want = (x64 - m) / np.sqrt(((x64 - m) ** 2).mean(1, keepdims=True) + 1e-5)
    _close(ln.numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_large_elementwise_kernels_give_threads_two_vectors(device, monkeypatch):
    """Past a million vectors (lowered here to any size) each thread of an
    elementwise kernel takes two 16-byte vectors a warp-row apart."""
    from mlfuse.targets.cuda import map_plan

    monkeypatch.setattr(map_plan, "MIN_GRID_THREADS", 1)
    rng = _rng(21)
    x = rng.standard_normal((24, 6144)).astype(np.float32)
    y = rng.standard_normal(6144).astype(np.float32)
    t = Tensor(x, device=device) * Tensor(y, device=device).sigmoid() + 0.25 * Tensor(
        x, device=device
    )
    if device == "cuda_sim":
        (k,) = _kernels(t)
        assert str(k.loop_plan) == "[block 0, block 1:3, unroll 1:2, thread 1:256, unroll 1:4]"
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    _close(t.numpy(), x64 / (1 + np.exp(-y64)) + 0.25 * x64)
    xi = rng.integers(-1000, 1000, (6, 8192)).astype(np.int32)
    np.testing.assert_array_equal((Tensor(xi, device=device) * 3 - 7).numpy(), xi * 3 - 7)
    xd = rng.standard_normal((5, 4096))
    _close((Tensor(xd, device=device).T.T * 2).exp().numpy(), np.exp(xd * 2), rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_jitted_programs_replay_on_the_device(device):
    """mlfuse.jit captures the launches of a GPU program and replays them on new
    inputs (the benchmark's way past the per-call Python of a lazy realize)."""
    import mlfuse

    f = mlfuse.jit(lambda x, w: (x.softmax(-1) * w + x.T).sum(0))
    for i in range(4):
        x = _rng(i).standard_normal((64, 64)).astype(np.float32)
        w = _rng(10 + i).standard_normal(64).astype(np.float32)
        got = f(Tensor(x, device=device), Tensor(w, device=device))
        assert got.device == device
        x64 = x.astype(np.float64)
        e = np.exp(x64 - x64.max(-1, keepdims=True))
        _close(got.numpy(), (e / e.sum(-1, keepdims=True) * w + x64.T).sum(0), atol=1e-5)
    assert len(f.captures) == 1  # calls 3 and 4 replayed


@pytest.mark.parametrize("device", DEVICES)
def test_rows_read_more_than_once_stay_in_registers(device):
    """Softmax, layernorm and ``x - max(x)`` over rows of 2 and 4 steps of 512
    threads (and 4 of 1024 for 16384): each thread holds its part of the row in
    registers (one load per element); also a row in registers inside another
    reduce dim's loop, and short rows. The results match float64 numpy."""
    rng = _rng(5)
    for shape in ((6, 4096), (3, 8192), (2, 3, 4096), (2, 16384)):
        x = rng.standard_normal(shape).astype(np.float32) * 4
        w = rng.standard_normal(shape[-1]).astype(np.float32)
        b = rng.standard_normal(shape[-1]).astype(np.float32)
        x64 = x.astype(np.float64)
        t = Tensor(x, device=device)
        sm = t.softmax(-1)
        if device == "cuda_sim":
            (k,) = _kernels(sm)
            threads = 512 if shape[-1] <= 8192 else 1024  # 16 floats a thread at most
            steps, last = shape[-1] // (4 * threads), len(shape) - 1
            assert str(k.loop_plan).endswith(
                f"unroll {last}:{steps}, thread {last}:{threads}, unroll {last}:4]"
            )
        e = np.exp(x64 - x64.max(-1, keepdims=True))
        _close(sm.numpy(), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)
        ln = t.layernorm(axis=-1, eps=1e-5) * Tensor(w, device=device) + Tensor(b, device=device)
        m = x64.mean(-1, keepdims=True)
        v = ((x64 - m) ** 2).mean(-1, keepdims=True)
        _close(ln.numpy(), (x64 - m) / np.sqrt(v + 1e-5) * w + b, rtol=1e-4, atol=1e-4)
        _close((t - t.max(-1, keepdim=True)).numpy(), x64 - x64.max(-1, keepdims=True))
    # a row in registers inside another reduce dim's serial loop, short rows (groups of 2)
    x = rng.standard_normal((8, 5, 6)).astype(np.float32)
    x64 = x.astype(np.float64)
    t = Tensor(x, device=device)
    m = t.max((1, 2), keepdim=True)
    e = (t - m).exp()
    want = np.exp(x64 - x64.max((1, 2), keepdims=True))
    _close((e / e.sum((1, 2), keepdim=True)).numpy(), want / want.sum((1, 2), keepdims=True))
    c = rng.standard_normal((5, 6)).astype(np.float32)
    v, _ = Tensor(c, device=device).median(1)
    np.testing.assert_array_equal(v.numpy(), np.sort(c, 1)[:, 2])
    xi = rng.integers(-99, 99, (4, 4096)).astype(np.int32)
    ti = Tensor(xi, device=device)
    np.testing.assert_array_equal(
        (ti - ti.min(1, keepdim=True)).numpy(), xi - xi.min(1, keepdims=True)
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mkn", [(64, 96, 128), (3, 5, 7), (2, 128, 64)], ids=str)
def test_matmul_and_batched_matmul(device, mkn):
    m, k, n = mkn
    a = _rng().standard_normal((m, k)).astype(np.float32)
    b = _rng(1).standard_normal((k, n)).astype(np.float32)
    got = (Tensor(a, device=device) @ Tensor(b, device=device)).numpy()
    _close(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    ba = _rng(2).standard_normal((3, m, k)).astype(np.float32)
    got = (Tensor(ba, device=device) @ Tensor(b, device=device)).numpy()
    _close(got, ba.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_transpose_add_and_attention(device):
    x = _rng().standard_normal((48, 64)).astype(np.float32)
    y = _rng(1).standard_normal((64, 48)).astype(np.float32)
    _close((Tensor(x, device=device).T + Tensor(y, device=device)).numpy(), x.T + y)
    q, kk, v = (_rng(s).standard_normal((2, 16, 32)).astype(np.float32) for s in (3, 4, 5))
    Q, K, V = (Tensor(a, device=device) for a in (q, kk, v))
    got = ((Q @ K.transpose(1, 2)) * (1 / np.sqrt(32))).softmax(-1) @ V
    s = q.astype(np.float64) @ kk.transpose(0, 2, 1) / np.sqrt(32)
    e = np.exp(s - s.max(-1, keepdims=True))
    _close(got.numpy(), (e / e.sum(-1, keepdims=True)) @ v, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_float64_pow_without_libm(device):
    # the GPU has no pow: expand-math{f64-pow=true} carries log2 and the product as
    # double-doubles, which needs fma's single rounding (cuda_sim emulates it)
    rng = _rng(7)
    x = np.concatenate([rng.uniform(0, 10, 512), 1 + rng.uniform(-1e-3, 1e-3, 512)])
    y = np.concatenate([rng.uniform(-20, 20, 512), rng.uniform(-5e5, 5e5, 512)])
    got = (Tensor(x, device=device) ** Tensor(y, device=device)).numpy()
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
    fin = np.isfinite(ref.astype(np.float64))
    ulps = np.abs(got[fin] - ref[fin]) / np.spacing(np.abs(ref[fin]).astype(np.float64))
    assert float(ulps.max()) <= 1.0
    assert np.array_equal(np.isinf(got), ~fin)


@pytest.mark.parametrize("device", DEVICES)
def test_integer_and_double_reductions(device):
    xi = _rng().integers(-50, 50, (16, 64)).astype(np.int32)
    np.testing.assert_array_equal(Tensor(xi, device=device).sum(1).numpy(), xi.sum(1))
    np.testing.assert_array_equal(Tensor(xi, device=device).max(1).numpy(), xi.max(1))
    xd = _rng().standard_normal((8, 128))
    _close(Tensor(xd, device=device).sum(1).numpy(), xd.sum(1), rtol=1e-12, atol=1e-12)


# -- the plans gpu-map-plan picks --------------------------------------------------


def _kernels(t: Tensor, device: str = "cuda_sim") -> list[kernel.FuncOp]:
    """The kernels of ``t``'s schedule after gpu-map-plan."""
    from mlfuse.driver import run_passes

    mod = _module(t)
    run_passes(mod, ("gpu-map-plan",))
    return [op for op in mod.ops if isinstance(op, kernel.FuncOp)]


def test_row_reduction_gets_a_block_per_row_and_coalesced_threads():
    (k,) = _kernels(Tensor(np.ones((64, 4096), np.float32), device="cuda_sim").sum(1))
    # 512 threads, 4 consecutive elements each (16-byte loads), in 2 steps
    assert str(k.loop_plan) == "[block 0, serial 1:2, thread 1:512, unroll 1:4]"


def test_elementwise_threads_run_along_the_contiguous_dim():
    (k,) = _kernels(Tensor(np.ones((64, 8), np.float32), device="cuda_sim") * 2)
    plan = k.loop_plan
    threads = [plan.loops[p] for p in plan.grid_loops(THREAD)]
    assert [lp.dim for lp in threads] == [0, 1]  # dim 1 (contiguous) innermost
    assert str(plan) == "[block 0:2, thread 0:32, thread 1]"  # 256 threads a block


def test_contraction_gets_register_blocks():
    a = Tensor(np.ones((256, 64), np.float32), device="cuda_sim")
    b = Tensor(np.ones((64, 256), np.float32), device="cuda_sim")
    (k,) = _kernels(a @ b)
    # 16 x 16 threads, each an 8 x 8 block of C (two groups of 4 consecutive rows and
    # columns, 64 apart): 128 x 128 per block; the reduce in 4 steps of 16-deep
    # tiles of A and B staged in shared memory
    assert str(k.loop_plan) == (
        "[block 0:2, block 1:2, stage 2:4, serial 2:16, unroll 0:2, unroll 1:2, "
        "thread 0:16, thread 1:16, unroll 0:4, unroll 1:4]"
    )
    # without a tile to read from, the block spaces its 8 x 8 elements 16 apart
    # (a warp's global loads and stores consecutive)
    b37 = Tensor(np.ones((37, 256), np.float32), device="cuda_sim")
    (k,) = _kernels(Tensor(np.ones((256, 37), np.float32), device="cuda_sim") @ b37)
    assert str(k.loop_plan) == (
        "[block 0:2, block 1:2, serial 2, unroll 0:8, unroll 1:8, thread 0:16, thread 1:16]"
    )


def test_stage_tiles_lay_out_shared_memory_for_the_threads_that_read_them():
    from mlfuse.loop_nest import stage_tile

    plan = _plan(
        "[block 0:8, block 1:8, stage 2:64, serial 2:16, unroll 0:8, unroll 1:8, "
        "thread 0:16, thread 1:16]"
    )
    space = [1024, 1024, 1024]
    assert plan.problems(3, [[2]], space) is None
    # A[m, k] (k contiguous): stored k-major, the copy walking k fastest writes
    # down columns, so rows are padded to 130 (16 threads of a warp in 32 banks)
    a = stage_tile(plan, space, 2, [0, 2], fastest=2)
    assert (a.dims, a.extents, a.strides, a.copy_order) == ((2, 0), (16, 128), (130, 1), (0, 2))
    assert (a.points, a.size) == (2048, 2080)
    # B[k, n] (n contiguous): copied and read along n, no padding
    b = stage_tile(plan, space, 2, [2, 1], fastest=1)
    assert (b.dims, b.strides, b.size) == ((2, 1), (128, 1), 2048)
    assert a.lanes == b.lanes == 1
    # register blocks of consecutive elements are read as 4-lane vectors: rows
    # padded to 132 (16-byte aligned)
    packed = _plan(
        "[block 0:8, block 1:8, stage 2:64, serial 2:16, unroll 0:2, unroll 1:2, "
        "thread 0:16, thread 1:16, unroll 0:4, unroll 1:4]"
    )
    assert packed.problems(3, [[2]], space) is None
    a = stage_tile(packed, space, 2, [0, 2], fastest=2)
    assert (a.strides, a.lanes) == ((132, 1), 4)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "shapes",
    [((64, 100), (100, 48)), ((4, 10), (10, 128)), ((96, 512), (512, 80)), ((256, 16), (16, 40))],
    ids=str,
)
def test_staged_contractions(shapes, device):
    a = _rng().standard_normal(shapes[0]).astype(np.float32)
    b = _rng(1).standard_normal(shapes[1]).astype(np.float32)
    t = Tensor(a, device=device) @ Tensor(b, device=device)
    (k,) = _kernels(t)
    assert "stage 2" in str(k.loop_plan)
    _close(t.numpy(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_staged_operands_read_through_any_view(device):
    import mlfuse.nn.functional as F

    a = _rng().standard_normal((64, 96)).astype(np.float32)
    b = _rng(1).standard_normal((128, 96)).astype(np.float32)
    t = Tensor(a, device=device) @ Tensor(b, device=device).T  # B read transposed
    assert any("stage" in str(k.loop_plan) for k in _kernels(t))
    _close(t.numpy(), a.astype(np.float64) @ b.T, rtol=1e-4, atol=1e-4)
    # a strided conv: the window view's tile copied through its index arithmetic
    x = _rng(2).standard_normal((1, 16, 9, 9)).astype(np.float32)
    w = _rng(3).standard_normal((32, 16, 3, 3)).astype(np.float32)
    t = F.conv2d(Tensor(x, device=device), Tensor(w, device=device), stride=2)
    assert any("stage" in str(k.loop_plan) for k in _kernels(t))
    want = np.zeros((1, 32, 4, 4))
    for i in range(4):
        for j in range(4):
            patch = x[0, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].astype(np.float64)
            want[0, :, i, j] = np.tensordot(w, patch, axes=([1, 2, 3], [0, 1, 2]))
    _close(t.numpy(), want, rtol=1e-4, atol=1e-4)


def _global_vector_loads(t: Tensor) -> dict[str, int]:
    """How many vector loads from each buffer the lowered (loop-level) kernels of
    ``t`` make from global memory: the tile copies that read 4 elements at once."""
    from xdsl.dialects import vector

    from mlfuse.driver import run_passes

    mod = _module(t)
    run_passes(mod, get_target("cuda_sim").kernel_pipeline)
    count: dict[str, int] = {}
    for op in mod.walk():
        if isinstance(op, vector.LoadOp) and op.base.type.memory_space == NoneAttr():
            assert op.attributes["alignment"].value.data == 16
            name = op.base.name_hint or "?"
            count[name] = count.get(name, 0) + 1
    return count


@pytest.mark.parametrize("device", DEVICES)
def test_tile_copies_read_aligned_vectors_where_the_view_allows(device):
    a = _rng().standard_normal((128, 68)).astype(np.float32)
    b = _rng(1).standard_normal((64, 128)).astype(np.float32)
    A, B = Tensor(a, device=device).realize(), Tensor(b, device=device)
    # both operands copied as 16-byte vectors: two per thread and step each, in
    # the loop (the next step's tiles) and before it (the first step's)
    t = A[:, 4:] @ B
    assert sorted(_global_vector_loads(t).values()) == [4, 4]
    _close(t.numpy(), a[:, 4:].astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    # A's rows start two elements past a 16-byte boundary: its copy stays scalar
    t = A[:, 2:66] @ B
    assert sorted(_global_vector_loads(t).values()) == [4]
    _close(t.numpy(), a[:, 2:66].astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


_OVERHANGS = [(1000, 1000), (1001, 999), (36, 1000)]
_SMALL_OVERHANGS = [(100, 100), (101, 99), (36, 100)]  # the same cases, for the emulator


@pytest.mark.parametrize(
    "device,shape",
    [(d, s) for d in DEVICES for s in (_SMALL_OVERHANGS if d == "cuda_emu" else _OVERHANGS)],
    ids=str,
)
def test_tile_copies_of_dims_the_grid_runs_past(shape, device):
    # a transpose's 32 x 32 tiles: a dim of 1000 (100) overhangs by 24 (28), and its
    # last vector (996..999) is the one past-the-end groups read; 999 is copied lane by lane
    x = _rng().standard_normal(shape[::-1]).astype(np.float32)
    y = _rng(1).standard_normal(shape).astype(np.float32)
    t = Tensor(x, device=device).T + Tensor(y, device=device)
    vectors = _global_vector_loads(t)
    assert bool(vectors) == (shape[1] % 4 == 0), vectors
    _close(t.numpy(), x.T.astype(np.float64) + y)


def test_block_sizes_a_block_reduction_can_combine():
    assert row_threads(4096) == 512
    assert row_threads(96) == 96
    assert row_threads(16) == 16
    assert row_threads(12) == 4  # short rows: a power of two below 32 that divides them
    # no good divisor: whole warps, the last step running past the row's end
    assert row_threads(24) == 32
    assert row_threads(1000) == 512
    assert row_threads(997) == 512
    assert largest_divisor(1000, 256) == 250
    assert grid_threads(1000, 256) == 250
    assert grid_threads(1021, 256) == 256  # prime: 4 blocks, the last past the end
    assert grid_threads(31, 256) == 31  # fits in one block as it is
    assert grid_threads(1031, 256) == 256
    assert grid_threads(3, 256) == 3


def test_grids_may_run_past_the_end_of_a_dim_and_only_grids():
    from mlfuse.loop_nest import Loop, SERIAL

    plan = LoopPlan((Loop(0, BLOCK, 4), Loop(0, THREAD, 256)))
    assert plan.problems(1, [], [1021]) is None
    assert plan.overhang([1021]) == {0: 1021}
    assert plan.overhang([1024]) == {}
    too_many = LoopPlan((Loop(0, BLOCK, 5), Loop(0, THREAD, 256))).problems(1, [], [1021])
    assert "run 1280 iterations, but the dim has 1021" in too_many
    assert "'block 0:4'" in too_many
    cpu = LoopPlan((Loop(0, "parallel", 4), Loop(0, SERIAL, 256))).problems(1, [], [1021])
    assert "run 1024 iterations, but the dim has 1021" in cpu and "overhang" not in cpu


def test_stage_loops_copy_the_loads_tiles_pay_for():
    from mlfuse.loop_nest import stages_load

    plan = _plan("[block 0:4, block 1:2, stage 0:1, unroll 0:4, thread 0:8, thread 1:32]")
    assert stages_load(plan, 2, {0, 1}, 0)  # consecutive along dim 0: a transpose
    assert not stages_load(plan, 2, {0, 1}, 1)  # along the threads' dim already
    assert stages_load(plan, 2, {0}, 0)  # shared by the threads along dim 1
    assert not stages_load(plan, 2, {1}, 1)  # does not vary along the stage's dim


@pytest.mark.parametrize("device", DEVICES)
def test_transposes_go_through_shared_tiles(device):
    rng = _rng(5)
    x = rng.standard_normal((100, 70)).astype(np.float32)  # no multiple of 32: overhangs
    y = rng.standard_normal((70, 100)).astype(np.float32)
    t = Tensor(x, device=device).T + Tensor(y, device=device)
    if device == "cuda_sim":
        (k,) = _kernels(t)
        assert str(k.loop_plan) == (
            "[block 0:3, block 1:4, stage 0:1, unroll 0:4, thread 0:8, thread 1:32]"
        )
    np.testing.assert_array_equal(t.numpy(), x.T + y)
    z = rng.standard_normal((2, 3, 40, 36)).astype(np.float32)
    got = Tensor(z, device=device).transpose(2, 3).exp().numpy()
    _close(got, np.exp(z.transpose(0, 1, 3, 2).astype(np.float64)), rtol=1e-6, atol=0)
    got = Tensor(z, device=device).permute(0, 2, 1, 3).contiguous().numpy()
    np.testing.assert_array_equal(got, z.transpose(0, 2, 1, 3))


@pytest.mark.parametrize("device", DEVICES)
def test_padded_convolutions_copy_the_input_and_stage_their_windows(device):
    import mlfuse.nn.functional as F

    rng = _rng(9)
    x = rng.standard_normal((2, 16, 32, 32)).astype(np.float32)  # 148 KiB once padded
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    t = F.conv2d(Tensor(x, device=device), Tensor(w, device=device), padding=1)
    if device == "cuda_sim":
        plans = [str(k.loop_plan) for k in _kernels(t)]
        assert len(plans) == 2 and "stage 4" in plans[1], plans  # the copy, the product
    want = np.zeros((2, 16, 32, 32))
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    for i in range(3):
        for j in range(3):
            want += np.einsum("nchw,oc->nohw", xp[:, :, i : i + 32, j : j + 32], w[:, :, i, j])
    _close(t.numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_short_rows_share_blocks_and_reduce_within_warps(device):
    rng = _rng(11)
    for shape in ((1000, 16), (64, 8), (4096, 10), (3, 16), (2, 3, 12)):
        x = rng.standard_normal(shape).astype(np.float32)
        t = Tensor(x, device=device).softmax(-1)
        if device == "cuda_sim" and shape == (1000, 16):
            (k,) = _kernels(t)
            assert str(k.loop_plan) == "[block 0:63, thread 0:16, thread 1]"
        e = np.exp(x - x.max(-1, keepdims=True))
        _close(t.numpy(), e / e.sum(-1, keepdims=True))
    xi = rng.integers(-9, 9, (300, 12)).astype(np.int32)
    np.testing.assert_array_equal(Tensor(xi, device=device).argmax(1).numpy(), xi.argmax(1))


@pytest.mark.parametrize("device", DEVICES)
def test_sizes_without_good_divisors(device):
    rng = _rng(7)
    x = rng.standard_normal(100003).astype(np.float32)  # prime
    t = (Tensor(x, device=device) * 2 + 1).exp()
    if device == "cuda_sim":
        assert "[block 0:391, thread 0:256]" in [str(k.loop_plan) for k in _kernels(t)]
    _close(t.numpy(), np.exp(x.astype(np.float64) * 2 + 1), rtol=1e-5, atol=0)
    for cols in (1000, 24, 31):  # softmax rows no multiple of 32 divides
        x = rng.standard_normal((37, cols)).astype(np.float32)
        e = np.exp(x - x.max(1, keepdims=True))
        _close(Tensor(x, device=device).softmax(1).numpy(), e / e.sum(1, keepdims=True))
    xi = rng.integers(-9, 9, (7, 1001)).astype(np.int32)
    np.testing.assert_array_equal(Tensor(xi, device=device).argmax(1).numpy(), xi.argmax(1))
    np.testing.assert_array_equal(Tensor(xi, device=device).min(1).numpy(), xi.min(1))
    for m, k, n in ((17, 64, 17), (37, 48, 129), (300, 64, 19)):
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        got = (Tensor(a, device=device) @ Tensor(b, device=device)).numpy()
        _close(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_plans_check_grid_rules():
    plan = LoopPlan.of([], [0, 1])
    bad = LoopPlan(tuple(plan.loops[:1]) + (plan.loops[1].__class__(1, BLOCK),))
    assert "block/parallel, then serial" in bad.problems(2)
    split = LoopPlan.of([0], [1]).problems(2)
    assert split is None
    from mlfuse.loop_nest import Loop

    mixed = LoopPlan((Loop(0, "parallel"), Loop(1, THREAD)))
    assert "either on a GPU grid" in mixed.problems(2)
    reduce_over_block = LoopPlan((Loop(0, BLOCK), Loop(1, THREAD)))
    assert "parallel but a reduce runs over it" in reduce_over_block.problems(2, [[0]])
    # a reduce may combine groups of consecutive threads within a warp: its thread
    # loops innermost, a power of two up to 32 of them
    segmented = LoopPlan((Loop(0, THREAD, 4), Loop(1, THREAD)))
    assert segmented.problems(2, [[1]], [4, 16]) is None
    assert segmented.reduce_lanes({1}, [4, 16]) == 16
    assert "every thread loop must run over its dims" in segmented.problems(2, [[1]], [4, 48])
    outer = LoopPlan((Loop(1, THREAD), Loop(0, THREAD, 4)))
    assert "must be the innermost" in outer.problems(2, [[1]], [4, 16])
    staged_on_cpu = LoopPlan((Loop(0, "parallel"), Loop(1, "stage")))
    assert "needs thread loops" in staged_on_cpu.problems(2, [[1]])
    two = LoopPlan((Loop(0, "stage", 2), Loop(0, "stage", 2), Loop(1, THREAD)))
    assert "at most one stage loop" in two.problems(2, [], [4, 8])


# -- PTX, everywhere ------------------------------------------------------------------


def _lowered(t: Tensor):
    from mlfuse.driver import run_passes

    mod = _module(t)
    run_passes(mod, get_target("cuda").kernel_pipeline)
    return mod


def test_ptx_of_a_softmax_uses_shuffles_shared_memory_and_coalesced_loads():
    from mlfuse.targets.cuda.ptx import launch_shapes, ptx

    x = Tensor(np.ones((64, 1024), np.float32), device="cuda_sim")
    mod = _lowered(x.softmax(1))
    text = ptx(mod, "sm_90")
    assert ".target sm_90" in text and ".visible .entry" in text
    assert text.count("shfl.sync.bfly.b32") >= 10  # two block reductions
    assert ".shared" in text and "bar.sync" in text and "ld.global" in text
    (shape,) = launch_shapes(mod).values()
    assert "ld.global.nc.v4" in text and "st.global.v4" in text
    assert (shape.grid, shape.block, shape.num_buffers) == (64, 256, 2)


def test_ptx_for_another_compute_capability():
    from mlfuse.targets.cuda.ptx import ptx

    mod = _lowered(Tensor(np.ones((8, 32), np.float32), device="cuda_sim") + 1)
    assert ".target sm_80" in ptx(mod, "sm_80")
    with pytest.raises(ValueError, match="not a compute capability"):
        ptx(mod, "ampere")


def test_calls_the_gpu_cannot_make_are_errors_not_aborts():
    # LLVM's NVPTX backend aborts the process on llvm.pow.f64; ptx() refuses first
    from xdsl.parser import Parser

    from mlfuse.driver import make_context
    from mlfuse.targets.cuda.ptx import ptx

    text = """
    llvm.func @k(%p: !llvm.ptr)
        attributes {mlfuse.kernel, mlfuse.grid = 1 : i64, mlfuse.block = 32 : i64} {
      %x = llvm.load %p : !llvm.ptr -> f64
      %y = llvm.call_intrinsic "llvm.pow.f64"(%x, %x) : (f64, f64) -> f64
      llvm.store %y, %p : f64, !llvm.ptr
      llvm.return
    }"""
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(ValueError, match="they call llvm.pow.f64, which the GPU has no"):
        ptx(module, "sm_90")


# -- the runtime -------------------------------------------------------------------------


def test_cuda_target_exists_without_a_gpu_and_says_why_it_cannot_run():
    t = get_target("cuda")
    assert t.name == "cuda" and {"gpu-map-plan", "convert-gpu-to-nvvm"} <= set(t.passes())
    assert {"ptx", "nvptx-llvm"} <= set(t.emitters())
    if HAS_GPU:
        pytest.skip("a GPU is here")
    with pytest.raises(cuda_driver.CudaUnavailable):
        Tensor(np.ones(4, np.float32), device="cuda")


@gpu
def test_gpu_buffers_round_trip_and_launch_errors_name_the_kernel():
    t = get_target("cuda")
    x = np.arange(10, dtype=np.float32)
    buf = t.from_numpy(x)
    np.testing.assert_array_equal(t.to_numpy(buf), x)
    other = t.clone(buf)
    t.free(buf)
    np.testing.assert_array_equal(t.to_numpy(other), x)
    with pytest.raises(ValueError, match="was freed"):
        t.to_numpy(buf)
    y = Tensor(x, device="cuda")
    np.testing.assert_array_equal((y * 2).to("cpu").numpy(), x * 2)
    np.testing.assert_array_equal(Tensor(x).to("cuda").numpy(), x)
