"""``torch.nn.grad``: the gradients of a convolution with respect to its input
and its weight, given the gradient of its output. A convolution is linear in
each, so each is the convolution's vector-Jacobian product, taken with
mlfuse's autograd at a zero point (and itself differentiable)::

    gx = nn.grad.conv2d_input(x.shape, w, gy, padding=1)
    gw = nn.grad.conv2d_weight(x, w.shape, gy, padding=1)
"""

from __future__ import annotations

from mlfuse import autograd
from mlfuse.nn import functional as F
from mlfuse.tensor import Tensor

__all__ = [
    "conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
    "conv3d_weight",
]  # fmt: skip


def _vjp(conv, x: Tensor, w: Tensor, grad_output: Tensor, wrt: Tensor, args) -> Tensor:
    out = conv(x, w, None, *args)
    if out.shape != grad_output.shape:
        raise ValueError(
            f"{conv.__name__}: grad_output has shape {grad_output.shape}, the convolution's "
            f"output {out.shape}"
        )
    (g,) = autograd.grad(out, wrt, grad_output, create_graph=True)
    return g


def _input(conv, input_size, weight: Tensor, grad_output: Tensor, args) -> Tensor:
    x = Tensor.zeros(*tuple(input_size), dtype=weight.dtype, device=weight.device)
    x.requires_grad_()
    return _vjp(conv, x, weight, grad_output, x, args)


def _weight(conv, input: Tensor, weight_size, grad_output: Tensor, args) -> Tensor:  # noqa: A002
    w = Tensor.zeros(*tuple(weight_size), dtype=input.dtype, device=input.device)
    w.requires_grad_()
    return _vjp(conv, input, w, grad_output, w, args)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``F.conv1d`` with respect to an input of ``input_size``."""
    return _input(F.conv1d, input_size, weight, grad_output, (stride, padding, dilation, groups))


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """The gradient of ``F.conv1d`` with respect to a weight of ``weight_size``."""
    return _weight(F.conv1d, input, weight_size, grad_output, (stride, padding, dilation, groups))


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``F.conv2d`` with respect to an input of ``input_size``."""
    return _input(F.conv2d, input_size, weight, grad_output, (stride, padding, dilation, groups))


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """The gradient of ``F.conv2d`` with respect to a weight of ``weight_size``."""
    return _weight(F.conv2d, input, weight_size, grad_output, (stride, padding, dilation, groups))


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``F.conv3d`` with respect to an input of ``input_size``."""
    return _input(F.conv3d, input_size, weight, grad_output, (stride, padding, dilation, groups))


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """The gradient of ``F.conv3d`` with respect to a weight of ``weight_size``."""
    return _weight(F.conv3d, input, weight_size, grad_output, (stride, padding, dilation, groups))
