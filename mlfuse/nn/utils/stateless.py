"""``torch.nn.utils.stateless``: :func:`functional_call`, which is
:func:`mlfuse.func.functional_call`."""

from __future__ import annotations

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=(), kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):  # fmt: skip
    """Call ``module`` with some of its tensors replaced by name (see
    :func:`mlfuse.func.functional_call`):
    ``stateless.functional_call(model, {"weight": w}, (x,))``."""
    from mlfuse.func import functional_call as call

    return call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                strict=strict)  # fmt: skip
