"""``mlfuse.nn``: neural-network building blocks. ``mlfuse.nn.functional``
holds the functions with ``torch.nn.functional``'s names (``F.conv2d``,
``F.cross_entropy``, ``F.scaled_dot_product_attention``...)."""

from mlfuse.nn import functional

__all__ = ["functional"]
