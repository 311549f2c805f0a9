"""``torch.func``'s transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``,
``jacrev``, ``jacfwd``, ``hessian``, ``vmap`` and ``functional_call``.

They are built on mlfuse's reverse-mode autograd: a transform marks its
arguments as the tensors to differentiate (arguments that already take part in
an outer transform's graph stay connected to it, so transforms nest:
``hessian`` is ``jacrev(jacrev(f))``), runs the function with gradients
recorded, and walks the tapes back with the graph of the gradient itself
recorded. There is no forward mode: ``jacfwd`` is ``jacrev``, and ``jvp``
differentiates a vector-Jacobian product with respect to its cotangent (the
double-vjp construction). Jacobians take one backward walk per output element::

    from mlfuse import func
    df = func.grad(lambda x: (x.sin() * x).sum())
    H = func.hessian(lambda x: (x**3).sum())(x)
    out = func.functional_call(model, {"weight": w}, (x,))
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from mlfuse import autograd
from mlfuse.errors import ArgumentError
from mlfuse.namespace import vmap
from mlfuse.tensor import Tensor

__all__ = [
    "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
    "functional_call", "stack_module_state",
]  # fmt: skip


def _picks(argnums, nargs: int, what: str) -> list[int]:
    many = isinstance(argnums, (tuple, list))
    picks = list(argnums) if many else [argnums]
    for i in picks:
        if isinstance(i, bool) or not isinstance(i, int):
            raise ArgumentError(f"{what}: argnums must be ints, got {argnums!r}")
        if not -nargs <= i < nargs:
            raise ArgumentError(
                f"{what}: argnums {i} is out of range for {nargs} positional arguments"
            )
    return [i % nargs for i in picks]


def _inputs(args: list, picks: list[int], what: str) -> None:
    """Make the picked arguments the tensors to differentiate (in place in ``args``)."""
    for i in picks:
        a = args[i]
        if not isinstance(a, Tensor):
            raise TypeError(f"{what}: argument {i} is a {type(a).__name__}, not a Tensor")
        if not a.dtype.is_float:
            raise TypeError(
                f"{what}: argument {i} has dtype {a.dtype.name}; only float tensors have gradients"
            )
        if a.node.tape is None:  # not part of an outer transform's graph: a fresh leaf
            args[i] = a._detached()._as_leaf()


def _grads(out: Tensor, seed: Tensor, targets: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """d(out . seed) / d target for each target, recorded so they can be differentiated."""
    if out.node.tape is None:  # the result does not depend on them
        return tuple(Tensor.zeros_like(t) for t in targets)
    got = autograd.gradients(out.node, seed, [t.node for t in targets], create_graph=True)
    return tuple(got[id(t.node)] if id(t.node) in got else Tensor.zeros_like(t) for t in targets)


def _split_aux(res, has_aux: bool, what: str):
    if not has_aux:
        return res, None
    if not isinstance(res, tuple) or len(res) != 2:
        raise ArgumentError(f"{what}: with has_aux the function must return (output, aux)")
    return res


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``func`` returning ``(gradient, value)``: the gradient of its one-element
    result with respect to argument ``argnums`` (a tuple of them for a tuple), the
    value as ``func`` returned it (``(output, aux)`` with ``has_aux``):
    ``g, v = func.grad_and_value(loss)(w, x)``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        picks = _picks(argnums, len(args), "grad")
        args = list(args)
        _inputs(args, picks, "grad")
        with autograd.enable_grad():
            res = func(*args, **kwargs)
        out, aux = _split_aux(res, has_aux, "grad")
        if not isinstance(out, Tensor):
            raise TypeError(f"grad: the function returned {type(out).__name__}, not a Tensor")
        if out.numel() != 1:
            raise ArgumentError(
                f"grad: the function's result must have one element, got {out.shape}"
            )
        seed = Tensor.ones(*out.shape, dtype=out.dtype, device=out.device)
        g = _grads(out, seed, [args[i] for i in picks])
        g = g if isinstance(argnums, (tuple, list)) else g[0]
        return g, ((out, aux) if has_aux else out)

    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``func``'s gradient function: the gradient of its one-element result with
    respect to argument ``argnums`` (``(gradient, aux)`` with ``has_aux``):
    ``dw = func.grad(loss)(w, x)``."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(output, vjp_fn)``: ``vjp_fn(cotangent)`` is the tuple of the products of
    the cotangent (output-shaped) with the Jacobian, one per primal:
    ``out, f = func.vjp(torch_like_fn, x); (gx,) = f(mlfuse.ones_like(out))``."""
    args = list(primals)
    _inputs(args, list(range(len(args))), "vjp")
    with autograd.enable_grad():
        res = func(*args)
    out, aux = _split_aux(res, has_aux, "vjp")
    if not isinstance(out, Tensor):
        raise TypeError(f"vjp: the function returned {type(out).__name__}, not a Tensor")

    def vjp_fn(cotangent: Tensor) -> tuple[Tensor, ...]:
        if not isinstance(cotangent, Tensor) or cotangent.shape != out.shape:
            got = cotangent.shape if isinstance(cotangent, Tensor) else type(cotangent).__name__
            raise ArgumentError(
                f"vjp: the cotangent must have the output's shape {out.shape}, got {got}"
            )
        return _grads(out, cotangent.cast(out.dtype), args)

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def jvp(func: Callable, primals: Sequence[Tensor], tangents: Sequence[Tensor]):
    """``(output, Jacobian @ tangents)`` of ``func`` at ``primals``, by
    differentiating a vector-Jacobian product with respect to its cotangent:
    ``out, dout = func.jvp(f, (x,), (v,))``."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ArgumentError(
            f"jvp: {len(primals)} primals but {len(tangents)} tangents (one per primal)"
        )
    for k, (p, t) in enumerate(zip(primals, tangents)):
        if not isinstance(t, Tensor) or not isinstance(p, Tensor) or t.shape != p.shape:
            raise ArgumentError(f"jvp: tangent {k} must be a tensor of its primal's shape")
    out, vjp_fn = vjp(func, *primals)
    u = Tensor.zeros(*out.shape, dtype=out.dtype, device=out.device)._as_leaf()
    with autograd.enable_grad():
        pulled = vjp_fn(u)
        s = sum(((g * t.cast(g.dtype)).sum() for g, t in zip(pulled, tangents)), Tensor(0.0))
    if s.node.tape is None:
        return out.detach(), Tensor.zeros_like(out)
    (jv,) = _grads(s, Tensor.ones(*s.shape, dtype=s.dtype, device=s.device), [u])
    return out, jv


def jacrev(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``func``'s Jacobian function: of shape ``output.shape + input.shape`` for
    argument ``argnums`` (a tuple of Jacobians for a tuple), one backward walk per
    output element: ``J = func.jacrev(f)(x)``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        picks = _picks(argnums, len(args), "jacrev")
        args = list(args)
        _inputs(args, picks, "jacrev")
        with autograd.enable_grad():
            res = func(*args, **kwargs)
        out, aux = _split_aux(res, has_aux, "jacrev")
        if not isinstance(out, Tensor):
            raise TypeError(f"jacrev: the function returned {type(out).__name__}, not a Tensor")
        targets = [args[i] for i in picks]
        rows: list[list[Tensor]] = [[] for _ in targets]
        n = out.numel()
        for k in range(n):
            seed = Tensor.zeros(n, dtype=out.dtype, device=out.device)
            seed = (Tensor.arange(n, device=out.device) == k).where(1.0, seed).reshape(out.shape)
            for j, g in enumerate(_grads(out, seed, targets)):
                rows[j].append(g)
        jac = tuple(
            (Tensor.stack(*r) if r else Tensor.zeros(0, *t.shape, dtype=out.dtype)).reshape(
                out.shape + t.shape
            )
            for r, t in zip(rows, targets)
        )
        jac = jac if isinstance(argnums, (tuple, list)) else jac[0]
        return (jac, aux) if has_aux else jac

    return wrapper


jacfwd = jacrev
"""``torch.func.jacfwd``'s place: the same Jacobian, computed in reverse mode."""


def hessian(func: Callable, argnums=0) -> Callable:
    """The Hessian function of a one-element ``func``: ``jacrev(jacrev(func))``,
    of shape ``input.shape + input.shape``: ``H = func.hessian(f)(x)``."""
    return jacrev(jacrev(func, argnums), argnums)


def functional_call(module, parameter_and_buffer_dicts, args=(), kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):  # fmt: skip
    """Call ``module`` with some of its parameters and buffers replaced by the
    tensors of a dict (or a tuple of dicts) by dotted name, then put the module's
    own back: ``out = func.functional_call(model, {"0.weight": w}, (x,))``."""
    dicts = (
        [parameter_and_buffer_dicts]
        if isinstance(parameter_and_buffer_dicts, dict)
        else list(parameter_and_buffer_dicts)
    )
    given: dict[str, Tensor] = {}
    for d in dicts:
        for k, v in d.items():
            if k in given:
                raise ArgumentError(f"functional_call: {k!r} is given more than once")
            given[k] = v
    own = module.state_dict(keep_vars=True)
    unknown = sorted(set(given) - set(own))
    if unknown:
        raise ArgumentError(f"functional_call: the module has no tensors named {unknown}")
    if strict and set(given) != set(own):
        raise ArgumentError(f"functional_call: strict: missing {sorted(set(own) - set(given))}")
    if tie_weights:  # a tensor shared under several names is replaced under all of them
        for name, t in own.items():
            if name not in given:
                twin = next((k for k, v in own.items() if v is t and k in given), None)
                if twin is not None:
                    given[name] = given[twin]
    saved = []
    try:
        for name, v in given.items():
            owner, attr = _owner(module, name)
            saved.append((owner, attr, vars(owner)[attr]))
            object.__setattr__(owner, attr, v if isinstance(v, Tensor) else Tensor(v))
        args = args if isinstance(args, tuple) else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for owner, attr, old in reversed(saved):
            object.__setattr__(owner, attr, old)


def stack_module_state(models) -> tuple[dict, dict]:
    """The parameters and buffers of models of one architecture, each stacked
    along a new leading dim, by name: ``(params, buffers)`` for ensembling with
    :func:`vmap` over :func:`functional_call`. The stacked parameters are new
    leaves that require grad (as PyTorch's)."""
    models = list(models)
    if not models:
        raise ArgumentError("stack_module_state: expected at least one model")
    names = [tuple(n for n, _ in m.named_parameters()) for m in models]
    if any(n != names[0] for n in names):
        raise ArgumentError(
            "stack_module_state: the models must have the same parameters (same architecture)"
        )
    if any(m.training != models[0].training for m in models):
        raise ArgumentError("stack_module_state: the models must all be in train or eval mode")
    params = {
        name: Tensor.stack(*[dict(m.named_parameters())[name].detach() for m in models])
        .realize()
        .requires_grad_()
        for name in names[0]
    }
    buffers = {
        name: Tensor.stack(*[dict(m.named_buffers())[name] for m in models])
        for name, _ in models[0].named_buffers()
    }
    return params, buffers


def _owner(module, dotted: str):
    *path, attr = dotted.split(".")
    m = module
    for p in path:
        if p.isdigit() and isinstance(m, (list, tuple)):
            m = m[int(p)]
        elif p.isdigit() and not hasattr(m, p):  # a Sequential's layers are named by position
            m = m._layers[int(p)]
        else:
            m = getattr(m, p)
    return m, attr
