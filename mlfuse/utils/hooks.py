"""PyTorch's ``torch.utils.hooks.RemovableHandle``: what the ``register_*_hook``
methods of the optimizers return, ``handle.remove()`` taking the hook off::

    handle = opt.register_step_post_hook(lambda opt, args, kwargs: print("stepped"))
    handle.remove()
    with opt.register_step_pre_hook(hook):   # removed on leaving the block
        opt.step()
"""

from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict
from typing import Any

__all__ = ["RemovableHandle"]

_ids = itertools.count()


class RemovableHandle:
    """The handle of a hook kept in ``hooks_dict`` (an ``OrderedDict`` keyed by
    the handle's ``id``, held weakly); ``extra_dict`` (a dict or a list of them)
    loses the same key on removal: ``h = RemovableHandle(hooks); hooks[h.id] = fn;
    h.remove()``."""

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(_ids)
        extras = [extra_dict] if isinstance(extra_dict, dict) else list(extra_dict or ())
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        """Take the hook off (again: nothing): ``handle.remove()``."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(r() for r in self.extra_dict_ref))

    def __setstate__(self, state) -> None:
        global _ids
        hooks = state[0] if state[0] is not None else OrderedDict()  # a dead reference
        self.hooks_dict_ref = weakref.ref(hooks)
        self.id = state[1]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in (state[2] if len(state) > 2 else ()))
        nxt = next(_ids)
        _ids = itertools.count(max(nxt, self.id + 1))

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, type, value, tb) -> None:  # noqa: A002 - the protocol's names
        self.remove()
