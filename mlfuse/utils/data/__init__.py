"""PyTorch's ``torch.utils.data`` on mlfuse tensors: datasets, samplers, collation
and the :class:`DataLoader`, so that a training script's data pipeline ports
unchanged::

    from mlfuse.utils.data import DataLoader, TensorDataset, random_split

    train, val = random_split(TensorDataset(x, y), [0.8, 0.2])
    for xb, yb in DataLoader(train, batch_size=32, shuffle=True):
        ...

Every random choice (shuffling, :func:`random_split`, the samplers) draws from
mlfuse's generators: a ``generator=`` (a :class:`mlfuse.Generator`) or, without
one, the global generator that :func:`mlfuse.manual_seed` seeds, so
``mlfuse.manual_seed(0)`` makes an epoch's order reproducible and a
``generator=`` leaves the global stream alone.

Loading runs in this process (see :class:`DataLoader` on ``num_workers``).
"""

from __future__ import annotations

import bisect
import collections.abc
import copy
import itertools
import math
import multiprocessing
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

import numpy as np

from mlfuse.tensor import Generator, Tensor, _rng, default_generator

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "collate",
    "default_collate",
    "default_collate_fn_map",
    "default_convert",
    "get_worker_info",
    "random_split",
]

T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")


def _draw_seed(generator) -> int:
    """A 63-bit seed drawn from ``generator`` (None: the global generator), as
    PyTorch's ``torch.empty((), dtype=torch.int64).random_(generator=g)``."""
    return int(_rng(generator).integers(0, 2**63))


def _permutation(n: int, generator) -> list[int]:
    """A random order of ``range(n)`` from ``generator``: the draw
    ``mlfuse.randperm(n, generator=generator)`` makes."""
    return _rng(generator).permutation(int(n)).tolist()


# ---------------------------------------------------------------------------
# datasets
# ---------------------------------------------------------------------------


class Dataset(Generic[T_co]):
    """A map from keys (usually ``0..len-1``) to samples: subclasses define
    ``__getitem__`` and usually ``__len__``; they may define
    ``__getitems__(indices)`` returning a list of samples, which the
    :class:`DataLoader` then uses to fetch a batch at once.
    ``a + b`` is ``ConcatDataset([a, b])``."""

    def __getitem__(self, index) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A stream of samples: subclasses define ``__iter__``. ``a + b`` is
    ``ChainDataset([a, b])``. In a :class:`DataLoader` it takes no sampler and
    no ``shuffle``; :func:`get_worker_info` tells ``__iter__`` which share of the
    stream to produce when ``num_workers > 0``."""

    def __add__(self, other: Dataset[T_co]):
        return ChainDataset([self, other])


def _first_dim(t, i: int) -> int:
    shape = getattr(t, "shape", None)
    if shape is not None:
        if len(shape) == 0:
            raise ValueError(
                f"TensorDataset: tensor {i} is 0-d; every tensor needs a first dimension "
                "to index the samples along"
            )
        return int(shape[0])
    return len(t)


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Samples ``(t[i] for t in tensors)``: ``TensorDataset(x, y)[3] == (x[3], y[3])``.
    Every tensor must have the same first dimension (the number of samples)."""

    tensors: tuple[Tensor, ...]

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        sizes = [_first_dim(t, i) for i, t in enumerate(tensors)]
        for i, s in enumerate(sizes):
            if s != sizes[0]:
                raise AssertionError(
                    f"Size mismatch between tensors: TensorDataset needs one first-dimension "
                    f"size, got {sizes[0]} (tensor 0) and {s} (tensor {i})"
                )
        # computed once, here: a sample is then a view of a buffer, not a recomputation
        # of the whole (lazy) tensor
        lazy = [t for t in tensors if isinstance(t, Tensor)]
        if lazy:
            lazy[0].realize(*lazy[1:])
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return _first_dim(self.tensors[0], 0)


class StackDataset(Dataset):
    """Datasets side by side: ``StackDataset(a, b)[i] == (a[i], b[i])`` and
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``; all of one length."""

    datasets: tuple | dict

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args:
            if kwargs:
                raise ValueError(
                    "Supported either ``tuple``- (via ``args``) or "
                    "``dict``- (via ``kwargs``) like input/output, but both types are given."
                )
            self._length = len(args[0])
            if any(self._length != len(dataset) for dataset in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(dataset) for dataset in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list):
        def column(dataset) -> list:
            if callable(getattr(dataset, "__getitems__", None)):
                items = dataset.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError(
                        "Nested dataset's output size mismatch."
                        f" Expected {len(indices)}, got {len(items)}"
                    )
                return list(items)
            return [dataset[idx] for idx in indices]

        if isinstance(self.datasets, dict):
            cols = {k: column(d) for k, d in self.datasets.items()}
            return [{k: cols[k][j] for k in cols} for j in range(len(indices))]
        cols_t = [column(d) for d in self.datasets]
        return [tuple(c[j] for c in cols_t) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """Datasets one after another: index ``len(a) + i`` of ``ConcatDataset([a, b])``
    is ``b[i]``. ``cumulative_sizes`` holds the running lengths."""

    datasets: list[Dataset[T_co]]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence) -> list[int]:
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        if idx >= len(self):
            raise IndexError(
                f"index {idx} is out of range for a ConcatDataset of length {len(self)}"
            )
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another, chained as they are iterated."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``: ``Subset(d, [4, 1])[0] is d[4]``.
    A subclass overriding ``__getitem__`` must override ``__getitems__`` too (the
    :class:`DataLoader` fetches batches through it), as in PyTorch."""

    dataset: Dataset[T_co]
    indices: Sequence[int]

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        if (
            type(self).__getitem__ is not Subset.__getitem__
            and type(self).__getitems__ is Subset.__getitems__
        ):
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. "
                "When subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]"
            )

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[T_co]:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])  # type: ignore[attr-defined]
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Dataset[T],
    lengths: Sequence[int | float],
    generator: Generator | None = default_generator,
) -> list[Subset[T]]:
    """``dataset`` split at random into non-overlapping :class:`Subset` s of
    ``lengths``: ``random_split(ds, [800, 200])``.

    Fractions summing to 1 (``[0.8, 0.2]``) give ``floor(frac * len(dataset))``
    samples each, the remainder dealt out one at a time from the first split on,
    as PyTorch does. The order comes from ``generator`` (the global generator by
    default): ``random_split(ds, [3, 7], generator=mlfuse.Generator().manual_seed(42))``.
    """
    lengths = list(lengths)
    n = len(dataset)  # type: ignore[arg-type]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(n * frac))
        remainder = n - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )
    if sum(lengths) != n:
        raise ValueError(
            "Sum of input lengths does not equal the length of the input dataset! "
            f"(lengths {lengths} sum to {sum(lengths)}, the dataset has {n} samples)"
        )
    indices = _permutation(sum(lengths), generator)  # type: ignore[arg-type]
    return [
        Subset(dataset, indices[offset - length : offset])
        for offset, length in zip(itertools.accumulate(lengths), lengths)  # type: ignore[arg-type]
    ]


# ---------------------------------------------------------------------------
# samplers
# ---------------------------------------------------------------------------


class Sampler(Generic[T_co]):
    """Iterates over dataset indices (or lists of them: batches). Subclasses
    define ``__iter__`` and, where they can, ``__len__``."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``, always in that order."""

    data_source: Sized

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Indices in random order: a new permutation each epoch, or with
    ``replacement=True`` ``num_samples`` independent draws.

    Without a ``generator`` each iteration draws a seed from the global generator
    (as PyTorch does), so ``mlfuse.manual_seed`` fixes the sequence of epochs;
    with one, draws come from it and leave the global stream alone.
    """

    data_source: Sized
    replacement: bool

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator=None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if (
            not isinstance(self.num_samples, int)
            or isinstance(self.num_samples, bool)
            or self.num_samples <= 0
        ):
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        # the dataset's size may change between epochs
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.generator is None:
            generator = Generator().manual_seed(_draw_seed(None))
        else:
            generator = self.generator
        if self.replacement:
            rng = _rng(generator)
            for _ in range(self.num_samples // 32):
                yield from rng.integers(0, n, size=32).tolist()
            yield from rng.integers(0, n, size=self.num_samples % 32).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _permutation(n, generator)
            yield from _permutation(n, generator)[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a new random order each epoch."""

    indices: Sequence[int]

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _permutation(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices of ``0..len(weights)-1`` drawn in proportion to
    ``weights`` (need not sum to 1), with ``replacement`` (the default) or
    without (each index at most once): ``WeightedRandomSampler([0.1, 0.9], 100)``."""

    weights: Tensor
    num_samples: int
    replacement: bool

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator=None,
    ) -> None:
        if (
            not isinstance(num_samples, (int, np.integer))
            or isinstance(num_samples, bool)
            or num_samples <= 0
        ):
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"
            )
        self.weights = Tensor(w)
        self._w = w
        self.num_samples = int(num_samples)
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        w = self._w
        # torch.multinomial's checks, in its words
        if w.size == 0:
            raise RuntimeError("cannot sample from an empty probability distribution")
        if not np.isfinite(w).all() or (w < 0).any():
            raise RuntimeError(
                "invalid multinomial distribution (encountering probability entry < 0)"
            )
        total = w.sum()
        if total <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not self.replacement:
            if self.num_samples > w.size:
                raise RuntimeError(
                    "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
                )
            if np.count_nonzero(w) < self.num_samples:
                raise RuntimeError(
                    "invalid multinomial distribution (with replacement=False, "
                    "not enough non-negative category to sample)"
                )
        drawn = _rng(self.generator).choice(
            w.size, size=self.num_samples, replace=self.replacement, p=w / total
        )
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Lists of ``batch_size`` indices from ``sampler``; the last one shorter
    unless ``drop_last``: ``list(BatchSampler(range(10), 3, False))`` is
    ``[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]``."""

    def __init__(
        self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool
    ) -> None:
        if (
            not isinstance(batch_size, (int, np.integer))
            or isinstance(batch_size, bool)
            or batch_size <= 0
        ):
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*([sampler_iter] * self.batch_size)):
                yield [*batch]
        else:
            batch = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size  # type: ignore[arg-type]
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size  # type: ignore[arg-type]


class DistributedSampler(Sampler[T_co]):
    """This replica's share of the dataset's indices: every ``num_replicas``-th
    index from ``rank`` on, of an order shuffled with ``seed + epoch`` (call
    :meth:`set_epoch` before each epoch) unless ``shuffle=False``.

    The dataset is padded by repeating its first indices to a multiple of
    ``num_replicas``, or with ``drop_last`` cut to one. mlfuse runs in one
    process: ``num_replicas`` and ``rank`` default to 1 and 0 (the whole
    dataset); pass them to shard by hand.
    """

    def __init__(
        self,
        dataset: Dataset,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None:
            num_replicas = 1
        if rank is None:
            rank = 0
        if isinstance(num_replicas, bool) or not isinstance(num_replicas, int) or num_replicas < 1:
            raise ValueError(
                f"num_replicas should be a positive integer value, but got {num_replicas!r}"
            )
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.drop_last and n % self.num_replicas != 0:
            # the nearest length that splits evenly
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[T_co]:
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            indices = _permutation(n, Generator().manual_seed(self.seed + self.epoch))
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank : self.total_size : self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch that seeds the next shuffle (``seed + epoch``): call it
        before each epoch, or every epoch comes in the same order."""
        self.epoch = epoch


class _InfiniteConstantSampler(Sampler):
    """None forever: the "indices" of an iterable dataset."""

    def __iter__(self):
        while True:
            yield None


# ---------------------------------------------------------------------------
# collation
# ---------------------------------------------------------------------------

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

_default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def default_convert(data):
    """``data`` with every numpy array (and numpy scalar) turned into a tensor,
    through dicts, namedtuples, tuples (which become lists) and lists; anything
    else unchanged. The :class:`DataLoader`'s collate function when it does not
    batch (``batch_size=None``)."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if (
            elem_type.__name__ == "ndarray"
            and _np_str_obj_array_pattern.search(data.dtype.str) is not None
        ):
            return data
        return Tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map: dict | None = None):
    """``batch`` (a list of samples) with each leaf collated by the function
    ``collate_fn_map`` gives its type (looked up exactly, then by ``isinstance``
    in the map's order), through dicts, namedtuples and sequences, as PyTorch's
    ``torch.utils.data._utils.collate.collate``. Each function takes the list of
    leaves and ``collate_fn_map=``."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(
                    {
                        key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                        for key in elem
                    }
                )
                return clone
            return elem_type(
                {
                    key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem
                }
            )
        except TypeError:
            return {
                key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem
            }
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(
            *(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch))
        )
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type(
                [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
            )
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(_default_collate_err_msg_format.format(elem_type))


def _stack_tensors(batch: Sequence[Tensor]) -> Tensor:
    """``mlfuse.stack(batch)``, with PyTorch's error for unequal sizes.

    Samples that need no gradient and share a dtype and device are copied
    together on the host instead: the same values, and no kernel built for
    each batch (samples are views at varying offsets of a dataset's buffer, and
    a stacking kernel would bake those offsets in and compile anew per batch)."""
    from mlfuse.tensor import stack

    elem = batch[0]
    shape = tuple(elem.shape)
    for i, t in enumerate(batch):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"default_collate: expected a batch of tensors, entry {i} is a {type(t).__name__}"
            )
        if tuple(t.shape) != shape:
            raise RuntimeError(
                "stack expects each tensor to be equal size, but got "
                f"{list(shape)} at entry 0 and {list(t.shape)} at entry {i}"
            )
    same = all(t.dtype == elem.dtype and t.device == elem.device for t in batch)
    if same and not any(t.requires_grad for t in batch):
        return Tensor(np.stack([np.asarray(t) for t in batch]), elem.dtype, elem.device)
    return stack(list(batch), 0)


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Tensors stacked along a new first dimension."""
    return _stack_tensors(batch)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    """Numpy arrays as tensors, stacked (string and object arrays are an error)."""
    elem = batch[0]
    if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(_default_collate_err_msg_format.format(elem.dtype))
    return collate([Tensor(np.asarray(b)) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    """Numpy scalars as a 1-d tensor of their dtype."""
    return Tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    """Python floats as a float64 tensor."""
    from mlfuse import dtypes

    return Tensor(list(batch), dtypes.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    """Python ints as an int64 tensor (bools: a bool tensor)."""
    return Tensor(list(batch))


def collate_str_fn(batch, *, collate_fn_map=None):
    """Strings (and bytes) stay a list."""
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}
"""The leaf types :func:`default_collate` knows and how it collates each; add
entries to teach it more (``default_collate_fn_map[MyType] = fn``)."""


def default_collate(batch):
    """A list of samples as one batch with a new first dimension, PyTorch's
    ``default_collate``:

    * mlfuse tensors: stacked (``mlfuse.stack``; unequal sizes are an error);
    * numpy arrays: tensors of their dtype, stacked; numpy scalars: a 1-d tensor;
    * Python floats: a float64 tensor, ints: int64, bools: bool;
    * str and bytes: left a list;
    * dicts (``{k: collate([d[k] ...])}``), namedtuples, and sequences, collated
      per field (tuples become lists, as in PyTorch).

    ``default_collate([(0, 1.5), (2, 3.5)])`` is ``[tensor([0, 2]), tensor([1.5, 3.5])]``.
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


# ---------------------------------------------------------------------------
# workers
# ---------------------------------------------------------------------------


class WorkerInfo:
    """What :func:`get_worker_info` tells code running for a loader worker:
    ``id``, ``num_workers``, ``seed`` and ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: Dataset
    __initialized = False

    def __init__(self, **kwargs) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val) -> None:
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """None in the main process; while a :class:`DataLoader` with
    ``num_workers > 0`` loads (its ``worker_init_fn``, the dataset's
    ``__getitem__``/``__iter__``, the collate function) a :class:`WorkerInfo`.
    mlfuse loads in this process as one worker: ``id`` 0, ``num_workers`` 1 (so
    an :class:`IterableDataset` that shards by worker yields all of its data)."""
    return _worker_info


class _as_worker:
    """Code under it sees ``info`` from :func:`get_worker_info`."""

    def __init__(self, info: WorkerInfo | None) -> None:
        self.info = info

    def __enter__(self) -> None:
        global _worker_info
        self.saved = _worker_info
        if self.info is not None:
            _worker_info = self.info

    def __exit__(self, *exc) -> None:
        global _worker_info
        _worker_info = self.saved


# ---------------------------------------------------------------------------
# the loader
# ---------------------------------------------------------------------------


def _tensor_batch(dataset, indices) -> list[Tensor] | None:
    """``default_collate([dataset[i] for i in indices])`` in one gather per
    tensor, when ``dataset`` is a :class:`TensorDataset` (perhaps under
    :class:`Subset` s) of mlfuse tensors and every index is an int in range;
    None otherwise (the general path then gives the answer, or the error)."""
    try:
        idx = [int(i) for i in indices]
        while type(dataset) is Subset:
            base = dataset.indices
            idx = [int(base[i]) for i in idx]
            dataset = dataset.dataset
    except (TypeError, ValueError, IndexError):
        return None
    if type(dataset) is not TensorDataset or not idx:
        return None
    tensors = dataset.tensors
    if not all(isinstance(t, Tensor) for t in tensors):
        return None
    n = len(dataset)
    arr = np.asarray(idx, dtype=np.int64)
    if (arr < -n).any() or (arr >= n).any():
        return None
    arr = np.where(arr < 0, arr + n, arr)
    return [t[Tensor(arr, device=t.device)] for t in tensors]


class _MapFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if self.collate_fn is default_collate:
                fast = _tensor_batch(self.dataset, possibly_batched_index)
                if fast is not None:
                    return fast
            if hasattr(self.dataset, "__getitems__") and self.dataset.__getitems__:
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class _DataLoaderIter:
    """One pass over a :class:`DataLoader`."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._dataset = loader.dataset
        self._iterable = isinstance(loader.dataset, IterableDataset)
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._collate_fn = loader.collate_fn
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        if loader.timeout != 0 and loader.num_workers == 0:
            raise ValueError(
                f"DataLoader: timeout={loader.timeout} needs num_workers > 0 "
                "(single-process loading requires timeout == 0)"
            )
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the "
                f"device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                stacklevel=3,
            )
        if loader.pin_memory and not _accelerator_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=3,
            )
        self._sampler_iter = iter(self._index_sampler)
        # PyTorch's per-pass draw (worker seeds come from it), from the same generator
        self._base_seed = _draw_seed(loader.generator)
        self._num_yielded = 0
        self._worker = None
        if self._num_workers > 0:
            self._worker = WorkerInfo(
                id=0, num_workers=1, seed=self._base_seed, dataset=self._dataset
            )
            if loader.worker_init_fn is not None and not (
                loader.persistent_workers and loader._workers_started
            ):
                with _as_worker(self._worker):
                    loader.worker_init_fn(0)
            loader._workers_started = True
        with _as_worker(self._worker):
            kind = _IterableFetcher if self._iterable else _MapFetcher
            self._fetcher = kind(
                self._dataset, self._auto_collation, self._collate_fn, self._drop_last
            )

    def __iter__(self) -> _DataLoaderIter:
        return self

    def __next__(self) -> Any:
        index = next(self._sampler_iter)
        with _as_worker(self._worker):
            data = self._fetcher.fetch(index)
        self._num_yielded += 1
        if (
            self._iterable
            and self._IterableDataset_len_called is not None
            and self._num_yielded > self._IterableDataset_len_called
        ):
            warnings.warn(
                f"Length of IterableDataset {self._dataset} was reported to be "
                f"{self._IterableDataset_len_called} (when accessing len(dataloader)), but "
                f"{self._num_yielded} samples have been fetched. ",
                stacklevel=2,
            )
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)


def _accelerator_available() -> bool:
    from mlfuse import cuda

    return bool(cuda.is_available())


class DataLoader(Generic[T_co]):
    """Batches of a dataset, PyTorch's ``DataLoader``::

        loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
        for xb, yb in loader: ...

    * map-style datasets are read in ``sampler`` order (``shuffle=True``: a
      :class:`RandomSampler` drawing from ``generator``, else sequential), in
      lists of ``batch_size`` (``drop_last`` drops a short last one) or as a
      ``batch_sampler`` gives them; ``collate_fn`` (default
      :func:`default_collate`) makes each list a batch;
    * an :class:`IterableDataset` is read in its own order (no sampler, no
      shuffle); ``len(loader)`` needs its ``__len__``;
    * ``batch_size=None`` turns batching off: each sample goes through
      ``collate_fn`` (default :func:`default_convert`) alone.

    The argument conflicts PyTorch refuses are ValueErrors here too (a
    ``sampler`` with ``shuffle``; a ``batch_sampler`` with ``batch_size``,
    ``shuffle``, ``sampler`` or ``drop_last``; ``batch_size=None`` with
    ``drop_last``; ``prefetch_factor`` or ``persistent_workers`` without workers;
    a sampler or shuffle for an iterable dataset).

    ``num_workers > 0`` loads in this process, not in worker processes: the data
    comes in the same order as with ``num_workers=0``; ``worker_init_fn``, if
    given, is called once with worker id 0 before the first batch of each pass
    (once in all with ``persistent_workers``), and during loading
    :func:`get_worker_info` describes that one worker (``num_workers`` 1, seed
    from the pass's base seed), without reseeding the global generator.
    ``timeout``, ``prefetch_factor`` and ``multiprocessing_context`` are
    checked, then have nothing to act on; ``pin_memory`` returns the batches as
    they are (mlfuse has no pinned host memory).
    """

    dataset: Dataset[T_co]
    batch_size: int | None
    num_workers: int
    pin_memory: bool
    drop_last: bool
    timeout: float
    sampler: Sampler | Iterable
    pin_memory_device: str
    prefetch_factor: int | None
    __initialized = False

    def __init__(
        self,
        dataset: Dataset[T_co],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler[list] | Iterable[list] | None = None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; "
                "use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing. "
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                "to None."
            )
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if generator is not None and not isinstance(generator, Generator):
            raise TypeError(
                f"DataLoader: generator must be a mlfuse.Generator, got {type(generator).__name__}"
            )

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError(
                    "batch_size=None option disables auto-batching and is mutually exclusive "
                    "with drop_last"
                )

        if sampler is None:
            if isinstance(dataset, IterableDataset):
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._workers_started = False
        self._IterableDataset_len_called: int | None = None
        self.__initialized = True

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context) -> None:
        if multiprocessing_context is not None:
            if self.num_workers == 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
            if isinstance(multiprocessing_context, str):
                valid = multiprocessing.get_all_start_methods()
                if multiprocessing_context not in valid:
                    raise ValueError(
                        "multiprocessing_context option should specify a valid start method "
                        f"in {valid!r}, but got multiprocessing_context="
                        f"{multiprocessing_context!r}"
                    )
                multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
            if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a "
                    "string specifying the start method, but got "
                    f"multiprocessing_context={multiprocessing_context}"
                )
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _DataLoaderIter:
        return _DataLoaderIter(self)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            length = self._IterableDataset_len_called = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)  # type: ignore[arg-type]
