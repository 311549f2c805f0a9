"""``torch.nn.utils.memory_format``'s names (defined in :mod:`mlfuse.nn.utils`)."""

from mlfuse.nn.utils import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]
