"""mlfuse.utils.data and mlfuse.utils.checkpoint, PyTorch's torch.utils.data and
torch.utils.checkpoint: batches and their values against numpy, default_collate's
shapes and dtypes through nested structures, drop_last and len, shuffling
(reproducible under a seed, different for another, every index once per
epoch, generator= leaving the global stream alone), random_split's sizes (the
ones PyTorch 2.13 gives, hard-coded), the samplers' draws, DistributedSampler's
partitions, PyTorch's argument errors, checkpoint's values and gradients
against numpy formulas, and a small training loop over a DataLoader."""

from __future__ import annotations

import collections
import contextlib
import warnings

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor, nn
from mlfuse.utils.checkpoint import checkpoint, checkpoint_sequential
from mlfuse.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)

RNG = np.random.default_rng(7)


def _name(t: Tensor) -> str:
    return t.dtype.name


def _order(loader) -> list[int]:
    """The sample indices of one pass over a loader of TensorDataset(arange(n))."""
    return [i for (b,) in loader for i in b.numpy().tolist()]


def _ids(n: int) -> TensorDataset:
    return TensorDataset(Tensor(np.arange(n)))


# ---------------------------------------------------------------------------
# the package
# ---------------------------------------------------------------------------


def test_utils_is_a_package_with_its_helpers_and_submodules():
    import mlfuse.utils as u

    assert u.debug_level() in u.DEBUG_LEVELS
    assert u.postorder([1], lambda n: [n + 1] if n < 3 else []) == [3, 2, 1]
    assert mlfuse.utils.data.DataLoader is DataLoader
    assert mlfuse.utils.checkpoint.checkpoint is checkpoint
    assert {"data", "checkpoint"} <= set(dir(u))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        u.nope  # noqa: B018


# ---------------------------------------------------------------------------
# datasets
# ---------------------------------------------------------------------------


def test_tensor_dataset_samples_and_size_check():
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    y = np.arange(5)
    ds = TensorDataset(Tensor(x), Tensor(y))
    assert len(ds) == 5
    xs, ys = ds[3]
    np.testing.assert_array_equal(xs.numpy(), x[3])
    assert ys.item() == 3 and _name(ys) == "int64"
    with pytest.raises(
        AssertionError, match=r"Size mismatch.*got 5 \(tensor 0\) and 4 \(tensor 1\)"
    ):
        TensorDataset(Tensor(x), Tensor(y[:4]))
    with pytest.raises(ValueError, match="at least one tensor"):
        TensorDataset()
    with pytest.raises(ValueError, match="0-d"):
        TensorDataset(Tensor(np.float32(1.0)))


def test_concat_chain_stack_subset():
    a, b = list(range(3)), list(range(10, 15))

    class L(Dataset):
        def __init__(self, items):
            self.items = items

        def __getitem__(self, i):
            return self.items[i]

        def __len__(self):
            return len(self.items)

    cat = L(a) + L(b)
    assert isinstance(cat, ConcatDataset)
    assert len(cat) == 8 and cat.cumulative_sizes == [3, 8]
    assert [cat[i] for i in range(8)] == a + b
    assert cat[-1] == 14 and cat[-8] == 0
    with pytest.raises(ValueError, match="should not exceed dataset length"):
        cat[-9]
    with pytest.raises(IndexError, match="out of range"):
        cat[8]
    with pytest.raises(AssertionError, match="empty iterable"):
        ConcatDataset([])

    class S(IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    chain = S(2) + S(3)
    assert isinstance(chain, ChainDataset)
    assert list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([S(2)])

    st = StackDataset(L(a), L(b[:3]))
    assert st[1] == (1, 11) and len(st) == 3
    assert StackDataset(x=L(a), y=L(b[:3]))[2] == {"x": 2, "y": 12}
    assert st.__getitems__([0, 2]) == [(0, 10), (2, 12)]
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(L(a), L(b))
    with pytest.raises(ValueError, match="At least one dataset"):
        StackDataset()

    sub = Subset(L(b), [4, 0, 2])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [14, 10, 12]
    assert sub.__getitems__([2, 0]) == [12, 14]

    class Bad(Subset):
        def __getitem__(self, i):
            return 0

    with pytest.raises(NotImplementedError, match="overrides __getitem__ but not __getitems__"):
        Bad(L(a), [0])


# ---------------------------------------------------------------------------
# random_split
# ---------------------------------------------------------------------------


# the sizes torch.utils.data.random_split gives (PyTorch 2.13)
@pytest.mark.parametrize(
    "n, fractions, sizes",
    [
        (10, [0.3, 0.3, 0.4], [3, 3, 4]),
        (7, [0.5, 0.5], [4, 3]),
        (101, [0.8, 0.1, 0.1], [81, 10, 10]),
        (30, [0.3, 0.3, 0.4], [9, 9, 12]),
        (1000, [0.7, 0.2, 0.1], [700, 200, 100]),
    ],
)
def test_random_split_fraction_sizes(n, fractions, sizes):
    parts = random_split(range(n), fractions, generator=mlfuse.Generator().manual_seed(1))
    assert [len(p) for p in parts] == sizes
    seen = sorted(i for p in parts for i in (p[j] for j in range(len(p))))
    assert seen == list(range(n))  # disjoint, and together the whole dataset


def test_random_split_warns_on_empty_splits_and_checks_lengths():
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        parts = random_split(range(5), [0.1, 0.1, 0.8])
    assert [len(p) for p in parts] == [1, 0, 4]  # PyTorch's sizes
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(5), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(range(5), [-0.5, 1.5])


def test_random_split_draws_from_the_generator_as_randperm():
    n = 20
    parts = random_split(range(n), [5, 15], generator=mlfuse.Generator().manual_seed(42))
    perm = mlfuse.randperm(n, generator=mlfuse.Generator().manual_seed(42)).numpy().tolist()
    assert list(parts[0].indices) + list(parts[1].indices) == perm
    # a generator leaves the global stream alone; the default draws from it
    mlfuse.manual_seed(0)
    want = mlfuse.rand(3).numpy()
    mlfuse.manual_seed(0)
    random_split(range(n), [10, 10], generator=mlfuse.Generator().manual_seed(1))
    np.testing.assert_array_equal(mlfuse.rand(3).numpy(), want)
    mlfuse.manual_seed(0)
    a = random_split(range(n), [10, 10])[0].indices
    mlfuse.manual_seed(0)
    assert random_split(range(n), [10, 10])[0].indices == a


# ---------------------------------------------------------------------------
# samplers
# ---------------------------------------------------------------------------


def test_sequential_random_subset_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = mlfuse.Generator().manual_seed(0)
    s = RandomSampler(range(10), generator=g)
    first, second = list(s), list(s)
    assert sorted(first) == sorted(second) == list(range(10)) and first != second
    # without replacement past len: whole permutations, then part of one
    draws = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(draws) == 10 and sorted(draws[:8]) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert len(set(draws[8:])) == 2
    rep = RandomSampler(range(5), replacement=True, num_samples=70, generator=g)
    drawn = list(rep)
    assert len(rep) == len(drawn) == 70 and set(drawn) <= set(range(5))
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(5), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(5), replacement=1)
    sub = list(SubsetRandomSampler([10, 20, 30, 40], generator=g))
    assert sorted(sub) == [10, 20, 30, 40]


def test_weighted_random_sampler_frequencies():
    w = [1.0, 2.0, 3.0, 4.0]
    n = 40_000
    s = WeightedRandomSampler(w, n, generator=mlfuse.Generator().manual_seed(0))
    counts = np.bincount(list(s), minlength=4) / n
    np.testing.assert_allclose(counts, np.array(w) / sum(w), atol=0.01)
    assert _name(s.weights) == "float64" and len(s) == n
    # without replacement: distinct, never a zero-weight index
    s = WeightedRandomSampler([0.0, 1.0, 5.0, 1.0, 0.0], 3, replacement=False)
    drawn = list(s)
    assert sorted(drawn) == [1, 2, 3]
    with pytest.raises(RuntimeError, match="not enough non-negative category"):
        list(WeightedRandomSampler([0.0, 1.0, 0.0], 2, replacement=False))
    with pytest.raises(RuntimeError, match="probability entry < 0"):
        list(WeightedRandomSampler([-1.0, 1.0], 2))
    with pytest.raises(RuntimeError, match="sum of probabilities <= 0"):
        list(WeightedRandomSampler([0.0, 0.0], 2))
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        WeightedRandomSampler([[1.0]], 2)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        WeightedRandomSampler([1.0], 0)


def test_batch_sampler():
    assert list(BatchSampler(range(10), 3, False)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert list(BatchSampler(range(10), 3, True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(BatchSampler(range(10), 3, False)) == 4
    assert len(BatchSampler(range(10), 3, True)) == 3
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 1, 0)


def test_distributed_sampler_partitions():
    # what torch.utils.data.DistributedSampler gives (PyTorch 2.13)
    parts = [list(DistributedSampler(range(10), 3, r, shuffle=False)) for r in range(3)]
    assert parts == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    parts = [
        list(DistributedSampler(range(10), 3, r, shuffle=False, drop_last=True)) for r in range(3)
    ]
    assert parts == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    parts = [list(DistributedSampler(range(2), 5, r, shuffle=False)) for r in range(5)]
    assert parts == [[0], [1], [0], [1], [0]]
    # shuffled: the replicas split one permutation of seed + epoch
    samplers = [DistributedSampler(range(12), 4, r, seed=3) for r in range(4)]
    epoch0 = [list(s) for s in samplers]
    assert sorted(i for p in epoch0 for i in p) == list(range(12))
    assert [list(s) for s in samplers] == epoch0  # no set_epoch: the same order
    for s in samplers:
        s.set_epoch(1)
    epoch1 = [list(s) for s in samplers]
    assert sorted(i for p in epoch1 for i in p) == list(range(12)) and epoch1 != epoch0
    # one process by default: the whole dataset
    s = DistributedSampler(range(7))
    assert s.num_replicas == 1 and s.rank == 0 and sorted(s) == list(range(7)) and len(s) == 7
    with pytest.raises(
        ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"
    ):
        DistributedSampler(range(7), num_replicas=3, rank=3)


# ---------------------------------------------------------------------------
# collation
# ---------------------------------------------------------------------------


def test_default_collate_numbers_strings_and_arrays():
    t = default_collate([1, 2, 3])
    assert _name(t) == "int64" and t.numpy().tolist() == [1, 2, 3]
    t = default_collate([1.5, 2.0])
    assert _name(t) == "float64" and t.numpy().tolist() == [1.5, 2.0]
    t = default_collate([True, False])
    assert _name(t) == "bool" and t.numpy().tolist() == [True, False]
    assert default_collate(["a", "b"]) == ["a", "b"]
    t = default_collate([np.float32(1), np.float32(2)])
    assert _name(t) == "float32" and t.shape == (2,)
    a = RNG.standard_normal((4, 2, 3)).astype(np.float32)
    t = default_collate(list(a))
    assert t.shape == (4, 2, 3) and _name(t) == "float32"
    np.testing.assert_array_equal(t.numpy(), a)
    t = default_collate([np.arange(3, dtype=np.int32)] * 2)
    assert _name(t) == "int32" and t.shape == (2, 3)


def test_default_collate_nested_structures():
    Point = collections.namedtuple("Point", "x y")
    batch = [
        {"img": np.full((2, 2), i, np.float32), "label": i, "meta": (float(i), "s%d" % i)}
        for i in range(3)
    ]
    out = default_collate(batch)
    assert set(out) == {"img", "label", "meta"}
    assert out["img"].shape == (3, 2, 2) and _name(out["img"]) == "float32"
    np.testing.assert_array_equal(out["img"].numpy()[:, 0, 0], [0, 1, 2])
    assert _name(out["label"]) == "int64" and out["label"].numpy().tolist() == [0, 1, 2]
    assert isinstance(out["meta"], list)  # tuples become lists, as in PyTorch
    # strings stay as they come (here the tuple of each sample's string), as in PyTorch
    assert _name(out["meta"][0]) == "float64" and out["meta"][1] == ("s0", "s1", "s2")
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert type(p) is Point and _name(p.x) == "int64" and _name(p.y) == "float64"
    assert p.x.numpy().tolist() == [1, 3] and p.y.numpy().tolist() == [2.0, 4.0]
    lst = default_collate([[1, 2], [3, 4]])
    assert isinstance(lst, list) and [v.numpy().tolist() for v in lst] == [[1, 3], [2, 4]]


def test_default_collate_tensors_and_gradients():
    rows = RNG.standard_normal((3, 4)).astype(np.float32)
    t = default_collate([Tensor(r) for r in rows])
    assert t.shape == (3, 4) and _name(t) == "float32"
    np.testing.assert_array_equal(t.numpy(), rows)
    # samples that need gradients are stacked in the graph: gradients reach them
    xs = [Tensor(r, requires_grad=True) for r in rows]
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    (default_collate(xs) * Tensor(w)).sum().backward()
    for i, x in enumerate(xs):
        np.testing.assert_array_equal(x.grad.numpy(), w[i])


def test_default_collate_errors():
    msg = r"stack expects each tensor to be equal size, but got \[3\] at entry 0 and \[2\] at"
    with pytest.raises(RuntimeError, match=msg + " entry 1"):
        default_collate([Tensor(np.zeros(3)), Tensor(np.zeros(2))])
    with pytest.raises(RuntimeError, match=r"but got \[2\] at entry 0 and \[3\] at entry 1"):
        default_collate([np.ones(2), np.ones(3)])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="batch must contain tensors, numpy arrays, numbers"):
        default_collate([object(), object()])


def test_default_convert():
    out = default_convert([np.ones(2), 1, "a"])
    assert _name(out[0]) == "float64" and out[1:] == [1, "a"]
    assert default_convert((np.int32(3),))[0].numpy().tolist() == 3
    d = default_convert({"a": np.arange(2)})
    assert _name(d["a"]) == "int64"
    strs = np.array(["x", "y"])
    assert default_convert(strs) is strs


# ---------------------------------------------------------------------------
# the loader
# ---------------------------------------------------------------------------


def test_loader_batches_values_and_len():
    x = RNG.standard_normal((10, 3)).astype(np.float32)
    y = np.arange(10)
    ds = TensorDataset(Tensor(x), Tensor(y))
    for bs, drop, n in ((3, False, 4), (3, True, 3), (5, False, 2), (10, True, 1)):
        loader = DataLoader(ds, batch_size=bs, drop_last=drop)
        batches = list(loader)
        assert len(loader) == len(batches) == n
        for k, (xb, yb) in enumerate(batches):
            np.testing.assert_array_equal(xb.numpy(), x[k * bs : (k + 1) * bs])
            np.testing.assert_array_equal(yb.numpy(), y[k * bs : (k + 1) * bs])
            assert _name(xb) == "float32" and _name(yb) == "int64"
    assert [len(b[1].numpy()) for b in DataLoader(ds, batch_size=4)] == [4, 4, 2]


def test_loader_over_plain_samples_and_custom_collate():
    ds = [(np.full(2, i, np.float32), i, "n%d" % i) for i in range(5)]
    xb, yb, names = next(iter(DataLoader(ds, batch_size=3)))
    assert xb.shape == (3, 2) and _name(yb) == "int64" and names == ("n0", "n1", "n2")
    got = list(DataLoader(range(5), batch_size=2, collate_fn=lambda b: sum(b)))
    assert got == [1, 5, 4]
    # batch_size=None: no batching, default_convert
    items = list(DataLoader([np.ones(2), np.zeros(2)], batch_size=None))
    assert [i.shape for i in items] == [(2,), (2,)] and _name(items[0]) == "float64"


def test_loader_shuffle_covers_every_index_and_is_reproducible():
    n = 37
    ds = _ids(n)
    mlfuse.manual_seed(0)
    loader = DataLoader(ds, batch_size=5, shuffle=True)
    e1, e2 = _order(loader), _order(loader)
    assert sorted(e1) == sorted(e2) == list(range(n))  # each index once per epoch
    assert e1 != e2 and e1 != list(range(n))
    mlfuse.manual_seed(0)
    assert _order(loader) == e1 and _order(loader) == e2
    mlfuse.manual_seed(1)
    assert _order(loader) != e1
    # a generator of its own: reproducible, and the global stream is left alone
    mlfuse.manual_seed(5)
    want = mlfuse.rand(4).numpy()
    mlfuse.manual_seed(5)
    g1 = _order(
        DataLoader(ds, batch_size=4, shuffle=True, generator=mlfuse.Generator().manual_seed(9))
    )
    np.testing.assert_array_equal(mlfuse.rand(4).numpy(), want)
    g2 = _order(
        DataLoader(ds, batch_size=4, shuffle=True, generator=mlfuse.Generator().manual_seed(9))
    )
    assert g1 == g2 and sorted(g1) == list(range(n))


def test_loader_fast_path_matches_per_sample_collation():
    x = RNG.standard_normal((23, 2, 3)).astype(np.float32)
    ds = TensorDataset(Tensor(x), Tensor(np.arange(23)))
    train, _ = random_split(ds, [0.7, 0.3], generator=mlfuse.Generator().manual_seed(0))

    def per_sample(b):  # the general path: default_collate over a list of samples
        return default_collate(b)

    for data in (ds, train):
        kw = dict(batch_size=4, shuffle=True)
        fast = list(DataLoader(data, generator=mlfuse.Generator().manual_seed(2), **kw))
        slow = list(
            DataLoader(
                data, generator=mlfuse.Generator().manual_seed(2), collate_fn=per_sample, **kw
            )
        )
        assert len(fast) == len(slow)
        for (fx, fy), (sx, sy) in zip(fast, slow):
            np.testing.assert_array_equal(fx.numpy(), sx.numpy())
            np.testing.assert_array_equal(fy.numpy(), sy.numpy())
            assert fx.dtype == sx.dtype and fy.dtype == sy.dtype
            np.testing.assert_array_equal(fx.numpy(), x[fy.numpy()])


def test_loader_with_samplers():
    ds = _ids(10)
    sub = _order(DataLoader(ds, batch_size=3, sampler=SubsetRandomSampler([1, 3, 5, 7])))
    assert sorted(sub) == [1, 3, 5, 7]
    bs = BatchSampler(SequentialSampler(range(10)), 4, True)
    loader = DataLoader(ds, batch_sampler=bs)
    assert len(loader) == 2 and _order(loader) == list(range(8))
    part = DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False)
    assert _order(DataLoader(ds, batch_size=2, sampler=part)) == [1, 3, 5, 7, 9]


def test_loader_argument_errors():
    ds = list(range(4))
    cases = [
        (dict(sampler=[0, 1], shuffle=True), "sampler option is mutually exclusive with shuffle"),
        (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive"),
        (dict(batch_sampler=[[0]], shuffle=True), "batch_sampler option is mutually exclusive"),
        (dict(batch_sampler=[[0]], sampler=[0]), "batch_sampler option is mutually exclusive"),
        (dict(batch_sampler=[[0]], drop_last=True), "batch_sampler option is mutually exclusive"),
        (dict(batch_size=None, drop_last=True), "disables auto-batching"),
        (dict(num_workers=-1), "num_workers option should be non-negative"),
        (dict(prefetch_factor=2), "prefetch_factor option could only be specified"),
        (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
        (dict(timeout=-1), "timeout option should be non-negative"),
        (dict(multiprocessing_context="spawn"), "multiprocessing_context can only be used"),
        (dict(num_workers=1, multiprocessing_context="nope"), "valid start method"),
        (dict(batch_size=0), "batch_size should be a positive integer value"),
    ]
    for kw, msg in cases:
        with pytest.raises(ValueError, match=msg):
            DataLoader(ds, **kw)
    loader = DataLoader(ds, batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        loader.batch_size = 3
    with pytest.raises(ValueError, match="requires timeout == 0"):
        iter(DataLoader(ds, timeout=1))


class _Stream(IterableDataset):
    def __init__(self, n, with_len=True):
        self.n = n
        self.with_len = with_len
        self.seen_info = []

    def __iter__(self):
        self.seen_info.append(get_worker_info())
        return iter(range(self.n))

    def __len__(self):
        if not self.with_len:
            raise TypeError("no len")
        return self.n


def test_loader_over_iterable_dataset():
    loader = DataLoader(_Stream(5), batch_size=2)
    assert [b.numpy().tolist() for b in loader] == [[0, 1], [2, 3], [4]]
    assert len(loader) == 3
    loader = DataLoader(_Stream(5), batch_size=2, drop_last=True)
    assert [b.numpy().tolist() for b in loader] == [[0, 1], [2, 3]] and len(loader) == 2
    assert list(DataLoader(_Stream(3), batch_size=None)) == [0, 1, 2]
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(_Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(_Stream(3), sampler=[0])
    short = _Stream(4)
    loader = DataLoader(short, batch_size=None)
    short.n = 2  # the stream reports 2 ...
    assert len(loader) == 2
    short.n = 4  # ... and yields 4
    with pytest.warns(UserWarning, match="was reported to be 2"):
        list(loader)


def test_workers_load_in_this_process_in_the_same_order():
    assert get_worker_info() is None
    calls = []

    def init(worker_id):
        info = get_worker_info()
        calls.append((worker_id, info.id, info.num_workers, info.dataset))

    ds = _Stream(7)
    loader = DataLoader(ds, batch_size=3, num_workers=2, worker_init_fn=init)
    assert [b.numpy().tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    assert calls == [(0, 0, 1, ds)]
    info = ds.seen_info[-1]
    assert info.id == 0 and info.num_workers == 1 and info.dataset is ds
    with pytest.raises(RuntimeError, match="Cannot assign attributes"):
        info.id = 1
    assert get_worker_info() is None
    mapped = _ids(9)
    mlfuse.manual_seed(4)
    a = _order(DataLoader(mapped, batch_size=2, shuffle=True, num_workers=3))
    mlfuse.manual_seed(4)
    assert _order(DataLoader(mapped, batch_size=2, shuffle=True)) == a
    # persistent workers: initialized once
    calls.clear()
    loader = DataLoader(ds, num_workers=1, persistent_workers=True, worker_init_fn=init)
    list(loader), list(loader)
    assert len(calls) == 1


def test_pin_memory_warns_without_an_accelerator():
    if mlfuse.cuda.is_available():
        pytest.skip("an accelerator is present")
    with pytest.warns(UserWarning, match="no accelerator is found"):
        batches = list(DataLoader(list(range(4)), batch_size=2, pin_memory=True))
    assert [b.numpy().tolist() for b in batches] == [[0, 1], [2, 3]]


# ---------------------------------------------------------------------------
# checkpoint
# ---------------------------------------------------------------------------


def _block(x, w):
    return (x @ w).tanh()


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_values_and_gradients(use_reentrant):
    x0 = RNG.standard_normal((3, 4))
    w0 = RNG.standard_normal((4, 2))
    x = Tensor(x0, requires_grad=True)
    w = Tensor(w0, requires_grad=True)
    y = checkpoint(_block, x, w, use_reentrant=use_reentrant)
    h = np.tanh(x0 @ w0)
    np.testing.assert_allclose(y.numpy(), h, rtol=1e-12)
    y.sum().backward()
    d = 1.0 - h * h  # d sum(tanh(xw)) / d(xw)
    np.testing.assert_allclose(x.grad.numpy(), d @ w0.T, rtol=1e-10)
    np.testing.assert_allclose(w.grad.numpy(), x0.T @ d, rtol=1e-10)


def test_checkpoint_arguments_as_pytorch():
    x = Tensor(np.ones(3), requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda a: a * 2, x)
    # keyword arguments reach the function without reentrancy only
    y = checkpoint(lambda a, k: a * k, x, use_reentrant=False, k=3.0)
    np.testing.assert_array_equal(y.numpy(), [3.0, 3.0, 3.0])
    with pytest.raises(ValueError, match="Unexpected keyword arguments: k"):
        checkpoint(lambda a, k: a * k, x, use_reentrant=True, k=3.0)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(lambda a: a, x, use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(lambda a: a, x, use_reentrant=False, determinism_check="strict")
    ctx = []

    class Ctx:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            ctx.append(self.name)

        def __exit__(self, *exc):
            return False

    checkpoint(lambda a: a, x, use_reentrant=False, context_fn=lambda: (Ctx("fwd"), Ctx("re")))
    assert ctx == ["fwd"]
    with pytest.raises(ValueError, match="debug=True is incompatible with non-default context_fn"):
        checkpoint(lambda a: a, x, use_reentrant=False, debug=True, context_fn=lambda: (None, None))


def test_checkpoint_reentrant_without_grad_inputs_as_pytorch():
    lin = nn.Linear(4, 2)
    x = Tensor(RNG.standard_normal((3, 4)).astype(np.float32))
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(lin, x, use_reentrant=True)
    assert not y.requires_grad  # PyTorch's reentrant variant records nothing then
    np.testing.assert_allclose(y.numpy(), lin(x).numpy(), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = checkpoint(lin, x, use_reentrant=False)  # the parameters get gradients
    y.sum().backward()
    np.testing.assert_allclose(
        lin.weight.grad.numpy(), np.tile(x.numpy().sum(0), (2, 1)), rtol=1e-5
    )


@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_matches_the_direct_call(segments):
    x0 = RNG.standard_normal((5, 4))
    w1 = RNG.standard_normal((4, 3))
    w2 = RNG.standard_normal((3, 2))
    fns = [lambda a: a @ Tensor(w1), lambda a: a.tanh(), lambda a: a @ Tensor(w2)]
    x = Tensor(x0, requires_grad=True)
    out = checkpoint_sequential(fns, segments, x, use_reentrant=False)
    h = np.tanh(x0 @ w1)
    np.testing.assert_allclose(out.numpy(), h @ w2, rtol=1e-12)
    out.sum().backward()
    want = ((np.ones((5, 2)) @ w2.T) * (1 - h * h)) @ w1.T
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-10)
    seq = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))
    xs = Tensor(x0.astype(np.float32))
    # reentrant segments over an input that needs no gradient warn, as in PyTorch
    warns = pytest.warns(UserWarning, match="None of the inputs have requires_grad=True")
    with warns if segments > 1 else contextlib.nullcontext():
        out = checkpoint_sequential(seq, segments, xs, use_reentrant=True)
    np.testing.assert_allclose(out.numpy(), seq(xs).numpy(), rtol=1e-6)


def test_checkpoint_sequential_errors():
    x = Tensor(np.ones(2), requires_grad=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential([lambda a: a], 1, x, use_reentrant=False, foo=1)
    with pytest.raises(ValueError, match="each segment needs at least one"):
        checkpoint_sequential([lambda a: a], 2, x, use_reentrant=False)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        checkpoint_sequential([lambda a: a * 2, lambda a: a], 2, x)


# ---------------------------------------------------------------------------
# end to end
# ---------------------------------------------------------------------------


def test_training_loop_over_a_dataloader():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 3)).astype(np.float32)
    w_true = np.array([[1.5], [-2.0], [0.5]], np.float32)
    y = x @ w_true + 0.25 + 0.01 * rng.standard_normal((256, 1)).astype(np.float32)
    train, val = random_split(
        TensorDataset(Tensor(x), Tensor(y)),
        [0.75, 0.25],
        generator=mlfuse.Generator().manual_seed(0),
    )
    assert (len(train), len(val)) == (192, 64)
    mlfuse.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = mlfuse.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(train, batch_size=32, shuffle=True)
    losses = []
    for _ in range(8):
        total = 0.0
        for xb, yb in loader:
            loss = nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        losses.append(total / len(loader))
    assert losses[-1] < 0.01 * losses[0]
    assert all(b < a for a, b in zip(losses[:4], losses[1:5]))
    np.testing.assert_allclose(model.weight.numpy(), w_true.T, atol=0.05)
    with mlfuse.no_grad():
        xv, yv = next(iter(DataLoader(val, batch_size=len(val))))
        assert nn.functional.mse_loss(model(xv), yv).item() < 0.01
