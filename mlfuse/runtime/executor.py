"""Running a kernel schedule: allocations, launches and frees on numpy buffers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import SSAValue

from mlfuse.dialects import kernel
from mlfuse.dtypes import from_ir
from mlfuse.runtime.cpu import CompiledKernel


def np_dtype(t: MemRefType) -> np.dtype:
    return from_ir(t.element_type).np


@dataclass
class Launch:
    kernel: CompiledKernel
    name: str  # the schedule's name for it (k0, k1, ...)
    args: list[int]  # buffer slots


class Program:
    """A schedule bound to compiled kernels; ``run`` maps input buffers to outputs.

    Buffers are flat, C-contiguous numpy arrays.
    """

    def __init__(self, schedule: func.FuncOp, kernels: dict[str, CompiledKernel]):
        block = schedule.body.block
        slot: dict[SSAValue, int] = {}

        def get(v: SSAValue) -> int:
            if v not in slot:
                slot[v] = len(slot)
            return slot[v]

        self.num_inputs = len(block.args)
        self.input_types = [(np_dtype(a.type), a.type.get_shape()[0]) for a in block.args]  # type: ignore
        for a in block.args:
            get(a)
        self.steps: list[tuple] = []
        self.outputs: list[int] = []
        for op in block.ops:
            match op:
                case kernel.AllocOp():
                    t = op.result.type
                    assert isinstance(t, MemRefType)
                    self.steps.append(("alloc", get(op.result), t.get_shape()[0], np_dtype(t)))
                case kernel.LaunchOp():
                    name = op.callee.string_value()
                    self.steps.append(
                        ("launch", Launch(kernels[name], name, [get(a) for a in op.args]))
                    )
                case kernel.FreeOp():
                    self.steps.append(("free", get(op.buffer)))
                case kernel.ConstantOp():
                    t = op.result.type
                    assert isinstance(t, MemRefType)
                    self.steps.append(("const", get(op.result), op.scalar, np_dtype(t)))
                case memref.ReinterpretCastOp():
                    view = (
                        tuple(op.static_sizes.get_values()),
                        tuple(op.static_strides.get_values()),
                        op.static_offsets.get_values()[0],
                    )
                    self.steps.append(("view", get(op.result), get(op.source), view))
                case func.ReturnOp():
                    self.outputs = [get(v) for v in op.operands]
                case _:
                    raise ValueError(f"unexpected op in a schedule: {op.name}")
        self.num_slots = len(slot)

    @property
    def launches(self) -> list[Launch]:
        return [s[1] for s in self.steps if s[0] == "launch"]

    def run(self, inputs: list[np.ndarray], trace=None) -> list[np.ndarray]:
        if len(inputs) != self.num_inputs:
            raise ValueError(f"expected {self.num_inputs} input buffers, got {len(inputs)}")
        bufs: list[np.ndarray | None] = [None] * self.num_slots
        for i, (x, (dt, n)) in enumerate(zip(inputs, self.input_types)):
            if x.dtype != dt or x.size != n or not x.flags.c_contiguous:
                raise ValueError(
                    f"input {i}: expected a contiguous {dt} buffer of {n} elements, got "
                    f"{x.dtype} of {x.size}"
                )
            bufs[i] = x
        for step in self.steps:
            kind = step[0]
            if kind == "alloc":
                bufs[step[1]] = np.empty(step[2], dtype=step[3])
            elif kind == "const":
                bufs[step[1]] = np.full(1, step[2], dtype=step[3])
            elif kind == "view":
                src = bufs[step[2]]
                shape, strides, offset = step[3]
                item = src.itemsize  # type: ignore[union-attr]
                base = src[offset:] if offset else src  # type: ignore[index]
                bufs[step[1]] = np.ascontiguousarray(
                    np.lib.stride_tricks.as_strided(
                        base, shape, tuple(st * item for st in strides)
                    )
                ).reshape(-1)
            elif kind == "launch":
                launch: Launch = step[1]
                ptrs = [bufs[s].__array_interface__["data"][0] for s in launch.args]  # type: ignore[union-attr]
                if trace is not None:
                    trace(launch, lambda k=launch.kernel, p=ptrs: k(p))
                else:
                    launch.kernel(ptrs)
            else:
                bufs[step[1]] = None
        return [bufs[s] for s in self.outputs]  # type: ignore[misc]
