"""The ``cuda_sim`` device: GPU-mapped kernels run on the CPU, every thread in lock step.

It runs the CUDA target's kernel pipeline as far as the loop-level IR (the
plan mapped onto blocks and threads by ``gpu-map-plan``, loops, ``gpu``
thread ids and block reductions) and interprets that IR with numpy, one
array lane per thread of the whole grid: ``gpu.block_id`` / ``gpu.thread_id``
are the lanes' indices, a ``gpu.all_reduce`` combines the lanes of each
block, an ``scf.if`` on a per-thread condition masks the stores inside it.
So everything the GPU target decides above NVVM (the mapping, the index
arithmetic of block, thread and register loops, which thread stores what,
where reductions combine) runs through the real scheduler and front end and
is checked against numpy on any machine. A block's shared memory (the tiles
of stage loops) is one array per block; since the threads run in lock step,
every op is a barrier, so missing barriers go unnoticed here. It is slow (an
interpreter) and does not cover the NVVM lowering (shuffles, shared-memory
addresses), which the PTX tests and the GPU itself cover.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, func, gpu, math, memref, scf, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, SSAValue

from mlfuse import dtypes
from mlfuse.dtypes import DType
from mlfuse.lowering.kernel_to_loops import BLOCK_ATTR, GRID_ATTR, KERNEL_ATTR
from mlfuse.targets import Buffer, CompiledKernel
from mlfuse.targets.cuda.host_memory import HostBuffer, HostMemoryTarget


def _np_type(t: Attribute) -> np.dtype:
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, IntegerType):
        w = t.width.data
        return np.dtype(np.bool_) if w == 1 else np.dtype(f"int{w}")
    if isinstance(t, BFloat16Type):
        return np.dtype(np.int16)  # its bits: only loads, stores, selects and bitcasts
    if isinstance(t, AnyFloat):
        return np.dtype(f"float{t.bitwidth}")
    raise NotImplementedError(f"cuda_sim: no numpy type for {t}")


def _unsigned(x):
    """Integer lanes reinterpreted as unsigned of their width (arith's *ui ops)."""
    x = np.asarray(x)
    return x.astype(np.dtype(f"uint{8 * x.dtype.itemsize}"))


def _fptosi(x, t: np.dtype):
    """``arith.fptosi`` as mlfuse lowers it (``llvm.fptosi.sat``): NaN -> 0,
    out-of-range values saturate."""
    x = np.asarray(x, dtype=np.float64)
    info = np.iinfo(t)
    out = np.where(np.isnan(x), 0, np.clip(np.trunc(x), info.min, info.max))
    # float64 cannot hold int64's max: values clipped there convert exactly after
    big = out >= 2.0**63
    res = out.astype(t)
    return np.where(big, info.max, res).astype(t) if big.any() else res


def _fma64(a, b, c) -> np.ndarray:
    """a·b + c in float64 with the product's rounding error kept (Dekker's
    exact product, then a two-sum): fma(a, b, -a·b) is that error exactly, as
    the GPU's ``fma.rn.f64`` gives it (double-double arithmetic relies on it);
    otherwise within an ulp of one rounding. Where the split would overflow,
    a plain a·b + c."""
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    with np.errstate(all="ignore"):
        p = a * b

        def split(x):
            t = 134217729.0 * x  # 2^27 + 1: x = hi + lo, each 26 bits or fewer
            hi = t - (t - x)
            return hi, x - hi

        (ah, al), (bh, bl) = split(a), split(b)
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = p + c
        bb = s - p
        out = s + (((p - (s - bb)) + (c - bb)) + e)
        return np.where(np.isfinite(e) & np.isfinite(out), out, p + c)


_BINARY = {
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide,
    arith.AddiOp: np.add,
    arith.SubiOp: np.subtract,
    arith.MuliOp: np.multiply,
    arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or,
    arith.XOrIOp: np.bitwise_xor,
    arith.MaximumfOp: np.maximum,
    arith.MinimumfOp: np.minimum,
    arith.MaxnumfOp: np.fmax,
    arith.MinnumfOp: np.fmin,
    arith.MaxSIOp: np.maximum,
    arith.MinSIOp: np.minimum,
    arith.MaxUIOp: lambda a, b: np.maximum(_unsigned(a), _unsigned(b)),
    arith.MinUIOp: lambda a, b: np.minimum(_unsigned(a), _unsigned(b)),
    arith.ShLIOp: np.left_shift,
    arith.ShRSIOp: np.right_shift,
    arith.ShRUIOp: lambda a, b: np.right_shift(_unsigned(a), _unsigned(b)),
}
_UNARY = {
    math.SqrtOp: np.sqrt,
    math.ExpOp: np.exp,
    math.Exp2Op: np.exp2,
    math.LogOp: np.log,
    math.Log2Op: np.log2,
    math.SinOp: np.sin,
    math.CosOp: np.cos,
    math.FloorOp: np.floor,
    math.CeilOp: np.ceil,
    math.AbsFOp: np.abs,
    math.AbsIOp: np.abs,
    arith.NegfOp: np.negative,
}
_REDUCE = {"add": np.add, "mul": np.multiply, "max": np.maximum}


class _Shared:
    """A shared-memory buffer: one row per block."""

    __slots__ = ("rows",)

    def __init__(self, rows: np.ndarray):
        self.rows = rows


class _Run:
    """One launch: SSA values are numpy scalars (uniform) or arrays over the grid's threads."""

    def __init__(self, f: func.FuncOp, arrays: Sequence[np.ndarray]):
        self.f = f
        self.grid = f.attributes[GRID_ATTR].value.data  # type: ignore[attr-defined]
        self.block = f.attributes[BLOCK_ATTR].value.data  # type: ignore[attr-defined]
        n = self.grid * self.block
        self.bid = np.arange(n, dtype=np.int64) // self.block
        self.tid = np.arange(n, dtype=np.int64) % self.block
        self.env: dict[SSAValue, object] = dict(zip(f.body.block.args, arrays))

    def v(self, x: SSAValue):
        return self.env[x]

    def run(self) -> None:
        self.block_ops(self.f.body.block, None)

    def block_ops(self, block: Block, mask) -> list:
        with np.errstate(all="ignore"):
            for op in block.ops:
                if isinstance(op, scf.YieldOp | func.ReturnOp):
                    return [self.v(x) for x in op.operands]
                self.op(op, mask)
        return []

    def op(self, op, mask) -> None:  # noqa: C901 - one case per op
        t = type(op)
        res = op.results[0] if op.results else None
        if t is arith.MulfOp and _contracts(op) and _np_type(res.type) == np.float32:
            # a product the GPU fuses with the add it feeds (fma.rn): kept exact
            a, b = (self.v(x) for x in op.operands)
            self.env[res] = np.multiply(np.asarray(a, np.float64), b)
        elif t in _BINARY:
            a, b = (self.v(x) for x in op.operands)
            self.env[res] = _BINARY[t](a, b).astype(_np_type(res.type))
        elif t in _UNARY:
            self.env[res] = _UNARY[t](self.v(op.operands[0])).astype(_np_type(res.type))
        elif isinstance(op, arith.ConstantOp):
            val = op.value
            assert isinstance(val, IntegerAttr | FloatAttr)
            self.env[res] = _np_type(res.type).type(val.value.data)
        elif isinstance(op, arith.DivSIOp | arith.DivUIOp):
            a, b = (self.v(x) for x in op.operands)
            self.env[res] = (
                _divsi(a, b).astype(_np_type(res.type))
                if isinstance(op, arith.DivSIOp)
                else np.floor_divide(_unsigned(a), _unsigned(b)).astype(_np_type(res.type))
            )
        elif isinstance(op, arith.RemSIOp | arith.RemUIOp):
            a, b = (self.v(x) for x in op.operands)
            self.env[res] = (
                np.fmod(a, b)
                if isinstance(op, arith.RemSIOp)
                else np.mod(_unsigned(a), _unsigned(b)).astype(_np_type(res.type))
            )
        elif isinstance(op, arith.FPToSIOp):
            self.env[res] = _fptosi(self.v(op.operands[0]), _np_type(res.type))
        elif isinstance(op, arith.CmpiOp | arith.CmpfOp):
            a, b = (self.v(x) for x in op.operands)
            pred = op.predicate.value.data
            if isinstance(op, arith.CmpfOp):
                self.env[res] = _fcmp(arith.CMPF_COMPARISON_OPERATIONS[pred], a, b)
            else:
                self.env[res] = _icmp(arith.CMPI_COMPARISON_OPERATIONS[pred], a, b)
        elif isinstance(op, arith.SelectOp):
            c, a, b = (self.v(x) for x in op.operands)
            self.env[res] = np.where(c, a, b).astype(_np_type(res.type))
        elif isinstance(
            op,
            arith.ExtFOp
            | arith.TruncFOp
            | arith.ExtSIOp
            | arith.TruncIOp
            | arith.SIToFPOp
            | arith.IndexCastOp,
        ):
            self.env[res] = np.asarray(self.v(op.operands[0])).astype(_np_type(res.type))
        elif isinstance(op, arith.ExtUIOp):
            x = np.asarray(self.v(op.operands[0]))
            bits = op.operands[0].type.width.data  # type: ignore[attr-defined]
            u = x.astype(np.uint64) & np.uint64((1 << bits) - 1) if bits > 1 else x
            self.env[res] = u.astype(_np_type(res.type))
        elif isinstance(op, arith.UIToFPOp):
            self.env[res] = np.asarray(self.v(op.operands[0])).astype(_np_type(res.type))
        elif isinstance(op, arith.BitcastOp):
            self.env[res] = np.asarray(self.v(op.operands[0])).view(_np_type(res.type))
        elif isinstance(op, math.FmaOp):
            a, b, c = (self.v(x) for x in op.operands)
            t = _np_type(res.type)
            if t.itemsize <= 4:  # one rounding, as fma.rn: the product exact in float64
                self.env[res] = (np.asarray(a, np.float64) * b + c).astype(t)
            else:
                self.env[res] = _fma64(a, b, c)
        elif isinstance(op, math.PowFOp):
            a, b = (self.v(x) for x in op.operands)
            self.env[res] = np.power(a, b).astype(_np_type(res.type))
        elif isinstance(op, gpu.BlockIdOp):
            self.env[res] = self.bid
        elif isinstance(op, gpu.ThreadIdOp):
            self.env[res] = self.tid
        elif isinstance(op, gpu.AllReduceOp):
            x = np.broadcast_to(self.v(op.operand), self.bid.shape)
            kind = op.op.data.value  # type: ignore[union-attr]
            lanes = op.attributes.get("mlfuse.lanes")
            group = lanes.value.data if isinstance(lanes, IntegerAttr) else self.block
            per_group = _REDUCE[kind].reduce(x.reshape(-1, group), axis=1)
            self.env[res] = np.repeat(per_group, group).astype(_np_type(res.type))
        elif isinstance(op, memref.AllocaOp):
            t = op.memref.type
            if getattr(t.memory_space, "value", None) is None or t.memory_space.value.data != 3:
                raise NotImplementedError("cuda_sim: memref.alloca outside shared memory")
            self.env[res] = _Shared(
                np.zeros((self.grid, t.get_shape()[0]), _np_type(t.element_type))
            )
        elif isinstance(op, gpu.BarrierOp):
            pass  # the threads run in lock step
        elif isinstance(op, vector.LoadOp):
            buf = self.v(op.base)
            n = op.result.type.get_shape()[0]
            idx = np.broadcast_to(self.v(op.indices[0]), self.bid.shape)
            if mask is not None:
                idx = np.where(mask, idx, 0)
            if np.any(idx % n):  # (a global buffer's element 0 is aligned, see ptx.py)
                raise ValueError(f"cuda_sim: a vector.load of {n} lanes at a misaligned index")
            if isinstance(buf, _Shared):
                self.env[res] = buf.rows[self.bid[:, None], idx[:, None] + np.arange(n)]
            else:
                self.env[res] = buf[idx[:, None] + np.arange(n)]  # type: ignore[index]
        elif isinstance(op, vector.StoreOp):
            buf = self.v(op.base)
            if not isinstance(buf, _Shared):
                raise NotImplementedError("cuda_sim: vector.store outside shared memory")
            n = op.vector.type.get_shape()[0]
            idx = np.broadcast_to(self.v(op.indices[0]), self.bid.shape)
            val = np.broadcast_to(self.v(op.vector), (*self.bid.shape, n))
            rows = self.bid
            if mask is not None:
                idx, val, rows = idx[mask], val[mask], rows[mask]
            if np.any(idx % n):
                raise ValueError(f"cuda_sim: a vector.store of {n} lanes at a misaligned index")
            buf.rows[rows[:, None], idx[:, None] + np.arange(n)] = val
        elif isinstance(op, vector.ExtractOp):
            lane = op.static_position.get_values()[0]
            self.env[res] = np.asarray(self.v(op.vector))[..., lane]
        elif isinstance(op, memref.LoadOp):
            buf = self.v(op.memref)
            idx = self.v(op.indices[0])
            if mask is not None:  # threads outside the branch do not load
                idx = np.where(mask, idx, 0)
            if isinstance(buf, _Shared):
                self.env[res] = buf.rows[self.bid, np.broadcast_to(idx, self.bid.shape)]
            else:
                self.env[res] = buf[idx]  # type: ignore[index]
        elif isinstance(op, memref.StoreOp):
            buf = self.v(op.memref)
            idx, val = self.v(op.indices[0]), self.v(op.value)
            shared = isinstance(buf, _Shared)
            shape = np.broadcast_shapes(
                np.shape(idx),
                np.shape(val),
                np.shape(mask) if mask is not None else (),
                self.bid.shape if shared else (),
            )
            idx, val = np.broadcast_to(idx, shape), np.broadcast_to(val, shape)
            rows = np.broadcast_to(self.bid, shape) if shared else None
            if mask is not None:
                m = np.broadcast_to(mask, shape)
                idx, val = idx[m], val[m]
                rows = rows[m] if rows is not None else None
            if isinstance(buf, _Shared):
                buf.rows[rows, idx] = val
            else:
                buf[idx] = val  # type: ignore[index]
        elif isinstance(op, scf.ForOp):
            lo, hi, step = (int(self.v(x)) for x in (op.lb, op.ub, op.step))  # type: ignore[call-overload]
            body = op.body.block
            carried = [self.v(x) for x in op.iter_args]
            for i in range(lo, hi, step):
                self.env[body.args[0]] = np.int64(i)
                for a, c in zip(body.args[1:], carried):
                    self.env[a] = c
                carried = self.block_ops(body, mask)
            for r, c in zip(op.results, carried):
                self.env[r] = c
        elif isinstance(op, scf.IfOp):  # both sides, each under its threads' mask
            cond = self.v(op.cond)
            inner = cond if mask is None else np.logical_and(mask, cond)
            taken = self.block_ops(op.true_region.block, inner)
            other = []
            if op.false_region.blocks:
                other = self.block_ops(
                    op.false_region.block,
                    np.logical_and(mask if mask is not None else True, np.logical_not(cond)),
                )
            for r, a, b in zip(op.results, taken, other):
                self.env[r] = np.where(cond, a, b).astype(np.asarray(a).dtype)
        else:
            raise NotImplementedError(f"cuda_sim: cannot run '{op.name}'")


def _divsi(a, b):
    """``arith.divsi``: integer division rounding toward zero, exact at any width
    (a float quotient loses the low bits of 64-bit integers)."""
    a, b = np.asarray(a), np.asarray(b)
    q = np.floor_divide(a, b)
    inexact = (q * b != a) & ((a < 0) != (b < 0))
    return q + inexact.astype(q.dtype)


def _contracts(op) -> bool:
    fm = op.properties.get("fastmath")
    return "contract" in str(fm) if fm is not None else False


_ORDER = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def _fcmp(name: str, a, b):
    """``arith.cmpf``: ``o*`` false on NaN, ``u*`` true on NaN."""
    nan = np.isnan(a) | np.isnan(b)
    if name in ("false", "true"):
        return np.full(np.shape(nan), name == "true")
    if name in ("ord", "uno"):
        return ~nan if name == "ord" else nan
    r = _ORDER[name[1:]](a, b)
    return (r & ~nan) if name[0] == "o" else (r | nan)


def _icmp(name: str, a, b):
    """``arith.cmpi``: ``s*`` signed, ``u*`` unsigned."""
    if name in ("eq", "ne"):
        return _ORDER[name](a, b)
    if name[0] == "u":
        a, b = np.asarray(a).astype(np.uint64), np.asarray(b).astype(np.uint64)
    return _ORDER[name[1:]](a, b)


def simulate(f: func.FuncOp, arrays: Sequence[np.ndarray]) -> None:
    """Run a kernel lowered for a GPU grid (loop-level IR) on ``arrays``, in place.
    Each array is seen as its argument's element type (a uint8 buffer as the
    ``i8`` its kernel reads, a bfloat16 one as its ``i16`` bits)."""
    types = f.function_type.inputs.data
    views = [
        a.view(_np_type(t.element_type)) if hasattr(t, "element_type") else a  # type: ignore[attr-defined]
        for a, t in zip(arrays, types)
    ]
    _Run(f, views).run()


class SimKernel(CompiledKernel):
    __slots__ = ("func",)

    def __init__(self, f: func.FuncOp):
        super().__init__(f.sym_name.data, len(f.function_type.inputs.data))
        self.func = f


class CudaSimTarget(HostMemoryTarget):
    """The ``cuda_sim`` device: host memory, the CUDA target's plans and loops, numpy threads."""

    name = "cuda_sim"

    kernel_pipeline = (
        "legalize-float-types",
        "expand-math{f64-pow=true}",  # no libm on the GPU
        "merge-sums",
        "gpu-map-plan",
        "convert-kernel-to-loops{grid=true}",
        "expand-large-sincos",
    )

    def compile(self, module: ModuleOp) -> dict[str, CompiledKernel]:
        return {
            op.sym_name.data: SimKernel(op)
            for op in module.ops
            if isinstance(op, func.FuncOp) and KERNEL_ATTR in op.attributes
        }

    def alloc(self, size: int, dtype: DType) -> HostBuffer:
        return HostBuffer(self.name, np.empty(size, dtype.np), dtype)

    def from_numpy(self, array: np.ndarray) -> HostBuffer:
        host = np.array(array).reshape(-1)
        return HostBuffer(self.name, host, dtypes.from_numpy(host.dtype))

    def launch(self, kernel: CompiledKernel, buffers: Sequence[Buffer]) -> None:
        arrays = self._launch_arrays(kernel, SimKernel, buffers)
        simulate(kernel.func, arrays)  # type: ignore[attr-defined]
