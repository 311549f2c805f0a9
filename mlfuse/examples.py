"""Example programs: the fusion cases of the project spec, each with a numpy reference.

Each case builds mlfuse tensors and the same computation in numpy (float64
where that is the better reference) from one seeded generator. Used by the
tests (kernel counts and numerics), the demo and the fusion report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mlfuse import dtypes
from mlfuse.tensor import Tensor


@dataclass(frozen=True)
class Case:
    name: str
    program: str
    target: int  # kernels mlfuse must not exceed
    tinygrad: int  # kernels tinygrad 0.14 schedules for it (CPU)
    build: Callable[[np.random.Generator], tuple[list[Tensor], list[np.ndarray]]]


def _softmax(x: np.ndarray, axis=-1) -> np.ndarray:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _data(rng: np.random.Generator, *shapes):
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return arrays, [Tensor(a) for a in arrays]


def _ew_chain(rng):
    (a, b, c), (A, B, C) = _data(rng, (64, 64), (64, 64), (64, 64))
    return [(A * B + C).relu()], [np.maximum(a * b + c, 0)]


def _reduce_of_ew(rng):
    (a, b), (A, B) = _data(rng, (64, 64), (64, 64))
    return [(A * B).sum(1)], [(a * b).sum(1)]


def _reduce_then_ew(rng):
    (a, b), (A, B) = _data(rng, (64, 64), (64,))
    return [A.sum(1) * 2 + B], [a.sum(1) * 2 + b]


def _reduce_broadcast_back(rng):
    (x,), (X,) = _data(rng, (64, 64))
    return [X - X.max(1, keepdim=True)], [x - x.max(1, keepdims=True)]


def _softmax_case(rng):
    (x,), (X,) = _data(rng, (64, 64))
    return [X.softmax(-1)], [_softmax(x)]


def _layernorm(rng):
    (x, w, b), (X, W, B) = _data(rng, (64, 64), (64,), (64,))
    mu = X.mean(-1, keepdim=True)
    var = ((X - mu) * (X - mu)).mean(-1, keepdim=True)
    out = (X - mu) / (var + 1e-5).sqrt() * W + B
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return [out], [(x - m) / np.sqrt(v + 1e-5) * w + b]


def _matmul(rng):
    (a, b), (A, B) = _data(rng, (64, 32), (32, 48))
    return [A @ B], [a @ b]


def _linear_relu(rng):
    (x, w, b), (X, W, B) = _data(rng, (64, 32), (32, 48), (48,))
    return [(X @ W + B).relu()], [np.maximum(x @ w + b, 0)]


def _mlp2(rng):
    (x, w1, b1, w2, b2), (X, W1, B1, W2, B2) = _data(
        rng, (64, 32), (32, 48), (48,), (48, 16), (16,)
    )
    return [(X @ W1 + B1).relu() @ W2 + B2], [np.maximum(x @ w1 + b1, 0) @ w2 + b2]


def _transpose_add(rng):
    (x, y), (X, Y) = _data(rng, (64, 64), (64, 64))
    return [X.T + Y], [x.T + y]


def _slice_pad_flip(rng):
    (x,), (X,) = _data(rng, (16, 16))
    out = X[2:10, 1:9].pad(((1, 1), (2, 2))).flip(0) + 1
    return [out], [np.flip(np.pad(x[2:10, 1:9], ((1, 1), (2, 2))), 0) + 1]


def _two_parallel_reduces(rng):
    (x,), (X,) = _data(rng, (64, 64))
    return [X.sum(1) + X.max(1)], [x.sum(1) + x.max(1)]


def _multi_output(rng):
    (x,), (X,) = _data(rng, (64, 64))
    y = X * 2
    return [y + 1, y.sum(0)], [x * 2 + 1, (x * 2).sum(0)]


def _unsafe_pad_exp(rng):
    (x,), (X,) = _data(rng, (16, 16))
    return [X.exp().pad(((1, 1), (1, 1)))], [np.pad(np.exp(x), ((1, 1), (1, 1)))]


def _attention(rng):
    (q, k, v), (Q, K, V) = _data(rng, (4, 32, 16), (4, 32, 16), (4, 32, 16))
    out = (Q @ K.transpose(-1, -2) / 4).softmax(-1) @ V
    return [out], [_softmax(q @ k.transpose(0, 2, 1) / 4) @ v]


def conv3x3(x: Tensor, w: Tensor) -> Tensor:
    """3x3 convolution, padding 1: nine shifted windows of the padded input,
    each multiplied by a weight slice and summed over input channels."""
    n, ci, h, wd = x.shape
    co = w.shape[0]
    xp = x.pad(((0, 0), (0, 0), (1, 1), (1, 1)))
    acc = None
    for i in range(3):
        for j in range(3):
            win = xp[:, :, i : i + h, j : j + wd].reshape(n, 1, ci, h, wd)
            term = (win * w[:, :, i, j].reshape(1, co, ci, 1, 1)).sum(2)
            acc = term if acc is None else acc + term
    assert acc is not None
    return acc


def conv3x3_numpy(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    h, wd = x.shape[2:]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    return sum(
        np.einsum("nchw,oc->nohw", xp[:, :, i : i + h, j : j + wd], w[:, :, i, j])
        for i in range(3)
        for j in range(3)
    )


def _conv3x3_views(rng):
    (x, w), (X, W) = _data(rng, (2, 4, 10, 10), (8, 4, 3, 3))
    return [conv3x3(X, W)], [conv3x3_numpy(x, w)]


def _cast_chain(rng):
    (x,), (X,) = _data(rng, (64, 64))
    out = (X * 10).cast(dtypes.int32).cast(dtypes.float32) / 10
    return [out], [(x * 10).astype(np.int32).astype(np.float32) / 10]


def _multistage_reduce(rng):
    (x,), (X,) = _data(rng, (8, 16, 32))
    return [X.sum(2).relu().sum(1)], [np.maximum(x.astype(np.float64).sum(2), 0).sum(1)]


def _view_output(rng):
    (a,), (A,) = _data(rng, (16, 1))
    return [A.expand((16, 16))], [np.broadcast_to(a, (16, 16))]


FUSION_CASES: list[Case] = [
    Case("ew_chain", "(a*b+c).relu(), all (64,64)", 1, 1, _ew_chain),
    Case("reduce_of_ew", "(a*b).sum(1)", 1, 1, _reduce_of_ew),
    Case("reduce_then_ew", "a.sum(1)*2 + b, a (64,64), b (64,)", 1, 1, _reduce_then_ew),
    Case("reduce_broadcast_back", "x - x.max(1, keepdim=True)", 1, 2, _reduce_broadcast_back),
    Case("softmax", "x.softmax(-1) on (64,64)", 1, 3, _softmax_case),
    Case("layernorm", "(x-mu)/sqrt(var+1e-5)*w+b over the last axis", 1, 3, _layernorm),
    Case("matmul", "a@b, (64,32)@(32,48)", 1, 1, _matmul),
    Case("linear_relu", "(x@w+b).relu()", 1, 1, _linear_relu),
    Case("mlp2", "(x@w1+b1).relu()@w2+b2", 2, 2, _mlp2),
    Case("transpose_add", "x.T + y", 1, 1, _transpose_add),
    Case("slice_pad_flip", "x[2:10,1:9].pad(((1,1),(2,2))).flip(0) + 1", 1, 1, _slice_pad_flip),
    Case("two_parallel_reduces", "x.sum(1) + x.max(1)", 1, 1, _two_parallel_reduces),
    Case("multi_output", "y = x*2; outputs y+1 and y.sum(0)", 2, 2, _multi_output),
    Case(
        "unsafe_pad_exp", "x.exp().pad(((1,1),(1,1))): border 0, not exp(0)", 1, 1, _unsafe_pad_exp
    ),
    Case("attention", "softmax(q@k^T/4, -1)@v, q,k,v (4,32,16)", 2, 4, _attention),
    Case("conv3x3_views", "3x3 conv, padding 1, as 9 padded windows", 1, 1, _conv3x3_views),
    Case("cast_chain", "(x*10).cast(int32).cast(float32)/10", 1, 1, _cast_chain),
    Case("multistage_reduce", "x.sum(2).relu().sum(1), x (8,16,32)", 1, 1, _multistage_reduce),
    Case("view_output", "a.expand((16,16)) of a realized (16,1) a", 0, 0, _view_output),
]
