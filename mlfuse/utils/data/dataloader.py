"""``torch.utils.data.dataloader``'s names (defined in :mod:`mlfuse.utils.data`)."""

from mlfuse.utils.data import DataLoader, default_collate, default_convert, get_worker_info

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]
