"""The Python driver: pipeline assembly, the kernel cache, debug output.

``compile_module`` takes a module in the lazy dialect (one ``func.func`` over
tensors) through the lazy pipeline to kernels and a schedule, lowers every
kernel not already in the cache with its target's kernel pipeline and has the
target compile it (the cache is keyed by the target's name and the kernel's
text with its name and annotations stripped), and returns a runnable
:class:`Compiled`. The driver knows targets only through the protocol of
:mod:`mlfuse.targets`.

Environment:

* ``MLFUSE_DEBUG=1``: one line per compiled schedule (kernels, compile time)
  and the time of every pass; ``2``: also every kernel as it runs, with its
  ops, bytes, why its outputs are materialized, its time, GB/s and (for
  contractions) GFLOP/s; ``3``: also the kernel IR; ``4``: the IR after every
  pass. Any other value is an error (:func:`mlfuse.utils.debug_level`).
* ``MLFUSE_DEBUG_DIR=path``: a folder per compiled schedule under ``path``
  with the IR after every pass, the target's own artifacts and a summary
  (:mod:`mlfuse.debug_dir`).
* ``MLFUSE_VERIFY``: 0 never verifies, 1 (default) verifies what the lazy
  pipeline makes, 2 verifies after every pass (the tests' setting).
* ``MLFUSE_CACHE=0``: no disk cache of compiled code; ``MLFUSE_CACHE_DIR`` moves it
  and ``MLFUSE_CACHE_MAX_MB`` bounds it (see :mod:`mlfuse.runtime.disk_cache`).
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, MemRefType, ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from mlfuse.debug_dir import DebugDir
from mlfuse.dialects import kernel
from mlfuse.passes import get_pass
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
    """How long one pass (or the target's compile) took.

    ``stage`` is ``"lazy"`` for the lazy pipeline, ``"kernel"`` for the
    target's kernel pipeline and ``"compile"`` for the target's compiler.
    """

    name: str
    seconds: float
    stage: str = "lazy"


def format_timings(timings: Sequence[PassTiming]) -> list[str]:
    """One line per stage: ``lazy: push-views 0.41 ms, ... (total 3.20 ms)``."""
    lines = []
    for stage in dict.fromkeys(t.stage for t in timings):
        ts = [t for t in timings if t.stage == stage]
        each = ", ".join(f"{t.name} {t.seconds * 1e3:.2f} ms" for t in ts)
        total = f" (total {sum(t.seconds for t in ts) * 1e3:.2f} ms)" if len(ts) > 1 else ""
        lines.append(f"{stage}: {each}{total}")
    return lines


def make_pass(spec: str) -> ModulePass:
    """The pass ``spec`` names, with its options: ``convert-kernel-to-loops{grid=true}``."""
    if "{" not in spec:
        return get_pass(spec)()
    from xdsl.utils.arg_spec import parse_pipeline

    (arg,) = parse_pipeline(spec)
    return get_pass(arg.name).from_pass_spec(arg)


def verify_level() -> int:
    """``MLFUSE_VERIFY``: 0 never verifies; 1 (the default) verifies the kernels
    and schedule the lazy pipeline makes (the kernel pipeline's output is
    checked by LLVM's verifier as it is parsed); 2 verifies after every pass,
    so a broken rewrite is caught at the pass that made it (the tests run so)."""
    v = os.environ.get("MLFUSE_VERIFY", "1") or "1"
    if v not in ("0", "1", "2"):
        raise ValueError(
            f"MLFUSE_VERIFY={v!r}: accepted values are 0 (never), 1 (after the lazy "
            "pipeline, the default) and 2 (after every pass)"
        )
    return int(v)


def run_passes(
    module: ModuleOp,
    names: Sequence[str],
    ctx: Context | None = None,
    timings: list[PassTiming] | None = None,
    stage: str = "lazy",
    dump: DebugDir | None = None,
    folder: str = "",
) -> ModuleOp:
    """Apply the named passes in order, verifying as ``MLFUSE_VERIFY`` says
    (:func:`verify_level`).

    Each pass's time goes to ``timings`` (tagged ``stage``); with ``dump``, the
    module after pass ``i`` (from 1) is written to ``folder/NN-<pass>.mlir``.
    """
    ctx = ctx or make_context()
    verify = verify_level()
    level = debug_level()
    for i, name in enumerate(names, 1):
        t0 = time.perf_counter()
        p = make_pass(name)
        p.apply(ctx, module)
        if verify >= 2 or (verify == 1 and stage == "lazy" and i == len(names)):
            module.verify()
        if timings is not None:
            timings.append(PassTiming(p.name, time.perf_counter() - t0, stage))
        if dump is not None:
            dump.write_ir(folder, i, p.name, module)
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
    """One kernel launch of a schedule, and why it is a separate kernel.

    ``reads`` and ``writes`` name the buffers the launch reads and writes, in
    the kernel's argument order (the schedule's names: see :func:`explain`);
    ``flops`` estimates a contraction's floating-point operations (0 for other
    kernels).
    """

    name: str
    ops: list[str]
    origin: list[str]
    space: tuple[int, ...]
    inputs: list[int]  # bytes of each input buffer
    outputs: list[int]  # bytes of each output buffer
    reasons: list[str]  # why each output is materialized
    ir: str = field(repr=False)
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    flops: int = 0

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
    (...): reason`` for kernels that were not merged).

    The buffers between kernels: ``inputs`` (the graph's inputs), ``outputs``
    (the buffers the schedule returns, in order) and ``buffers`` (name ->
    bytes). ``to_dot``/``write_dot`` and ``to_html``/``write_html`` draw the
    kernels, the buffers each reads and writes and the reason for every
    boundary (:mod:`mlfuse.schedule_view`).
    """

    def __init__(self, items=(), not_fused=(), inputs=(), outputs=(), buffers=None):
        super().__init__(items)
        self.not_fused: list[str] = list(not_fused)
        self.inputs: list[str] = list(inputs)
        self.outputs: list[str] = list(outputs)
        self.buffers: dict[str, int] = dict(buffers or {})

    def copy(self) -> Schedule:
        """A new schedule with the same items, refused merges and buffers."""
        return Schedule(self, self.not_fused, self.inputs, self.outputs, self.buffers)

    def __str__(self) -> str:
        lines = [str(i) for i in self]
        lines += [f"not fused: {r}" for r in self.not_fused]
        return "\n".join(lines)

    def to_dot(self) -> str:
        """The schedule as a Graphviz graph (``dot -Tsvg``)."""
        from mlfuse.schedule_view import to_dot

        return to_dot(self)

    def write_dot(self, path) -> None:
        """Write :meth:`to_dot` to ``path``."""
        with open(path, "w") as f:
            f.write(self.to_dot())

    def to_html(self) -> str:
        """The schedule as a self-contained HTML page (no scripts, no network)."""
        from mlfuse.schedule_view import to_html

        return to_html(self)

    def write_html(self, path) -> None:
        """Write :meth:`to_html` to ``path``."""
        with open(path, "w") as f:
            f.write(self.to_html())


def _flops(k: kernel.FuncOp) -> int:
    """2 x the iteration space for a kernel summing products (a contraction), else 0."""
    from xdsl.dialects import arith

    for op in k.walk():
        if isinstance(op, kernel.ReduceOp) and op.reduce_kind == "add":
            if isinstance(op.input.owner, (arith.MulfOp, arith.MuliOp)):
                return 2 * math.prod(k.space_shape)
    return 0


def _outputs_read(k: kernel.FuncOp) -> list[int]:
    """The outputs ``k`` also loads (an update in place reads the buffer it writes)."""
    outs = list(k.outputs)
    loaded = {op.buffer for op in k.walk() if isinstance(op, kernel.LoadOp)}
    return [i for i, a in enumerate(outs) if a in loaded]


class _BufferNames:
    """Names for the buffers of a schedule: arguments by their name (``in0``),
    allocations ``buf0, buf1, ...``, constants ``const0, ...``; a buffer written
    again (a reused allocation, an argument assigned in place) gets a new
    version, ``buf0#2``, so each name has one writer."""

    def __init__(self, sched: func.FuncOp):
        self.base: dict[SSAValue, str] = {}
        self.version: dict[SSAValue, int] = {}
        self.bytes: dict[str, int] = {}
        self.inputs = [self._new(a, a.name_hint or f"in{i}", 1) for i, a in enumerate(sched.args)]
        self._allocs = self._consts = 0

    def _new(self, v: SSAValue, base: str, version: int) -> str:
        self.base[v], self.version[v] = base, version
        self.bytes[self.name(v)] = _nbytes(v.type)
        return self.name(v)

    def define(self, op: Operation) -> None:
        if isinstance(op, kernel.AllocOp):
            self.base[op.result], self.version[op.result] = f"buf{self._allocs}", 0
            self._allocs += 1
        elif isinstance(op, kernel.ConstantOp):
            self._new(op.result, f"const{self._consts}", 1)
            self._consts += 1

    def _source(self, v: SSAValue) -> SSAValue:
        from xdsl.dialects import memref

        while isinstance(v.owner, (memref.ReinterpretCastOp, kernel.WindowOp)):
            v = v.owner.source
        return v

    def name(self, v: SSAValue) -> str:
        v = self._source(v)
        n = self.version.get(v, 1)
        base = self.base.get(v, "?")
        return base if n <= 1 else f"{base}#{n}"

    def write(self, v: SSAValue) -> str:
        v = self._source(v)
        return self._new(v, self.base.get(v, "?"), self.version.get(v, 1) + 1)


def explain(module: ModuleOp) -> Schedule:
    """The launches of a scheduled module, in order, its buffers and its refused merges."""
    kernels = {op.sym_name.data: op for op in module.ops if isinstance(op, kernel.FuncOp)}
    items = Schedule()
    for f in module.ops:
        if not isinstance(f, func.FuncOp):
            continue
        items.not_fused += _strings(f, "not_fused")
        names = _BufferNames(f)
        items.inputs += names.inputs
        for op in f.body.walk():
            names.define(op)
            if isinstance(op, func.ReturnOp):
                items.outputs += [names.name(v) for v in op.operands]
            if isinstance(op, kernel.LaunchOp):
                k = kernels[op.callee.string_value()]
                reads = [names.name(v) for v in op.ins]
                reads += [names.name(op.outs[i]) for i in _outputs_read(k)]  # in place
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
                        reads=reads,
                        writes=[names.write(v) for v in op.outs],
                        flops=_flops(k),
                    )
                )
        items.buffers.update(names.bytes)
    return items


# ---------------------------------------------------------------------------
# compilation with a kernel cache
# ---------------------------------------------------------------------------


def kernel_key(k: kernel.FuncOp) -> str:
    """The kernel's text without its name, annotations and value names (equal
    kernels compile once)."""
    c = k.clone()
    c.attributes.clear()
    c.sym_name = StringAttr("kernel")
    for a in c.body.block.args:
        a.name_hint = None
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
    dump: DebugDir | None = None,
    texts: dict[str, str] | None = None,
) -> dict[str, CompiledKernel]:
    """name -> compiled kernel for ``kernels`` on ``target``, compiling the ones not cached.
    ``texts``: each kernel's :func:`kernel_key` where the caller has it already.

    The kernels not in the cache are renamed apart, lowered together by the
    target's kernel pipeline and compiled in one go. With ``dump``, the module
    of those kernels is written after every pass (``kernels/``), the target
    writes its own artifacts (:meth:`Target.write_artifacts`) into a folder
    named after it, and ``dump.compiled_as`` records each kernel's name in
    those files (or that it was compiled before).
    """
    if texts is None:
        texts = {k.sym_name.data: kernel_key(k) for k in kernels}
    keys = {k.sym_name.data: (target.name, texts[k.sym_name.data]) for k in kernels}
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
        if dump is not None:
            dump.compiled_as = {n: names.get(key, "") for n, key in keys.items()}
            dump.write_ir("kernels", 0, "kernels", mod)
        run_passes(
            mod,
            target.kernel_pipeline,
            timings=timings,
            stage="kernel",
            dump=dump,
            folder="kernels",
        )
        if dump is not None:
            dump.write_artifacts(target, mod)
        t0 = time.perf_counter()
        compiled = target.compile(mod)
        if timings is not None:
            timings.append(PassTiming(target.name, time.perf_counter() - t0, "compile"))
        for key, unique in names.items():
            if unique not in compiled:
                raise RuntimeError(f"target '{target.name}' did not compile kernel {unique}")
            compile_cache.remember(key, compiled[unique])
        compile_cache.kernels_to_disk(names, compiled, target)
    elif dump is not None:
        dump.compiled_as = dict.fromkeys(keys, "")
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
    result is saved to the disk cache, where ``runtime.compile_cache`` finds it.

    With ``MLFUSE_DEBUG_DIR`` set, every stage is also written to a new folder
    under it (:mod:`mlfuse.debug_dir`).
    """
    from mlfuse.runtime.executor import Program

    tgt = target if isinstance(target, Target) else get_target(target)
    level = debug_level()
    dump = DebugDir.create(module)
    timings: list[PassTiming] = []
    t0 = time.perf_counter()
    run_passes(module, tgt.lazy_pipeline(), timings=timings, dump=dump)
    kernels = [op for op in module.ops if isinstance(op, kernel.FuncOp)]
    launches = {k.sym_name.data: kernel_key(k) for k in kernels}
    compiled = compile_kernels(kernels, tgt, timings, dump, launches)
    program = Program(schedule_of(module), compiled, tgt)
    result = Compiled(module, program, explain(module), timings)
    if cache_key is not None:
        compile_cache.save_schedule(cache_key, result, launches, tgt)
    total = time.perf_counter() - t0
    if dump is not None:
        dump.write_summary(result, tgt.name, total)
    if level >= 1:
        where = f" -> {dump.path}" if dump is not None else ""
        print(
            f"mlfuse: scheduled {len(result.items)} kernel(s) for {tgt.name} in "
            f"{total * 1e3:.1f} ms (peak {result.peak_bytes} B){where}",
            file=sys.stderr,
        )
        for line in format_timings(timings):
            print(f"mlfuse:   {line}", file=sys.stderr)
    if level >= 3:
        print(module, file=sys.stderr)
    return result
