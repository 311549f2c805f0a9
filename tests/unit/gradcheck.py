"""Central-difference gradients for the tests of hand-written derivatives."""

from __future__ import annotations

import numpy as np


def numeric_grad(f, arrays, weights, eps=1e-6):
    """d sum(weights * f(arrays)) / d arrays[k], by central differences."""
    out = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            vals = []
            for sign in (1, -1):
                args = [x.copy() for x in arrays]
                args[k][idx] += sign * eps
                vals.append((weights * f(*args)).sum())
            g[idx] = (vals[0] - vals[1]) / (2 * eps)
        out.append(g)
    return out
