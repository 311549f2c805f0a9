"""More of ``mlfuse.nn.functional`` and ``mlfuse.nn`` against float64 numpy
references: pooling in 1-3 dims, interpolation, rearranging, normalization,
activations, channel dropout, distances and losses, and the modules."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse
import mlfuse.nn as nn
import mlfuse.nn.functional as F
from mlfuse import Tensor

from pool_refs import pool_ref

F64 = np.float64
RNG = np.random.default_rng(1)


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def close(t: Tensor, ref, rtol=2e-5, atol=2e-5):
    np.testing.assert_allclose(t.numpy(), np.asarray(ref), rtol=rtol, atol=atol)


def grad_check(fn, *arrays, eps=1e-6, tol=1e-6):
    """mlfuse's gradient of ``sum(fn)`` against float64 central differences."""
    arrays = [np.asarray(a, F64) for a in arrays]
    got = mlfuse.grad(lambda *ts: fn(*ts).sum())(*[Tensor(a) for a in arrays])
    for k, g in enumerate(got):
        want = np.zeros_like(arrays[k])
        for idx in np.ndindex(arrays[k].shape):
            vals = []
            for sign in (1, -1):
                args = [a.copy() for a in arrays]
                args[k][idx] += sign * eps
                vals.append(float(fn(*[Tensor(a) for a in args]).sum().item()))
            want[idx] = (vals[0] - vals[1]) / (2 * eps)
        np.testing.assert_allclose(g.numpy(), want, rtol=tol, atol=tol, err_msg=f"input {k}")


# ---------------------------------------------------------------------------
# pooling in 1, 2 and 3 dims
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,k,s,p,d,ceil",
    [
        ((2, 3, 9), 3, 2, 1, 1, False),
        ((1, 2, 7), 2, 3, 0, 1, True),  # stride > kernel, ceil_mode
        ((2, 2, 10), 3, 1, 1, 2, False),  # dilation
    ],
)
def test_max_and_avg_pool1d(shape, k, s, p, d, ceil):
    x = r(*shape)
    close(F.max_pool1d(Tensor(x), k, s, p, d, ceil), pool_ref(x, k, s, p, d, ceil))
    close(F.avg_pool1d(Tensor(x), k, s, p, ceil), pool_ref(x, k, s, p, 1, ceil, "avg"))
    got = F.avg_pool1d(Tensor(x), k, s, p, ceil, count_include_pad=False)
    close(got, pool_ref(x, k, s, p, 1, ceil, "avg", include_pad=False))
    close(F.max_pool1d(Tensor(x[0]), k, s, p, d, ceil), pool_ref(x[:1], k, s, p, d, ceil)[0])


def test_pool3d():
    x = r(1, 2, 5, 6, 7)
    close(F.max_pool3d(Tensor(x), 2), pool_ref(x, 2, 2, 0))
    close(F.max_pool3d(Tensor(x), (3, 2, 2), (1, 2, 3), 1), pool_ref(x, (3, 2, 2), (1, 2, 3), 1))
    close(F.avg_pool3d(Tensor(x), 3, 2, 1), pool_ref(x, 3, 2, 1, kind="avg"))
    got = F.avg_pool3d(Tensor(x), 3, 2, 1, ceil_mode=True, count_include_pad=False)
    close(got, pool_ref(x, 3, 2, 1, ceil=True, kind="avg", include_pad=False))
    close(
        F.avg_pool3d(Tensor(x[0]), 2, divisor_override=3),
        pool_ref(x, 2, 2, 0, kind="avg")[0] * 8 / 3,
    )


def test_pool_errors():
    with pytest.raises(
        ValueError, match=r"input must be \(N, C, L\) or \(C, L\), got \(2, 3, 4, 5\)"
    ):
        F.max_pool1d(Tensor(r(2, 3, 4, 5)), 2)
    with pytest.raises(ValueError, match=r"input must be \(N, C, D, H, W\)"):
        F.avg_pool3d(Tensor(r(2, 3)), 2)
    with pytest.raises(ValueError, match="must be positive"):
        F.max_pool1d(Tensor(r(1, 2, 5)), 2, stride=0)
    with pytest.raises(ValueError, match="at most half the kernel"):
        F.avg_pool1d(Tensor(r(1, 2, 5)), 2, padding=2)
    with pytest.raises(ValueError, match="does not fit"):
        F.max_pool1d(Tensor(r(1, 2, 3)), 5)
    with pytest.raises(ValueError, match=r"indices \(1, 2, 2\) must have the input's shape"):
        F.max_unpool1d(Tensor(r(1, 2, 3)), Tensor(np.zeros((1, 2, 2), np.int64)), 2)


def _pool_indices_ref(x, k, s, p):
    """PyTorch's max_pool2d indices: per window, the flat (h * W + w) index of
    the first maximum over the in-bounds taps in scan order (a NaN wins)."""
    n, c, h, w = x.shape
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    vals, idx = np.zeros((n, c, oh, ow)), np.zeros((n, c, oh, ow), np.int64)
    for b, ch, i, j in np.ndindex(n, c, oh, ow):
        best, at = -np.inf, None
        for a, e in np.ndindex(k, k):
            y, z = i * s + a - p, j * s + e - p
            if 0 <= y < h and 0 <= z < w:
                v = x[b, ch, y, z]
                if at is None or v > best or np.isnan(v):
                    best, at = v, y * w + z
        vals[b, ch, i, j], idx[b, ch, i, j] = best, at
    return vals, idx


@pytest.mark.parametrize("k, s, p", [(2, 2, 0), (3, 2, 1), (3, 1, 1)])
def test_max_pool_indices_and_unpool(k, s, p):
    x = RNG.integers(0, 3, (2, 3, 7, 8)).astype(np.float32)  # many ties
    x[0, 0, 2, 2] = np.nan
    x[1, 2] = -np.inf  # a plane of -inf: the first in-bounds tap
    vals, idx = F.max_pool2d(Tensor(x), k, stride=s, padding=p, return_indices=True)
    want_v, want_i = _pool_indices_ref(x, k, s, p)
    assert idx.dtype == mlfuse.int64
    np.testing.assert_array_equal(vals.numpy(), want_v)
    np.testing.assert_array_equal(idx.numpy(), want_i)
    # unpooling puts each maximum back where it was, zeros elsewhere
    size = (7, 8)
    up = F.max_unpool2d(vals, idx, k, stride=s, padding=p, output_size=size).numpy()
    want = np.zeros((2, 3, 7 * 8))
    for b, ch in np.ndindex(2, 3):
        want[b, ch, want_i[b, ch].ravel()] = want_v[b, ch].ravel()
    np.testing.assert_array_equal(up, want.reshape(2, 3, 7, 8))
    # the module and the tinygrad-style method give the same
    mv, mi = nn.MaxPool2d(k, stride=s, padding=p, return_indices=True)(Tensor(x))
    np.testing.assert_array_equal(mi.numpy(), want_i)
    np.testing.assert_array_equal(
        nn.MaxUnpool2d(k, stride=s, padding=p)(mv, mi, output_size=size).numpy(), up
    )
    tv, ti = Tensor(x).max_pool2d(k, stride=s, padding=p, return_indices=True)
    np.testing.assert_array_equal(
        tv.max_unpool2d(ti, k, stride=s, padding=p, output_size=size).numpy(), up
    )


def test_unpool_of_an_unrealized_large_window_pool():
    # 25 taps: the indices are a chain of selects each reading the running
    # maximum twice; views pushed through it must not follow every path
    x = RNG.standard_normal((2, 2, 20, 20)).astype(np.float32)
    vals, idx = Tensor(x).max_pool2d((5, 5), stride=(6, 5), return_indices=True)
    up = vals.max_unpool2d(idx, (5, 5), stride=(6, 5), output_size=(20, 20)).numpy()
    want = np.zeros((2, 2, 400))
    for b, ch, i, j in np.ndindex(2, 2, 3, 4):
        win = x[b, ch, 6 * i : 6 * i + 5, 5 * j : 5 * j + 5]
        a, e = np.unravel_index(np.argmax(win), win.shape)
        want[b, ch, (6 * i + a) * 20 + 5 * j + e] = win[a, e]
    np.testing.assert_array_equal(up, want.reshape(2, 2, 20, 20))


def test_tinygrad_pool_spellings():
    x = r(1, 2, 10, 9)
    # uneven padding (left, right, top, bottom): -inf first, then the pool
    got = Tensor(x).max_pool2d(kernel_size=(3, 3), padding=(2, 0, 1, 2)).numpy()
    xp = np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 0)), constant_values=-np.inf)
    want = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))[:, :, ::3, ::3].max(
        (-1, -2)
    )
    np.testing.assert_array_equal(got, want)
    # a kernel of three sizes pools the last three dims
    y = r(1, 1, 4, 6, 8)
    got = Tensor(y).avg_pool2d(kernel_size=(2, 2, 2)).numpy()
    want = y.reshape(1, 1, 2, 2, 3, 2, 4, 2).astype(np.float64).mean((3, 5, 7))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def adaptive_ref(x, out, kind):
    x = x.astype(F64)
    nd = len(out)
    res = np.zeros(x.shape[: x.ndim - nd] + tuple(out))
    for pos in np.ndindex(*out):
        sl = tuple(
            slice((i * n) // o, -(-((i + 1) * n) // o)) for i, n, o in zip(pos, x.shape[-nd:], out)
        )
        win = x[(...,) + sl]
        axes = tuple(range(x.ndim - nd, x.ndim))
        res[(...,) + pos] = win.max(axes) if kind == "max" else win.mean(axes)
    return res


@pytest.mark.parametrize(
    "shape,out", [((2, 3, 10), 4), ((1, 2, 7), 7), ((3, 9), 2), ((1, 1, 5), 8)]
)
def test_adaptive_pool1d(shape, out):
    x = r(*shape)
    close(F.adaptive_avg_pool1d(Tensor(x), out), adaptive_ref(x, (out,), "avg"))
    close(F.adaptive_max_pool1d(Tensor(x), out), adaptive_ref(x, (out,), "max"))


@pytest.mark.parametrize(
    "shape,out", [((2, 3, 7, 9), (3, 4)), ((1, 2, 6, 8), (3, 4)), ((2, 5, 5), (2, None))]
)
def test_adaptive_max_pool2d(shape, out):
    x = r(*shape)
    full = tuple(o if o is not None else shape[-2 + i] for i, o in enumerate(out))
    close(F.adaptive_max_pool2d(Tensor(x), out), adaptive_ref(x, full, "max"))


def test_adaptive_errors():
    with pytest.raises(ValueError, match=r"input must be \(N, C, L\) or \(C, L\)"):
        F.adaptive_avg_pool1d(Tensor(r(5)), 2)
    with pytest.raises(ValueError, match="output_size must be positive"):
        F.adaptive_max_pool2d(Tensor(r(1, 4, 4)), (0, 2))


def test_conv3d():
    x, w, b = r(2, 4, 5, 6, 4), r(6, 2, 3, 2, 3), r(6)
    got = F.conv3d(Tensor(x), Tensor(w), Tensor(b), stride=(1, 2, 1), padding=1, groups=2)
    xp = np.pad(x.astype(F64), ((0, 0), (0, 0), (1, 1), (1, 1), (1, 1)))
    od, oh, ow = 5, 4, 4
    ref = np.zeros((2, 6, od, oh, ow)) + b.reshape(1, 6, 1, 1, 1)
    for g in range(2):
        for a, bb, c in np.ndindex(3, 2, 3):
            win = xp[:, 2 * g : 2 * g + 2, a : a + od, bb : bb + 2 * oh - 1 : 2, c : c + ow]
            ref[:, 3 * g : 3 * g + 3] += np.einsum(
                "ncdhw,oc->nodhw", win, w[3 * g : 3 * g + 3, :, a, bb, c]
            )
    close(got, ref, 1e-4, 1e-4)
    with pytest.raises(ValueError, match=r"input must be \(N, C, D, H, W\)"):
        F.conv3d(Tensor(r(4, 5, 6, 4)), Tensor(w))


# ---------------------------------------------------------------------------
# interpolation
# ---------------------------------------------------------------------------


def _src_linear(i, o, sf, align):
    dst = np.arange(o, dtype=F64)
    if align:
        return dst * ((i - 1) / (o - 1) if o > 1 else 0.0)
    scale = 1 / sf if sf else i / o
    return np.maximum((dst + 0.5) * scale - 0.5, 0)


def interp_ref(x, out, mode, align=False, sf=None):
    """Separable float64 reference of PyTorch's index rules."""
    x = x.astype(F64)
    for d, o in enumerate(out):
        axis = 2 + d
        i = x.shape[axis]
        f = sf[d] if sf else None
        if mode == "nearest":
            idx = np.minimum(np.floor(np.arange(o) * (1 / f if f else i / o)).astype(int), i - 1)
            x = np.take(x, idx, axis)
        elif mode == "nearest-exact":
            idx = np.floor((np.arange(o) + 0.5) * (1 / f if f else i / o)).astype(int)
            x = np.take(x, np.minimum(idx, i - 1), axis)
        elif mode == "bicubic":
            # Keys' cubic convolution kernel (a = -0.75) summed over the 4
            # nearest input positions, borders replicated
            if align:
                src = np.arange(o) * ((i - 1) / (o - 1) if o > 1 else 0.0)
            else:
                src = (np.arange(o) + 0.5) * (1 / f if f else i / o) - 0.5

            def keys(t, a=-0.75):
                t = np.abs(t)
                return np.where(
                    t <= 1,
                    (a + 2) * t**3 - (a + 3) * t**2 + 1,
                    np.where(t < 2, a * t**3 - 5 * a * t**2 + 8 * a * t - 4 * a, 0.0),
                )

            moved = np.moveaxis(x, axis, -1)
            res = np.zeros(moved.shape[:-1] + (o,))
            for q, sq in enumerate(src):
                for j in range(int(np.floor(sq)) - 1, int(np.floor(sq)) + 3):
                    res[..., q] += keys(sq - j) * moved[..., min(max(j, 0), i - 1)]
            x = np.moveaxis(res, -1, axis)
        else:
            src = _src_linear(i, o, f, align)
            i0 = np.floor(src).astype(int)
            i1 = np.minimum(i0 + 1, i - 1)
            lam = (src - i0).reshape((o,) + (1,) * (len(out) - d - 1))
            x = np.take(x, i0, axis) * (1 - lam) + np.take(x, i1, axis) * lam
    return x


def test_interpolate_known_values():
    x = Tensor(np.arange(3, dtype=np.float32).reshape(1, 1, 3))
    close(F.interpolate(x, size=5), [[[0, 0, 1, 1, 2]]])  # floor(out_idx * 3 / 5)
    y = Tensor(np.array([[[0.0, 1.0]]], np.float32))
    close(F.interpolate(y, size=4, mode="linear", align_corners=False), [[[0, 0.25, 0.75, 1]]])
    close(F.interpolate(y, size=4, mode="linear", align_corners=True), [[[0, 1 / 3, 2 / 3, 1]]])
    close(F.interpolate(x, size=5, mode="nearest-exact"), [[[0, 0, 1, 2, 2]]])


@pytest.mark.parametrize(
    "shape,size,sf,mode,align",
    [
        ((2, 3, 5), 8, None, "nearest", None),
        ((1, 2, 7), 3, None, "nearest", None),  # downsampling
        ((1, 2, 5), None, 1.7, "nearest", None),  # a scale factor that is not an integer
        ((1, 2, 4), None, 2, "nearest", None),
        ((2, 2, 5), 9, None, "linear", False),
        ((2, 2, 5), 9, None, "linear", True),
        ((1, 1, 6), None, 0.6, "linear", False),
        ((1, 2, 4, 5), (7, 3), None, "bilinear", False),
        ((1, 2, 4, 5), (7, 3), None, "bilinear", True),
        ((2, 1, 3, 4), None, (2.5, 1.5), "bilinear", False),
        ((1, 1, 3, 4), (1, 6), None, "bilinear", True),  # output size 1 with align_corners
        ((1, 2, 3, 4), None, 1.5, "nearest-exact", None),
        ((1, 1, 3, 2, 4), (4, 3, 2), None, "trilinear", False),
        ((2, 1, 5, 6), (9, 4), None, "bicubic", False),
        ((1, 2, 5, 6), (9, 4), None, "bicubic", True),
        ((1, 1, 8, 7), None, (0.5, 1.7), "bicubic", False),  # down one dim, up the other
    ],
)
def test_interpolate(shape, size, sf, mode, align):
    x = r(*shape)
    nd = len(shape) - 2
    got = F.interpolate(Tensor(x), size=size, scale_factor=sf, mode=mode, align_corners=align)
    if size is not None:
        out = (size,) * nd if isinstance(size, int) else size
        sfs = None
    else:
        sfs = (sf,) * nd if not isinstance(sf, tuple) else sf
        out = tuple(math.floor(n * f) for n, f in zip(shape[2:], sfs))
    assert got.shape == shape[:2] + tuple(out)
    close(got, interp_ref(x, out, mode, bool(align), sfs))


def test_interpolate_recompute_scale_factor_and_aliases():
    x = r(1, 1, 5)
    got = F.interpolate(Tensor(x), scale_factor=1.7, mode="linear", recompute_scale_factor=True)
    close(got, interp_ref(x, (8,), "linear"))  # the scale from the sizes, 5 / 8
    close(F.upsample(Tensor(x), scale_factor=2), np.repeat(x, 2, -1))
    x4 = r(1, 2, 3, 3)
    close(F.upsample_bilinear(Tensor(x4), size=(5, 4)), interp_ref(x4, (5, 4), "bilinear", True))
    close(F.upsample_nearest(Tensor(x4), scale_factor=2), x4.repeat(2, -1).repeat(2, -2))
    close(F.interpolate(Tensor(x4), size=(2, 3), mode="area"), adaptive_ref(x4, (2, 3), "avg"))


def test_interpolate_bilinear_uint8_is_pytorchs_fixed_point():
    """uint8 images resize as PyTorch's (Pillow's) integer kernels do: a pass
    along the width, then along the height, fixed-point weights, rounded to
    uint8 in between; a float resize rounded once differs in 2-3 of these."""
    u = np.array(
        [[[[12, 200, 37, 255, 0], [90, 3, 141, 66, 250], [7, 180, 99, 18, 222]]]], np.uint8
    )
    cases = [
        ((2, 4), False, [[47, 118, 153, 81], [42, 126, 60, 205]]),
        (
            (5, 7),
            False,
            [
                [12, 119, 153, 37, 193, 146, 0],
                [43, 87, 109, 79, 151, 146, 100],
                [90, 40, 42, 141, 87, 145, 250],
                [40, 80, 111, 116, 59, 121, 233],
                [7, 106, 157, 99, 41, 105, 222],
            ],
        ),
        (
            (5, 7),
            True,
            [
                [12, 137, 146, 37, 182, 170, 0],
                [51, 85, 98, 89, 137, 149, 125],
                [90, 32, 49, 141, 91, 127, 250],
                [49, 77, 101, 120, 68, 107, 236],
                [7, 122, 153, 99, 45, 86, 222],
            ],
        ),
    ]
    for size, align, want in cases:
        got = F.interpolate(Tensor(u), size=size, mode="bilinear", align_corners=align)
        assert got.dtype == mlfuse.uint8
        np.testing.assert_array_equal(got.numpy()[0, 0], np.array(want, np.uint8))


def test_interpolate_bilinear_uint8_against_torch():
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    u = torch.randint(0, 256, (2, 3, 20, 13), dtype=torch.uint8, generator=gen)
    for size in [(5, 4), (41, 29), (7, 30), (20, 13), (20, 5)]:
        for align in (False, True):
            want = torch.nn.functional.interpolate(
                u, size=size, mode="bilinear", align_corners=align
            ).numpy()
            got = F.interpolate(Tensor(u.numpy()), size=size, mode="bilinear", align_corners=align)
            np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{size} {align}")
    for sf in (0.5, 1.7, (2.0, 0.6)):
        want = torch.nn.functional.interpolate(u, scale_factor=sf, mode="bilinear").numpy()
        got = F.interpolate(Tensor(u.numpy()), scale_factor=sf, mode="bilinear")
        np.testing.assert_array_equal(got.numpy(), want, err_msg=f"scale {sf}")


def test_interpolate_errors():
    x = Tensor(r(1, 2, 4, 4))
    with pytest.raises(ValueError, match="exactly one of size and scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="exactly one of size and scale_factor"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(ValueError, match=r"mode 'linear' needs a 3-d input, got \(1, 2, 4, 4\)"):
        F.interpolate(x, size=3, mode="linear")
    with pytest.raises(ValueError, match="align_corners can only be set"):
        F.interpolate(x, size=3, align_corners=True)
    with pytest.raises(ValueError, match="mode must be one of"):
        F.interpolate(x, size=3, mode="cubic")
    with pytest.raises(ValueError, match="scale_factor must be a positive number"):
        F.interpolate(x, scale_factor=-1.0)
    with pytest.raises(ValueError, match="output size"):
        F.interpolate(x, scale_factor=0.1)


def test_interpolate_gradient():
    grad_check(
        lambda t: F.interpolate(t, size=(3, 5), mode="bilinear", align_corners=False) ** 2,
        RNG.standard_normal((1, 1, 2, 3)),
    )
    grad_check(lambda t: F.interpolate(t, scale_factor=1.5) ** 2, RNG.standard_normal((1, 1, 3)))


# ---------------------------------------------------------------------------
# rearranging, unfold and fold
# ---------------------------------------------------------------------------


def test_pixel_shuffle_round_trip():
    x = r(2, 3 * 4, 3, 5)
    got = F.pixel_shuffle(Tensor(x), 2)
    ref = x.reshape(2, 3, 2, 2, 3, 5).transpose(0, 1, 4, 2, 5, 3).reshape(2, 3, 6, 10)
    close(got, ref, 0, 0)
    close(F.pixel_unshuffle(Tensor(ref), 2), x, 0, 0)
    x3 = r(9, 2, 2)  # unbatched, factor 3
    assert F.pixel_shuffle(Tensor(x3), 3).shape == (1, 6, 6)
    with pytest.raises(
        ValueError, match=r"channels divisible by upscale_factor\*\*2\), got \(2, 6, 3, 5\)"
    ):
        F.pixel_shuffle(Tensor(r(2, 6, 3, 5)), 2)
    with pytest.raises(ValueError, match="H and W divisible by 2"):
        F.pixel_unshuffle(Tensor(r(1, 1, 3, 4)), 2)


def unfold_ref(x, k, d, p, s):
    x = np.pad(x.astype(F64), ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    n, c, h, w = x.shape
    oh = (h - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c, k[0], k[1], oh, ow))
    for i, j in np.ndindex(*k):
        cols[:, :, i, j] = x[:, :, i * d[0] :: s[0], j * d[1] :: s[1]][:, :, :oh, :ow]
    return cols.reshape(n, c * k[0] * k[1], oh * ow), (oh, ow)


def fold_ref(cols, size, k, d, p, s):
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    hp, wp = size[0] + 2 * p[0], size[1] + 2 * p[1]
    oh = (hp - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (wp - d[1] * (k[1] - 1) - 1) // s[1] + 1
    blocks = cols.astype(F64).reshape(n, c, k[0], k[1], oh, ow)
    out = np.zeros((n, c, hp, wp))
    for i, j in np.ndindex(*k):
        for a, b in np.ndindex(oh, ow):
            out[:, :, i * d[0] + a * s[0], j * d[1] + b * s[1]] += blocks[:, :, i, j, a, b]
    return out[:, :, p[0] : p[0] + size[0], p[1] : p[1] + size[1]]


@pytest.mark.parametrize(
    "shape,k,d,p,s",
    [
        ((2, 3, 5, 6), (2, 3), (1, 1), (1, 0), (1, 2)),
        ((1, 2, 7, 7), (2, 2), (2, 1), (1, 1), (3, 3)),  # stride > kernel, dilation
        ((1, 1, 4, 4), (1, 1), (1, 1), (0, 0), (1, 1)),
    ],
)
def test_unfold_fold(shape, k, d, p, s):
    x = r(*shape)
    cols, _ = unfold_ref(x, k, d, p, s)
    close(F.unfold(Tensor(x), k, d, p, s), cols)
    close(
        F.fold(Tensor(cols.astype(np.float32)), shape[2:], k, d, p, s),
        fold_ref(cols, shape[2:], k, d, p, s),
    )


def test_unfold_fold_errors_and_gradient():
    with pytest.raises(ValueError, match=r"unfold: input must be \(N, C, H, W\)"):
        F.unfold(Tensor(r(2, 3)), 2)
    with pytest.raises(ValueError, match="does not fit the padded input"):
        F.unfold(Tensor(r(1, 1, 2, 2)), 3)
    with pytest.raises(ValueError, match=r"must have C \* 4 rows and 9 blocks"):
        F.fold(Tensor(r(1, 8, 10)), (4, 4), 2)
    grad_check(lambda t: F.fold(t, (3, 3), 2) ** 2, RNG.standard_normal((1, 4, 4)))


# ---------------------------------------------------------------------------
# normalization
# ---------------------------------------------------------------------------


def test_instance_norm():
    x, w, b = r(2, 3, 4, 5), r(3), r(3)
    xf = x.astype(F64)
    mu = xf.mean((2, 3), keepdims=True)
    var = xf.var((2, 3), keepdims=True)
    ref = (xf - mu) / np.sqrt(var + 1e-5) * w.reshape(1, 3, 1, 1) + b.reshape(1, 3, 1, 1)
    rm, rv = Tensor.zeros(3).realize(), Tensor.ones(3).realize()
    close(F.instance_norm(Tensor(x), rm, rv, Tensor(w), Tensor(b), momentum=0.2), ref, 1e-4, 1e-4)
    close(rm, 0.2 * mu.reshape(2, 3).mean(0), 1e-5, 1e-5)
    close(rv, 0.8 + 0.2 * (xf.var((2, 3), ddof=1)).mean(0), 1e-5, 1e-5)
    got = F.instance_norm(Tensor(x), rm, rv, use_input_stats=False)
    ref2 = (xf - rm.numpy().reshape(1, 3, 1, 1)) / np.sqrt(rv.numpy().reshape(1, 3, 1, 1) + 1e-5)
    close(got, ref2, 1e-5, 1e-5)
    with pytest.raises(ValueError, match=r"weight must be \(3,\), got \(4,\)"):
        F.instance_norm(Tensor(x), weight=Tensor(r(4)))
    with pytest.raises(ValueError, match="needs running_mean"):
        F.instance_norm(Tensor(x), use_input_stats=False)


def test_rms_norm():
    x, w = r(2, 3, 6), r(6)
    xf = x.astype(F64)
    eps = float(np.finfo(np.float32).eps)
    close(
        F.rms_norm(Tensor(x), (6,), Tensor(w)),
        xf / np.sqrt((xf**2).mean(-1, keepdims=True) + eps) * w,
        1e-5,
        1e-5,
    )
    ref = xf / np.sqrt((xf**2).mean((1, 2), keepdims=True) + 0.1)
    close(F.rms_norm(Tensor(x), (3, 6), eps=0.1), ref, 1e-5, 1e-5)
    with pytest.raises(ValueError, match=r"normalized_shape \(5,\) is not the end"):
        F.rms_norm(Tensor(x), 5)
    grad_check(
        lambda t, g: F.rms_norm(t, (3,), g, eps=1e-3),
        RNG.standard_normal((2, 3)),
        RNG.standard_normal(3),
    )


@pytest.mark.parametrize("size", [1, 2, 5])
def test_local_response_norm(size):
    x = r(2, 6, 3, 2)
    xf = x.astype(F64)
    sq = np.pad(xf**2, ((0, 0), (size // 2, (size - 1) // 2), (0, 0), (0, 0)))
    avg = np.stack([sq[:, c : c + size].sum(1) for c in range(6)], 1) / size
    ref = xf / (1.0 + 1e-2 * avg) ** 0.75
    close(F.local_response_norm(Tensor(x), size, alpha=1e-2), ref, 1e-5, 1e-5)


# ---------------------------------------------------------------------------
# activations and dropout
# ---------------------------------------------------------------------------


def test_shrinks_threshold_prelu():
    x = np.array([-2.0, -0.5, -0.3, 0.0, 0.3, 0.5, 0.7, 3.0], np.float32)
    close(F.threshold(Tensor(x), 0.3, -7.0), np.where(x > 0.3, x, -7.0))
    close(F.hardshrink(Tensor(x)), np.where(np.abs(x) > 0.5, x, 0))
    close(F.softshrink(Tensor(x), 0.4), np.where(x > 0.4, x - 0.4, np.where(x < -0.4, x + 0.4, 0)))
    close(F.tanhshrink(Tensor(x)), x - np.tanh(x.astype(F64)))
    xs = r(2, 3, 4)
    a = np.array([0.1, -0.2, 0.3], np.float32)
    close(F.prelu(Tensor(xs), Tensor(a)), np.where(xs > 0, xs, xs * a.reshape(1, 3, 1)))
    close(F.prelu(Tensor(xs), Tensor(a[:1])), np.where(xs > 0, xs, xs * a[0]))
    with pytest.raises(ValueError, match=r"must have 1 or 3 \(the input \(2, 3, 4\)'s channels\)"):
        F.prelu(Tensor(xs), Tensor(r(4)))
    with pytest.raises(ValueError, match="lambd must be >= 0"):
        F.softshrink(Tensor(x), -1)
    grad_check(
        lambda t, w: F.prelu(t, w), np.array([[-1.0, 2.0], [0.5, -0.3]]), np.array([0.2, 0.4])
    )
    grad_check(lambda t: F.softshrink(t, 0.4) * t, np.array([-1.0, -0.1, 0.2, 0.9]))


def test_channel_dropout():
    mlfuse.manual_seed(3)
    x = np.ones((4, 6, 5), np.float32)
    y = F.dropout1d(Tensor(x), 0.5).numpy()
    per_channel = y.reshape(24, 5)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel == per_channel[:, :1]).all()  # whole channels
    assert 0 < (per_channel[:, 0] == 0).sum() < 24
    y2 = F.dropout2d(Tensor(np.ones((3, 8, 2, 2), np.float32)), 0.25).numpy()
    assert (y2 == y2[:, :, :1, :1]).all() and set(np.unique(y2)) <= {0.0, np.float32(4 / 3)}
    assert F.dropout2d(Tensor(x), 0.5, training=False).numpy().tolist() == x.tolist()
    assert (F.dropout1d(Tensor(x), 1.0).numpy() == 0).all()
    with pytest.raises(ValueError, match=r"dropout2d: input must be \(N, C, H, W\) or \(C, H, W\)"):
        F.dropout2d(Tensor(r(3)), 0.5)
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
        F.dropout1d(Tensor(x), 1.5)


def test_alpha_dropout():
    x = r(4000)
    assert F.alpha_dropout(Tensor(x), 0.5).numpy().tolist() == x.tolist()  # training=False
    mlfuse.manual_seed(0)
    p = 0.2
    y = F.alpha_dropout(Tensor(x), p, training=True).numpy().astype(F64)
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha**2 * p + 1) * (1 - p))
    dropped = np.isclose(y, -alpha * a + alpha * a * p)
    assert 0.15 < dropped.mean() < 0.25
    np.testing.assert_allclose(y[~dropped], a * x[~dropped] + alpha * a * p, rtol=1e-5, atol=1e-5)
    z = F.alpha_dropout(Tensor(RNG.standard_normal(20000).astype(np.float32)), p, True).numpy()
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05  # keeps zero mean, unit variance


# ---------------------------------------------------------------------------
# distances and losses
# ---------------------------------------------------------------------------


def test_pairwise_distance():
    a, b = r(4, 5), r(4, 5)
    d = a.astype(F64) - b + 1e-6
    close(F.pairwise_distance(Tensor(a), Tensor(b)), np.sqrt((d**2).sum(-1)))
    close(
        F.pairwise_distance(Tensor(a), Tensor(b), p=1, keepdim=True),
        np.abs(d).sum(-1, keepdims=True),
    )
    close(
        F.pairwise_distance(Tensor(a), Tensor(b[:1]), p=3.0),
        (np.abs(a.astype(F64) - b[:1] + 1e-6) ** 3).sum(-1) ** (1 / 3),
    )


REDUCE = {"none": lambda v: v, "mean": np.mean, "sum": np.sum}


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_and_embedding_losses(reduction):
    red = REDUCE[reduction]
    a, b = r(6), r(6)
    y = np.array([1, -1, 1, 1, -1, -1], np.float32)
    close(
        F.margin_ranking_loss(Tensor(a), Tensor(b), Tensor(y), 0.3, reduction),
        red(np.maximum(0, -y * (a.astype(F64) - b) + 0.3)),
    )
    x = np.abs(r(6)) * 2
    close(
        F.hinge_embedding_loss(Tensor(x), Tensor(y), 1.5, reduction),
        red(np.where(y == 1, x, np.maximum(0, 1.5 - x))),
    )
    close(
        F.soft_margin_loss(Tensor(a), Tensor(y), reduction),
        red(np.log1p(np.exp(-y * a.astype(F64)))),
    )
    x1, x2 = r(6, 4), r(6, 4)
    cos = (x1.astype(F64) * x2).sum(1) / np.sqrt(
        ((x1.astype(F64) ** 2).sum(1) + 1e-12) * ((x2.astype(F64) ** 2).sum(1) + 1e-12)
    )
    close(
        F.cosine_embedding_loss(Tensor(x1), Tensor(x2), Tensor(y), 0.1, reduction),
        red(np.where(y == 1, 1 - cos, np.maximum(0, cos - 0.1))),
    )


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_style_losses(reduction):
    red = REDUCE[reduction]
    x, t = r(3, 4), np.abs(r(3, 4)) * 3
    t[0, 0] = 0.5
    xf = x.astype(F64)
    close(
        F.poisson_nll_loss(Tensor(x), Tensor(t), reduction=reduction),
        red(np.exp(xf) - t * xf),
        1e-5,
        1e-5,
    )
    rate = np.abs(x) + 0.1
    stir = np.where(t > 1, t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t), 0)
    close(
        F.poisson_nll_loss(
            Tensor(rate), Tensor(t), log_input=False, full=True, reduction=reduction
        ),
        red(rate - t * np.log(rate + 1e-8) + stir),
        1e-5,
        1e-5,
    )
    var = np.abs(r(3, 4)) + 0.1
    var[1, 1] = 1e-9  # clamped at eps
    v = np.maximum(var.astype(F64), 1e-6)
    ref = 0.5 * (np.log(v) + (xf - t) ** 2 / v)
    close(
        F.gaussian_nll_loss(Tensor(x), Tensor(t), Tensor(var), reduction=reduction),
        red(ref),
        1e-4,
        1e-4,
    )
    v1 = np.abs(r(3, 1)) + 0.5
    ref1 = 0.5 * (np.log(v1.astype(F64)) + (xf - t) ** 2 / v1) + 0.5 * np.log(2 * np.pi)
    close(
        F.gaussian_nll_loss(Tensor(x), Tensor(t), Tensor(v1[:, 0]), full=True, reduction=reduction),
        red(ref1),
        1e-5,
        1e-5,
    )


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_triplet_multimargin(reduction):
    red = REDUCE[reduction]
    x = r(4, 5)
    xf = x.astype(F64)
    y = (RNG.random((4, 5)) > 0.5).astype(np.float32)
    w = np.abs(r(5))
    ls = lambda v: -np.log1p(np.exp(-v))  # noqa: E731
    per = -(y * ls(xf) + (1 - y) * ls(-xf)) * w
    close(
        F.multilabel_soft_margin_loss(Tensor(x), Tensor(y), Tensor(w), reduction), red(per.mean(-1))
    )
    a, p, n = r(4, 3), r(4, 3), r(4, 3)
    dist = lambda u, v: np.sqrt(((u.astype(F64) - v + 1e-6) ** 2).sum(-1))  # noqa: E731
    close(
        F.triplet_margin_loss(Tensor(a), Tensor(p), Tensor(n), reduction=reduction),
        red(np.maximum(dist(a, p) - dist(a, n) + 1, 0)),
    )
    swapped = np.maximum(dist(a, p) - np.minimum(dist(a, n), dist(p, n)) + 0.5, 0)
    close(
        F.triplet_margin_loss(Tensor(a), Tensor(p), Tensor(n), 0.5, swap=True, reduction=reduction),
        red(swapped),
    )
    lab = np.array([0, 4, 2, 2])
    for pp in (1, 2):
        h = np.maximum(0, 0.7 - xf[np.arange(4), lab][:, None] + xf) ** pp
        h = h * w[lab][:, None]
        h[np.arange(4), lab] = 0
        close(
            F.multi_margin_loss(Tensor(x), Tensor(lab), pp, 0.7, Tensor(w), reduction),
            red(h.sum(1) / 5),
        )


def test_loss_errors_and_gradients():
    with pytest.raises(ValueError, match=r"input1 \(3,\), input2 \(4,\), target \(3,\) must match"):
        F.margin_ranking_loss(Tensor(r(3)), Tensor(r(4)), Tensor(r(3)))
    with pytest.raises(ValueError, match=r"var \(3, 2\) must be the input's shape \(3, 4\)"):
        F.gaussian_nll_loss(Tensor(r(3, 4)), Tensor(r(3, 4)), Tensor(r(3, 2)))
    with pytest.raises(ValueError, match="p must be 1 or 2"):
        F.multi_margin_loss(Tensor(r(2, 3)), Tensor(np.array([0, 1])), p=3)
    with pytest.raises(TypeError, match="class indices"):
        F.multi_margin_loss(Tensor(r(2, 3)), Tensor(r(2)))
    with pytest.raises(ValueError, match="size_average and reduce are deprecated"):
        F.poisson_nll_loss(Tensor(r(2)), Tensor(r(2)), size_average=True)
    with pytest.raises(ValueError, match="reduction must be"):
        F.soft_margin_loss(Tensor(r(2)), Tensor(r(2)), "avg")
    with pytest.raises(ValueError, match=r"target must be \(2,\)"):
        F.cosine_embedding_loss(Tensor(r(2, 3)), Tensor(r(2, 3)), Tensor(r(3)))
    y = np.array([1.0, -1.0, 1.0])
    grad_check(
        lambda a, b: F.cosine_embedding_loss(a, b, Tensor(y), 0.1, "sum"),
        RNG.standard_normal((3, 2)),
        RNG.standard_normal((3, 2)),
    )
    grad_check(
        lambda x, v: F.gaussian_nll_loss(x, Tensor(np.zeros((2, 2))), v),
        RNG.standard_normal((2, 2)),
        np.abs(RNG.standard_normal((2, 2))) + 0.5,
    )
    grad_check(
        lambda a, p, n: F.triplet_margin_loss(a, p, n, 2.0),
        *(RNG.standard_normal((2, 3)) for _ in range(3)),
    )


# ---------------------------------------------------------------------------
# modules
# ---------------------------------------------------------------------------


def test_module_names_are_exported_and_sorted():
    names = nn.modules.__all__
    assert names == sorted(names)
    for n in [
        "Identity",
        "Conv1d",
        "Conv3d",
        "ConvTranspose1d",
        "BatchNorm1d",
        "BatchNorm3d",
        "GroupNorm",
        "InstanceNorm2d",
        "RMSNorm",
        "Upsample",
        "PixelShuffle",
        "ModuleList",
        "ModuleDict",
        "Parameter",
        "CrossEntropyLoss",
        "KLDivLoss",
        "ReflectionPad2d",
    ]:
        assert hasattr(nn, n), n


def test_conv_module_shapes_and_numerics():
    mlfuse.manual_seed(0)
    c1 = nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2)
    assert c1.weight.shape == (6, 2, 3) and c1.bias.shape == (6,)
    bound = 1 / math.sqrt(2 * 3)
    assert np.abs(c1.weight.numpy()).max() <= bound
    x = r(2, 4, 9)
    close(c1(Tensor(x)), F.conv1d(Tensor(x), c1.weight, c1.bias, 2, 1, 1, 2).numpy())
    c3 = nn.Conv3d(2, 3, (1, 2, 3), bias=False)
    assert c3.weight.shape == (3, 2, 1, 2, 3) and c3.bias is None
    assert set(c3.state_dict()) == {"weight"}
    assert c3(Tensor(r(1, 2, 3, 4, 5))).shape == (1, 3, 3, 3, 3)
    ct = nn.ConvTranspose1d(4, 6, 4, stride=2, padding=1, groups=2)
    assert ct.weight.shape == (4, 3, 4) and ct(Tensor(r(1, 4, 5))).shape == (1, 6, 10)
    reflect = nn.Conv1d(1, 1, 3, padding=2, padding_mode="reflect", bias=False)
    xr = r(1, 1, 6)
    xp = np.pad(xr, ((0, 0), (0, 0), (2, 2)), mode="reflect")
    close(reflect(Tensor(xr)), F.conv1d(Tensor(xp), reflect.weight).numpy())
    with pytest.raises(ValueError, match="Conv1d: groups 2 must divide in_channels 3"):
        nn.Conv1d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(3, 4, 3, padding_mode="mirror")


def test_norm_modules():
    x = r(4, 3, 5)
    bn = nn.BatchNorm1d(3)
    xf = x.astype(F64)
    ref = (xf - xf.mean((0, 2), keepdims=True)) / np.sqrt(xf.var((0, 2), keepdims=True) + 1e-5)
    close(bn(Tensor(x)), ref, 1e-4, 1e-4)
    close(bn.running_mean, 0.1 * xf.mean((0, 2)), 1e-5, 1e-5)
    assert set(bn.state_dict()) == {
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked"
    }  # fmt: skip
    assert bn.num_batches_tracked.item() == 1  # one training forward
    bn2 = nn.BatchNorm1d(5, affine=False, track_running_stats=False).eval()
    x2 = r(6, 5)
    assert bn2.state_dict() == {}
    close(bn2(Tensor(x2)), (x2 - x2.mean(0)) / np.sqrt(x2.var(0) + 1e-5), 1e-4, 1e-4)
    with pytest.raises(ValueError, match=r"BatchNorm1d: input must be \(N, C\) or \(N, C, L\)"):
        bn(Tensor(r(2, 3, 4, 5)))
    with pytest.raises(ValueError, match=r"BatchNorm3d: input must be \(N, C, D, H, W\)"):
        nn.BatchNorm3d(3)(Tensor(r(2, 3, 4, 5)))
    gn = nn.GroupNorm(2, 4)
    xg = r(2, 4, 3)
    g = xg.astype(F64).reshape(2, 2, 6)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(
        2, 4, 3
    )
    close(gn(Tensor(xg)), ref, 1e-4, 1e-4)
    assert gn.weight.shape == gn.bias.shape == (4,)
    with pytest.raises(ValueError, match="GroupNorm: num_groups 3 must divide num_channels 4"):
        nn.GroupNorm(3, 4)
    inorm = nn.InstanceNorm2d(3)
    assert inorm.parameters() == [] and inorm.state_dict() == {}
    xi = r(3, 4, 5)  # unbatched
    ref = (xi - xi.mean((1, 2), keepdims=True)) / np.sqrt(xi.var((1, 2), keepdims=True) + 1e-5)
    close(inorm(Tensor(xi)), ref, 1e-4, 1e-4)
    tracked = nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
    assert set(tracked.state_dict()) == {
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked"
    }  # fmt: skip
    rms = nn.RMSNorm([3, 5], eps=1e-6)
    assert rms.weight.shape == (3, 5)
    close(rms(Tensor(x)), xf / np.sqrt((xf**2).mean((1, 2), keepdims=True) + 1e-6), 1e-5, 1e-5)


def test_layer_modules():
    x = r(1, 8, 3, 4)
    close(nn.Identity(54, unused=1)(Tensor(x)), x, 0, 0)
    close(nn.PixelUnshuffle(2)(nn.PixelShuffle(2)(Tensor(x))), x, 0, 0)
    up = nn.Upsample(scale_factor=1.5, mode="bilinear", align_corners=True)
    close(up(Tensor(x)), interp_ref(x, (4, 6), "bilinear", True))
    close(nn.AdaptiveAvgPool2d((2, 3))(Tensor(x)), adaptive_ref(x, (2, 3), "avg"))
    close(nn.AdaptiveMaxPool2d(3)(Tensor(x)), adaptive_ref(x, (3, 3), "max"))
    x1 = r(2, 3, 7)
    close(nn.AdaptiveAvgPool1d(3)(Tensor(x1)), adaptive_ref(x1, (3,), "avg"))
    close(nn.MaxPool1d(3, 2, 1)(Tensor(x1)), pool_ref(x1, 3, 2, 1))
    close(nn.AvgPool1d(2, ceil_mode=True)(Tensor(x1)), pool_ref(x1, 2, 2, 0, ceil=True, kind="avg"))
    close(nn.MaxPool2d(2, 1, 0, 1, False, True)(Tensor(x)), pool_ref(x, 2, 1, 0, ceil=True))
    close(nn.Unflatten(1, (2, 4))(Tensor(x)), x.reshape(1, 2, 4, 3, 4), 0, 0)
    close(nn.ZeroPad2d((1, 2, 0, 1))(Tensor(x)), np.pad(x, ((0, 0), (0, 0), (0, 1), (1, 2))), 0, 0)
    close(
        nn.ConstantPad1d(2, 3.5)(Tensor(x1)),
        np.pad(x1, ((0, 0), (0, 0), (2, 2)), constant_values=3.5),
        0,
        0,
    )
    close(
        nn.ConstantPad2d(1, -1.0)(Tensor(x)),
        np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-1),
        0,
        0,
    )
    close(
        nn.ReflectionPad2d(2)(Tensor(x)),
        np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)), mode="reflect"),
        0,
        0,
    )
    close(
        nn.ReplicationPad2d((0, 1, 2, 0))(Tensor(x)),
        np.pad(x, ((0, 0), (0, 0), (2, 0), (0, 1)), mode="edge"),
        0,
        0,
    )
    a, b = r(3, 4), r(3, 4)
    cos = (
        (a.astype(F64) * b).sum(1)
        / np.linalg.norm(a.astype(F64), axis=1)
        / np.linalg.norm(b.astype(F64), axis=1)
    )
    close(nn.CosineSimilarity()(Tensor(a), Tensor(b)), cos)
    close(nn.PairwiseDistance(p=1)(Tensor(a), Tensor(b)), np.abs(a.astype(F64) - b + 1e-6).sum(-1))
    with pytest.raises(ValueError, match=r"ZeroPad2d: padding must be an int or 4 ints"):
        nn.ZeroPad2d((1, 2))
    drop = nn.Dropout2d(0.5).eval()
    assert drop(Tensor(x)).numpy().tolist() == x.tolist()
    with pytest.raises(ValueError, match=r"Dropout1d: p must be in \[0, 1\]"):
        nn.Dropout1d(2.0)


def test_activation_modules():
    x = np.linspace(-4, 4, 17).astype(np.float32)
    xf = x.astype(F64)
    sp = np.log1p(np.exp(xf))
    cases = [
        (nn.LeakyReLU(0.2, inplace=True), np.where(xf > 0, xf, 0.2 * xf)),
        (nn.ELU(0.5), np.where(xf > 0, xf, 0.5 * np.expm1(xf))),
        (nn.CELU(2.0), np.maximum(xf, 0) + np.minimum(0, 2 * np.expm1(xf / 2))),
        (nn.Hardtanh(-2, 1), np.clip(xf, -2, 1)),
        (nn.ReLU6(), np.clip(xf, 0, 6)),
        (nn.Hardsigmoid(), np.clip(xf / 6 + 0.5, 0, 1)),
        (nn.Hardswish(), xf * np.clip(xf / 6 + 0.5, 0, 1)),
        (nn.Mish(), xf * np.tanh(sp)),
        (nn.Softplus(), sp),
        (nn.Softsign(), xf / (1 + np.abs(xf))),
        (nn.LogSigmoid(), -np.log1p(np.exp(-xf))),
        (nn.Tanhshrink(), xf - np.tanh(xf)),
        (nn.Hardshrink(1.0), np.where(np.abs(xf) > 1, xf, 0)),
        (nn.Softshrink(1.0), np.sign(xf) * np.maximum(np.abs(xf) - 1, 0)),
        (nn.Threshold(1.0, -3.0), np.where(xf > 1, xf, -3)),
        (nn.ReLU(inplace=True), np.maximum(xf, 0)),
        (nn.LogSoftmax(dim=0), xf - np.log(np.exp(xf).sum())),
        (nn.Softmin(dim=0), np.exp(-xf) / np.exp(-xf).sum()),
    ]
    for m, ref in cases:
        close(m(Tensor(x)), ref, 1e-5, 1e-5)
    selu = 1.0507009873554805 * np.where(xf > 0, xf, 1.6732632423543772 * np.expm1(xf))
    close(nn.SELU()(Tensor(x)), selu, 1e-5, 1e-5)
    g = r(2, 6)
    close(nn.GLU()(Tensor(g)), g[:, :3] / (1 + np.exp(-g[:, 3:].astype(F64))), 1e-5, 1e-5)
    pr = nn.PReLU(3, init=0.1)
    assert pr.weight.shape == (3,) and np.allclose(pr.weight.numpy(), 0.1)
    assert list(pr.state_dict()) == ["weight"]
    xp = r(2, 3, 2)
    close(pr(Tensor(xp)), np.where(xp > 0, xp, 0.1 * xp))


def test_containers_and_parameter():
    mlfuse.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.ReLU()])
            self.blocks.append(nn.Linear(3, 2))
            self.heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.LayerNorm(2)})
            self.scale = nn.Parameter(Tensor.ones(2))

        def forward(self, x):
            for m in self.blocks:
                x = m(x)
            return self.heads["a"](x * self.scale) + self.heads["b"](x).sum(-1, keepdim=True)

    net = Net()
    assert set(net.state_dict()) == {
        "blocks.0.weight",
        "blocks.0.bias",
        "blocks.2.weight",
        "blocks.2.bias",
        "heads.a.weight",
        "heads.a.bias",
        "heads.b.weight",
        "heads.b.bias",
        "scale",
    }
    assert [p for p, _ in net.named_modules()][:5] == [
        "",
        "blocks",
        "blocks.0",
        "blocks.1",
        "blocks.2",
    ]
    assert (
        len(net.blocks) == 3 and len(net.blocks[1:]) == 2 and list(net.heads.keys()) == ["a", "b"]
    )
    assert isinstance(net.scale, nn.Parameter) and not isinstance(Tensor.ones(2), nn.Parameter)
    net.eval()
    assert not net.heads["b"].training and not net.blocks[0].training
    out = net(Tensor(r(4, 3)))
    out.sum().backward()
    assert net.scale.grad is not None and net.blocks[0].weight.grad is not None
    del net.heads["b"]
    assert "b" not in net.heads and "heads.b.weight" not in net.state_dict()
    with pytest.raises(TypeError, match="ModuleList: entry 0 is not a Module"):
        nn.ModuleList([3])
    with pytest.raises(KeyError, match="is the name of a ModuleDict attribute"):
        nn.ModuleDict({"keys": nn.ReLU()})
    with pytest.raises(TypeError, match="Parameter: data must be a Tensor"):
        nn.Parameter(np.ones(3))
    p = nn.Parameter(Tensor(np.arange(3.0)), requires_grad=False)
    assert not p.requires_grad and p.numpy().tolist() == [0.0, 1.0, 2.0]


def test_loss_modules():
    logits, labels = r(4, 5), np.array([0, 3, 4, 1])
    w = Tensor(np.abs(r(5)) + 0.5)
    ce = nn.CrossEntropyLoss(weight=w, label_smoothing=0.1)
    assert set(ce.state_dict()) == {"weight"} and ce.parameters() == []
    ref = F.cross_entropy(Tensor(logits), Tensor(labels), w, label_smoothing=0.1).numpy()
    close(ce(Tensor(logits), Tensor(labels)), ref)
    logp = F.log_softmax(Tensor(logits), 1)
    close(
        nn.NLLLoss(reduction="sum")(logp, Tensor(labels)), -logp.numpy()[np.arange(4), labels].sum()
    )
    a, b = r(3, 2), r(3, 2)
    d = a.astype(F64) - b
    close(nn.MSELoss()(Tensor(a), Tensor(b)), (d**2).mean())
    close(nn.L1Loss(reduction="none")(Tensor(a), Tensor(b)), np.abs(d))
    close(
        nn.SmoothL1Loss(beta=0.5)(Tensor(a), Tensor(b)),
        np.where(np.abs(d) < 0.5, d**2, np.abs(d) - 0.25).mean(),
    )
    close(
        nn.HuberLoss(delta=0.5)(Tensor(a), Tensor(b)),
        np.where(np.abs(d) < 0.5, 0.5 * d**2, 0.5 * (np.abs(d) - 0.25)).mean(),
    )
    p = 1 / (1 + np.exp(-a.astype(F64)))
    y = (b > 0).astype(np.float32)
    bce = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    close(nn.BCELoss()(Tensor(p.astype(np.float32)), Tensor(y)), bce.mean(), 1e-5, 1e-5)
    pw = Tensor(np.array([2.0, 0.5], np.float32))
    bcel = -(np.array([2.0, 0.5]) * y * np.log(p) + (1 - y) * np.log(1 - p))
    close(nn.BCEWithLogitsLoss(pos_weight=pw)(Tensor(a), Tensor(y)), bcel.mean(), 1e-5, 1e-5)
    q = np.exp(r(3, 2)).astype(np.float32)
    q /= q.sum(1, keepdims=True)
    kl = (q * (np.log(q.astype(F64)) - a)).sum() / 3
    close(nn.KLDivLoss(reduction="batchmean")(Tensor(a), Tensor(q)), kl, 1e-5, 1e-5)
    with pytest.raises(ValueError, match="MSELoss: reduction must be one of"):
        nn.MSELoss(reduction="batchmean")
    with pytest.raises(ValueError, match="size_average and reduce are deprecated"):
        nn.L1Loss(size_average=False)
