"""``torch.nn.utils.rnn``'s helpers for batches of sequences of different lengths:
padding (``pad_sequence([a, b, c], batch_first=True)``) and packing
(``pack_padded_sequence(x, lengths)``: the steps of all sequences, time-major,
each step holding the sequences still running, longest first), which the
recurrent layers take and give back."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mlfuse import dtypes
from mlfuse.errors import ArgumentError
from mlfuse.tensor import Tensor, cat, stack

__all__ = [
    "pad_sequence", "unpad_sequence", "unpad_sequences", "PackedSequence",
    "pack_padded_sequence", "pad_packed_sequence", "pack_sequence", "unpack_sequence",
    "invert_permutation",
]  # fmt: skip


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes ``permutation`` (1-d int64): ``out[p[i]] = i``;
    None stays None."""
    if permutation is None:
        return None
    if permutation.ndim != 1 or permutation.dtype.is_float:
        raise ArgumentError(
            f"invert_permutation: expected a 1-d integer tensor, got {permutation.dtype.name} "
            f"of shape {permutation.shape}"
        )
    return permutation.argsort()


def pad_sequence(
    sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"
) -> Tensor:
    """Stack sequences of shapes (L_i, *) into (B, L, *) (``batch_first``) or (L, B, *),
    padded with ``padding_value`` on ``padding_side`` to the longest:
    ``pad_sequence([a, b], batch_first=True)``."""
    seqs = list(sequences)
    if not seqs:
        raise ArgumentError("pad_sequence needs at least one sequence")
    if padding_side not in ("right", "left"):
        raise ArgumentError(
            f"pad_sequence: padding_side must be 'right' or 'left', got {padding_side!r}"
        )
    for s in seqs:
        if not isinstance(s, Tensor) or s.ndim < 1:
            raise ArgumentError("pad_sequence: every sequence must be a Tensor of at least 1 dim")
        if s.shape[1:] != seqs[0].shape[1:]:
            raise ArgumentError(
                f"pad_sequence: trailing dims differ: {seqs[0].shape} and {s.shape}"
            )
    longest = max(s.shape[0] for s in seqs)
    rest = ((0, 0),) * (seqs[0].ndim - 1)
    padded = []
    for s in seqs:
        gap = longest - s.shape[0]
        amount = (0, gap) if padding_side == "right" else (gap, 0)
        padded.append(s.pad((amount,) + rest, padding_value) if gap else s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded: Tensor, lengths, batch_first: bool = False) -> list[Tensor]:
    """The sequences :func:`pad_sequence` joined, cut back to ``lengths``:
    ``unpad_sequence(p, lengths, batch_first=True)``."""
    x = padded if batch_first else padded.transpose(0, 1)
    lens = lengths.tolist() if isinstance(lengths, Tensor) else list(lengths)
    if len(lens) != x.shape[0]:
        raise ArgumentError(f"unpad_sequence: {len(lens)} lengths for a batch of {x.shape[0]}")
    return [x[i, : int(n)] for i, n in enumerate(lens)]


unpad_sequences = unpad_sequence


class PackedSequence(NamedTuple):
    """Sequences of different lengths packed time-major: ``data`` (sum of the
    lengths, *) holds step 0 of every sequence, then step 1 of those at least 2
    long... in order of decreasing length; ``batch_sizes[t]`` (int64) counts the
    sequences still running at step t; ``sorted_indices`` orders the batch by
    decreasing length and ``unsorted_indices`` undoes it (both None when the batch
    came sorted): ``packed.data.shape``."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def lengths(self) -> np.ndarray:
        """The length of each sequence, in the batch's original order:
        ``packed.lengths()``."""
        bs = self.batch_sizes.numpy().astype(np.int64)
        sorted_lens = np.array([(bs > i).sum() for i in range(int(bs[0]))], np.int64)
        if self.unsorted_indices is None:
            return sorted_lens
        return sorted_lens[self.unsorted_indices.numpy()]


def _lengths(lengths, batch: int, what: str) -> np.ndarray:
    lens = np.asarray(lengths.numpy() if isinstance(lengths, Tensor) else lengths)
    if lens.ndim != 1 or lens.shape[0] != batch:
        raise ArgumentError(
            f"{what}: expected {batch} lengths (one per sequence), got {lens.shape}"
        )
    if lens.dtype.kind not in "iu":
        raise ArgumentError(f"{what}: lengths must be integers, got {lens.dtype}")
    if (lens <= 0).any():
        raise ArgumentError(f"{what}: every length must be positive, got {lens.tolist()}")
    return lens.astype(np.int64)


def pack_padded_sequence(
    input,
    lengths,
    batch_first: bool = False,
    enforce_sorted: bool = True,  # noqa: A002
) -> PackedSequence:
    """Pack a padded batch (T, B, *) ((B, T, *) with ``batch_first``) of sequences of
    ``lengths``; with ``enforce_sorted`` they must come longest first:
    ``pack_padded_sequence(x, [3, 2, 1])``."""
    x = input.transpose(0, 1) if batch_first else input
    if x.ndim < 2:
        raise ArgumentError(f"pack_padded_sequence: input must have at least 2 dims, got {x.shape}")
    lens = _lengths(lengths, x.shape[1], "pack_padded_sequence")
    if lens.max() > x.shape[0]:
        raise ArgumentError(
            f"pack_padded_sequence: a length of {lens.max()} is longer than the input's "
            f"{x.shape[0]} steps"
        )
    if enforce_sorted:
        if (np.diff(lens) > 0).any():
            raise ArgumentError(
                "pack_padded_sequence: lengths must be sorted in decreasing order when "
                f"enforce_sorted is True, got {lens.tolist()}"
            )
        order = np.arange(len(lens))
        sorted_idx = unsorted_idx = None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_idx = Tensor(order, dtype=dtypes.int64)
        unsorted_idx = Tensor(np.argsort(order, kind="stable"), dtype=dtypes.int64)
    return _pack(x, lens, order, sorted_idx, unsorted_idx)


def _pack(x: Tensor, lens: np.ndarray, order: np.ndarray, sorted_idx, unsorted_idx):
    """(T, B, *) with ``lens`` (original order) packed in ``order``."""
    slens = lens[order]
    sizes = np.array([(slens > t).sum() for t in range(int(slens[0]))], np.int64)
    if sorted_idx is not None:
        x = x[:, Tensor(order, dtype=dtypes.int64, device=x.device)]
    steps = [x[t, : int(n)] for t, n in enumerate(sizes)]
    data = cat(steps, 0) if len(steps) > 1 else steps[0]
    return PackedSequence(data, Tensor(sizes, dtype=dtypes.int64), sorted_idx, unsorted_idx)


def repack_like(x: Tensor, like: PackedSequence) -> PackedSequence:
    """(T, B, *) in the batch's original order, packed as ``like`` is (its lengths
    and its order): the output of a recurrent layer given ``like``."""
    lens = like.lengths()
    order = (
        like.sorted_indices.numpy().astype(np.int64)
        if like.sorted_indices is not None
        else np.arange(len(lens))
    )
    return _pack(x, lens, order, like.sorted_indices, like.unsorted_indices)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """``(padded, lengths)`` of a :class:`PackedSequence`, in the batch's original
    order, padded with ``padding_value`` to the longest (or ``total_length``):
    ``out, lengths = pad_packed_sequence(packed, batch_first=True)``."""
    if not isinstance(sequence, PackedSequence):
        raise TypeError(
            f"pad_packed_sequence expects a PackedSequence, got {type(sequence).__name__}"
        )
    sizes = sequence.batch_sizes.numpy().astype(np.int64)
    steps, batch = len(sizes), int(sizes[0])
    total = steps if total_length is None else int(total_length)
    if total < steps:
        raise ArgumentError(
            f"pad_packed_sequence: total_length {total} is shorter than the longest sequence "
            f"({steps} steps)"
        )
    data = sequence.data
    rows, start = [], 0
    for n in sizes:
        step = data[start : start + int(n)]
        start += int(n)
        if n < batch:
            step = step.pad(((0, batch - int(n)),) + ((0, 0),) * (data.ndim - 1), padding_value)
        rows.append(step)
    if total > steps:
        rows.extend([Tensor.full((batch,) + data.shape[1:], padding_value, data.dtype, data.device)]
                    * (total - steps))  # fmt: skip
    padded = stack(rows, 0)  # (T, B, *) in sorted order
    if sequence.unsorted_indices is not None:
        padded = padded[:, sequence.unsorted_indices.to(padded.device)]
    lens = Tensor(sequence.lengths(), dtype=dtypes.int64)
    return (padded.transpose(0, 1) if batch_first else padded), lens


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (L_i, *): ``pack_sequence([a, b, c])``."""
    seqs = list(sequences)
    lens = [s.shape[0] for s in seqs]
    return pack_padded_sequence(pad_sequence(seqs), lens, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a :class:`PackedSequence` holds, in the original order:
    ``unpack_sequence(packed)``."""
    padded, lens = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lens, batch_first=True)
