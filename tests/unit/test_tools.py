"""mlfuse-opt, the LLVM target, debug output, memory planning and the demo."""

import subprocess
import sys
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor
from mlfuse.passes import LAZY_PIPELINE, all_passes
from mlfuse.targets import get_target
from mlfuse.tools.mlfuse_opt import main as opt_main

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = ROOT / "examples" / "softmax.mlir"
FULL = LAZY_PIPELINE + get_target("cpu").kernel_pipeline
GPU_FULL = LAZY_PIPELINE + get_target("cuda").kernel_pipeline


def opt(capsys, *argv: str) -> str:
    code = opt_main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


PLAN_REWRITES = {  # passes with options, run on the outlined kernels
    "plan-vectorize": "plan-vectorize{dim=1 width=4}",
    "plan-unroll": "plan-unroll{dim=0 factor=2}",
    "plan-interchange": "plan-interchange{order=0,1}",
}


@pytest.mark.parametrize("name", list(all_passes()))
def test_every_pass_runs_and_its_output_reparses(capsys, tmp_path, name):
    if name in PLAN_REWRITES:
        upto = LAZY_PIPELINE + (PLAN_REWRITES[name],)
    elif name == "lazy-autodiff":  # then the gradients through the whole lazy pipeline
        upto = ("lazy-autodiff",) + LAZY_PIPELINE
    elif name in FULL:
        upto = FULL[: FULL.index(name) + 1]
    elif name == "emulate-nvvm":  # cuda_emu's step after the CUDA pipeline
        upto = GPU_FULL + ("emulate-nvvm",)
    else:  # a GPU pass: the CUDA pipeline up to it
        names = [spec.split("{")[0] for spec in GPU_FULL]
        assert name in names
        upto = GPU_FULL[: names.index(name) + 1]
    out = opt(capsys, str(SOFTMAX), "-p", ",".join(upto))
    f = tmp_path / "out.mlir"
    f.write_text(out)
    assert opt(capsys, str(f)) == out  # re-parses and prints identically


def test_llvm_target_prints_ir_llvmlite_parses(capsys):
    out = opt(capsys, str(SOFTMAX), "-p", ",".join(FULL), "-t", "llvm")
    mod = llvm.parse_assembly(out)
    mod.verify()
    assert "noalias" in out and "getelementptr inbounds" in out


def test_every_target_adds_its_emitters(capsys):
    out = opt(capsys, str(SOFTMAX), "-p", ",".join(FULL), "-t", "asm")
    assert "\nk0.body:" in out and "\nk0:" in out  # the kernel body and its entry point
    out = opt(capsys, str(SOFTMAX), "-p", ",".join(FULL), "-t", "llvm-opt")
    assert "define void @k0(ptr" in out and "x float>" in out  # vectorized


def test_print_between_passes(capsys):
    out = opt(capsys, str(SOFTMAX), "-p", "lazy-canonicalize,push-views", "--print-between-passes")
    assert "IR after lazy-canonicalize" in out


def test_pass_options(capsys):
    src = (
        "func.func @main(%x: tensor<64x64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {\n"
        "  %s = lazy.reduce add %x [1] : tensor<64x64xf32> -> tensor<64x1xf32>\n"
        "  %a = lazy.reshape %s : tensor<64x1xf32> -> tensor<64xf32>\n"
        "  %m = lazy.reduce max %x [1] : tensor<64x64xf32> -> tensor<64x1xf32>\n"
        "  %b = lazy.reshape %m : tensor<64x1xf32> -> tensor<64xf32>\n"
        "  func.return %a, %b : tensor<64xf32>, tensor<64xf32>\n}\n"
    )
    f = ROOT / "tests" / "unit" / "_two_reduces.mlir"
    try:
        f.write_text(src)
        one = opt(capsys, str(f), "-p", ",".join(LAZY_PIPELINE[:6]))
        two = opt(
            capsys,
            str(f),
            "-p",
            "lazy-canonicalize,push-views,mark-realize,"
            "group-reduces{horizontal=false},outline-kernels",
        )
    finally:
        f.unlink()
    assert one.count("kernel.func") == 1 and two.count("kernel.func") == 2


def test_unknown_pass_is_a_clear_error(capsys):
    assert opt_main([str(SOFTMAX), "-p", "no-such-pass"]) == 1
    err = capsys.readouterr().err
    assert "no-such-pass" in err and "push-views" in err and "Traceback" not in err


def test_debug_levels_print_kernels_and_ir():
    prog = (
        "import numpy as np; from mlfuse import Tensor;"
        "x = Tensor(np.ones((33, 17), np.float32));"
        "print((x.exp() - x.max(1, keepdim=True)).sum(1).numpy()[0])"
    )
    for level, expect in [
        ("1", "scheduled 1 kernel"),
        ("2", "outputs: output |"),  # the kernel, its reasons and its time
        ("4", "IR after group-reduces"),
    ]:
        p = subprocess.run(
            [sys.executable, "-c", prog],
            env={"MLFUSE_DEBUG": level, "MLFUSE_CACHE": "0", "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
        )
        assert p.returncode == 0, p.stderr
        assert expect in p.stderr, (level, p.stderr[-2000:])


def test_memory_is_reused_and_freed():
    x = Tensor(np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32))
    a = (x * 2).contiguous()  # 16 KiB intermediate
    b = (a + 1).contiguous()  # another; a is dead after this kernel
    c = (b * 3).contiguous()  # can take a's buffer
    out = c.sum(0)
    ir = mlfuse.schedule_ir(out)
    assert ir.count("kernel.alloc") == 3  # four buffers, one reused
    assert ir.count("kernel.free") == 2
    assert "reused = 1" in ir
    assert "peak_bytes = 32768" in ir  # two 16 KiB buffers at once; the output comes after a free
    np.testing.assert_allclose(out.numpy(), ((x.numpy() * 2 + 1) * 3).sum(0), rtol=1e-5)


@pytest.mark.cpu  # CPU semantics (see tests/conftest.py)
def test_demo_runs_and_checks_against_numpy():
    p = subprocess.run([sys.executable, "-m", "mlfuse.demo"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "-> OK" in p.stdout and "kernel.func" in p.stdout
    assert "its loops as the cpu target plans them: [parallel" in p.stdout
    assert "vector" in p.stdout.rsplit("plans them:", 1)[1]
