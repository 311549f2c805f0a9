"""PyTorch's ``torch.signal``: the window functions of :mod:`mlfuse.signal.windows`
(``mlfuse.signal.windows.hann(8)``)."""

from mlfuse.signal import windows

__all__ = ["windows"]
