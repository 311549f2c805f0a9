"""Random tensor programs, run by mlfuse and by a float64 numpy model side
by side.

A program is a chain of steps over a pool of live values; each step picks
operands from the pool and appends the result. The ops cover the classes the
scheduler and the lowering treat differently: elementwise chains with
broadcasting, reductions over any axes (keepdim or not), every movement op
(reshape, permute, expand, pad, shrink, strided slices, flips), matrix
products, scans, concatenation, and values realized half-way (so later
kernels read buffers the earlier ones wrote). Values are kept bounded
(tanh before exp, |x| + 1 before log) so float32 results can be compared
with a tolerance that does not hide wrong indexing.

`python -m tests.unit.fuzz_programs --cases 500 --seed 0` runs many programs
and prints each failing seed with the program that failed; the test suite
runs a fixed handful (tests/unit/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import math
import sys
import traceback
from dataclasses import dataclass, field

import numpy as np

from mlfuse import Tensor


@dataclass
class Value:
    t: Tensor
    ref: np.ndarray  # float64 model of t
    text: str  # how it was made, for the failure report


@dataclass
class Program:
    seed: int
    steps: list[str] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)


def _factorizations(n: int, rng: np.random.Generator) -> tuple[int, ...]:
    """A random shape with `n` elements (1 to 4 dims, 1s allowed)."""
    dims: list[int] = []
    rest = n
    while rest > 1 and len(dims) < 3:
        divisors = [d for d in range(2, rest + 1) if rest % d == 0]
        d = int(rng.choice(divisors))
        dims.append(d)
        rest //= d
    if rest > 1:
        dims.append(rest)
    if rng.random() < 0.3:
        dims.insert(int(rng.integers(0, len(dims) + 1)), 1)
    return tuple(int(d) for d in rng.permutation(np.array(dims, dtype=np.int64))) or (1,)


UNARY = {
    "neg": (lambda t: -t, lambda a: -a),
    "tanh": (lambda t: t.tanh(), np.tanh),
    "sigmoid": (lambda t: t.sigmoid(), lambda a: 1 / (1 + np.exp(-a))),
    "exp_tanh": (lambda t: t.tanh().exp(), lambda a: np.exp(np.tanh(a))),
    "log_abs1": (lambda t: (t.abs() + 1).log(), lambda a: np.log(np.abs(a) + 1)),
    "sqrt_abs": (lambda t: t.abs().sqrt(), lambda a: np.sqrt(np.abs(a))),
    "relu": (lambda t: t.relu(), lambda a: np.maximum(a, 0)),
    # sin of a bounded argument: float32 rounding of a large one is amplified
    "sin_tanh": (lambda t: (t.tanh() * 3).sin(), lambda a: np.sin(np.tanh(a) * 3)),
    "square_tanh": (lambda t: t.tanh().square(), lambda a: np.tanh(a) ** 2),
    "recip": (lambda t: 1 / (t.abs() + 1), lambda a: 1 / (np.abs(a) + 1)),
    "gelu": (
        lambda t: t.gelu(),
        np.vectorize(lambda a: 0.5 * a * math.erfc(-a / math.sqrt(2)), otypes=[np.float64]),
    ),
}

BINARY = {
    "add": (lambda x, y: x + y, lambda a, b: a + b),
    "sub": (lambda x, y: x - y, lambda a, b: a - b),
    "mul": (lambda x, y: x * y, lambda a, b: a * b),
    "max": (lambda x, y: x.maximum(y), np.maximum),
    "min": (lambda x, y: x.minimum(y), np.minimum),
    "where": (
        lambda x, y: (x > y).where(x, y * 0.5),
        lambda a, b: np.where(a > b, a, b * 0.5),
    ),
}


class Generator:
    def __init__(self, seed: int, steps: int = 8, max_elems: int | None = None):
        self.rng = np.random.default_rng(seed)
        # a third of the programs use sizes big enough for the tiled,
        # vectorized and split code paths
        self.big = max_elems is None and self.rng.random() < 0.35
        if max_elems is None:
            max_elems = 1 << 18 if self.big else 4096
        self.program = Program(seed)
        self.pool: list[Value] = []
        self.steps = steps
        self.max_elems = max_elems
        self.realized = 0

    # -- helpers ---------------------------------------------------------
    def pick(self) -> Value:
        # favour recent values so chains get deep
        n = len(self.pool)
        w = np.arange(1, n + 1, dtype=np.float64) ** 2
        return self.pool[int(self.rng.choice(n, p=w / w.sum()))]

    def add(self, t: Tensor, ref: np.ndarray, text: str) -> None:
        if tuple(t.shape) != ref.shape:
            raise AssertionError(f"shape {tuple(t.shape)} != model {ref.shape} after {text}")
        name = f"v{len(self.pool)}"
        self.program.steps.append(f"{name} = {text}  # {ref.shape}")
        self.pool.append(Value(t, ref, name))

    def leaf(self) -> None:
        ndim = int(self.rng.integers(0, 4))
        if self.big:
            ndim = max(ndim, 1)
            sizes = [1, 3, 16, 31, 64, 100, 128, 257]
            shape = tuple(int(self.rng.choice(sizes)) for _ in range(ndim))
            while math.prod(shape) > self.max_elems:
                shape = shape[1:]
        else:
            shape = tuple(int(self.rng.integers(1, 9)) for _ in range(ndim))
        a = self.rng.standard_normal(shape).astype(np.float32)
        how = "Tensor(randn{})".format(shape)
        t = Tensor(a)
        if ndim >= 2 and self.rng.random() < 0.3:
            # a non-contiguous leaf: the transpose of a contiguous buffer
            a = np.ascontiguousarray(a.swapaxes(-1, -2))
            t = Tensor(a).transpose(-1, -2)
            a = a.swapaxes(-1, -2)
            how = f"Tensor(randn).transpose(-1,-2){shape}"
        self.add(t, a.astype(np.float64), how)

    # -- op families -----------------------------------------------------
    def unary(self, v: Value) -> None:
        name = str(self.rng.choice(list(UNARY)))
        f, g = UNARY[name]
        self.add(f(v.t), g(v.ref), f"{name}({v.text})")

    def broadcast_partner(self, v: Value) -> Value:
        """A value that broadcasts against `v`: one from the pool if any
        fits, else a fresh leaf of a broadcastable shape."""
        shape = v.ref.shape
        fits = []
        for w in self.pool:
            try:
                np.broadcast_shapes(shape, w.ref.shape)
            except ValueError:
                continue
            if np.prod(np.broadcast_shapes(shape, w.ref.shape)) <= self.max_elems:
                fits.append(w)
        if fits and self.rng.random() < 0.6:
            return fits[int(self.rng.integers(0, len(fits)))]
        # drop a suffix of leading dims and set some dims to 1
        k = int(self.rng.integers(0, len(shape) + 1))
        sub = [1 if self.rng.random() < 0.4 else d for d in shape[k:]]
        a = self.rng.standard_normal(sub).astype(np.float32)
        self.add(Tensor(a), a.astype(np.float64), f"Tensor(randn{tuple(sub)})")
        return self.pool[-1]

    def binary(self, v: Value) -> None:
        w = self.broadcast_partner(v)
        name = str(self.rng.choice(list(BINARY)))
        f, g = BINARY[name]
        if self.rng.random() < 0.5:
            v, w = w, v
        self.add(f(v.t, w.t), g(v.ref, w.ref), f"{name}({v.text}, {w.text})")

    def reduce(self, v: Value) -> None:
        nd = v.ref.ndim
        op = str(self.rng.choice(["sum", "max", "min", "mean"]))
        keep = bool(self.rng.random() < 0.4)
        if nd == 0 or self.rng.random() < 0.2:
            axis = None
        elif self.rng.random() < 0.3 and nd >= 2:
            axis = tuple(int(a) for a in sorted(self.rng.choice(nd, size=2, replace=False)))
        else:
            axis = int(self.rng.integers(-nd, nd))
        if v.ref.size == 0 and op in ("max", "min"):
            op = "sum"
        t = getattr(v.t, op)(axis=axis, keepdim=keep)
        npop = {"sum": np.sum, "max": np.max, "min": np.min, "mean": np.mean}[op]
        ref = npop(v.ref, axis=axis, keepdims=keep)
        self.add(t, np.asarray(ref), f"{v.text}.{op}(axis={axis}, keepdim={keep})")

    def reshape(self, v: Value) -> None:
        shape = _factorizations(v.ref.size, self.rng) if v.ref.size else (0,)
        self.add(v.t.reshape(shape), v.ref.reshape(shape), f"{v.text}.reshape{shape}")

    def permute(self, v: Value) -> None:
        if v.ref.ndim < 2:
            return self.reshape(v)
        order = tuple(int(i) for i in self.rng.permutation(v.ref.ndim))
        self.add(v.t.permute(*order), v.ref.transpose(order), f"{v.text}.permute{order}")

    def expand(self, v: Value) -> None:
        shape = v.ref.shape
        new = tuple(int(self.rng.integers(2, 5)) if d == 1 else d for d in shape)
        lead = (int(self.rng.integers(1, 4)),) if self.rng.random() < 0.4 else ()
        new = lead + new
        if math.prod(new) > self.max_elems:
            return self.unary(v)
        self.add(v.t.expand(*new), np.broadcast_to(v.ref, new), f"{v.text}.expand{new}")

    def pad(self, v: Value) -> None:
        if v.ref.ndim == 0:
            return self.unary(v)
        pads = [
            (int(self.rng.integers(0, 3)), int(self.rng.integers(0, 3))) for _ in range(v.ref.ndim)
        ]
        if math.prod(d + a + b for d, (a, b) in zip(v.ref.shape, pads)) > self.max_elems:
            return self.unary(v)
        value = float(self.rng.choice([0.0, 1.5]))
        flat = tuple(x for p in reversed(pads) for x in p)  # torch order
        import mlfuse.nn.functional as F

        t = F.pad(v.t, flat, value=value)
        ref = np.pad(v.ref, pads, constant_values=value)
        self.add(t, ref, f"F.pad({v.text}, {flat}, value={value})")

    def slice(self, v: Value) -> None:
        if v.ref.ndim == 0:
            return self.unary(v)
        index = []
        for d in v.ref.shape:
            kind = self.rng.integers(0, 4)
            if kind == 0 or d <= 1:
                index.append(slice(None))
            elif kind == 1:
                a = int(self.rng.integers(0, d))
                b = int(self.rng.integers(a + 1, d + 1))
                index.append(slice(a, b))
            elif kind == 2:
                index.append(slice(None, None, int(self.rng.integers(2, 4))))
            else:
                index.append(slice(None, None, -1))
        index = tuple(index)
        self.add(v.t[index], v.ref[index], f"{v.text}[{index}]")

    def flip(self, v: Value) -> None:
        if v.ref.ndim == 0:
            return self.unary(v)
        axis = int(self.rng.integers(0, v.ref.ndim))
        self.add(v.t.flip(axis), np.flip(v.ref, axis), f"{v.text}.flip({axis})")

    def matmul(self, v: Value) -> None:
        if v.ref.ndim == 0:
            return self.unary(v)
        k = v.ref.shape[-1]
        n = int(self.rng.choice([1, 5, 16, 64, 100])) if self.big else int(self.rng.integers(1, 12))
        if v.ref.ndim >= 2 and self.rng.random() < 0.5:
            # square it up against a transpose of a pool value when one fits
            for w in reversed(self.pool):
                if w.ref.ndim == 2 and w.ref.shape[0] == k and w.ref.size <= 512:
                    self.add(v.t @ w.t, v.ref @ w.ref, f"{v.text} @ {w.text}")
                    return
        if v.ref.size // max(k, 1) * n > self.max_elems:
            return self.unary(v)
        b = self.rng.standard_normal((k, n)).astype(np.float32)
        self.add(v.t @ Tensor(b), v.ref @ b.astype(np.float64), f"{v.text} @ randn({k},{n})")

    def scan(self, v: Value) -> None:
        if v.ref.ndim == 0:
            return self.unary(v)
        axis = int(self.rng.integers(0, v.ref.ndim))
        self.add(v.t.cumsum(axis), np.cumsum(v.ref, axis), f"{v.text}.cumsum({axis})")

    def softmax(self, v: Value) -> None:
        if v.ref.ndim == 0:
            return self.unary(v)
        axis = int(self.rng.integers(-v.ref.ndim, v.ref.ndim))
        e = np.exp(v.ref - v.ref.max(axis=axis, keepdims=True))
        self.add(
            v.t.softmax(axis), e / e.sum(axis=axis, keepdims=True), f"{v.text}.softmax({axis})"
        )

    def cat(self, v: Value) -> None:
        if v.ref.ndim == 0:
            return self.unary(v)
        axis = int(self.rng.integers(0, v.ref.ndim))
        others = [
            w
            for w in self.pool
            if w.ref.ndim == v.ref.ndim
            and all(a == b for i, (a, b) in enumerate(zip(w.ref.shape, v.ref.shape)) if i != axis)
        ]
        w = others[int(self.rng.integers(0, len(others)))]
        if v.ref.size + w.ref.size > self.max_elems:
            return self.unary(v)
        self.add(
            Tensor.cat(v.t, w.t, dim=axis),
            np.concatenate([v.ref, w.ref], axis),
            f"cat({v.text}, {w.text}, dim={axis})",
        )

    def argreduce(self, v: Value) -> None:
        if v.ref.size == 0:
            return self.unary(v)
        op = str(self.rng.choice(["argmax", "argmin"]))
        axis = (
            None
            if v.ref.ndim == 0 or self.rng.random() < 0.2
            else int(self.rng.integers(-v.ref.ndim, v.ref.ndim))
        )
        # ties would make the index ambiguous: break them with a ramp
        ramp = np.arange(v.ref.size, dtype=np.float64).reshape(v.ref.shape) * 1e-3
        x = v.t + Tensor(ramp.astype(np.float32))
        a = v.ref + ramp
        # keep the model in float32 rounding so near-ties agree
        a32 = (v.t.numpy().astype(np.float32) + ramp.astype(np.float32)).astype(np.float64)
        idx = getattr(np, op)(a32, axis=axis)
        t = getattr(x, op)(axis).float()
        self.add(t, np.asarray(idx, np.float64), f"({v.text} + ramp).{op}({axis})")
        del a

    def gather(self, v: Value) -> None:
        if v.ref.ndim == 0 or v.ref.size == 0:
            return self.unary(v)
        axis = int(self.rng.integers(0, v.ref.ndim))
        shape = list(v.ref.shape)
        shape[axis] = int(self.rng.integers(1, 6))
        idx = self.rng.integers(-v.ref.shape[axis], v.ref.shape[axis], size=shape)
        if self.rng.random() < 0.5:
            t = v.t.gather(axis, Tensor(idx))
            ref = np.take_along_axis(v.ref, idx % v.ref.shape[axis], axis)
            how = f"{v.text}.gather({axis}, idx{tuple(shape)})"
        else:
            flat = idx.reshape(-1)[: int(self.rng.integers(1, 8))]
            index = (slice(None),) * axis + (Tensor(flat),)
            t = v.t[index]
            ref = v.ref[(slice(None),) * axis + (flat,)]
            how = f"{v.text}[{':,' * axis}{flat.tolist()}]"
        self.add(t, ref, how)

    def integer(self, v: Value) -> None:
        """A detour through int32: floor/mod semantics, casts both ways."""
        q = int(self.rng.choice([2, 3, 7]))
        i = (v.t * 10).cast("int32")
        ri = np.trunc(v.t.numpy().astype(np.float32) * np.float32(10)).astype(np.int64)
        op = str(self.rng.choice(["floordiv", "mod", "and", "shift"]))
        if op == "floordiv":
            t, r = i // q, ri // q
        elif op == "mod":
            t, r = i % q, ri % q
        elif op == "and":
            t, r = i & 6, ri & 6
        else:
            t, r = i >> 1, ri >> 1
        self.add(t.float(), r.astype(np.float64), f"int32({v.text}*10) {op} {q}")

    def norm(self, v: Value) -> None:
        if v.ref.ndim == 0 or v.ref.shape[-1] < 2:
            return self.unary(v)
        op = str(self.rng.choice(["var", "std", "logsumexp", "layernorm"]))
        if op == "var":
            t, r = v.t.var(-1), v.ref.var(-1, ddof=1)
        elif op == "std":
            t, r = v.t.std(-1), v.ref.std(-1, ddof=1)
        elif op == "logsumexp":
            m = v.ref.max(-1, keepdims=True)
            t, r = v.t.logsumexp(-1), (m + np.log(np.exp(v.ref - m).sum(-1, keepdims=True)))[..., 0]
        else:
            mu = v.ref.mean(-1, keepdims=True)
            var = ((v.ref - mu) ** 2).mean(-1, keepdims=True)
            t, r = v.t.layernorm(), (v.ref - mu) / np.sqrt(var + 1e-5)
        self.add(t, r, f"{v.text}.{op}(-1)")

    def setitem(self, v: Value) -> None:
        """In-place assignment into a fresh copy of `v` (lazy or realized): a
        constant or a tensor into a slice of dim 0, an index of dim 0 or an
        index of dim 1."""
        if v.ref.ndim == 0 or v.ref.size == 0:
            return self.unary(v)
        realized = bool(self.rng.integers(0, 2))
        c = v.t.contiguous().realize() if realized else v.t.contiguous()
        r = v.ref.copy()
        d = v.ref.shape[0]
        a = int(self.rng.integers(0, d))
        b = int(self.rng.integers(a + 1, d + 1))
        kind = int(self.rng.integers(0, 3 if v.ref.ndim >= 2 else 2))
        if kind == 0:
            index, text = slice(a, b), f"[{a}:{b}]"
        elif kind == 1:
            index, text = a, f"[{a}]"
        else:
            j = a % v.ref.shape[1]
            index, text = (slice(None), j), f"[:, {j}]"
        if self.rng.integers(0, 2):
            val = float(self.rng.choice([0.0, -1.0, 2.5]))
            c[index] = val
            r[index] = val
        else:
            x = self.rng.standard_normal(r[index].shape)
            c[index] = Tensor(x)
            r[index] = x
            val = f"Tensor{x.shape}"
        what = ".realize()" if realized else ""
        self.add(c, r, f"{v.text}.contiguous(){what}; {text} = {val}")

    def roll(self, v: Value) -> None:
        if v.ref.ndim == 0:
            return self.unary(v)
        axis = int(self.rng.integers(0, v.ref.ndim))
        shift = int(self.rng.integers(-5, 6))
        self.add(
            v.t.roll(shift, axis), np.roll(v.ref, shift, axis), f"{v.text}.roll({shift}, {axis})"
        )

    def tril(self, v: Value) -> None:
        if v.ref.ndim < 2:
            return self.unary(v)
        k = int(self.rng.integers(-2, 3))
        if self.rng.random() < 0.5:
            self.add(v.t.tril(k), np.tril(v.ref, k), f"{v.text}.tril({k})")
        else:
            self.add(v.t.triu(k), np.triu(v.ref, k), f"{v.text}.triu({k})")

    def realize(self, v: Value) -> None:
        v.t.realize()
        self.program.steps.append(f"{v.text}.realize()")
        self.realized += 1

    OPS = {
        "unary": 4,
        "binary": 5,
        "reduce": 3,
        "reshape": 2,
        "permute": 2,
        "expand": 1,
        "pad": 1,
        "slice": 2,
        "flip": 1,
        "matmul": 1,
        "scan": 1,
        "softmax": 1,
        "cat": 1,
        "argreduce": 1,
        "gather": 1,
        "integer": 1,
        "norm": 1,
        "setitem": 1,
        "roll": 1,
        "tril": 1,
        "realize": 1,
    }

    def build(self) -> Program:
        self.leaf()
        names = list(self.OPS)
        p = np.array([self.OPS[n] for n in names], dtype=np.float64)
        for _ in range(self.steps):
            op = str(self.rng.choice(names, p=p / p.sum()))
            getattr(self, op)(self.pick())
        # outputs: the last value and, sometimes, an earlier one too
        outs = [self.pool[-1]]
        if len(self.pool) > 2 and self.rng.random() < 0.5:
            outs.append(self.pool[int(self.rng.integers(0, len(self.pool) - 1))])
        self.program.outputs = outs
        return self.program


def tolerance(ref: np.ndarray) -> float:
    scale = float(np.max(np.abs(ref))) if ref.size else 1.0
    return 2e-4 * max(1.0, scale)


def check(seed: int, steps: int = 8) -> None:
    """Build program `seed`, evaluate its outputs and compare with the model;
    raises AssertionError naming the program on a mismatch."""
    program = Generator(seed, steps).build()
    got = [o.t.numpy() for o in program.outputs]
    for o, g in zip(program.outputs, got):
        listing = "\n  ".join(program.steps)
        if g.shape != o.ref.shape:
            raise AssertionError(
                f"seed {seed}: {o.text} has shape {g.shape}, numpy {o.ref.shape}\n  {listing}"
            )
        err = float(np.max(np.abs(g - o.ref))) if g.size else 0.0
        if not err <= tolerance(o.ref):
            raise AssertionError(
                f"seed {seed}: {o.text} off by {err:.3g} (tol {tolerance(o.ref):.3g})\n  {listing}"
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--steps", type=int, default=8, help="ops per program")
    args = ap.parse_args(argv)
    failed = 0
    for seed in range(args.seed, args.seed + args.cases):
        try:
            check(seed, args.steps)
        except Exception as e:  # report every failure, keep going
            failed += 1
            print(f"--- seed {seed}: {type(e).__name__}")
            print("".join(traceback.format_exception_only(e)).rstrip()[:4000])
    print(f"{args.cases - failed}/{args.cases} programs agree with numpy")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
