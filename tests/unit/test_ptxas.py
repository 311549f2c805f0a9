"""PTX that NVIDIA's assembler accepts, and the resources it says each kernel takes.

Where the CUDA toolkit's ``ptxas`` is installed (no GPU needed), the PTX of
every kind of kernel mlfuse makes is assembled for sm_90, as a GPU's driver
would assemble it when loading the module: rejected PTX, kernels that spill
registers to local memory, and blocks whose registers do not fit a
multiprocessor are failures here rather than on a GPU. Elsewhere the tests
skip. (The whole numerics suite can be run the same way:
``MLFUSE_DEVICE=cuda_emu MLFUSE_EMU_PTXAS=1 python -m pytest tests/unit/test_ops.py``.)
"""

import numpy as np
import pytest

import mlfuse.nn.functional as F
from mlfuse import Tensor, dtypes, graph
from mlfuse.driver import run_passes
from mlfuse.targets import get_target
from mlfuse.targets.cuda import ptx

pytestmark = pytest.mark.skipif(ptx.ptxas_path() is None, reason="no ptxas (CUDA toolkit) here")

REGISTERS_PER_SM = 65536


def _ptx(t: Tensor, sm: str = "sm_90") -> tuple[str, dict[str, ptx.LaunchShape]]:
    mod = graph.compiled_for(graph.collect([t.node])).module.clone()
    run_passes(mod, get_target("cuda").kernel_pipeline)
    return ptx.ptx(mod, sm), ptx.launch_shapes(mod)


def _t(shape, dtype=np.float32, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return Tensor(a.astype(dtype), device="cuda_sim")


def _programs():
    x, y = _t((512, 768)), _t((512, 768), seed=1)
    a, b = _t((256, 384)), _t((384, 320), seed=1)
    q, k, v = _t((4, 128, 64)), _t((4, 128, 64), seed=1), _t((4, 128, 64), seed=2)
    img, w = _t((2, 16, 30, 30)), _t((32, 16, 3, 3), seed=1)
    return {
        "elementwise": lambda: x * (x * 1.702).sigmoid() + 0.1 * x * x,
        "transcendentals": lambda: x.exp() + x.sin() * x.erf() + x.tanh() - x.abs().log1p(),
        "row_sum": lambda: x.sum(1),
        "column_sum": lambda: x.sum(0),
        "full_sum": lambda: _t(1 << 20).sum(),
        "softmax": lambda: x.softmax(-1),
        "layernorm": lambda: F.layer_norm(x, (768,), _t(768), _t(768, seed=1)),
        "argmax": lambda: x.argmax(-1),
        "transpose_add": lambda: x.T + _t((768, 512)),
        "matmul": lambda: a @ b,
        "matmul_transposed": lambda: a @ _t((320, 384)).T,
        "batched_attention": lambda: ((q @ k.transpose(1, 2)) / 8).softmax(-1) @ v,
        "conv3x3": lambda: F.conv2d(img, w, padding=1),
        "max_pool": lambda: F.max_pool2d(img, 2),
        "cumsum": lambda: x.cumsum(1),
        "gather": lambda: F.embedding(Tensor(np.arange(64) % 50, device="cuda_sim"), _t((50, 128))),
        "float16": lambda: (_t((256, 256), np.float16) * 2).softmax(-1),
        "bfloat16": lambda: (_t((256, 256)).cast(dtypes.bfloat16) + 1).sum(1),
        "float64": lambda: _t((256, 256), np.float64).exp() @ _t((256, 64), np.float64),
        "int8": lambda: (_t((256, 256)) * 20).cast(dtypes.int8).sum(1),
        "uint8_bool": lambda: ((_t((256, 256)) > 0).cast(dtypes.uint8) + 3).max(0),
        "int64": lambda: Tensor(np.arange(4096, dtype=np.int64), device="cuda_sim").prod(),
        "where": lambda: (x > 0).where(x, y).cumsum(0),
        # rows held in registers: 512 threads x 16 floats, 1024 x 16, 1024 x 8 doubles
        "softmax_8192": lambda: _t((8, 8192)).softmax(-1),
        "layernorm_16384": lambda: F.layer_norm(_t((4, 16384)), (16384,), _t(16384), _t(16384)),
        "float64_softmax_8192": lambda: _t((4, 8192), np.float64).softmax(-1),
        # two 16-byte vectors a thread (a million vectors or more)
        "elementwise_8m": lambda: (lambda z: z * (z * 1.702).sigmoid() + 0.1 * z * z)(
            Tensor(np.zeros((2048, 4096), np.float32), device="cuda_sim")
        ),
    }


PROGRAMS = _programs()


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_ptxas_assembles_every_kind_of_kernel_without_spills(name):
    text, shapes = _ptx(PROGRAMS[name]())
    got = ptx.assemble(text, "sm_90")
    assert set(got) == set(shapes)
    for kname, r in got.items():
        assert r.spill_stores == 0 and r.spill_loads == 0, (kname, r)
        assert r.stack == 0, (kname, r)  # nothing in local memory
        assert r.registers * shapes[kname].block <= REGISTERS_PER_SM, (kname, r, shapes[kname])
        assert r.shared <= 48 * 1024


def test_the_gpu_workloads_fit_their_multiprocessors():
    # the benchmark's contraction at its GPU size: 8 x 8 accumulators per thread,
    # double-buffered 128 x 16 tiles, under 255 registers and 48 KiB
    text, shapes = _ptx(_t((4096, 4096)) @ _t((4096, 4096), seed=1))
    ((name, r),) = ptx.assemble(text).items()
    assert (shapes[name].grid, shapes[name].block) == (1024, 256)
    assert r.spill_stores == 0 and r.registers <= 255 and r.shared == 2 * 16640


def test_other_compute_capabilities_assemble():
    text, _ = _ptx(_t((64, 1024)).softmax(-1), "sm_80")
    assert ptx.assemble(text, "sm_80")


def test_rejected_ptx_reports_what_ptxas_said():
    text, _ = _ptx(_t((64, 64)) + 1)
    with pytest.raises(ptx.PtxasError, match="ptxas -arch=sm_90 rejected the PTX:\n.*error"):
        ptx.assemble(text.replace("ret;", "ret.bogus;"), "sm_90")


def test_a_minimum_of_resident_blocks_caps_the_registers(monkeypatch):
    # MLFUSE_CUDA_MIN_BLOCKS=2: .minnctapersm 2, and ptxas fits the product's
    # 256-thread blocks two to a multiprocessor (128 registers), spilling a little
    monkeypatch.setenv("MLFUSE_CUDA_MIN_BLOCKS", "2")
    text, shapes = _ptx(_t((1024, 1024)) @ _t((1024, 1024), seed=1))
    assert ".minnctapersm 2" in text
    ((name, r),) = ptx.assemble(text).items()
    assert r.registers <= 128 and r.registers * shapes[name].block * 2 <= REGISTERS_PER_SM
    monkeypatch.setenv("MLFUSE_CUDA_MIN_BLOCKS", "two")
    with pytest.raises(ValueError, match="MLFUSE_CUDA_MIN_BLOCKS must be a positive integer"):
        _ptx(_t((64, 64)) + 1)
