"""``torch.nn.utils.clip_grad``'s names (defined in :mod:`mlfuse.nn.utils`)."""

from mlfuse.nn.utils import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)

__all__ = [
    "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
    "get_total_norm",
]  # fmt: skip
