"""mlfuse's passes, by their ``mlfuse-opt`` name.

One table serves both ``mlfuse-opt`` and the driver; each entry imports its
pass lazily, so listing names costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _lazy_canonicalize():
    from mlfuse.passes.lazy_canonicalize import LazyCanonicalize

    return LazyCanonicalize


def _push_views():
    from mlfuse.passes.push_views import PushViews

    return PushViews


def _mark_realize():
    from mlfuse.passes.mark_realize import MarkRealize

    return MarkRealize


def _group_reduces():
    from mlfuse.passes.group_reduces import GroupReduces

    return GroupReduces


def _outline_kernels():
    from mlfuse.passes.outline_kernels import OutlineKernels

    return OutlineKernels


def _plan_memory():
    from mlfuse.passes.plan_memory import PlanMemory

    return PlanMemory


def _kernel_to_loops():
    from mlfuse.lowering.kernel_to_loops import ConvertKernelToLoops

    return ConvertKernelToLoops


def _parallel_to_cpu():
    from mlfuse.lowering.parallel_to_cpu import ConvertParallelToCpu

    return ConvertParallelToCpu


def _loops_to_llvm():
    from mlfuse.lowering.loops_to_llvm import ConvertLoopsToLlvm

    return ConvertLoopsToLlvm


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "lazy-canonicalize": _lazy_canonicalize,
    "push-views": _push_views,
    "mark-realize": _mark_realize,
    "group-reduces": _group_reduces,
    "outline-kernels": _outline_kernels,
    "plan-memory": _plan_memory,
    "convert-kernel-to-loops": _kernel_to_loops,
    "convert-parallel-to-cpu": _parallel_to_cpu,
    "convert-loops-to-llvm": _loops_to_llvm,
}

LAZY_PIPELINE = (
    "lazy-canonicalize",
    "push-views",
    "mark-realize",
    "group-reduces",
    "outline-kernels",
    "plan-memory",
)
"""Tensor program -> kernels and a schedule."""

CPU_KERNEL_PIPELINE = (
    "convert-kernel-to-loops",
    "convert-parallel-to-cpu",
    "convert-scf-to-cf",
    "convert-loops-to-llvm",
)
"""Kernels -> llvm dialect for the CPU (convert-scf-to-cf is xDSL's)."""


def get_pass(name: str) -> type[ModulePass]:
    """The pass class registered as ``name``; unknown names list the known ones."""
    if name in PASSES:
        return PASSES[name]()
    from xdsl.transforms import get_all_passes

    xdsl_passes = get_all_passes()
    if name in xdsl_passes:
        return xdsl_passes[name]()
    raise KeyError(f"unknown pass '{name}'; mlfuse passes: {', '.join(PASSES)} (and xDSL's passes)")
