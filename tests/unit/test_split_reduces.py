"""split-reduces: long reductions with few results run as two kernels, and
every reduce kind gives what numpy gives (float64 references)."""

import numpy as np
import pytest

from mlfuse import Tensor, graph
from mlfuse.dialects import kernel
from mlfuse.passes.split_reduces import split_factor
from mlfuse.targets import get_target


def _plans(t: Tensor) -> list[str]:
    mod = graph.compiled_for(graph.collect([t.node])).module
    return [str(op.loop_plan) for op in mod.ops if isinstance(op, kernel.FuncOp)]


def test_split_factor_picks_the_outermost_axis_and_keeps_parts_long():
    # 2^20 elements, one result: 256 parts of 4096
    assert split_factor((1 << 20,), (0,), 256, 1 << 16, 4096) == (0, 256, 4096)
    # parts keep 4096 elements even when more results are wanted
    assert split_factor((1 << 20,), (0,), 1024, 1 << 15, 4096) == (0, 256, 4096)
    # over two axes the outer one is split
    assert split_factor((64, 1 << 16), (0, 1), 256, 1 << 16, 4096) == (0, 64, 1)
    # enough results, too short, or no divisor: None
    assert split_factor((512, 1 << 16), (1,), 256, 1 << 16, 4096) is None
    assert split_factor((1024, 4096), (1,), 256, 1 << 16, 4096) is None
    assert split_factor((65537,), (0,), 256, 1 << 16, 4096) is None
    # a few results: fewer parts each
    assert split_factor((128, 1 << 16), (1,), 256, 1 << 16, 4096) == (1, 2, 1 << 15)


def test_split_factor_leaves_a_remainder_where_no_divisor_is_good():
    # a prime: 16 parts of 4096 (each part keeps 4096 elements) and 1 element
    assert split_factor((65537,), (0,), 256, 1 << 16, 4096, remainder=True) == (0, 16, 4096)
    # 2 x a prime: the divisor 2 is far below the 256 parts wanted
    n = 2 * 1_000_003
    assert split_factor((n,), (0,), 256, 1 << 16, 4096, remainder=True) == (0, 256, n // 256)
    # a divisor near the parts wanted is used as it is
    assert split_factor((1 << 20,), (0,), 256, 1 << 16, 4096, remainder=True) == (0, 256, 4096)


@pytest.mark.parametrize("kind", ["sum", "max", "min", "prod"])
@pytest.mark.parametrize("device", ["cpu", "cuda_sim"])
def test_prime_length_reductions_split_with_a_remainder(kind, device):
    n = 4_194_319 if device == "cpu" else 65_537  # primes past each target's min-length
    rng = np.random.default_rng(7)
    if kind == "prod":  # powers of two: every order of products is exact
        x = rng.choice([0.5, 1.0, 2.0], n, p=[1e-4, 1 - 2e-4, 1e-4]).astype(np.float32)
    else:
        x = rng.standard_normal(n).astype(np.float32)
    t = getattr(Tensor(x, device=device), kind)()
    assert len(_plans(t)) == 2
    ref = getattr(x.astype(np.float64), kind)()
    np.testing.assert_allclose(t.numpy(), ref, rtol=1e-5)
    i = rng.integers(-1000, 1000, n).astype(np.int32)
    ti = getattr(Tensor(i, device=device), kind if kind != "prod" else "max")()
    assert ti.numpy() == getattr(i, kind if kind != "prod" else "max")()


def test_targets_choose_their_split():
    assert get_target("cpu").reduce_split["outputs"] == 64
    assert (
        "split-reduces{outputs=64 min-length=4194304 column-outputs=64 "
        "column-min-length=4194304}" in get_target("cpu").lazy_pipeline()
    )
    assert get_target("cuda").reduce_split["outputs"] == 1024
    assert get_target("cuda_sim").lazy_pipeline() == get_target("cuda").lazy_pipeline()


def test_column_reductions_split_on_the_gpu_into_many_threads():
    x = np.random.default_rng(3).standard_normal((4096, 64)).astype(np.float32)
    t = Tensor(x, device="cuda_sim").sum(0)  # 64 results (threads) of 4096 rows
    plans = _plans(t)
    assert len(plans) == 2, plans
    np.testing.assert_allclose(t.numpy(), x.astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)
    # on the CPU a column sum this size is one kernel
    assert len(_plans(Tensor(x, device="cpu").sum(0))) == 1


@pytest.mark.parametrize("device", ["cpu", "cuda_sim"])
def test_full_reductions_split_in_two_kernels(device):
    n = (1 << 23) if device == "cpu" else (1 << 16)
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    t = Tensor(x, device=device).sum()
    plans = _plans(t)
    assert len(plans) == 2, plans
    np.testing.assert_allclose(t.numpy(), x.astype(np.float64).sum(), rtol=1e-5)


@pytest.mark.parametrize(
    "op",
    ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "var", "std", "any", "all", "isum"],
)
def test_every_reduce_kind_through_the_split(op):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 1 << 14)).astype(np.float32)  # 4 results of 16384
    if op == "prod":  # powers of two: exact in any order (near 1, float32 rounding is biased)
        x = np.ones_like(x)
        x[:, rng.integers(0, x.shape[1], 24)] = rng.choice([0.5, 2.0, 4.0], (4, 24))
    if op in ("any", "all"):
        x = (x > -3.5).astype(np.float32)
    t = Tensor(x, device="cuda_sim")
    if op == "isum":
        xi = rng.integers(-100, 100, (2, 1 << 15)).astype(np.int32)
        got = Tensor(xi, device="cuda_sim").sum(1)
        assert len(_plans(got)) == 2
        np.testing.assert_array_equal(got.numpy(), xi.sum(1))
        return
    x64 = x.astype(np.float64)
    if op in ("any", "all"):
        b = Tensor(x > -3.5, device="cuda_sim")
        got = getattr(b, op)(1).numpy()
        np.testing.assert_array_equal(got, getattr(x > -3.5, op)(1))
        return
    got = getattr(t, op)(1).numpy()
    want = {"var": lambda: x64.var(1, ddof=1), "std": lambda: x64.std(1, ddof=1)}.get(
        op, lambda: getattr(x64, op)(1)
    )()
    if op in ("argmax", "argmin"):
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_split_sum_of_a_computed_and_transposed_value_and_its_gradient():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    A = Tensor(a, device="cuda_sim", requires_grad=True)
    B = Tensor(b, device="cuda_sim")
    loss = (A.T * B).exp().sum()  # 65536 elements, one result
    assert len(_plans(loss)) >= 2
    want = np.exp(a.T.astype(np.float64) * b).sum()
    np.testing.assert_allclose(loss.numpy(), want, rtol=1e-5)
    loss.backward()
    np.testing.assert_allclose(
        A.grad.numpy(), (np.exp(a.T.astype(np.float64) * b) * b).T, rtol=1e-5
    )
