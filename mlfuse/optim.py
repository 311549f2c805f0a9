"""Optimizers: ``SGD`` (momentum, Nesterov, weight decay), ``Adam`` and ``AdamW``,
with PyTorch's update rules and names.

A step builds each parameter's update as lazy graph (under ``no_grad``) and
assigns it in place; the optimizer's state (momentum, moments, Adam's step
count) lives in buffers updated the same way. The numbers that change from
step to step reach the kernels as buffers, not constants: the learning rate
is a one-element buffer that setting ``opt.lr`` writes, and Adam's bias
corrections are computed on the device from its step count. So a schedule of
learning rates compiles nothing new, and a step captured by ``mlfuse.jit``
replays with the current learning rate::

    opt = mlfuse.optim.Adam(model.parameters(), lr=1e-3)
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        mlfuse.realize(loss, *opt.schedule_step())   # forward, backward, update: one schedule
        opt.lr = schedule(step)                        # no recompile

``opt.step()`` is ``mlfuse.realize(*opt.schedule_step())``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from mlfuse import dtypes, graph
from mlfuse.autograd import no_grad
from mlfuse.targets import get_target
from mlfuse.tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]


def _number(v, what: str, low: float = 0.0) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
        raise TypeError(f"{what} must be a number, got {type(v).__name__}")
    v = float(v)
    if not v >= low:
        raise ValueError(f"{what} must be >= {low}, got {v}")
    return v


def _write(t: Tensor, value: float) -> None:
    """Write ``value`` into the one-element buffer of realized ``t``, in place."""
    tgt = get_target(t.device)
    host = dtypes.to_storage(np.full(1, value, dtype=np.float64), t.dtype)
    tgt.copy(t.node.buffer, tgt.from_numpy(host))  # type: ignore[arg-type]


class Optimizer:
    """The base: the parameters (float leaves that require gradients), the
    learning rate ``lr`` (settable between steps), ``zero_grad`` and ``step``."""

    def __init__(self, params: Iterable[Tensor], lr: float) -> None:
        self.params: list[Tensor] = list(params)
        if not self.params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        for i, p in enumerate(self.params):
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__}: parameter {i} is not a Tensor")
            if not (p.requires_grad and p.is_leaf):
                raise ValueError(
                    f"{type(self).__name__}: parameter {i} {p.shape} is not a leaf that "
                    "requires grad (make it with requires_grad=True)"
                )
        self._scalars: dict[tuple, Tensor] = {}  # (name, dtype, device) -> its buffer
        self.lr = lr
        self.steps = 0

    @property
    def lr(self) -> float:
        """The learning rate of the next step (setting it writes the buffer the
        update kernels read)."""
        return self._lr

    @lr.setter
    def lr(self, value) -> None:
        self._lr = _number(value, f"{type(self).__name__}: lr")
        for (name, _, _), t in self._scalars.items():
            if name == "lr":
                _write(t, self._lr)

    def zero_grad(self) -> None:
        """Forget the parameters' gradients (``.grad`` becomes None)."""
        for p in self.params:
            p.grad = None

    def _lr_for(self, like: Tensor) -> Tensor:
        """The learning rate as a one-element buffer of ``like``'s dtype and
        device: a kernel argument, written in place when ``lr`` changes."""
        key = ("lr", like.dtype, like.device)
        t = self._scalars.get(key)
        if t is None:
            t = self._scalars[key] = Tensor(np.array(self._lr), like.dtype, like.device)
        return t

    def _state(self, p: Tensor) -> Tensor:
        """A zero buffer shaped like ``p`` (momentum, moments)."""
        return Tensor(np.zeros(p.shape), p.dtype, p.device)

    def schedule_step(self) -> list[Tensor]:
        """Build this step's updates (parameters and state, assigned in place)
        and return the tensors to realize (those and the gradients), for
        ``mlfuse.realize`` to run in one schedule with the loss:
        ``mlfuse.realize(loss, *opt.schedule_step())``."""
        self.steps += 1
        out: list[Tensor] = []
        with no_grad():
            for i, p in enumerate(self.params):
                g = p.grad
                if g is None:
                    continue
                if g.shape != p.shape:
                    raise ValueError(f"parameter {i}: gradient {g.shape}, parameter {p.shape}")
                out += self._update(i, p, g.detach().cast(p.dtype))
                # .grad still shows the gradient after the step (PyTorch's): realized
                # with it, it is stored before the parameter is overwritten in place
                out.append(g)
        return out

    def step(self) -> None:
        """Update the parameters from their gradients (realizes)."""
        todo = self.schedule_step()
        if todo:
            graph.realize([t.node for t in todo])

    def _update(self, i: int, p: Tensor, g: Tensor) -> list[Tensor]:
        raise NotImplementedError


class SGD(Optimizer):
    """Stochastic gradient descent with PyTorch's momentum (``b = momentum * b +
    (1 - dampening) * g``), optional Nesterov momentum and L2 weight decay:
    ``SGD(model.parameters(), lr=0.1, momentum=0.9)``."""

    def __init__(
        self,
        params: Iterable[Tensor],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ) -> None:
        super().__init__(params, lr)
        self.momentum = _number(momentum, "SGD: momentum")
        self.dampening = _number(dampening, "SGD: dampening")
        self.weight_decay = _number(weight_decay, "SGD: weight_decay")
        if nesterov and (self.momentum == 0 or self.dampening != 0):
            raise ValueError("SGD: Nesterov momentum needs a momentum and zero dampening")
        self.nesterov = bool(nesterov)
        self.buffers = [self._state(p) for p in self.params] if self.momentum else []

    def _update(self, i: int, p: Tensor, g: Tensor) -> list[Tensor]:
        if self.weight_decay:
            g = g + p * self.weight_decay
        out = [p]
        if self.momentum:
            b = self.buffers[i]
            # PyTorch starts the buffer at the first gradient
            first = self.steps == 1
            new = g if first else b * self.momentum + g * (1 - self.dampening)
            b.assign(new)
            out.append(b)
            g = g + new * self.momentum if self.nesterov else new
        p.assign(p - g * self._lr_for(p))
        return out


class Adam(Optimizer):
    """Adam (Kingma and Ba) with bias correction, PyTorch's ``eps`` placement and
    L2 ``weight_decay`` added to the gradient: ``Adam(params, lr=1e-3)``."""

    decoupled = False

    def __init__(
        self,
        params: Iterable[Tensor],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(params, lr)
        name = type(self).__name__
        if len(betas) != 2 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"{name}: betas must be two numbers in [0, 1), got {betas}")
        self.betas = (float(betas[0]), float(betas[1]))
        self.eps = _number(eps, f"{name}: eps")
        self.weight_decay = _number(weight_decay, f"{name}: weight_decay")
        self.m = [self._state(p) for p in self.params]
        self.v = [self._state(p) for p in self.params]
        # the step count, on each parameter device: the bias corrections are computed there
        self.t: dict[str, Tensor] = {}

    def schedule_step(self) -> list[Tensor]:
        self._counted: dict[str, Tensor] = {}
        out = super().schedule_step()
        return out + list(self.t.values())

    def _count(self, device: str) -> Tensor:
        """This step's number (1, 2, ...) on ``device``, counted in a buffer there."""
        if device not in self._counted:
            t = self.t.get(device)
            if t is None:
                t = self.t[device] = Tensor(np.zeros(()), dtypes.float32, device)
            t.assign(t + 1)
            self._counted[device] = t
        return self._counted[device]

    def _update(self, i: int, p: Tensor, g: Tensor) -> list[Tensor]:
        b1, b2 = self.betas
        t = self._count(p.device).cast(p.dtype)
        lr = self._lr_for(p)
        if self.weight_decay and not self.decoupled:
            g = g + p * self.weight_decay
        m, v = self.m[i], self.v[i]
        m.assign(m * b1 + g * (1 - b1))
        v.assign(v * b2 + g * g * (1 - b2))
        step = lr / (1 - b1**t)  # the learning rate with the first bias correction
        unbias = 1 / (1 - b2**t)
        base = p * (1 - lr * self.weight_decay) if self.decoupled else p
        p.assign(base - step * m / ((v * unbias).sqrt() + self.eps))
        return [p, m, v]


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before
    the Adam step; default 0.01, as PyTorch): ``AdamW(params, lr=1e-3)``."""

    decoupled = True

    def __init__(
        self,
        params: Iterable[Tensor],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay)
