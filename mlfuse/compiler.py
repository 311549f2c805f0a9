"""PyTorch's ``torch.compiler``: the questions and markers model code asks of
``torch.compile``. mlfuse compiles every program it runs (``mlfuse.compile``
returns the model as it is), so nothing is ever "being compiled" by a tracer:
``is_compiling()`` is False and the markers return what they mark."""

from __future__ import annotations

__all__ = [
    "is_compiling", "is_dynamo_compiling", "disable", "allow_in_graph",
    "assume_constant_result", "reset", "cudagraph_mark_step_begin",
]  # fmt: skip


def is_compiling() -> bool:
    """False: no tracer runs the code (see the module's documentation)."""
    return False


is_dynamo_compiling = is_compiling


def disable(fn=None, recursive: bool = True, *, reason: str | None = None):
    """``@torch.compiler.disable``: the function itself (also as a decorator factory)."""
    if fn is None:
        return lambda f: f
    return fn


def allow_in_graph(fn):
    """The function itself."""
    return fn


def assume_constant_result(fn):
    """The function itself."""
    return fn


def reset() -> None:
    """Nothing to forget: compiled kernels stay cached by their text."""


def cudagraph_mark_step_begin() -> None:
    """Nothing to mark: mlfuse replays captured programs with ``mlfuse.jit``."""
