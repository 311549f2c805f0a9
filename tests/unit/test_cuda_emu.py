"""The ``cuda_emu`` device: NVVM-level kernels on host threads, and what its checks catch.

The numerics run in test_cuda.py (every GPU workload on ``cuda_sim``,
``cuda_emu`` and, where there is one, the GPU); here, hand-written kernels in
the ``llvm`` dialect, as ``convert-loops-to-llvm`` leaves them for NVVM, that
do what a GPU would fault on or leave undefined.
"""

# ruff: noqa: E501 (kernel IR is clearer on one line per op)
import numpy as np
import pytest
from xdsl.parser import Parser

from mlfuse import Tensor
from mlfuse.driver import make_context
from mlfuse.targets import get_target
from mlfuse.targets.cuda.emulate import EmulationError

pytestmark = pytest.mark.skipif(
    not get_target("cuda_emu").available(), reason="cuda_emu needs POSIX threads"
)


def _kernels(text: str):
    """Compile a module of NVVM-level kernels (``llvm.func``s) for ``cuda_emu``."""
    target = get_target("cuda_emu")
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return target, target.compile(module)  # through emulate-nvvm


def _launch(text: str, *arrays: np.ndarray, name: str = "k"):
    target, kernels = _kernels(text)
    bufs = [target.from_numpy(a) for a in arrays]
    target.launch(kernels[name], bufs)
    return [target.to_numpy(b) for b in bufs]


def _kernel(
    body: str, block: int = 64, grid: int = 1, args: str = "%out: !llvm.ptr, %x: !llvm.ptr"
):
    return f"""
    llvm.func @k({args}) attributes {{mlfuse.kernel, mlfuse.grid = {grid} : i64, mlfuse.block = {block} : i64}} {{
      %tid32 = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
      %tid = llvm.zext %tid32 : i32 to i64
      %cta32 = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ctaid.x"() : () -> i32
      %cta = llvm.zext %cta32 : i32 to i64
      {body}
    }}"""


_ADD_ONE = _kernel(
    """
      %bs = llvm.mlir.constant(64 : i64) : i64
      %base = llvm.mul %cta, %bs : i64
      %i = llvm.add %base, %tid : i64
      %one = llvm.mlir.constant(1.0 : f32) : f32
      %p = llvm.getelementptr inbounds %x[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %v = llvm.load %p : !llvm.ptr -> f32
      %w = llvm.fadd %v, %one : f32
      %q = llvm.getelementptr inbounds %out[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      llvm.store %w, %q : f32, !llvm.ptr
      llvm.return""",
    grid=3,
)


def test_blocks_and_threads_see_their_ids():
    x = np.arange(192, dtype=np.float32)
    out, _ = _launch(_ADD_ONE, np.zeros(192, np.float32), x)
    np.testing.assert_array_equal(out, x + 1)


def test_an_access_past_a_buffer_names_the_kernel_thread_and_access():
    # 3 blocks of 64 threads over a buffer of 150 elements: thread 22 of block 2 is past it
    with pytest.raises(EmulationError, match=r"launch of k, block 2, thread (\d+): out-of-b") as e:
        _launch(_ADD_ONE, np.zeros(150, np.float32), np.zeros(192, np.float32))
    assert int(e.value.args[0].split("thread ")[1].split(":")[0]) >= 22  # whichever came first
    assert "(buffer 0 holds" in str(e.value) and "k: llvm.store" in str(e.value)
    with pytest.raises(EmulationError, match=r"k: %v = llvm.load .* -> f32"):
        _launch(_ADD_ONE, np.zeros(192, np.float32), np.zeros(150, np.float32))


def test_a_vector_access_must_be_as_aligned_as_it_claims():
    text = _kernel(
        """
      %four = llvm.mlir.constant(4 : i64) : i64
      %shift = llvm.mlir.constant(SHIFT : i64) : i64
      %i0 = llvm.mul %tid, %four : i64
      %i = llvm.add %i0, %shift : i64
      %p = llvm.getelementptr inbounds %x[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %v = llvm.load %p {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
      %q = llvm.getelementptr inbounds %out[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      llvm.store %v, %q {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
      llvm.return""",
        block=8,
    )
    x = np.arange(40, dtype=np.float32)
    out, _ = _launch(text.replace("SHIFT", "4"), np.zeros(40, np.float32), x)
    np.testing.assert_array_equal(out[4:36], x[4:36])
    with pytest.raises(
        EmulationError, match=r"block 0, thread \d: misaligned access .*alignment = 16"
    ):
        _launch(text.replace("SHIFT", "1"), np.zeros(40, np.float32), x)


def _shared_reverse(barrier: str) -> str:
    """Each thread writes its element into shared memory and reads its mirror's."""
    body = f"""
      %x_at = llvm.getelementptr inbounds %x[%tid] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %v = llvm.load %x_at : !llvm.ptr -> f32
      %tile = llvm.mlir.addressof @k__tile : !llvm.ptr<3>
      %base = llvm.ptrtoint %tile : !llvm.ptr<3> to i64
      %four = llvm.mlir.constant(4 : i64) : i64
      %off = llvm.mul %tid, %four : i64
      %mine_i = llvm.add %base, %off : i64
      %mine = llvm.inttoptr %mine_i : i64 to !llvm.ptr<3>
      llvm.store %v, %mine : f32, !llvm.ptr<3>
      {barrier}
      %last = llvm.mlir.constant(63 : i64) : i64
      %j = llvm.sub %last, %tid : i64
      %joff = llvm.mul %j, %four : i64
      %theirs_i = llvm.add %base, %joff : i64
      %theirs = llvm.inttoptr %theirs_i : i64 to !llvm.ptr<3>
      %w = llvm.load %theirs : !llvm.ptr<3> -> f32
      %out_at = llvm.getelementptr inbounds %out[%tid] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      llvm.store %w, %out_at : f32, !llvm.ptr
      llvm.return"""
    tile = "llvm.mlir.global internal @k__tile() {addr_space = 3 : i32, alignment = 16 : i64}"
    return f"{tile} : !llvm.array<256 x i8>\n{_kernel(body)}"


def test_shared_memory_and_barriers_order_the_threads_of_a_block():
    x = np.arange(64, dtype=np.float32)
    for _ in range(3):
        out, _ = _launch(
            _shared_reverse('llvm.call_intrinsic "llvm.nvvm.barrier0"() : () -> ()'),
            np.zeros(64, np.float32),
            x,
        )
        np.testing.assert_array_equal(out, x[::-1])


def test_a_missing_barrier_is_a_race_whatever_the_threads_order():
    # without the barrier, thread t reads the element thread 63 - t writes in the
    # same interval between barriers: whichever comes first, the second is a race
    with pytest.raises(
        EmulationError,
        match=r"a shared-memory race: it (reads|writes) byte \d+ of @k__tile, which thread "
        r"\d+ (wrote|read) since the last barrier: k: .*llvm\.(load|store)",
    ):
        _launch(_shared_reverse(""), np.zeros(64, np.float32), np.arange(64, dtype=np.float32))


def test_shared_memory_is_bounded_by_its_global():
    text = _shared_reverse('llvm.call_intrinsic "llvm.nvvm.barrier0"() : () -> ()')
    small = text.replace("!llvm.array<256 x i8>", "!llvm.array<128 x i8>")
    with pytest.raises(EmulationError, match="out-of-bounds access .*!llvm.ptr<3>"):
        _launch(small, np.zeros(64, np.float32), np.zeros(64, np.float32))


def test_threads_at_different_barriers_are_an_error_not_a_hang():
    # threads below 32 wait at a barrier the others skip
    text = _kernel(
        """
      %c32 = llvm.mlir.constant(32 : i64) : i64
      %low = llvm.icmp "ult" %tid, %c32 : i64
      llvm.cond_br %low, ^wait, ^done
    ^wait:
      llvm.call_intrinsic "llvm.nvvm.barrier0"() : () -> ()
      llvm.br ^done
    ^done:
      llvm.return"""
    )
    with pytest.raises(EmulationError, match="threads at different barriers"):
        _launch(text, np.zeros(64, np.float32), np.zeros(64, np.float32))


def _shuffle(mask: int, block: int) -> str:
    return _kernel(
        f"""
      %x_at = llvm.getelementptr inbounds %x[%tid] : (!llvm.ptr, i64) -> !llvm.ptr, i32
      %v = llvm.load %x_at : !llvm.ptr -> i32
      %mask = llvm.mlir.constant({mask} : i32) : i32
      %one = llvm.mlir.constant(1 : i32) : i32
      %clamp = llvm.mlir.constant(31 : i32) : i32
      %w = llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.i32"(%mask, %v, %one, %clamp) : (i32, i32, i32, i32) -> i32
      %out_at = llvm.getelementptr inbounds %out[%tid] : (!llvm.ptr, i64) -> !llvm.ptr, i32
      llvm.store %w, %out_at : i32, !llvm.ptr
      llvm.return""",
        block=block,
    )


def test_butterfly_shuffles_exchange_neighbours_and_check_their_mask():
    x = np.arange(64, dtype=np.int32)
    out, _ = _launch(_shuffle(-1, 64), np.zeros(64, np.int32), x)
    np.testing.assert_array_equal(out, x ^ 1)
    out, _ = _launch(_shuffle(0xFFFF, 16), np.zeros(16, np.int32), x[:16])  # a partial warp
    np.testing.assert_array_equal(out, x[:16] ^ 1)
    with pytest.raises(EmulationError, match="warp shuffle with mask 0xffff reads thread"):
        _launch(_shuffle(0xFFFF, 64), np.zeros(64, np.int32), x)


def test_buffers_start_unwritten_and_aligned():
    t = get_target("cuda_emu")
    buf = t.alloc(5, Tensor([1.0]).dtype)
    assert np.isnan(t.to_numpy(buf)).all()  # 0xFF bytes: a kernel reading them sees NaN
    assert buf.array.ctypes.data % 256 == 0


def test_unknown_nvvm_intrinsics_are_named():
    text = _kernel(
        """
      %l = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.laneid"() : () -> i32
      llvm.return"""
    )
    with pytest.raises(Exception, match="the emulator has no 'llvm.nvvm.read.ptx.sreg.laneid'"):
        _kernels(text)


def test_programs_run_as_on_the_other_devices():
    x = np.random.default_rng(0).standard_normal((33, 70)).astype(np.float32)
    t = Tensor(x, device="cuda_emu")
    got = (t.softmax(1) * 2 + t.T.sum(0, keepdim=True).T).numpy()
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(
        got, 2 * e / e.sum(1, keepdims=True) + x.sum(1, keepdims=True), rtol=1e-5, atol=1e-5
    )


def test_half_floats_convert_on_the_host():
    # f16 <-> f32 conversions compile to the host's own instructions (F16C), not to
    # compiler-rt calls the JIT cannot resolve
    n = np.array([np.nan, np.inf, -np.inf, 1.5, 1e-5], np.float32)
    got = Tensor(n, device="cuda_emu").half().nan_to_num().float().numpy()
    np.testing.assert_array_equal(got, np.nan_to_num(n.astype(np.float16)).astype(np.float32))


def test_launches_check_the_kernel_and_its_buffers():
    target, kernels = _kernels(_ADD_ONE)
    sim = get_target("cuda_sim")
    with pytest.raises(TypeError, match="was not compiled for cuda_sim"):
        sim.launch(kernels["k"], [])
    with pytest.raises(ValueError, match="launch of k: it takes 2 buffers, got 1"):
        target.launch(kernels["k"], [target.from_numpy(np.zeros(192, np.float32))])
    with pytest.raises(ValueError, match="is not a buffer of device 'cuda_emu'"):
        target.launch(kernels["k"], [sim.from_numpy(np.zeros(4, np.float32))] * 2)
