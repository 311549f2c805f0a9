"""PyTorch's ``torch.autograd.functional``: ``jacobian``, ``hessian``, ``vjp``,
``jvp``, ``vhp`` and ``hvp`` of a function of tensors, with PyTorch's
argument and result conventions (a tensor or a tuple of tensors in, a tensor
or a tuple out), on top of :mod:`mlfuse.func`'s transforms::

    J = mlfuse.autograd.functional.jacobian(f, x)            # f(x).shape + x.shape
    out, (gx, gy) = mlfuse.autograd.functional.vjp(f, (x, y), v)

Results are detached unless ``create_graph=True``. ``strict``, ``vectorize``
and ``strategy`` are accepted; mlfuse computes every Jacobian in reverse mode.
"""

from __future__ import annotations

from collections.abc import Callable

from mlfuse.errors import ArgumentError

__all__ = ["jacobian", "hessian", "vjp", "jvp", "vhp", "hvp"]


def _as_tuple(x, what: str) -> tuple[tuple, bool]:
    from mlfuse.tensor import Tensor

    if isinstance(x, Tensor):
        return (x,), False
    if isinstance(x, (tuple, list)) and all(isinstance(t, Tensor) for t in x):
        return tuple(x), True
    raise TypeError(f"{what} must be a Tensor or a tuple of Tensors, got {type(x).__name__}")


def _finish(values, create_graph: bool):
    if isinstance(values, tuple):
        return tuple(_finish(v, create_graph) for v in values)
    return values if create_graph or values is None else values.detach()


def _check_v(v, outs: tuple, what: str) -> tuple:
    vs, _ = _as_tuple(v, f"{what}: v")
    if len(vs) != len(outs) or any(a.shape != b.shape for a, b in zip(vs, outs)):
        raise ArgumentError(
            f"{what}: v must match the function's outputs in number and shape: "
            f"{[tuple(o.shape) for o in outs]}, got {[tuple(a.shape) for a in vs]}"
        )
    return vs


def vjp(fn: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(fn(inputs), v @ J)``: the vector-Jacobian product, one per input; ``v``
    may be left out for a one-element output."""
    from mlfuse import func

    from mlfuse.tensor import Tensor

    ins, many_in = _as_tuple(inputs, "vjp: inputs")
    out, pull = func.vjp(fn, *ins)
    if v is None:
        if out.numel() != 1:
            raise ArgumentError(
                f"vjp: v can be left out only for a one-element output, got shape {out.shape}"
            )
        v = Tensor.ones(*out.shape, dtype=out.dtype, device=out.device)
    (vv,) = _check_v(v, (out,), "vjp")
    got = pull(vv)
    return _finish(out, create_graph), _finish(got if many_in else got[0], create_graph)


def jvp(fn: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(fn(inputs), J @ v)``: the Jacobian-vector product (``v`` one tensor per
    input; may be left out for a one-element input)."""
    from mlfuse import func

    from mlfuse.tensor import Tensor

    ins, _ = _as_tuple(inputs, "jvp: inputs")
    if v is None:
        if len(ins) != 1 or ins[0].numel() != 1:
            raise ArgumentError("jvp: v can be left out only for one one-element input")
        v = Tensor.ones(*ins[0].shape, dtype=ins[0].dtype, device=ins[0].device)
    vs = _check_v(v, ins, "jvp")
    out, dout = func.jvp(fn, ins, vs)
    return _finish(out, create_graph), _finish(dout, create_graph)


def jacobian(fn: Callable, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):  # fmt: skip
    """The Jacobian of ``fn`` at ``inputs``: of shape ``output.shape + input.shape``
    (a tuple over inputs for a tuple of inputs, a tuple over outputs for a tuple
    of outputs, nested as PyTorch's)."""
    from mlfuse import func

    if strategy not in ("reverse-mode", "forward-mode"):
        raise ArgumentError(f"jacobian: strategy must be 'reverse-mode' or 'forward-mode', "
                            f"got {strategy!r}")  # fmt: skip
    ins, many_in = _as_tuple(inputs, "jacobian: inputs")
    probe = fn(*ins)
    outs, many_out = _as_tuple(probe, "jacobian: the function's result")
    argnums = tuple(range(len(ins)))
    per_out = []
    for k in range(len(outs)):

        def one(*args, _k=k):
            res = fn(*args)
            return res[_k] if many_out else res

        jac = func.jacrev(one, argnums)(*ins)
        per_out.append(jac if many_in else jac[0])
    result = tuple(per_out) if many_out else per_out[0]
    return _finish(result, create_graph)


def hessian(fn: Callable, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):  # fmt: skip
    """The Hessian of a one-element ``fn`` at ``inputs``: ``input.shape +
    input.shape`` (a tuple of tuples over pairs of inputs for a tuple)."""
    from mlfuse import func

    ins, many_in = _as_tuple(inputs, "hessian: inputs")

    def grads(*args):
        out = fn(*args)
        from mlfuse.tensor import Tensor

        if not isinstance(out, Tensor) or out.numel() != 1:
            shape = out.shape if isinstance(out, Tensor) else type(out).__name__
            raise ArgumentError(f"hessian: the function must return one element, got {shape}")
        return func.grad(fn, tuple(range(len(args))))(*args)

    rows = []
    for i in range(len(ins)):

        def gi(*args, _i=i):
            return grads(*args)[_i]

        jac = func.jacrev(gi, tuple(range(len(ins))))(*ins)
        rows.append(jac)
    result = tuple(rows) if many_in else rows[0][0]
    return _finish(result, create_graph)


def vhp(fn: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(fn(inputs), v @ H)``: a vector-Hessian product of a one-element ``fn``."""
    from mlfuse import func

    ins, many_in = _as_tuple(inputs, "vhp: inputs")
    vs = _check_v(v, ins, "vhp") if v is not None else None
    if vs is None:
        raise ArgumentError("vhp: give v, one tensor per input")
    argnums = tuple(range(len(ins)))
    value = fn(*ins)
    _, pull = func.vjp(lambda *a: _dot(func.grad(fn, argnums)(*a), vs), *ins)
    from mlfuse.tensor import Tensor

    got = pull(Tensor.ones(dtype=value.dtype, device=value.device))
    return _finish(value, create_graph), _finish(got if many_in else got[0], create_graph)


def hvp(fn: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(fn(inputs), H @ v)``: the Hessian is symmetric, so this is :func:`vhp`."""
    return vhp(fn, inputs, v, create_graph, strict)


def _dot(gs, vs):
    total = None
    for g, v in zip(gs, vs):
        term = (g * v.cast(g.dtype)).sum()
        total = term if total is None else total + term
    return total
