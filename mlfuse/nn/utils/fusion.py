"""``torch.nn.utils.fusion``: fold an evaluation-mode batch norm into the
convolution or linear layer before it (one layer, the same outputs)::

    fused = fuse_conv_bn_eval(conv.eval(), bn.eval())  # fused(x) == bn(conv(x))
"""

from __future__ import annotations

import copy

from mlfuse.errors import ArgumentError
from mlfuse.nn.modules import Module, Parameter
from mlfuse.tensor import Tensor

__all__ = [
    "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
]  # fmt: skip


def _check_eval(layer: Module, bn: Module, what: str) -> None:
    if not isinstance(layer, Module) or not isinstance(bn, Module):
        raise TypeError(f"{what}: expected two modules, got {type(layer).__name__} and "
                        f"{type(bn).__name__}")  # fmt: skip
    if layer.training or bn.training:
        raise ArgumentError(f"{what}: fusion is for eval mode only: call .eval() on both modules")
    if getattr(bn, "running_mean", None) is None or getattr(bn, "running_var", None) is None:
        raise ArgumentError(
            f"{what}: the batch norm needs running statistics (track_running_stats=True)"
        )


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    """A new convolution (a copy of ``conv``) whose output is ``bn(conv(x))`` for
    both in eval mode (``transpose=True`` for transposed convolutions, whose
    weight is (in, out, ...)): ``fused = fuse_conv_bn_eval(conv.eval(), bn.eval())``."""
    _check_eval(conv, bn, "fuse_conv_bn_eval")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose,
    )  # fmt: skip
    return fused


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple[Tensor, Tensor]:
    """The convolution weight and bias with the batch norm folded in:
    ``w * gamma / sqrt(var + eps)`` (scaled along the output channels: dim 0, or 1
    with ``transpose``) and ``(b - mean) * gamma / sqrt(var + eps) + beta``, as new
    leaves (requiring grad as ``conv_w`` and ``conv_b`` do; a missing bias is zeros
    that do not): ``w, b = fuse_conv_bn_weights(conv.weight, conv.bias, bn.running_mean,
    bn.running_var, bn.eps, bn.weight, bn.bias)``."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = Tensor.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = Tensor.ones_like(bn_rm)
    if bn_b is None:
        bn_b = Tensor.zeros_like(bn_rm)
    rsqrt = (bn_rv + bn_eps).rsqrt()
    lead = (1, -1) if transpose else (-1, 1)
    shape = lead + (1,) * (conv_w.ndim - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).cast(w_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).cast(b_dtype)
    return (
        Parameter(fused_w.detach(), conv_w.requires_grad),
        Parameter(fused_b.detach(), conv_b.requires_grad),
    )


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    """A new linear layer (a copy of ``linear``) whose output is ``bn(linear(x))``
    for both in eval mode (``bn.num_features`` equal to ``linear.out_features``,
    or 1): ``fused = fuse_linear_bn_eval(lin.eval(), bn.eval())``."""
    what = "fuse_linear_bn_eval"
    _check_eval(linear, bn, what)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise ArgumentError(
            f"{what}: needs linear.out_features == bn.num_features or bn.num_features == 1, "
            f"got {linear.out_features} and {bn.num_features}"
        )
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor,
    bn_b: Tensor,
) -> tuple[Tensor, Tensor]:
    """The linear weight and bias with the batch norm folded in:
    ``w * (gamma / sqrt(var + eps))[:, None]`` and ``(b - mean) * gamma /
    sqrt(var + eps) + beta``, as new leaves (requiring grad as the inputs do; a
    missing bias is zeros that do not): ``w, b = fuse_linear_bn_weights(lin.weight,
    lin.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)``."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = Tensor.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = Tensor.ones_like(bn_rm)
    if bn_b is None:
        bn_b = Tensor.zeros_like(bn_rm)
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    fused_w = linear_w * scale.unsqueeze(-1).cast(w_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).cast(b_dtype)
    return (
        Parameter(fused_w.detach(), linear_w.requires_grad),
        Parameter(fused_b.detach(), linear_b.requires_grad),
    )
