"""mlfuse's passes, by their ``mlfuse-opt`` name.

One table serves both ``mlfuse-opt`` and the driver; each entry imports its
pass lazily, so listing names costs nothing. :data:`PASSES` holds the
target-neutral passes; each registered target adds its own
(:meth:`mlfuse.targets.Target.passes`), and :func:`all_passes` is the union.
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


def _window_kernel_inputs():
    from mlfuse.passes.window_kernel_inputs import WindowKernelInputs

    return WindowKernelInputs


def _expand_math():
    from mlfuse.passes.expand_math import ExpandMath

    return ExpandMath


def _expand_large_sincos():
    from mlfuse.passes.expand_large_sincos import ExpandLargeSinCos

    return ExpandLargeSinCos


def _legalize_float_types():
    from mlfuse.passes.legalize_float_types import LegalizeFloatTypes

    return LegalizeFloatTypes


def _lazy_autodiff():
    from mlfuse.passes.lazy_autodiff import LazyAutodiff

    return LazyAutodiff


def _split_reduces():
    from mlfuse.passes.split_reduces import SplitReduces

    return SplitReduces


def _merge_sums():
    from mlfuse.passes.merge_sums import MergeSums

    return MergeSums


def _plan_vectorize():
    from mlfuse.passes.plan_vectorize import PlanVectorize

    return PlanVectorize


def _plan_unroll():
    from mlfuse.passes.plan_unroll import PlanUnroll

    return PlanUnroll


def _plan_interchange():
    from mlfuse.passes.plan_interchange import PlanInterchange

    return PlanInterchange


def _kernel_to_loops():
    from mlfuse.lowering.kernel_to_loops import ConvertKernelToLoops

    return ConvertKernelToLoops


def _loops_to_llvm():
    from mlfuse.lowering.loops_to_llvm import ConvertLoopsToLlvm

    return ConvertLoopsToLlvm


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "lazy-canonicalize": _lazy_canonicalize,
    "lazy-autodiff": _lazy_autodiff,
    "split-reduces": _split_reduces,
    "push-views": _push_views,
    "mark-realize": _mark_realize,
    "group-reduces": _group_reduces,
    "outline-kernels": _outline_kernels,
    "plan-memory": _plan_memory,
    "window-kernel-inputs": _window_kernel_inputs,
    "legalize-float-types": _legalize_float_types,
    "expand-math": _expand_math,
    "expand-large-sincos": _expand_large_sincos,
    "merge-sums": _merge_sums,
    "plan-vectorize": _plan_vectorize,
    "plan-unroll": _plan_unroll,
    "plan-interchange": _plan_interchange,
    "convert-kernel-to-loops": _kernel_to_loops,
    "convert-loops-to-llvm": _loops_to_llvm,
}

LAZY_PIPELINE = (
    "lazy-canonicalize",
    "split-reduces",
    "push-views",
    "mark-realize",
    "group-reduces",
    "outline-kernels",
    "plan-memory",
    "window-kernel-inputs",
)
"""Tensor program -> kernels and a schedule (a target without buffer windows
drops ``window-kernel-inputs``; see ``Target.lazy_pipeline``)."""


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """mlfuse's passes and those of every registered target, by name."""
    from mlfuse.targets import targets

    out = dict(PASSES)
    for t in targets():
        for name, factory in t.passes().items():
            if name in out and out[name] is not factory:
                raise ValueError(f"target '{t.name}' redefines the pass '{name}'")
            out[name] = factory
    return out


def get_pass(name: str) -> type[ModulePass]:
    """The pass class registered as ``name``; unknown names list the known ones."""
    if name in PASSES:
        return PASSES[name]()
    passes = all_passes()
    if name in passes:
        return passes[name]()
    from xdsl.transforms import get_all_passes

    xdsl_passes = get_all_passes()
    if name in xdsl_passes:
        return xdsl_passes[name]()
    raise KeyError(f"unknown pass '{name}'; mlfuse passes: {', '.join(passes)} (and xDSL's passes)")
