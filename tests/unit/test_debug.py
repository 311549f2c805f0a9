"""Debug output: MLFUSE_DEBUG levels, the MLFUSE_DEBUG_DIR folder, schedule pictures."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor
from mlfuse.driver import compile_module
from mlfuse.graph import collect, to_module
from mlfuse.passes import LAZY_PIPELINE
from mlfuse.targets import get_target
from mlfuse.utils import debug_level


def _matmul_softmax(n: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = Tensor(rng.standard_normal((n, 16)).astype(np.float32))
    w = Tensor(rng.standard_normal((16, 4)).astype(np.float32))
    return x, w, (x @ w).relu().softmax(-1)


# ---------------------------------------------------------------------------
# MLFUSE_DEBUG
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["yes", "-1", "9", "1.5", "true"])
def test_invalid_debug_level_is_an_error_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv("MLFUSE_DEBUG", value)
    with pytest.raises(ValueError) as e:
        debug_level()
    msg = str(e.value)
    assert "MLFUSE_DEBUG" in msg and repr(value) in msg
    assert all(f"{k} (" in msg for k in range(5))  # the accepted values


@pytest.mark.parametrize("value,level", [("", 0), ("0", 0), ("2", 2), (" 4 ", 4)])
def test_valid_debug_levels(monkeypatch, value, level):
    monkeypatch.setenv("MLFUSE_DEBUG", value)
    assert debug_level() == level


def test_invalid_debug_level_stops_a_realize(monkeypatch):
    monkeypatch.setenv("MLFUSE_DEBUG", "yes")
    x = Tensor(np.arange(7, dtype=np.float32))
    with pytest.raises(ValueError, match="MLFUSE_DEBUG"):
        (x * 3 + 11).numpy()


def _run(prog: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", prog],
        env={"PATH": "/usr/bin:/bin", "MLFUSE_CACHE": "0", **env},  # compiles: what is printed
        capture_output=True,
        text=True,
    )


MATMUL = (
    "import numpy as np; from mlfuse import Tensor;"
    "x = Tensor(np.ones((64, 32), np.float32)); w = Tensor(np.ones((32, 48), np.float32));"
    "print(((x @ w).relu() + 1).sum().numpy())"
)


def test_debug_1_prints_each_pass_time():
    p = _run(MATMUL, MLFUSE_DEBUG="1")
    assert p.returncode == 0, p.stderr
    err = p.stderr
    assert re.search(
        r"lazy: lazy-canonicalize [\d.]+ ms, split-reduces [\d.]+ ms, push-views", err
    ), err
    assert re.search(r"kernel: legalize-float-types [\d.]+ ms, .*cpu-entry-points [\d.]+ ms", err)
    assert re.search(r"compile: cpu [\d.]+ ms", err)
    assert "GB/s" not in err  # kernels as they run are level 2


def test_debug_2_prints_bandwidth_and_flop_rate():
    p = _run(MATMUL, MLFUSE_DEBUG="2")
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if "GB/s" in ln]
    assert lines, p.stderr
    # the contraction reports GFLOP/s; every launch its time and GB/s
    contraction = [ln for ln in lines if "space [64, 48, 32]" in ln]
    assert contraction and "GFLOP/s" in contraction[0], lines
    assert all(re.search(r"\| \d+ us, [\d.]+ GB/s", ln) for ln in lines), lines


def test_flops_estimate_of_a_contraction():
    x, w, y = _matmul_softmax()
    items = mlfuse.schedule(y)
    (mm,) = [it for it in items if it.space == (8, 4, 16)]
    assert mm.flops == 2 * 8 * 4 * 16
    assert all(it.flops == 0 for it in items if it is not mm)  # softmax: no contraction


# ---------------------------------------------------------------------------
# MLFUSE_DEBUG_DIR
# ---------------------------------------------------------------------------


@pytest.mark.cpu  # CPU semantics (see tests/conftest.py)
def test_debug_dir_has_every_stage(monkeypatch, tmp_path):
    monkeypatch.setenv("MLFUSE_DEBUG_DIR", str(tmp_path))
    x, w, y = _matmul_softmax(n=11, seed=3)  # a shape no other test compiles: not cached
    got = y.numpy()
    xn, wn = x.numpy(), w.numpy()
    h = np.maximum(xn @ wn, 0)
    e = np.exp(h - h.max(-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=1e-5)

    (d,) = tmp_path.iterdir()
    assert re.fullmatch(r"0001-[0-9a-f]{8}", d.name)
    lazy = (d / "00-lazy.mlir").read_text()
    assert "lazy.reduce" in lazy and "kernel.func" not in lazy
    for i, name in enumerate(LAZY_PIPELINE, 1):
        assert (d / f"{i:02d}-{name}.mlir").exists(), name
    assert (
        "kernel.launch" in (d / f"{len(LAZY_PIPELINE):02d}-window-kernel-inputs.mlir").read_text()
    )
    kernels = d / "kernels"
    assert "kernel.func" in (kernels / "00-kernels.mlir").read_text()
    pipeline = get_target("cpu").kernel_pipeline
    for i, name in enumerate(pipeline, 1):
        assert (kernels / f"{i:02d}-{name}.mlir").exists(), name
    assert "scf.parallel" in (kernels / "05-convert-kernel-to-loops.mlir").read_text()
    assert "llvm.func" in (kernels / f"{len(pipeline):02d}-cpu-entry-points.mlir").read_text()
    ll = (d / "cpu" / "llvm.ll").read_text()
    o3 = (d / "cpu" / "llvm-O3.ll").read_text()
    asm = (d / "cpu" / "kernels.s").read_text()
    assert re.search(r'define void @"mlfuse_kernel_\d+"\(ptr', ll)
    assert re.search(r"define void @mlfuse_kernel_\d+\(ptr", o3)
    assert ll != o3 and "x float>" in o3  # O3 vectorized it
    assert re.search(r"^mlfuse_kernel_\d+:", asm, re.M)

    summary = (d / "summary.txt").read_text()
    assert "2 kernel(s) for cpu" in summary
    assert "k0: mul reduce from matmul" in summary and "reads in0, in1; writes buf0" in summary
    assert "refused merges:\n  k0 (matmul) -> k1" in summary
    assert "buf1: 176 B (output)" in summary
    assert re.search(r"k0: mlfuse_kernel_\d+", summary)
    assert re.search(r"lazy: lazy-canonicalize [\d.]+ ms", summary)
    assert re.search(r"compile: cpu [\d.]+ ms", summary)


def test_debug_dir_numbers_schedules_and_names_cached_kernels(monkeypatch, tmp_path):
    monkeypatch.setenv("MLFUSE_DEBUG_DIR", str(tmp_path / "dbg"))
    a = Tensor(np.arange(13, dtype=np.float32))
    (a * 5 - 2).numpy()
    module = to_module(collect([(a * 5 - 2).node]))  # the same kernel: from the cache
    compile_module(module)
    first, second = sorted((tmp_path / "dbg").iterdir())
    assert first.name.startswith("0001-") and second.name.startswith("0002-")
    assert first.name[5:] == second.name[5:]  # the same lazy IR, the same hash
    assert (first / "kernels").is_dir()
    assert not (second / "kernels").exists()
    assert "k0: cached (compiled by an earlier schedule)" in (second / "summary.txt").read_text()


def test_no_debug_dir_without_the_variable(monkeypatch, tmp_path):
    monkeypatch.delenv("MLFUSE_DEBUG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    (Tensor(np.arange(17, dtype=np.float32)) * 7).numpy()
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------
# schedule pictures
# ---------------------------------------------------------------------------


def test_schedule_names_the_buffers_between_kernels():
    x, w, y = _matmul_softmax()
    s = mlfuse.schedule(y)
    assert [it.reads for it in s] == [["in0", "in1"], ["buf0"]]
    assert [it.writes for it in s] == [["buf0"], ["buf1"]]
    assert s.inputs == ["in0", "in1"] and s.outputs == ["buf1"]
    assert s.buffers == {"in0": 512, "in1": 256, "buf0": 128, "buf1": 128}


def test_a_reused_buffer_gets_a_new_version():
    x = Tensor(np.ones((64, 64), np.float32))
    c = (((x * 2).contiguous() + 1).contiguous() * 3).contiguous().sum(0)
    s = mlfuse.schedule(c)
    # k2 writes the buffer k0 wrote (dead after k1): one writer per name
    assert [it.writes for it in s] == [["buf0"], ["buf1"], ["buf0#2"], ["buf2"]]
    assert s[3].reads == ["buf0#2"]


def test_dot_shows_kernels_buffers_and_reasons(tmp_path):
    x, w, y = _matmul_softmax()
    s = mlfuse.schedule(y)
    dot = s.to_dot()
    assert dot.startswith("digraph schedule {") and dot.rstrip().endswith("}")
    assert '"buf:in0" -> "kernel:k0";' in dot and '"buf:buf0" -> "kernel:k1";' in dot
    assert '"kernel:k0" -> "buf:buf0" [label="reduce of reduce"]' in dot
    assert '"kernel:k1" -> "buf:buf1" [label="output"]' in dot
    assert re.search(r'"kernel:k0" -> "kernel:k1" \[[^]]*dashed[^]]*not fused: reduce of', dot)
    assert 'label="k0: mul reduce\\nfrom matmul\\nspace [8, 4, 16]' in dot
    assert dot.count("{") == dot.count("}")
    s.write_dot(tmp_path / "s.dot")
    assert (tmp_path / "s.dot").read_text() == dot


def test_html_is_self_contained_and_shows_the_flow(tmp_path):
    x, w, y = _matmul_softmax()
    s = mlfuse.schedule(y)
    s.write_html(tmp_path / "s.html")
    page = (tmp_path / "s.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script" not in page and "http" not in page  # nothing from the network
    assert 'id="kernel-k0"' in page and 'id="kernel-k1"' in page
    # the picture: an inline SVG with a box per kernel, an ellipse per buffer,
    # an arrow per read and write, and the refused merge dashed
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert svg.count("<rect") == 2 and svg.count("<ellipse") == len(s.buffers) == 4
    reads_writes = sum(len(it.reads) + len(it.writes) for it in s)
    assert svg.count('marker-end="url(#arrow)"') == reads_writes == 5
    assert svg.count("stroke-dasharray") == 1 and ">not fused: reduce of reduce<" in svg
    assert ">k0: mul reduce</text>" in svg and ">buf1 (output 0)</text>" in svg
    assert "because: reduce of reduce" in page and "read by k1" in page
    assert "<li class='refused'>k0 -&gt; k1: reduce of reduce" in page
    # the buffer table: name, bytes, role, writer, reason, readers
    assert (
        "<tr id='buf-buf0'><td class='mono'>buf0</td><td>128</td><td></td><td>k0</td>"
        "<td>reduce of reduce</td><td>k1</td></tr>"
    ) in page
    assert "<td>input</td><td>-</td><td></td><td>k0</td>" in page
    assert "<td>output 0</td><td>k1</td><td>output</td>" in page


def test_pictures_of_an_empty_schedule():
    s = mlfuse.schedule(Tensor(np.ones(3, np.float32)))
    assert s.to_dot().strip() == (
        "digraph schedule {\n  rankdir=TB;\n"
        '  node [fontname="monospace", fontsize=10];\n'
        '  edge [fontname="monospace", fontsize=9];\n}'
    )
    assert "0 kernel(s)" in s.to_html()


def test_module_docs_name_the_debug_dir_layout():
    doc = Path(mlfuse.debug_dir.__file__).read_text()
    assert "summary.txt" in doc and "llvm-O3.ll" in doc


def test_cuda_target_writes_nvptx_ir_and_ptx_without_a_gpu(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from xdsl.dialects.builtin import ModuleOp

    from mlfuse.dialects import kernel
    from mlfuse.driver import run_passes
    from mlfuse.targets.cuda.target import CudaTarget

    x = Tensor(np.ones((32, 64), np.float32))
    module = to_module(collect([x.softmax(-1).node]))
    run_passes(module, LAZY_PIPELINE)
    kernels = ModuleOp([op.clone() for op in module.ops if isinstance(op, kernel.FuncOp)])
    run_passes(kernels, CudaTarget.kernel_pipeline)
    # the arch comes from the device; stand in for the driver so no GPU is needed
    monkeypatch.setattr(CudaTarget, "driver", property(lambda self: SimpleNamespace(arch="sm_80")))
    files = CudaTarget().write_artifacts(kernels, tmp_path)
    assert files == ["nvptx.ll", "kernels.ptx"]
    assert "nvptx64" in (tmp_path / "nvptx.ll").read_text()
    ptx = (tmp_path / "kernels.ptx").read_text()
    assert ".target sm_80" in ptx and ".entry k0" in ptx
