"""lazy-autodiff: a lazy-dialect function that also returns its gradients.

Each ``func.func`` of lazy ops gets, after its results, the gradient of its
first result with respect to each of its float tensor arguments, in argument
order (a result of more than one element is differentiated as its sum; an
argument it does not depend on gets zeros)::

    func.func @f(%x: tensor<4xf32>) -> tensor<f32>          // sum(exp(x))
    // becomes
    func.func @f(%x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)  // ..., exp(x)

The rules are :data:`mlfuse.autograd.GRADIENTS`, the front end's own: the
function's ops become graph nodes (:func:`mlfuse.graph.node_form`), the
gradients are built on them as ``loss.backward()`` builds them, and the new
nodes become lazy ops again. The backward ops are ordinary lazy IR, for the
rest of the pipeline to fuse; run the pass before ``lazy-canonicalize``
(which folds movement ops into ``lazy.view``, which has no graph form).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mlfuse import autograd, dtypes, graph
from mlfuse.dialects import lazy
from mlfuse.graph import LEAF, Node
from mlfuse.targets import device_name
from mlfuse.utils import postorder


def differentiate(f: func.FuncOp) -> None:
    """Append the gradients of ``f``'s first result to its results (in place)."""
    from mlfuse.tensor import Tensor

    name = f"lazy-autodiff: @{f.sym_name.data}"
    block = f.body.block
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp) or not ret.operands:
        raise DiagnosticException(f"{name}: the function returns nothing to differentiate")
    loss = ret.operands[0]
    if not isinstance(loss.type, TensorType) or not lazy.is_float(lazy.element_of(loss)):
        raise DiagnosticException(
            f"{name}: the first result must be a float tensor, got {loss.type}"
        )
    device = device_name(None)
    node_of: dict[SSAValue, Node] = {}
    params: list[Node] = []
    with autograd.enable_grad():
        for i, a in enumerate(block.args):
            if not isinstance(a.type, TensorType):
                raise DiagnosticException(f"{name}: argument {i} is not a tensor ({a.type})")
            dt = dtypes.from_ir(lazy.element_of(a))
            n = Node("param", (), i, lazy.shape_of(a), dt, device)  # a placeholder: never run
            if dt.is_float:
                n.tape = LEAF
                params.append(n)
            node_of[a] = n
        for op in block.ops:
            if op is ret:
                break
            try:
                kind, arg = graph.node_form(op)
            except ValueError as e:
                raise DiagnosticException(f"{name}: {e}") from None
            r = op.results[0]
            node_of[r] = graph.make(
                kind,
                [node_of[o] for o in op.operands],
                arg,
                lazy.shape_of(r),
                dtypes.from_ir(lazy.element_of(r)),
                arg if kind == "copy" else device if kind == "const" else None,
            )
        root = node_of[loss]
        if root.tape is None:
            grads: dict[int, Tensor] = {}
        else:
            seed = Tensor.ones(*root.shape, dtype=root.dtype, device=device)
            try:
                grads = autograd.gradients(root, seed, params)
            except (ValueError, TypeError, RuntimeError) as e:
                raise DiagnosticException(f"{name}: {e}") from None
        outs = [grads[id(p)] if id(p) in grads else Tensor.zeros_like(Tensor(p)) for p in params]
    value: dict[int, SSAValue] = {id(n): v for v, n in node_of.items()}
    new = postorder([t.node for t in outs], lambda n: () if id(n) in value else n.srcs)
    emitted = []
    for n in new:
        if id(n) in value:
            continue
        if n.op in ("detach", "derivative"):
            value[id(n)] = value[id(n.srcs[0])]
            continue
        op = graph._op(n, [value[id(s)] for s in n.srcs])
        emitted.append(op)
        value[id(n)] = op.results[0]
    Rewriter.insert_op(emitted, InsertPoint.before(ret))
    results = [*ret.operands, *(value[id(t.node)] for t in outs)]
    Rewriter.replace_op(ret, func.ReturnOp(*results))
    f.function_type = FunctionType.from_lists(
        list(f.function_type.inputs.data), [v.type for v in results]
    )


@dataclass(frozen=True)
class LazyAutodiff(ModulePass):
    """Append to each function's results the gradients of its first result with
    respect to its float arguments."""

    name = "lazy-autodiff"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            differentiate(f)
