"""Shared references of the distributions tests (float64 closed forms and a
batch checker that realizes all of a test's tensors in one schedule)."""

from __future__ import annotations

import math

import numpy as np

import mlfuse
from mlfuse import Tensor

F64 = mlfuse.float64
EULER = 0.57721566490153286060
lgamma = np.vectorize(math.lgamma, otypes=[float])
erf = np.vectorize(math.erf, otypes=[float])


def t64(a, requires_grad=False) -> Tensor:
    return Tensor(np.asarray(a, np.float64), F64, requires_grad=requires_grad)


class Checks:
    """(got, want) pairs realized together: one schedule for all of a test's
    tensors (each kernel with lgamma or digamma in it costs a compile)."""

    def __init__(self):
        self.items = []

    def __call__(self, label, got, want, rtol=1e-9, atol=1e-12):
        self.items.append((label, got, want, rtol, atol))

    def verify(self):
        mlfuse.realize(*[g for _, g, *_ in self.items if isinstance(g, Tensor)])
        for label, got, want, rtol, atol in self.items:
            got = got.numpy() if isinstance(got, Tensor) else got
            np.testing.assert_allclose(
                np.asarray(got, np.float64), want, rtol=rtol, atol=atol, err_msg=label
            )


def digamma(x):
    x = np.array(x, np.float64)
    acc = np.zeros_like(x)
    while (x < 8).any():
        acc = np.where(x < 8, acc - 1 / x, acc)
        x = np.where(x < 8, x + 1, x)
    r = 1 / (x * x)
    return acc + np.log(x) - 0.5 / x - r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r / 240)))


def lbeta(a, b):
    return lgamma(a) + lgamma(b) - lgamma(np.asarray(a) + b)


def bessel_i(order, x):
    """``I_order(x)`` by its power series (float64, x up to ~50)."""
    out = []
    for v in np.atleast_1d(x):
        term = (v / 2) ** order / math.factorial(order)
        total, k = term, 0
        while term > 1e-17 * total:
            k += 1
            term *= (v / 2) ** 2 / (k * (k + order))
            total += term
        out.append(total)
    return np.array(out)


def integrate(f, lo, hi, n=200001):
    """Simpson's rule on ``n`` points."""
    x = np.linspace(lo, hi, n)
    y = f(x)
    h = (hi - lo) / (n - 1)
    return h / 3 * (y[0] + y[-1] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum())


def _cb_refs(p, x, u):
    lam = 1 - 2 * p
    log_c = np.log(2 * np.arctanh(lam) / lam)
    mean = p / (2 * p - 1) + 1 / (2 * np.arctanh(lam))
    var = p * (p - 1) / (1 - 2 * p) ** 2 + 1 / (np.log1p(-p) - np.log(p)) ** 2
    cdf = (p**x * (1 - p) ** (1 - x) + p - 1) / (2 * p - 1)
    icdf = (np.log1p(-p + u * (2 * p - 1)) - np.log1p(-p)) / (np.log(p) - np.log1p(-p))
    ent = []
    for pi in p:  # -E[log f] by Simpson's rule
        lam_i = 1 - 2 * pi
        lc = math.log(2 * math.atanh(lam_i) / lam_i)
        ent.append(
            -integrate(
                lambda s, pi=pi, lc=lc: (
                    np.exp(s * np.log(pi) + (1 - s) * np.log1p(-pi) + lc)
                    * (s * np.log(pi) + (1 - s) * np.log1p(-pi) + lc)
                ),
                0.0,
                1.0,
                20001,
            )
        )
    logp = x * np.log(p) + (1 - x) * np.log1p(-p) + log_c
    return logp, mean, var, cdf, icdf, np.array(ent)
