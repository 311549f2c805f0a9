"""PyTorch's ``torch.utils.checkpoint``: :func:`checkpoint` and
:func:`checkpoint_sequential`, so that models written with activation
checkpointing port unchanged::

    from mlfuse.utils.checkpoint import checkpoint
    y = checkpoint(block, x, use_reentrant=False)

PyTorch's checkpointing drops a function's intermediate activations after the
forward pass and recomputes them in the backward pass, to save memory. mlfuse
is lazy: a tensor is a graph until it is realized, and the compiler plans the
buffers of the forward and backward kernels itself, so it has no eagerly
stored activations to drop. Computing the function once is therefore correct:
the values and gradients are those of calling it directly, and the random
draws in it (dropout) are made once, which is what ``preserve_rng_state=True``
guarantees in PyTorch.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Any

from mlfuse.tensor import Tensor

__all__ = [
    "CheckpointError",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
]

_DETERMINISM_CHECKS = ("default", "none")


class CheckpointError(RuntimeError):
    """PyTorch's error for a recomputation that differs from the forward pass
    (mlfuse never recomputes, so it never raises it)."""


def noop_context_fn():
    """The default ``context_fn``: two null contexts (forward, recomputation)."""
    return contextlib.nullcontext(), contextlib.nullcontext()


_debug_enabled: list[bool | None] = [None]


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Within it, ``checkpoint``'s ``debug`` is ``enabled`` (None: each call's own)."""
    saved = _debug_enabled[0]
    _debug_enabled[0] = enabled
    try:
        yield
    finally:
        _debug_enabled[0] = saved


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """PyTorch's switch for stopping a recomputation early; mlfuse does not
    recompute, so it changes nothing."""
    yield


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """The tensors of ``inputs`` detached, each requiring grad as it did;
    anything else as it is."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    """Warns, as PyTorch, when no tensor of ``inputs`` requires grad."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3
        )


def checkpoint(
    function: Callable,
    *args,
    use_reentrant: bool | None = None,
    context_fn: Callable | None = None,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    preserve_rng_state: bool = True,
    **kwargs,
):
    """``function(*args, **kwargs)``, PyTorch's activation checkpoint: the same
    result, and the same gradients as the direct call. mlfuse plans its own
    memory, so the function is computed once (see the module's notes).

    As in PyTorch:

    * ``use_reentrant`` should be passed; without it a warning, and the
      reentrant variant;
    * ``use_reentrant=True`` takes no keyword arguments for ``function``, no
      ``context_fn`` and no ``debug`` (ValueErrors); if no tensor argument
      requires grad (with grad mode on) it warns that gradients will be None and
      the result requires no grad, as PyTorch's reentrant variant gives;
    * ``use_reentrant=False`` passes ``**kwargs`` on and runs the function under
      the first of the two contexts ``context_fn()`` returns (the second is for a
      recomputation, which never happens); ``debug`` with a ``context_fn`` is an
      error;
    * ``determinism_check`` is ``"default"`` or ``"none"``.

    ``preserve_rng_state`` and ``early_stop`` change nothing: random draws in the
    function happen once.
    """
    if use_reentrant is None:
        warnings.warn(
            "mlfuse.utils.checkpoint: the use_reentrant parameter should be passed "
            "explicitly. use_reentrant=False is recommended; use_reentrant=True keeps the "
            "current default behavior. (PyTorch 2.9 and later raise an exception without it.)",
            stacklevel=2,
        )
        use_reentrant = True
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(
            f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, "
            f"but got {determinism_check}"
        )
    default_context = context_fn is None or context_fn is noop_context_fn
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        if not default_context or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        from mlfuse import is_grad_enabled, no_grad

        if is_grad_enabled() and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            check_backward_validity(args)
            # PyTorch's reentrant checkpoint records nothing to differentiate then
            with no_grad():
                return function(*args)
        return function(*args)
    debug_on = _debug_enabled[0] if _debug_enabled[0] is not None else debug
    if debug_on and not default_context:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    contexts = (context_fn or noop_context_fn)()
    if not isinstance(contexts, tuple) or len(contexts) != 2:
        raise TypeError(
            "checkpoint: context_fn must return a tuple of two context managers "
            f"(forward, recomputation), got {type(contexts).__name__}"
        )
    with contexts[0]:
        return function(*args, **kwargs)


def checkpoint_sequential(
    functions, segments: int, input, use_reentrant: bool | None = None, **kwargs
):  # noqa: A002
    """``functions`` (an ``nn.Sequential`` or a list of modules or functions)
    applied in order to ``input``, cut into ``segments`` runs of which all but
    the last go through :func:`checkpoint`: the same result and gradients as
    running them directly (see :func:`checkpoint`). Keyword arguments other
    than ``preserve_rng_state`` are a ValueError, as in PyTorch."""
    if use_reentrant is None:
        warnings.warn(
            "mlfuse.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
            "should be passed explicitly. use_reentrant=False is recommended; "
            "use_reentrant=True keeps the current default behavior. (PyTorch 2.9 and later "
            "raise an exception without it.)",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    from mlfuse.nn import Sequential

    if isinstance(functions, Sequential):
        functions = [functions[i] for i in range(len(functions))]
    else:
        functions = list(functions)
    if isinstance(segments, bool) or not isinstance(segments, int) or segments < 1:
        raise ValueError(
            f"checkpoint_sequential: segments must be a positive int, got {segments!r}"
        )
    if segments > len(functions):
        raise ValueError(
            f"checkpoint_sequential: {segments} segments of {len(functions)} functions; "
            "each segment needs at least one"
        )

    def run_function(start: int, end: int):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(  # noqa: A001
            run_function(start, end),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
    return run_function(end + 1, len(functions) - 1)(input)
