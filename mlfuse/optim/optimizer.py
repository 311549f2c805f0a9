"""PyTorch's ``torch.optim.optimizer``: the hooks every optimizer's ``step``
runs, :func:`register_optimizer_step_pre_hook` and
:func:`register_optimizer_step_post_hook` (``Optimizer`` itself is
``mlfuse.optim.Optimizer``, also reachable here)::

    def log(opt, args, kwargs):
        print(type(opt).__name__, "stepped")

    handle = mlfuse.optim.optimizer.register_optimizer_step_post_hook(log)
    ...
    handle.remove()

A global pre hook runs before each optimizer's own pre hooks, a global post hook
after its own post hooks, as in PyTorch.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from mlfuse.utils.hooks import RemovableHandle

__all__ = [
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
]

_global_optimizer_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable] = OrderedDict()


def _checked(hook, what: str) -> Callable:
    if not callable(hook):
        raise TypeError(f"{what}: the hook must be callable, got {type(hook).__name__}")
    return hook


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``
    (before the optimizer's own pre hooks); it may return ``(new_args,
    new_kwargs)`` for the step: ``h = register_optimizer_step_pre_hook(fn)``."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = _checked(hook, "register_optimizer_step_pre_hook")
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``
    (after the optimizer's own post hooks):
    ``h = register_optimizer_step_post_hook(fn)``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = _checked(hook, "register_optimizer_step_post_hook")
    return handle


def __getattr__(name: str):
    if name == "Optimizer":  # defined in mlfuse.optim, which imports this module
        from mlfuse.optim import Optimizer

        return Optimizer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
