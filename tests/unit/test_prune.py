"""``mlfuse.nn.utils.prune`` (PyTorch's ``torch.nn.utils.prune``): the masks
against numpy, the reparametrization (``<name>_orig``, ``<name>_mask``, the
forward pre-hook), iterative pruning, ``remove`` and PyTorch's errors. The tie
cases hold the indices PyTorch 2.13's CPU ``topk`` picks."""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor, nn
from mlfuse.nn.utils import prune

RNG = np.random.default_rng(1234)


def _linear(n_in: int, n_out: int, w: np.ndarray | None = None) -> nn.Linear:
    m = nn.Linear(n_in, n_out)
    if w is None:
        w = RNG.standard_normal((n_out, n_in)).astype(np.float32)
    m.weight = nn.Parameter(Tensor(np.asarray(w, np.float32)))
    return m


def _smallest_mask(scores: np.ndarray, k: int) -> np.ndarray:
    """Zeros at the k smallest |scores| (distinct values: one answer)."""
    mask = np.ones(scores.size, np.float32)
    mask[np.argsort(np.abs(scores).reshape(-1), kind="stable")[:k]] = 0
    return mask.reshape(scores.shape)


def _zeros(mask) -> int:
    return int((np.asarray(mask.numpy()) == 0).sum())


# ---------------------------------------------------------------------------
# the masks
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("amount, k", [(5, 5), (0.3, round(0.3 * 24)), (0, 0), (24, 24), (1.0, 24)])
def test_l1_unstructured_mask_is_the_smallest_entries(amount, k):
    m = _linear(6, 4)
    w = m.weight.numpy()
    out = prune.l1_unstructured(m, "weight", amount=amount)
    assert out is m
    np.testing.assert_array_equal(m.weight_mask.numpy(), _smallest_mask(w, k))
    np.testing.assert_array_equal(m.weight_orig.numpy(), w)
    np.testing.assert_array_equal(m.weight.numpy(), w * _smallest_mask(w, k))
    assert m.weight_mask.dtype == m.weight_orig.dtype == mlfuse.float32


def test_l1_unstructured_importance_scores():
    m = _linear(5, 3)
    scores = RNG.standard_normal((3, 5)).astype(np.float32)
    prune.l1_unstructured(m, "weight", amount=4, importance_scores=Tensor(scores))
    np.testing.assert_array_equal(m.weight_mask.numpy(), _smallest_mask(scores, 4))


# the values of a tie case and the entries PyTorch 2.13's CPU topk prunes
TIES = [2, 1, 1, 2, 0, 1, 2, -1, -2, -1, -1, 2, 2, -2, 0, 2, -2, 1, -2, 0, 2, -1, -1, -1,
        1, -1, 2, 0, 0, 0, 0, 0, 0, 2, 2, 1, 1, 1, -1, 2, 0, -1, 2, -2, 2, 1, -2, -2]  # fmt: skip
TIE_PICKS = {
    5: [27, 28, 29, 30, 32],
    20: [1, 4, 14, 19, 22, 23, 24, 25, 27, 28, 29, 30, 31, 32, 35, 37, 38, 40, 41, 45],
    30: [1, 2, 4, 5, 7, 9, 10, 14, 17, 19, 21, 22, 23, 24, 25, 27, 28, 29, 30, 31, 32, 35, 36,
         37, 38, 39, 40, 41, 45, 46],
}  # fmt: skip


@pytest.mark.parametrize("k", sorted(TIE_PICKS))
def test_l1_ties_are_broken_as_pytorch_topk(k):
    # a tie across the cut: PyTorch's choice comes from std::nth_element
    m = _linear(8, 6, np.array(TIES, np.float32).reshape(6, 8))
    prune.l1_unstructured(m, "weight", amount=k)
    assert np.flatnonzero(m.weight_mask.numpy().reshape(-1) == 0).tolist() == TIE_PICKS[k]


def test_l1_ties_small_amount_as_pytorch_partial_sort():
    # k * 64 <= n: PyTorch takes std::partial_sort's choice
    v = np.ones(200, np.float32)
    v[[3, 50, 120]] = 0.5
    got = prune.L1Unstructured(2).compute_mask(Tensor(v), Tensor.ones(200)).numpy()
    assert np.flatnonzero(got == 0).tolist() == [3, 50]


def test_ln_structured_tied_norms_as_pytorch():
    scores = Tensor([[1.0, 0], [0, 1], [1, 0], [0, 0.5], [0, -1]])
    m = _linear(2, 5)
    prune.ln_structured(m, "weight", amount=2, n=1, dim=0, importance_scores=scores)
    assert m.weight_mask.numpy()[:, 0].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]


@pytest.mark.parametrize("n", [1, 2, float("inf"), "fro"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_ln_structured_prunes_the_channels_of_smallest_norm(n, dim):
    m = _linear(7, 5)
    w = m.weight.numpy().astype(np.float64)
    prune.ln_structured(m, "weight", amount=0.4, n=n, dim=dim)
    other = 1 - (dim % 2)
    if n == "fro" or n == 2:
        norms = np.sqrt((w**2).sum(axis=other))
    elif n == 1:
        norms = np.abs(w).sum(axis=other)
    else:
        norms = np.abs(w).max(axis=other)
    size = w.shape[dim]
    k = round(0.4 * size)
    pruned = np.argsort(norms)[:k]
    want = np.ones(size, np.float32)
    want[pruned] = 0
    want = np.expand_dims(want, other) * np.ones_like(w, dtype=np.float32)
    np.testing.assert_array_equal(m.weight_mask.numpy(), want)


def test_ln_structured_conv_weight_and_nuclear_norm():
    conv = nn.Conv2d(3, 4, 3)
    w = conv.weight.numpy().astype(np.float64)
    prune.ln_structured(conv, "weight", amount=1, n=2, dim=1)
    norms = np.sqrt((w**2).sum(axis=(0, 2, 3)))
    keep = (conv.weight_mask.numpy().sum(axis=(0, 2, 3)) > 0).tolist()
    assert keep == [i != int(np.argmin(norms)) for i in range(3)]
    # "nuc" needs two other dims, as torch.norm
    x = nn.Conv2d(3, 4, (1, 3))
    with pytest.raises(RuntimeError, match=r"dim must be a 2-tuple\. Got 1 2 3"):
        prune.ln_structured(x, "weight", amount=1, n="nuc", dim=0)
    t = RNG.standard_normal((4, 3, 5)).astype(np.float32)
    got = prune.LnStructured(2, "nuc", dim=0).compute_mask(Tensor(t), Tensor.ones(4, 3, 5))
    nuc = np.linalg.norm(t.astype(np.float64), "nuc", axis=(1, 2))
    assert (got.numpy().sum(axis=(1, 2)) == 0).tolist() == [
        i in np.argsort(nuc)[:2] for i in range(4)
    ]


def test_global_unstructured_across_two_layers():
    a, b = _linear(5, 4), _linear(3, 6)
    wa, wb = a.weight.numpy(), b.weight.numpy()
    prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured, amount=12)
    both = np.concatenate([wa.reshape(-1), wb.reshape(-1)])
    want = _smallest_mask(both, 12)
    np.testing.assert_array_equal(a.weight_mask.numpy(), want[:20].reshape(4, 5))
    np.testing.assert_array_equal(b.weight_mask.numpy(), want[20:].reshape(6, 3))
    assert _zeros(a.weight_mask) + _zeros(b.weight_mask) == 12
    # a fraction of all the entries, on top of the pruning already there
    prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured, amount=0.5)
    assert _zeros(a.weight_mask) + _zeros(b.weight_mask) == 12 + round(0.5 * 26)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE'):
        prune.global_unstructured([(a, "weight")], prune.RandomStructured, amount=1)
    with pytest.raises(TypeError, match="importance_scores must be of type dict"):
        prune.global_unstructured([(a, "weight")], prune.L1Unstructured, [1], amount=1)


def test_global_unstructured_importance_scores():
    a, b = _linear(3, 2), _linear(2, 2)
    sa = np.arange(6, dtype=np.float32).reshape(2, 3)
    prune.global_unstructured(
        [(a, "weight"), (b, "weight")],
        prune.L1Unstructured,
        importance_scores={(a, "weight"): Tensor(sa), (b, "weight"): Tensor.full((2, 2), 2.5)},
        amount=4,
    )
    assert a.weight_mask.numpy().tolist() == [[0, 0, 0], [1, 1, 1]]
    assert _zeros(b.weight_mask) == 1


# ---------------------------------------------------------------------------
# iterative pruning
# ---------------------------------------------------------------------------


def test_iterative_pruning_combines_masks_on_the_remaining_entries():
    m = _linear(5, 4)
    w = m.weight.numpy()
    prune.l1_unstructured(m, "weight", amount=0.5)  # 10 of 20
    first = m.weight_mask.numpy()
    prune.l1_unstructured(m, "weight", amount=0.5)  # 5 of the 10 left
    mask = m.weight_mask.numpy()
    assert _zeros(m.weight_mask) == 15
    assert (mask <= first).all()
    np.testing.assert_array_equal(mask, _smallest_mask(w, 15))
    hooks = list(m._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer)
    assert [type(h).__name__ for h in hooks[0]] == ["L1Unstructured", "L1Unstructured"]
    # an int amount counts the entries left; more than those is refused
    with pytest.raises(ValueError, match=r"amount=6 should be smaller than the number of "):
        prune.l1_unstructured(m, "weight", amount=6)
    # ...leaving the module as it was
    assert len(hooks[0]) == 2 and list(m._forward_pre_hooks.values()) == hooks
    np.testing.assert_array_equal(m.weight_mask.numpy(), mask)
    prune.l1_unstructured(m, "weight", amount=5)
    assert _zeros(m.weight_mask) == 20


def test_structured_after_unstructured_skips_pruned_channels():
    m = _linear(4, 5)
    rows_kept = np.array([1, 0, 1, 1, 1], np.float32)[:, None] * np.ones((5, 4), np.float32)
    prune.custom_from_mask(m, "weight", Tensor(rows_kept))
    prune.l1_unstructured(m, "weight", amount=3)
    prune.ln_structured(m, "weight", amount=2, n=1, dim=0)  # 2 of the 4 rows left
    rows = m.weight_mask.numpy().sum(axis=1)
    assert rows[1] == 0 and int((rows == 0).sum()) == 3


# ---------------------------------------------------------------------------
# the reparametrization
# ---------------------------------------------------------------------------


def test_forward_uses_the_masked_weight_and_gradients_are_masked():
    m = _linear(6, 3)
    prune.l1_unstructured(m, "weight", amount=7)
    w, mask, b = m.weight_orig.numpy(), m.weight_mask.numpy(), m.bias.numpy()
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    y = m(Tensor(x))
    np.testing.assert_allclose(y.numpy(), x @ (w * mask).T + b, rtol=1e-5, atol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(
        m.weight_orig.grad.numpy(), np.ones((4, 3), np.float32).T @ x * mask, rtol=1e-5, atol=1e-5
    )
    assert m.weight_mask.grad is None
    # the hook recomputes the weight from the updated original before each forward
    with mlfuse.no_grad():
        m.weight_orig.assign(m.weight_orig * 2)
    np.testing.assert_allclose(m(Tensor(x)).numpy(), x @ (2 * w * mask).T + b, rtol=1e-5, atol=1e-5)


def test_parameters_buffers_and_state_dict_keys():
    m = _linear(3, 2)
    assert not prune.is_pruned(m)
    prune.random_unstructured(m, "weight", amount=2)
    assert [k for k, _ in m.named_parameters()] == ["bias", "weight_orig"]
    assert [k for k, _ in m.named_buffers()] == ["weight_mask"]
    assert list(m.state_dict().keys()) == ["bias", "weight_orig", "weight_mask"]
    assert not m.weight.is_leaf
    assert prune.is_pruned(m) and prune.is_pruned(nn.Sequential(nn.ReLU(), m))
    copy = pickle.loads(pickle.dumps(m))
    assert prune.is_pruned(copy)
    np.testing.assert_array_equal(copy(Tensor.ones(1, 3)).numpy(), m(Tensor.ones(1, 3)).numpy())


def test_remove_makes_the_pruning_permanent():
    m = _linear(4, 3)
    prune.l1_unstructured(m, "weight", amount=5)
    orig = m.weight_orig
    want = m.weight_orig.numpy() * m.weight_mask.numpy()
    assert prune.remove(m, "weight") is m
    assert m.weight is orig and m.weight.is_leaf and m.weight.requires_grad
    np.testing.assert_array_equal(m.weight.numpy(), want)
    assert _zeros(m.weight) == 5
    assert [k for k, _ in m.named_parameters()] == ["bias", "weight"]
    assert list(m.named_buffers()) == [] and len(m._forward_pre_hooks) == 0
    assert not hasattr(m, "weight_orig") and not hasattr(m, "weight_mask")
    assert list(m.state_dict().keys()) == ["bias", "weight"]
    assert not prune.is_pruned(m)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(m, "weight")


def test_identity_custom_from_mask_and_prune_method():
    m = _linear(3, 2)
    prune.identity(m, "bias")
    assert m.bias_mask.numpy().tolist() == [1.0, 1.0]
    prune.custom_from_mask(m, "bias", mask=Tensor([0.0, 1.0]))
    assert m.bias_mask.numpy().tolist() == [0.0, 1.0]
    assert m.bias.numpy()[0] == 0
    got = prune.L1Unstructured(amount=2).prune(Tensor([3.0, -1.0, 0.5, 2.0]))
    assert got.numpy().tolist() == [3.0, 0.0, 0.0, 2.0]


# ---------------------------------------------------------------------------
# the random methods: their counts
# ---------------------------------------------------------------------------


def test_random_methods_counts_and_seed():
    mlfuse.manual_seed(0)
    a = prune.random_unstructured(_linear(8, 5), "weight", amount=0.35)
    assert _zeros(a.weight_mask) == round(0.35 * 40)
    mlfuse.manual_seed(0)
    b = prune.random_unstructured(_linear(8, 5), "weight", amount=0.35)
    np.testing.assert_array_equal(a.weight_mask.numpy(), b.weight_mask.numpy())
    prune.random_unstructured(a, "weight", amount=3)
    assert _zeros(a.weight_mask) == 14 + 3

    s = prune.random_structured(_linear(8, 5), "weight", amount=2, dim=0)
    rows = s.weight_mask.numpy().sum(axis=1)
    assert sorted(rows.tolist()) == [0, 0, 8, 8, 8]
    prune.random_structured(s, "weight", amount=0.5, dim=0)  # 2 of the 3 rows left
    assert int((s.weight_mask.numpy().sum(axis=1) == 0).sum()) == 4
    c = prune.random_structured(_linear(8, 5), "weight", amount=0.25, dim=-1)
    assert int((c.weight_mask.numpy().sum(axis=0) == 0).sum()) == 2


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_errors():
    m = _linear(4, 3)
    with pytest.raises(ValueError, match=r"amount=1\.5 should either be a float in the range"):
        prune.l1_unstructured(m, "weight", amount=1.5)
    with pytest.raises(ValueError, match=r"amount=-1 should either be a float"):
        prune.random_unstructured(m, "weight", amount=-1)
    with pytest.raises(TypeError, match="Invalid type for amount: a. Must be int or float."):
        prune.L1Unstructured(amount="a")
    with pytest.raises(ValueError, match=r"amount=13 should be smaller than .* to prune=12"):
        prune.l1_unstructured(m, "weight", amount=13)
    with pytest.raises(ValueError, match=r"amount=4 should be smaller than .* to prune=3"):
        prune.ln_structured(m, "weight", amount=4, n=2, dim=0)
    with pytest.raises(IndexError, match="Invalid index 2 for tensor of size"):
        prune.random_structured(m, "weight", amount=1, dim=2)
    with pytest.raises(ValueError, match="Structured pruning can only be applied to multidim"):
        prune.ln_structured(m, "bias", amount=1, n=2, dim=0)
    with pytest.raises(AssertionError, match="importance_scores should have the same shape"):
        prune.l1_unstructured(m, "weight", amount=1, importance_scores=Tensor.ones(2))
    with pytest.raises(AssertionError, match="default_mask shape"):
        prune.custom_from_mask(m, "bias", mask=Tensor.ones(2))
    # a failed first pruning leaves the parameter where it was
    assert not prune.is_pruned(m)
    assert [k for k, _ in m.named_parameters()] == ["weight", "bias"]
    assert list(m.named_buffers()) == []
    c = prune.PruningContainer(prune.Identity())
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        c.add_pruning_method(3)
    other = prune.Identity()
    other._tensor_name = "bias"
    with pytest.raises(ValueError, match="Can only add pruning methods acting on"):
        c.add_pruning_method(other)


def test_every_public_name_has_a_docstring():
    missing = []
    for name in prune.__all__:
        obj = getattr(prune, name)
        if not obj.__doc__:
            missing.append(name)
        if inspect.isclass(obj):
            for attr, f in vars(obj).items():
                f = getattr(f, "__func__", f)
                if not attr.startswith("_") and callable(f) and not f.__doc__:
                    missing.append(f"{name}.{attr}")
    assert not missing, missing
