"""``torch.utils.data.distributed``'s name (defined in :mod:`mlfuse.utils.data`)."""

from mlfuse.utils.data import DistributedSampler

__all__ = ["DistributedSampler"]
