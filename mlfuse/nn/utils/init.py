"""``torch.nn.utils.init``'s name (defined in :mod:`mlfuse.nn.utils`)."""

from mlfuse.nn.utils import skip_init

__all__ = ["skip_init"]
