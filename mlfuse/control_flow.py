"""PyTorch's structured control flow, ``torch.cond`` and ``torch.while_loop``
(``torch._higher_order_ops.while_loop``), with eager semantics::

    y = mlfuse.control_flow.cond(x.sum() > 0, lambda x: x.cos(), lambda x: x.sin(), (x,))
    i, x = mlfuse.control_flow.while_loop(
        lambda i, x: i < 10, lambda i, x: (i + 1, x * 2), (mlfuse.tensor(0), x)
    )

``cond`` with a tensor ``pred`` checks its arguments as PyTorch does and calls
*both* branches (as PyTorch traces both): their outputs must have the same
structure (nested tuples, lists and dicts of tensors or ints), and the tensors
the same shapes, dtypes and devices. The branch not taken runs on detached
copies of the operands and without gradient, and its lazy results are dropped
before they are computed (host work such as ``.item()`` in it still runs); the
result is the taken branch's output, with its gradients. A Python ``bool`` ``pred`` just
calls one branch, as PyTorch's does.

``while_loop`` runs ``body_fn`` while ``cond_fn`` returns a boolean scalar (a
0-d bool tensor or a Python bool), checking that ``body_fn`` returns the
carried values' structure with the same shapes and dtypes. Each test of
``cond_fn`` realizes it (the loop runs on the host), and gradients flow through
the iterations taken. The errors are ``RuntimeError`` as PyTorch's
(:class:`~mlfuse.errors.ArgumentError`).
"""

from __future__ import annotations

from typing import Any

from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError
from mlfuse.tensor import Tensor

__all__ = ["cond", "while_loop"]


# -- a small pytree: nested tuples, lists and dicts ------------------------------------
def _flatten(tree) -> tuple[list, Any]:
    """The leaves of ``tree`` in order and its structure (a hashable-free spec)."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for x in tree:
            lv, sp = _flatten(x)
            leaves += lv
            specs.append(sp)
        return leaves, (type(tree), len(tree), tuple(specs))
    if isinstance(tree, dict):
        leaves, specs = [], []
        for k in tree:
            lv, sp = _flatten(tree[k])
            leaves += lv
            specs.append((k, sp))
        return leaves, (dict, tuple(tree), tuple(specs))
    return [tree], None


def _unflatten(leaves: list, spec):
    it = iter(leaves)

    def build(sp):
        if sp is None:
            return next(it)
        kind, keys, subs = sp
        if kind is dict:
            return {k: build(s) for k, s in subs}
        items = [build(s) for s in subs]
        return tuple(items) if kind is tuple else items

    return build(spec)


def _same_structure(a, b) -> bool:
    """Specs equal up to tuple/list (PyTorch's pytrees tell those apart, but its
    while_loop accepts a list body output for tuple carries)."""
    if a is None or b is None:
        return a is None and b is None
    (ka, na, sa), (kb, nb, sb) = a, b
    if (ka is dict) != (kb is dict) or na != nb:
        return False
    if ka is dict:
        return all(x[0] == y[0] and _same_structure(x[1], y[1]) for x, y in zip(sa, sb))
    return all(_same_structure(x, y) for x, y in zip(sa, sb))


def _meta_diffs(lhs: list, rhs: list, lhs_name: str, rhs_name: str) -> None:
    """PyTorch's ``check_meta_consistency``: the same number of leaves, and pair
    by pair the same kind (tensor or int), shape, dtype and device."""
    if len(lhs) != len(rhs):
        raise ArgumentError(
            f"Expected {lhs_name} and {rhs_name} to have same number of outputs but got "
            f"lhs:{len(lhs)} outputs and rhs:{len(rhs)} outputs"
        )
    diffs = []
    for i, (x, y) in enumerate(zip(lhs, rhs)):
        if isinstance(x, Tensor) and isinstance(y, Tensor):
            what = [
                f"'{field}: {u} vs {v}'"
                for field, u, v in (
                    ("shape", tuple(x.shape), tuple(y.shape)),
                    ("dtype", x.dtype.name, y.dtype.name),
                    ("device", x.device, y.device),
                )
                if u != v
            ]
            if what:
                diffs.append(f"pair[{i}] differ in {', '.join(what)}")
        elif not (_is_int(x) and _is_int(y)):
            diffs.append(f"pair[{i}] differ in type: {_kind(x)} vs {_kind(y)}")
    if diffs:
        raise ArgumentError(
            f"Expected {lhs_name} and {rhs_name} to have same metadata but found:\n"
            + "\n".join(diffs)
        )


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _kind(x) -> str:
    if isinstance(x, Tensor):
        return f"Tensor{tuple(x.shape)} {x.dtype.name}"
    return type(x).__name__


# -- cond -------------------------------------------------------------------------------
def _detached(tree):
    leaves, spec = _flatten(tree)
    return _unflatten([x.detach().clone() if isinstance(x, Tensor) else x for x in leaves], spec)


def cond(pred, true_fn, false_fn, operands: tuple | list = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``
    (``torch.cond``). ``pred`` is a Python bool (then only the branch taken is
    called) or a one-element tensor; ``operands`` a tuple or list of (nested
    tuples, lists or dicts of) tensors. With a tensor ``pred`` both branches are
    called and must return the same structure of tensors (same shapes, dtypes,
    devices) or ints (which may differ):
    ``cond(x.sum() > 0, lambda x: x.cos(), lambda x: x.sin(), (x,))``."""
    if isinstance(pred, (bool, int, float)) and not isinstance(pred, Tensor):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise ArgumentError(f"Expected pred to be bool or tensor, but got {pred!r}.")
    if pred.numel() != 1:
        raise ArgumentError(
            f"Expected pred to be bool or single-element tensor, but got a tensor of shape "
            f"{tuple(pred.shape)}."
        )
    if not callable(true_fn) or not callable(false_fn):
        raise ArgumentError("Expect both branches to be callable.")
    leaves, _ = _flatten(operands) if isinstance(operands, (tuple, list)) else ([None], None)
    if not isinstance(operands, (tuple, list)) or not all(isinstance(t, Tensor) for t in leaves):
        raise ArgumentError(
            "Expect operands to be a tuple of possibly nested dict/list/tuple that only "
            f"consists of tensor leaves, but got {_describe(operands)}."
        )
    take = bool(pred.detach().reshape(()).item())
    chosen, other = (true_fn, false_fn) if take else (false_fn, true_fn)
    out = chosen(*operands)
    with no_grad():
        shadow = other(*_detached(operands))
    outs = (out, shadow) if take else (shadow, out)
    (t_leaves, t_spec), (f_leaves, f_spec) = _flatten(outs[0]), _flatten(outs[1])
    for name, lv in (("true_fn", t_leaves), ("false_fn", f_leaves)):
        bad = [x for x in lv if not (isinstance(x, Tensor) or _is_int(x))]
        if bad:
            raise ArgumentError(
                "Expected branches to return a possibly nested pytree of tensors or constant "
                f"ints; {name} returned a leaf of type {type(bad[0]).__name__}."
            )
    if t_spec != f_spec:
        raise ArgumentError(
            "Expected branches to return the same pytree structure; got "
            f"{_describe(outs[0])} from true_fn and {_describe(outs[1])} from false_fn."
        )
    _meta_diffs(t_leaves, f_leaves, "true_fn outputs", "false_fn outputs")
    return out


def _describe(tree) -> str:
    if isinstance(tree, Tensor):
        return _kind(tree)
    if isinstance(tree, (tuple, list)):
        inner = ", ".join(_describe(x) for x in tree)
        return (
            f"({inner},)"
            if isinstance(tree, tuple) and len(tree) == 1
            else (f"({inner})" if isinstance(tree, tuple) else f"[{inner}]")
        )
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in tree.items()) + "}"
    return repr(tree)


# -- while_loop ---------------------------------------------------------------------------
def _loop_test(pred) -> bool:
    if isinstance(pred, bool):
        return pred
    if isinstance(pred, Tensor) and pred.shape == () and pred.dtype.name == "bool":
        return bool(pred.item())
    raise ArgumentError(
        f"cond_fn must return a boolean scalar tensor or a boolean but got {_describe(pred)}"
    )


def while_loop(cond_fn, body_fn, carried_inputs: tuple | list) -> tuple:
    """``while cond_fn(*val): val = body_fn(*val)`` from ``val = carried_inputs``
    (``torch.while_loop``), returning the last ``val`` as a tuple (clones of the
    inputs when ``cond_fn`` is false at once). ``carried_inputs`` is a tuple or
    list of (nested tuples, lists or dicts of) tensors and ints; ``cond_fn``
    returns a 0-d bool tensor or a bool; ``body_fn`` returns the carried values'
    structure with unchanged shapes and dtypes: ``while_loop(lambda i, x: i < 3,
    lambda i, x: (i + 1, x * 2), (mlfuse.tensor(0), x))``."""
    if not callable(cond_fn) or not callable(body_fn):
        raise ArgumentError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise ArgumentError(
            f"carried_inputs must be a tuple or list but got {type(carried_inputs).__name__}"
        )
    leaves, spec = _flatten(carried_inputs)
    if not all(isinstance(x, Tensor) or _is_int(x) for x in leaves):
        raise ArgumentError(
            "Expect carried_inputs to be a tuple of possibly nested dict/list/tuple that only "
            f"consists of tensor or int leaves, but got {_describe(carried_inputs)}."
        )
    val = tuple(carried_inputs)
    if not _loop_test(cond_fn(*val)):
        return tuple(_unflatten([x.clone() if isinstance(x, Tensor) else x for x in leaves], spec))
    while True:
        out = body_fn(*val)
        if not isinstance(out, (tuple, list)):
            raise ArgumentError(
                f"body_fn should return a tuple (the carried values) but got {_describe(out)}"
            )
        out_leaves, out_spec = _flatten(out)
        if not _same_structure(out_spec, spec):
            if len(out) != len(val):
                raise ArgumentError(
                    "Expected body_fn_output and carried_inputs to have same number of outputs "
                    f"but got lhs:{len(out)} outputs and rhs:{len(val)} outputs"
                )
            raise ArgumentError(
                "Expected body_fn_output and carried_inputs to have the same structure, got "
                f"{_describe(out)} and {_describe(carried_inputs)}"
            )
        _meta_diffs(out_leaves, leaves, "body_fn_output", "carried_inputs")
        val = tuple(out)
        if not _loop_test(cond_fn(*val)):
            return val
