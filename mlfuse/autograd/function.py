"""Custom autograd functions, PyTorch's ``torch.autograd.Function``::

    class Clip(mlfuse.autograd.Function):
        @staticmethod
        def forward(ctx, x, lo):
            ctx.save_for_backward(x)
            ctx.lo = lo
            return x.clamp(min=lo)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (x >= ctx.lo), None   # one gradient per forward input

    y = Clip.apply(x, 0.0)

``forward`` runs without recording (its ops are not differentiated); its
results are tied to the tensor inputs by ``backward``, which autograd calls
with the gradient of each result. ``forward(*args)`` with a separate
``setup_context(ctx, inputs, output)`` works too. Results are lazy like any
other: the functions fuse into the kernels around them.

Several results share one backward call: the differentiable (float) results
are joined into one flat value that carries the rule, and each result is a
view of it, so the gradients of all of them reach ``backward`` together.
"""

from __future__ import annotations

import functools

from mlfuse.autograd import enable_grad, is_grad_enabled, no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable", "InplaceFunction"]


class FunctionCtx:
    """What ``forward`` leaves for ``backward``: ``save_for_backward(*tensors)``
    and ``saved_tensors``, any attributes set on it, ``needs_input_grad`` (one
    bool per forward input), and PyTorch's ``mark_non_differentiable``,
    ``set_materialize_grads`` and ``mark_dirty``."""

    def __init__(self) -> None:
        self._saved: tuple = ()
        self.needs_input_grad: tuple[bool, ...] = ()
        self._non_differentiable: set[int] = set()
        self.materialize_grads = True
        self.dirty_tensors: tuple = ()

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or None) for ``backward``: ``ctx.save_for_backward(x, w)``."""
        from mlfuse.tensor import Tensor

        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward: argument {i} is {type(t).__name__}; save only "
                    "tensors or None (keep other values as attributes of ctx)"
                )
        self._saved = tuple(tensors)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to :meth:`save_for_backward`."""
        return self._saved

    def save_for_forward(self, *tensors) -> None:
        """Accepted (forward-mode AD keeps them): same as :meth:`save_for_backward`."""
        self.save_for_backward(*tensors)

    def mark_non_differentiable(self, *outputs) -> None:
        """Results that get no gradient (indices, masks): ``backward`` sees
        zeros (or None without materialized gradients) for them."""
        self._non_differentiable |= {id(t) for t in outputs}

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` gets zeros (True, the default) or None for the
        results that received no gradient."""
        self.materialize_grads = bool(value)

    def mark_dirty(self, *tensors) -> None:
        """Inputs ``forward`` wrote in place (recorded for PyTorch's API; mlfuse
        keeps values, so a write inside ``forward`` is seen by later readers)."""
        self.dirty_tensors = tuple(tensors)


class Function:
    """The base of custom autograd functions (see the module's documentation):
    subclass it with static ``forward`` and ``backward`` and call ``apply``."""

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError(
            f"{type(self).__name__}: custom Functions are not instantiated; call "
            f"{type(self).__name__}.apply(...)"
        )

    @staticmethod
    def forward(ctx: FunctionCtx, *args, **kwargs):
        raise NotImplementedError("a custom Function must define forward")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs):
        raise NotImplementedError("a custom Function must define backward to be differentiated")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output) -> None:
        raise NotImplementedError

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` on ``args`` and tie its results to the tensor inputs
        through ``backward``."""
        from mlfuse.tensor import Tensor

        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(
            isinstance(a, Tensor) and a.requires_grad and is_grad_enabled() for a in args
        )
        with no_grad():
            if cls.setup_context is not Function.setup_context:  # forward without ctx
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        if not any(ctx.needs_input_grad):
            return out
        single = isinstance(out, Tensor)
        outs = (out,) if single else tuple(out) if isinstance(out, (tuple, list)) else None
        if outs is None or not all(isinstance(o, Tensor) or o is None for o in outs):
            raise TypeError(
                f"{cls.__name__}.forward must return a Tensor or a tuple of them, "
                f"got {type(out).__name__}"
            )
        tied = _tie(cls, ctx, args, outs)
        return tied[0] if single else type(out)(tied) if isinstance(out, tuple) else tied


def _tie(cls, ctx: FunctionCtx, args: tuple, outs: tuple) -> list:
    """``outs`` made differentiable: the float results not marked
    non-differentiable are views of one flat value whose gradient rule calls
    ``cls.backward`` with all of their gradients."""
    from mlfuse import dtypes
    from mlfuse.tensor import Tensor, _derivative, cat

    inputs = [(i, a) for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    live = [
        k
        for k, o in enumerate(outs)
        if o is not None and o.dtype.is_float and id(o) not in ctx._non_differentiable
    ]
    if not live:
        return list(outs)
    wide = functools.reduce(dtypes.promote, [outs[k].dtype for k in live])
    sizes = [outs[k].numel() for k in live]
    parts = [outs[k].detach().reshape(-1).cast(wide) for k in live]
    flat = cat(parts) if len(parts) > 1 else parts[0]

    def rule(c, g):
        grads, start = {}, 0
        for k, n in zip(live, sizes):
            grads[k] = g[start : start + n].reshape(outs[k].shape).cast(outs[k].dtype)
            start += n
        full = []
        for k, o in enumerate(outs):
            if k in grads:
                full.append(grads[k])
            elif o is not None and ctx.materialize_grads:
                full.append(Tensor.zeros_like(o))
            else:
                full.append(None)
        with enable_grad() if is_grad_enabled() else no_grad():
            got = cls.backward(ctx, *full)
        if not isinstance(got, (tuple, list)):
            got = (got,)
        if len(got) < len(args):
            raise RuntimeError(
                f"{cls.__name__}.backward returned {len(got)} gradients, forward took "
                f"{len(args)} inputs (return None for the ones without a gradient)"
            )
        out = []
        for i, a in inputs:
            gi = got[i]
            if gi is None:
                out.append(None)
                continue
            if not isinstance(gi, Tensor):
                gi = Tensor(gi, a.dtype, a.device)
            if gi.shape != a.shape:
                try:
                    gi = gi.expand(a.shape) if gi.numel() == 1 else gi.reshape(a.shape)
                except ValueError:
                    raise RuntimeError(
                        f"{cls.__name__}.backward: the gradient of input {i} has shape "
                        f"{gi.shape}, the input {a.shape}"
                    ) from None
            out.append(gi.cast(a.dtype))
        return tuple(out)

    with enable_grad():
        tied = _derivative(f"{cls.__name__}Backward", flat, tuple(a for _, a in inputs), rule)
    result, start = list(outs), 0
    for k, n in zip(live, sizes):
        part = tied[start : start + n] if len(live) > 1 else tied
        result[k] = part.reshape(outs[k].shape).cast(outs[k].dtype)
        start += n
    return result


def once_differentiable(backward):
    """Mark a ``backward`` that is not itself differentiated (PyTorch's decorator):
    it runs without recording, so a double backward through it sees no graph."""

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        with no_grad():
            return backward(ctx, *grad_outputs)

    return wrapper


class InplaceFunction(Function):
    """PyTorch's base of Functions that may write their input: an ``inplace``
    flag for subclasses that take one."""

    inplace = False
