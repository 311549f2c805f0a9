"""``torch.nn.utils.rnn``'s padding helpers for batches of sequences of different
lengths: ``pad_sequence([a, b, c], batch_first=True)``."""

from __future__ import annotations

from mlfuse.errors import ArgumentError
from mlfuse.tensor import Tensor, stack

__all__ = ["pad_sequence", "unpad_sequence", "unpad_sequences"]


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
