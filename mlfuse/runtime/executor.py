"""Running a kernel schedule: allocations, constants, launches and frees, through a target.

The executor knows devices only through the target protocol
(:mod:`mlfuse.targets`): it allocates, launches and frees with the target the
program was compiled for, and never looks inside a buffer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from typing import TYPE_CHECKING

import numpy as np

from mlfuse.dtypes import DType, from_ir, to_storage
from mlfuse.targets import Buffer, CompiledKernel, Target
from mlfuse.view import View

if TYPE_CHECKING:
    from xdsl.dialects import func


def _buffer_type(t) -> tuple[int, DType]:
    return t.get_shape()[0], from_ir(t.element_type)


@dataclass
class Result:
    """One output of a schedule: a buffer of the schedule's target and the view
    through which it is read (None: the whole buffer, row-major). A result that
    needed no kernel is a view of an input, or a one-element buffer holding the
    scalar ``constant`` read through a broadcasting view."""

    buffer: Buffer
    view: View | None
    constant: float | int | bool | None = None


@dataclass
class Launch:
    """One ``kernel.launch`` of a schedule: the compiled kernel and its buffer slots."""

    kernel: CompiledKernel
    name: str  # the schedule's name for it (k0, k1, ...)
    args: list[int]  # buffer slots


class Program:
    """A schedule bound to compiled kernels on one target; ``run`` maps input buffers to outputs.

    Buffers are the target's flat, contiguous :class:`~mlfuse.targets.Buffer` objects.
    """

    def __init__(self, schedule: func.FuncOp, kernels: dict[str, CompiledKernel], target: Target):
        # the IR's modules are imported here: a program loaded from the disk cache
        # is built without them (see runtime.compile_cache)
        from xdsl.dialects import func, memref
        from xdsl.ir import SSAValue

        from mlfuse.dialects import kernel

        self.target = target
        block = schedule.body.block
        slot: dict[SSAValue, int] = {}

        def get(v: SSAValue) -> int:
            if v not in slot:
                slot[v] = len(slot)
            return slot[v]

        self.num_inputs = len(block.args)
        self.input_types = [_buffer_type(a.type) for a in block.args]
        for a in block.args:
            get(a)
        self.steps: list[tuple] = []
        self.outputs: list[int] = []
        self.views: dict[int, tuple[int, View]] = {}  # slot -> (source slot, its view)
        self.consts: dict[int, float | int | bool] = {}  # slot -> the scalar it holds
        for op in block.ops:
            match op:
                case kernel.AllocOp():
                    self.steps.append(("alloc", get(op.result), *_buffer_type(op.result.type)))
                case kernel.LaunchOp():
                    name = op.callee.string_value()
                    self.steps.append(
                        ("launch", Launch(kernels[name], name, [get(a) for a in op.args]))
                    )
                case kernel.FreeOp():
                    s = get(op.buffer)
                    if s < self.num_inputs:
                        raise ValueError("a schedule must not free its arguments (the caller's)")
                    self.steps.append(("free", s))
                case kernel.ConstantOp():
                    _, dt = _buffer_type(op.result.type)
                    host = to_storage(np.full(1, op.scalar, dt.host), dt)
                    self.steps.append(("const", get(op.result), host))
                    self.consts[get(op.result)] = op.scalar
                case kernel.WindowOp():
                    n = _buffer_type(op.result.type)[0]
                    self.steps.append(("window", get(op.result), get(op.source), op.start, n))
                case memref.ReinterpretCastOp():
                    view = View.create(
                        tuple(op.static_sizes.get_values()),
                        tuple(op.static_strides.get_values()),
                        op.static_offsets.get_values()[0],
                    )
                    self.views[get(op.result)] = (get(op.source), view)
                case func.ReturnOp():
                    self.outputs = [get(v) for v in op.operands]
                case _:
                    raise ValueError(f"unexpected op in a schedule: {op.name}")
        self.num_slots = len(slot)

    @property
    def launches(self) -> list[Launch]:
        return [s[1] for s in self.steps if s[0] == "launch"]

    def run(
        self,
        inputs: Sequence[Buffer],
        trace: Callable[[Launch, Callable[[], None]], None] | None = None,
        windows: Sequence[tuple[int, int] | None] | None = None,
    ) -> list[Result]:
        """Run the schedule on ``inputs``; see :class:`Result` for the outputs.

        ``trace(launch, run)``, if given, is called instead of each launch and
        must call ``run()`` (which launches and waits for the kernel).
        ``windows[i]``, if not None, is the part ``(start, size)`` of input
        ``i`` the schedule reads (:meth:`Target.window`); an output that is a
        view of such an input comes back as a view of the window (its
        ``base``).
        """
        target = self.target
        if len(inputs) != self.num_inputs:
            raise ValueError(f"expected {self.num_inputs} input buffers, got {len(inputs)}")
        if windows is not None:
            if len(windows) != len(inputs):
                raise ValueError(f"expected {len(inputs)} input windows, got {len(windows)}")
            inputs = [
                x if w is None else target.window(x, w[0], w[1]) for x, w in zip(inputs, windows)
            ]
        bufs: list[Buffer | None] = [None] * self.num_slots
        for i, (x, (n, dt)) in enumerate(zip(inputs, self.input_types)):
            if x.device != target.name or x.dtype != dt or x.size != n:
                raise ValueError(
                    f"input {i}: expected a {target.name} buffer of {n} {dt.name} elements, got "
                    f"{x!r}"
                )
            bufs[i] = x
        for step in self.steps:
            kind = step[0]
            if kind == "alloc":
                bufs[step[1]] = target.alloc(step[2], step[3])
            elif kind == "const":
                bufs[step[1]] = target.from_numpy(step[2])
            elif kind == "window":
                bufs[step[1]] = target.window(bufs[step[2]], step[3], step[4])  # type: ignore[arg-type]
            elif kind == "launch":
                launch: Launch = step[1]
                args = [bufs[s] for s in launch.args]
                if trace is not None:
                    trace(launch, lambda k=launch.kernel, a=args: _launch_and_wait(target, k, a))
                else:
                    target.launch(launch.kernel, args)  # type: ignore[arg-type]
            else:
                target.free(bufs[step[1]])  # type: ignore[arg-type]
                bufs[step[1]] = None
        out: list[Result] = []
        for s in self.outputs:
            src, view = self.views.get(s, (s, None))
            out.append(Result(bufs[src], view, self.consts.get(src)))  # type: ignore[arg-type]
        return out


def _launch_and_wait(target: Target, k: CompiledKernel, args) -> None:
    target.launch(k, args)
    target.synchronize()
