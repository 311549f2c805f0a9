"""``torch.nn.parameter``'s names, where PyTorch code imports them from:
``from mlfuse.nn.parameter import Parameter``."""

from mlfuse.nn.modules import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def is_lazy(param) -> bool:
    """Whether ``param`` is a lazy module's parameter or buffer not yet given a shape."""
    return isinstance(param, (UninitializedParameter, UninitializedBuffer))
