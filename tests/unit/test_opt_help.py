"""mlfuse-opt's --help and -t targets: mlfuse's passes first, no target that crashes on our IR."""

import subprocess
import sys
from pathlib import Path

import pytest

from mlfuse.passes import LAZY_PIPELINE, PASSES
from mlfuse.targets import get_target
from mlfuse.tools.mlfuse_opt import MlfuseOptMain, main

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = ROOT / "examples" / "softmax.mlir"


def _help(capsys) -> str:
    assert main(["--help"]) == 0
    return capsys.readouterr().out


def test_help_lists_mlfuse_passes_with_description_and_options_before_xdsl(capsys):
    out = _help(capsys)
    ours = out.index("mlfuse passes (-p):")
    theirs = out.index("xDSL's passes (-p")
    assert ours < out.index("output targets (-t):") < theirs
    mine = out[ours:theirs]
    for name in PASSES:
        assert f"\n  {name} " in mine, name
    # the first docstring line and the dataclass fields, as -p spells them
    line = next(ln for ln in mine.splitlines() if ln.strip().startswith("group-reduces "))
    assert "Group ops into kernels" in line
    after = mine[mine.index(line) + len(line) :].splitlines()[1]
    assert after.strip() == (
        "options: max-buffers=32 horizontal=true recompute=3 max-ops=2048 max-loops=16 "
        "factor-elements=32768"
    )
    assert "convert-scf-to-cf" in out[theirs:]  # xDSL's passes are still listed
    assert "cpu-optimize-plan" in mine and "gpu-map-plan" in mine  # the targets' passes


def test_help_options_are_accepted_by_the_pass_parser(capsys, tmp_path):
    # every option the help shows parses back in -p (with the value it shows)
    out = _help(capsys)
    mine = out[out.index("mlfuse passes (-p):") : out.index("output targets (-t):")]
    name = None
    specs = []
    for ln in mine.splitlines():
        words = ln.split()
        if not words:
            continue
        if words[0] == "options:":
            specs.append(f"{name}{{{' '.join(w for w in words[1:] if not w.endswith('=()'))}}}")
        elif ln.startswith("  ") and not ln.startswith("    ") and words[0] != "options:":
            name = words[0]
    assert len(specs) >= 6
    from mlfuse.driver import make_pass

    for spec in specs:
        make_pass(spec)  # raises on an unknown option


def test_xdsl_targets_that_crash_on_mlfuse_ir_are_gone():
    m = MlfuseOptMain(args=[str(SOFTMAX)])
    assert list(m.available_targets) == ["llvm", "llvm-opt", "asm", "ptx", "nvptx-llvm", "mlir"]
    assert {"x86-asm", "riscv-asm", "arm-asm"} <= set(m.removed_targets)


@pytest.mark.parametrize("target", ["x86-asm", "riscv-asm", "arm-asm", "wgsl", "csl"])
def test_removed_targets_are_refused_with_a_clear_message(capsys, target):
    assert main([str(SOFTMAX), "-t", target]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "usage" not in err
    assert f"'{target}' is xDSL's target" in err and "cannot take mlfuse IR" in err
    assert "-t asm prints the host's assembly" in err


KERNELS = ",".join(LAZY_PIPELINE)
CPU = ",".join(LAZY_PIPELINE + get_target("cpu").kernel_pipeline)
GPU = ",".join(LAZY_PIPELINE + get_target("cuda").kernel_pipeline)


@pytest.mark.parametrize("target", ["mlir", "llvm", "llvm-opt", "asm", "ptx", "nvptx-llvm"])
@pytest.mark.parametrize("passes", ["", KERNELS, CPU, GPU], ids=["lazy", "kernel", "cpu", "gpu"])
def test_every_target_works_or_gives_one_line(target, passes):
    argv = [sys.executable, "-m", "mlfuse.tools.mlfuse_opt", str(SOFTMAX), "-t", target]
    p = subprocess.run(argv + (["-p", passes] if passes else []), capture_output=True, text=True)
    works = (
        target == "mlir"
        or (passes == CPU and target in ("llvm", "llvm-opt", "asm"))
        or (passes == GPU and target in ("ptx", "nvptx-llvm"))
    )
    if works:
        assert p.returncode == 0 and p.stdout and not p.stderr, p.stderr
    else:
        assert p.returncode == 1, (p.returncode, p.stderr)
        assert p.stderr.startswith("mlfuse-opt: error: ") and p.stderr.count("\n") == 1
        assert not p.stdout


def test_asm_target_prints_the_hosts_assembly(capsys):
    assert main([str(SOFTMAX), "-p", CPU, "-t", "asm"]) == 0
    out = capsys.readouterr().out
    assert "\nk0:" in out and "\nk0.body:" in out
    assert any(op in out for op in ("\tret", "\tretq", "\tbx\tlr"))  # machine code, not IR
