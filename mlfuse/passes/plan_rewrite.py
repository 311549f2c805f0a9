"""What the plan-rewriting passes share: apply a rewrite to every kernel's plan, checked."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.dialects import kernel
from mlfuse.loop_nest import LoopPlan


def rewrite_plans(
    pass_name: str, module: ModuleOp, rewrite: Callable[[kernel.FuncOp, LoopPlan], LoopPlan]
) -> None:
    """Replace each ``kernel.func``'s plan by ``rewrite(kernel, plan)``; a rewrite that
    fails, or yields a plan the kernel cannot run, is an error naming the kernel."""
    for k in [op for op in module.ops if isinstance(op, kernel.FuncOp)]:
        name = f"{pass_name}: @{k.sym_name.data}"
        try:
            plan = rewrite(k, k.loop_plan)
        except ValueError as e:
            raise DiagnosticException(f"{name}: {e}") from None
        why = kernel.plan_problems(k, plan)
        if why is not None:
            raise DiagnosticException(f"{name}: the plan would be {plan}: {why}")
        k.plan = kernel.PlanAttr(plan)
