"""Kernel counts of the op families (the README's op table states them):
each family decomposes into fusible primitives, and this pins how well."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
import mlfuse.nn.functional as F
from mlfuse import Tensor

RNG = np.random.default_rng(0)


def _r(*shape) -> Tensor:
    return Tensor(RNG.standard_normal(shape).astype(np.float32)).realize()


def _kernels(*ts: Tensor) -> int:
    return len(mlfuse.schedule(*ts))


def test_conv2d_bias_relu_is_one_kernel():
    x, w, b = _r(2, 3, 8, 8), _r(4, 3, 3, 3), _r(4)
    out = F.conv2d(x, w, b, padding=1).relu()
    assert _kernels(out) == 1
    assert out.shape == (2, 4, 8, 8)


def test_cat_of_elementwise_results_is_one_kernel():
    a, b = _r(3, 4), _r(5, 4)
    out = mlfuse.cat([a * 2, (b + 1).exp()], dim=0)
    assert _kernels(out) == 1
    np.testing.assert_allclose(
        out.numpy(), np.concatenate([a.numpy() * 2, np.exp(b.numpy() + 1)]), rtol=1e-6
    )


def test_embedding_lookup_and_its_epilogue_are_one_kernel():
    weight = _r(50, 8)
    idx = Tensor(np.array([[3, 0, 49], [7, 7, 1]]))
    out = F.embedding(idx, weight) * 2 + 1
    assert _kernels(out) == 1
    np.testing.assert_allclose(out.numpy(), weight.numpy()[idx.numpy()] * 2 + 1, rtol=1e-6)


def test_gather_with_epilogue_is_one_kernel():
    x = _r(10, 6)
    idx = Tensor(np.array([9, 0, 3, 3])).realize()
    out = x[idx] * 2 + 1
    assert _kernels(out) == 1
    np.testing.assert_allclose(out.numpy(), x.numpy()[[9, 0, 3, 3]] * 2 + 1, rtol=1e-6)


@pytest.mark.parametrize(
    "build,most",
    [
        (lambda x: x.softmax(-1), 1),
        (lambda x: x.layernorm(-1), 1),
        (lambda x: x.argmax(-1), 1),
        (lambda x: x.gelu() + x.erf(), 1),
        (lambda x: x.tril() + x.triu(1), 1),
        (lambda x: x.roll(1, 0) * 2, 1),
        (lambda x: F.cross_entropy(x, Tensor(np.arange(8) % 8)), 2),
    ],
    ids=["softmax", "layernorm", "argmax", "gelu+erf", "tril+triu", "roll", "cross_entropy"],
)
def test_op_families_stay_fused(build, most):
    out = build(_r(8, 8))
    assert _kernels(out) <= most


def test_attention_materializes_a_large_softmax_before_the_second_product():
    """softmax(q k^T) @ v: a small softmax stays in the second product's kernel
    (2 kernels); from 32K elements on it is a kernel of its own (computed once,
    in vectors) and the product a plain one (3 kernels)."""
    for (b, s, d), kernels in (((2, 16, 8), 2), ((2, 128, 16), 3)):
        q, k, v = _r(b, s, d), _r(b, s, d), _r(b, s, d)
        out = (q @ k.transpose(-1, -2) * 0.25).softmax(-1) @ v
        assert _kernels(out) == kernels
        qn, kn, vn = (t.numpy().astype(np.float64) for t in (q, k, v))
        sc = qn @ kn.transpose(0, 2, 1) * 0.25
        p = np.exp(sc - sc.max(-1, keepdims=True))
        ref = p / p.sum(-1, keepdims=True) @ vn
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)
