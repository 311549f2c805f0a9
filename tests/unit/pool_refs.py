"""PyTorch's pooling, computed directly with loops over the output positions in
float64: the reference the pooling tests compare with."""

from __future__ import annotations

import numpy as np


def pool_ref(x, k, s, p, d=1, ceil=False, kind="max", include_pad=True, divisor=None):
    """Max or average pool of ``x``: over its last ``len(k)`` dims when the
    geometry is given as tuples, else over every dim after (N, C). ``include_pad``
    counts the zero padding in an average's divisor; ``divisor`` overrides it."""
    x = np.asarray(x, dtype=np.float64)
    nd = len(k) if isinstance(k, tuple) else x.ndim - 2
    k, s, p, d = ((v,) * nd if isinstance(v, int) else tuple(v) for v in (k, s, p, d))
    sp = x.shape[-nd:]
    outs = []
    for n, kk, ss, pp, dd in zip(sp, k, s, p, d):
        span = n + 2 * pp - dd * (kk - 1) - 1
        o = (-(-span // ss) if ceil else span // ss) + 1
        if ceil and (o - 1) * ss >= n + pp:
            o -= 1
        outs.append(o)
    lead = x.shape[:-nd]
    out = np.zeros(lead + tuple(outs))
    for pos in np.ndindex(*outs):
        idx, with_pad = [], 1
        for o, kk, ss, pp, dd, n in zip(pos, k, s, p, d, sp):
            start = o * ss - pp
            idx.append([q for q in (start + t * dd for t in range(kk)) if 0 <= q < n])
            with_pad *= min(start + kk, n + pp) - start
        win = x[(Ellipsis,) + np.ix_(*idx)].reshape(lead + (-1,))
        if kind == "max":
            out[(Ellipsis,) + pos] = win.max(-1)
        else:
            div = divisor or (with_pad if include_pad else win.shape[-1])
            out[(Ellipsis,) + pos] = win.sum(-1) / div
    return out
