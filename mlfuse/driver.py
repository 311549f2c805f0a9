"""The Python driver: pipeline assembly, the kernel cache, debug output.

``compile_module`` takes a module in the lazy dialect (one ``func.func`` over
tensors) through the lazy pipeline to kernels and a schedule, lowers every
kernel not already in the cache with its target's kernel pipeline and has the
target compile it (the cache is keyed by the target's name and the kernel's
text with its name and annotations stripped), and returns a runnable
:class:`Compiled`. The driver knows targets only through the protocol of
:mod:`mlfuse.targets`.

Environment:

* ``MLFUSE_DEBUG=1``: one line per compiled schedule (kernels, pass time);
  ``2``: every kernel as it runs, with its ops, bytes and why its outputs are
  materialized; ``3``: also the kernel IR; ``4``: the IR after every pass.
* ``MLFUSE_VERIFY=0``: skip the verifier between passes (on by default).
* ``MLFUSE_CACHE=0``: no disk cache of compiled code; ``MLFUSE_CACHE_DIR`` moves it
  and ``MLFUSE_CACHE_MAX_MB`` bounds it (see :mod:`mlfuse.runtime.disk_cache`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, MemRefType, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from mlfuse.dialects import kernel
from mlfuse.passes import LAZY_PIPELINE, get_pass
from mlfuse.runtime import compile_cache
from mlfuse.targets import CompiledKernel, Target, get_target
from mlfuse.utils import debug_level


def make_context() -> Context:
    """A context with every dialect mlfuse reads or writes."""
    from xdsl.dialects import arith, builtin, cf, llvm, math, memref, scf, vector

    from mlfuse.dialects.kernel import Kernel
    from mlfuse.dialects.lazy import Lazy

    ctx = Context()
    for d in (
        builtin.Builtin,
        func.Func,
        arith.Arith,
        math.Math,
        scf.Scf,
        cf.Cf,
        memref.MemRef,
        vector.Vector,
        llvm.LLVM,
        Lazy,
        Kernel,
    ):
        ctx.load_dialect(d)
    return ctx


@dataclass
class PassTiming:
    name: str
    seconds: float


def make_pass(spec: str) -> ModulePass:
    """The pass ``spec`` names, with its options: ``convert-kernel-to-loops{grid=true}``."""
    if "{" not in spec:
        return get_pass(spec)()
    from xdsl.utils.arg_spec import parse_pipeline

    (arg,) = parse_pipeline(spec)
    return get_pass(arg.name).from_pass_spec(arg)


def run_passes(
    module: ModuleOp,
    names: Sequence[str],
    ctx: Context | None = None,
    timings: list[PassTiming] | None = None,
) -> ModuleOp:
    """Apply the named passes in order, verifying after each unless MLFUSE_VERIFY=0."""
    ctx = ctx or make_context()
    verify = os.environ.get("MLFUSE_VERIFY", "1") != "0"
    level = debug_level()
    for name in names:
        t0 = time.perf_counter()
        make_pass(name).apply(ctx, module)
        if verify:
            module.verify()
        if timings is not None:
            timings.append(PassTiming(name, time.perf_counter() - t0))
        if level >= 4:
            print(f"// -----// IR after {name} //----- //", file=sys.stderr)
            print(module, file=sys.stderr)
    return module


# ---------------------------------------------------------------------------
# what a schedule does, for users
# ---------------------------------------------------------------------------


def _nbytes(t) -> int:
    from mlfuse.dtypes import from_ir

    assert isinstance(t, MemRefType)
    return t.get_shape()[0] * from_ir(t.element_type).itemsize


def _strings(op: Operation, key: str) -> list[str]:
    a = op.attributes.get(key)
    return [s.data for s in a.data] if isinstance(a, ArrayAttr) else []  # type: ignore[union-attr]


@dataclass
class ScheduleItem:
    """One kernel launch of a schedule, and why it is a separate kernel."""

    name: str
    ops: list[str]
    origin: list[str]
    space: tuple[int, ...]
    inputs: list[int]  # bytes of each input buffer
    outputs: list[int]  # bytes of each output buffer
    reasons: list[str]  # why each output is materialized
    ir: str = field(repr=False)

    @property
    def bytes_read(self) -> int:
        return sum(self.inputs)

    @property
    def bytes_written(self) -> int:
        return sum(self.outputs)

    def __str__(self) -> str:
        origin = f" from {', '.join(self.origin)}" if self.origin else ""
        return (
            f"{self.name}: {' '.join(self.ops) or 'copy'}{origin} | space {list(self.space)} | "
            f"reads {self.bytes_read} B, writes {self.bytes_written} B | "
            f"outputs: {', '.join(self.reasons)}"
        )


class Schedule(list):
    """The kernels of a schedule in launch order (:class:`ScheduleItem`), and
    ``not_fused``: every merge the scheduler refused, with both kernels, their
    front-end origins and the reason (``k0 (matmul, add, relu) -> k1 (matmul,
    add): expand of reduce`` when k1 reads a value k0 stores; ``k0 (...) + k1
    (...): reason`` for kernels that were not merged)."""

    def __init__(self, items=(), not_fused=()):
        super().__init__(items)
        self.not_fused: list[str] = list(not_fused)

    def __str__(self) -> str:
        lines = [str(i) for i in self]
        lines += [f"not fused: {r}" for r in self.not_fused]
        return "\n".join(lines)


def explain(module: ModuleOp) -> Schedule:
    """The launches of a scheduled module, in order, and its refused merges."""
    kernels = {op.sym_name.data: op for op in module.ops if isinstance(op, kernel.FuncOp)}
    items = Schedule()
    for f in module.ops:
        if not isinstance(f, func.FuncOp):
            continue
        items.not_fused += _strings(f, "not_fused")
        for op in f.body.walk():
            if isinstance(op, kernel.LaunchOp):
                k = kernels[op.callee.string_value()]
                items.append(
                    ScheduleItem(
                        name=k.sym_name.data,
                        ops=_strings(k, "ops"),
                        origin=_strings(k, "origin"),
                        space=k.space_shape,
                        inputs=[_nbytes(v.type) for v in op.ins],
                        outputs=[_nbytes(v.type) for v in op.outs],
                        reasons=_strings(k, "reasons"),
                        ir=str(k),
                    )
                )
    return items


# ---------------------------------------------------------------------------
# compilation with a kernel cache
# ---------------------------------------------------------------------------


def kernel_key(k: kernel.FuncOp) -> str:
    """The kernel's text without its name and annotations (equal kernels compile once)."""
    c = k.clone()
    c.attributes.clear()
    c.sym_name = StringAttr("kernel")
    return str(c)


_cache = compile_cache.kernels
"""(target name, kernel key) -> compiled kernel (the disk cache is below it)."""
_counter = [0]


class Compiled:
    """A compiled schedule: run it, or look at what it does. ``module`` is the
    kernel-dialect module (kernels and schedule); one loaded from the disk cache
    parses its text when first asked for it."""

    def __init__(
        self,
        module: ModuleOp | None,
        program,
        items: list[ScheduleItem],
        timings: list[PassTiming],
        text: str | None = None,
    ):
        self._module, self._text = module, text
        self.program = program  # runtime.executor.Program
        self.items = items
        self.timings = timings

    @property
    def module(self) -> ModuleOp:
        if self._module is None:
            from xdsl.parser import Parser

            self._module = Parser(make_context(), self._text or "").parse_module()
        return self._module

    @property
    def peak_bytes(self) -> int:
        sched = schedule_of(self.module)
        a = sched.attributes.get("peak_bytes")
        return a.value.data if isinstance(a, IntegerAttr) else 0


def schedule_of(module: ModuleOp) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            return op
    raise ValueError("module has no schedule")


def compile_kernels(
    kernels: list[kernel.FuncOp],
    target: Target,
    timings: list[PassTiming] | None = None,
) -> dict[str, CompiledKernel]:
    """name -> compiled kernel for ``kernels`` on ``target``, compiling the ones not cached.

    The kernels not in the cache are renamed apart, lowered together by the
    target's kernel pipeline and compiled in one go.
    """
    keys = {k.sym_name.data: (target.name, kernel_key(k)) for k in kernels}
    todo: dict[tuple[str, str], kernel.FuncOp] = {}
    for k in kernels:
        if keys[k.sym_name.data] not in _cache:
            todo.setdefault(keys[k.sym_name.data], k)
    if todo:
        compile_cache.kernels_from_disk(todo, target)
    if todo:
        clones, names = [], {}
        for key, k in todo.items():
            c = k.clone()
            c.attributes.clear()
            _counter[0] += 1
            c.sym_name = StringAttr(f"mlfuse_kernel_{_counter[0]}")
            clones.append(c)
            names[key] = c.sym_name.data
        mod = ModuleOp(clones)
        run_passes(mod, target.kernel_pipeline, timings=timings)
        compiled = target.compile(mod)
        for key, unique in names.items():
            if unique not in compiled:
                raise RuntimeError(f"target '{target.name}' did not compile kernel {unique}")
            compile_cache.remember(key, compiled[unique])
        compile_cache.kernels_to_disk(names, compiled, target)
    out = {}
    for name, key in keys.items():
        out[name] = _cache[key]
        _cache.move_to_end(key)
    return out


def compile_module(
    module: ModuleOp, target: Target | str | None = None, cache_key: str | None = None
) -> Compiled:
    """Lazy-dialect module -> scheduled program compiled for ``target`` (None: the
    default). With a ``cache_key`` (naming the program, as ``graph`` does), the
    result is saved to the disk cache, and :func:`load_compiled` finds it there."""
    from mlfuse.runtime.executor import Program

    tgt = target if isinstance(target, Target) else get_target(target)
    timings: list[PassTiming] = []
    t0 = time.perf_counter()
    run_passes(module, LAZY_PIPELINE, timings=timings)
    kernels = [op for op in module.ops if isinstance(op, kernel.FuncOp)]
    compiled = compile_kernels(kernels, tgt, timings)
    program = Program(schedule_of(module), compiled, tgt)
    result = Compiled(module, program, explain(module), timings)
    if cache_key is not None:
        launches = {k.sym_name.data: kernel_key(k) for k in kernels}
        compile_cache.save_schedule(cache_key, result, launches, tgt)
    if debug_level() >= 1:
        total = time.perf_counter() - t0
        print(
            f"mlfuse: scheduled {len(result.items)} kernel(s) for {tgt.name} in "
            f"{total * 1e3:.1f} ms (peak {result.peak_bytes} B)",
            file=sys.stderr,
        )
    if debug_level() >= 3:
        print(module, file=sys.stderr)
    return result
