"""Learning-rate schedules with PyTorch's names, arguments and values step by
step (``torch.optim.lr_scheduler``'s chainable rules, and its closed forms for
``step(epoch)``): ``LambdaLR``, ``MultiplicativeLR``, ``StepLR``,
``MultiStepLR``, ``ConstantLR``, ``LinearLR``, ``ExponentialLR``,
``PolynomialLR``, ``CosineAnnealingLR``, ``CosineAnnealingWarmRestarts``,
``CyclicLR``, ``OneCycleLR``, ``SequentialLR``, ``ChainedScheduler`` and
``ReduceLROnPlateau``.

A scheduler writes each parameter group's ``'lr'`` (and, for ``CyclicLR`` and
``OneCycleLR``, ``'momentum'`` or ``'betas'``); an mlfuse optimizer keeps those
in one-element buffers its compiled step reads, so stepping a schedule compiles
nothing new::

    opt = mlfuse.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = mlfuse.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=1000)
    for x, y in batches:
        ...
        opt.step()
        sched.step()
    sched.get_last_lr(), sched.last_epoch
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from mlfuse.optim import Optimizer

__all__ = [
    "LRScheduler",
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
]


def _optimizer(opt, who: str) -> Optimizer:
    if not isinstance(opt, Optimizer):
        raise TypeError(f"{who}: optimizer must be an mlfuse.optim.Optimizer, got {type(opt)}")
    return opt


def _count(v, what: str, low: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ValueError(f"{what} must be an integer >= {low}, got {v!r}")
    return v


def _real(v, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{what} must be a number, got {type(v).__name__}")
    return float(v)


def _per_group(opt: Optimizer, value, what: str) -> list:
    """``value`` for each parameter group (one value, or a list of one per group)."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(opt.param_groups):
            raise ValueError(
                f"{what} must have one value per parameter group ({len(opt.param_groups)}), "
                f"got {len(value)}"
            )
        return list(value)
    return [value] * len(opt.param_groups)


def _lrs(opt: Optimizer) -> list[float]:
    return [g["lr"] for g in opt.param_groups]


class LRScheduler:
    """The base: ``step()`` moves ``last_epoch`` on and writes each group's
    ``'lr'`` from ``get_lr()`` (PyTorch's chainable rule: from the groups'
    current values, so schedulers compose) or, given an epoch, from the closed
    form; ``get_last_lr()`` is the learning rates it wrote last. Constructing a
    scheduler records ``'initial_lr'`` in each group and takes the first step
    (``last_epoch`` 0)."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        who = type(self).__name__
        self.optimizer = _optimizer(optimizer, who)
        if last_epoch == -1:
            for g in optimizer.param_groups:
                g.setdefault("initial_lr", g["lr"])
        else:
            for i, g in enumerate(optimizer.param_groups):
                if "initial_lr" not in g:
                    raise KeyError(
                        f"{who}: parameter group {i} has no 'initial_lr' to resume from "
                        f"last_epoch={last_epoch} (load the optimizer's state dict first)"
                    )
        self.base_lrs: list[float] = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (PyTorch's)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[float]:
        """The learning rates the last ``step`` wrote, one per parameter group."""
        return self._last_lr

    def get_lr(self) -> list[float]:
        """The learning rates of the step ``last_epoch`` (chainable form)."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Move to the next epoch (or to ``epoch``, with the closed form) and
        write each group's learning rate."""
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for g, lr in zip(self.optimizer.param_groups, values):
            g["lr"] = lr
        self._last_lr = _lrs(self.optimizer)

    _is_initial = False


_LRScheduler = LRScheduler  # PyTorch's older name


class _LambdaState:
    def _lambdas(self, optimizer: Optimizer, lr_lambda, who: str) -> list[Callable[[int], float]]:
        fns = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else None
        if fns is None:
            fns = [lr_lambda] * len(optimizer.param_groups)
        elif len(fns) != len(optimizer.param_groups):
            raise ValueError(
                f"{who}: expected {len(optimizer.param_groups)} lr_lambdas (one per "
                f"parameter group), got {len(fns)}"
            )
        for f in fns:
            if not callable(f):
                raise TypeError(f"{who}: lr_lambda must be callable, got {type(f).__name__}")
        return fns

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's: functions are not saved, callable objects' attributes are."""
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = [
            None if isinstance(f, types.FunctionType) else f.__dict__.copy()
            for f in self.lr_lambdas  # type: ignore[attr-defined]
        ]
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        fns = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for f, d in zip(self.lr_lambdas, fns):  # type: ignore[attr-defined]
            if d is not None:
                f.__dict__.update(d)


class LambdaLR(_LambdaState, LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``: ``LambdaLR(opt, lambda e: 0.95 ** e)``
    (one function, or one per parameter group)."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        self.optimizer = _optimizer(optimizer, "LambdaLR")
        self.lr_lambdas = self._lambdas(optimizer, lr_lambda, "LambdaLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [b * f(self.last_epoch) for f, b in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """Each step multiplies the learning rate by ``lr_lambda(epoch)``:
    ``MultiplicativeLR(opt, lambda e: 0.95)``."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        self.optimizer = _optimizer(optimizer, "MultiplicativeLR")
        self.lr_lambdas = self._lambdas(optimizer, lr_lambda, "MultiplicativeLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return _lrs(self.optimizer)
        return [
            g["lr"] * f(self.last_epoch)
            for f, g in zip(self.lr_lambdas, self.optimizer.param_groups)
        ]


class StepLR(LRScheduler):
    """The learning rate times ``gamma`` every ``step_size`` epochs:
    ``StepLR(opt, step_size=30, gamma=0.1)``."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = _count(step_size, "StepLR: step_size", 1)
        self.gamma = _real(gamma, "StepLR: gamma")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _lrs(self.optimizer)
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """The learning rate times ``gamma`` at each milestone epoch:
    ``MultiStepLR(opt, milestones=[30, 80], gamma=0.1)``."""

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        ms = list(milestones)
        for m in ms:
            _count(m, "MultiStepLR: a milestone", 0)
        self.milestones = Counter(ms)
        self.gamma = _real(gamma, "MultiStepLR: gamma")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return _lrs(self.optimizer)
        k = self.milestones[self.last_epoch]
        return [g["lr"] * self.gamma**k for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        ms = sorted(self.milestones.elements())
        return [b * self.gamma ** bisect_right(ms, self.last_epoch) for b in self.base_lrs]


class ConstantLR(LRScheduler):
    """The learning rate times ``factor`` for the first ``total_iters`` epochs:
    ``ConstantLR(opt, factor=0.5, total_iters=4)``."""

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        factor = _real(factor, "ConstantLR: factor")
        if not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: factor must be in [0, 1], got {factor}")
        self.factor = factor
        self.total_iters = _count(total_iters, "ConstantLR: total_iters", 0)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _lrs(self.optimizer)
        return [g["lr"] * (1.0 / self.factor) for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        after = self.last_epoch >= self.total_iters
        return [b * (self.factor + after * (1 - self.factor)) for b in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor on the learning rate goes linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs (a warm-up):
    ``LinearLR(opt, start_factor=0.1, total_iters=10)``."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        start_factor = _real(start_factor, "LinearLR: start_factor")
        end_factor = _real(end_factor, "LinearLR: end_factor")
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = _count(total_iters, "LinearLR: total_iters", 1)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _lrs(self.optimizer)
        d = self.end_factor - self.start_factor
        f = 1.0 + d / (self.total_iters * self.start_factor + (self.last_epoch - 1) * d)
        return [g["lr"] * f for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        d = self.end_factor - self.start_factor
        e = min(self.total_iters, self.last_epoch)
        return [b * (self.start_factor + d * e / self.total_iters) for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """The learning rate times ``gamma`` every epoch: ``ExponentialLR(opt, gamma=0.9)``."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = _real(gamma, "ExponentialLR: gamma")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return _lrs(self.optimizer)
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [b * self.gamma**self.last_epoch for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """The learning rate decays as ``(1 - epoch / total_iters) ** power`` to 0
    at ``total_iters``: ``PolynomialLR(opt, total_iters=100, power=2.0)``."""

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = _count(total_iters, "PolynomialLR: total_iters", 1)
        self.power = _real(power, "PolynomialLR: power")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial or self.last_epoch > self.total_iters:
            return _lrs(self.optimizer)
        n, e = self.total_iters, self.last_epoch
        f = ((1.0 - e / n) / (1.0 - (e - 1) / n)) ** self.power
        return [g["lr"] * f for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        e = min(self.total_iters, self.last_epoch)
        return [b * (1.0 - e / self.total_iters) ** self.power for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial learning rate to ``eta_min`` over
    ``T_max`` epochs (and back up over the next ``T_max``, as PyTorch's):
    ``CosineAnnealingLR(opt, T_max=100)``."""

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = _count(T_max, "CosineAnnealingLR: T_max", 1)
        self.eta_min = _real(eta_min, "CosineAnnealingLR: eta_min")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _lrs(self.optimizer)
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / T)) / 2 for b in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [
                g["lr"] + (b - lo) * (1 - math.cos(math.pi / T)) / 2
                for b, g in zip(self.base_lrs, groups)
            ]
        f = (1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
        return [f * (g["lr"] - lo) + lo for g in groups]

    def _get_closed_form_lr(self) -> list[float]:
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        return [lo + (b - lo) * (1 + math.cos(math.pi * e / T)) / 2 for b in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every ``T_i`` epochs, the first period ``T_0``
    and each next one ``T_mult`` times longer (SGDR):
    ``CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=2)``. ``step(epoch)``
    takes fractional epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        self.T_0 = _count(T_0, "CosineAnnealingWarmRestarts: T_0", 1)
        self.T_i = T_0
        self.T_mult = _count(T_mult, "CosineAnnealingWarmRestarts: T_mult", 1)
        self.eta_min = _real(eta_min, "CosineAnnealingWarmRestarts: eta_min")
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        c = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (b - self.eta_min) * c for b in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"CosineAnnealingWarmRestarts: epoch must be >= 0, got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        for g, lr in zip(self.optimizer.param_groups, self.get_lr()):
            g["lr"] = lr
        self._last_lr = _lrs(self.optimizer)


def _momentum_key(opt: Optimizer, who: str) -> bool:
    """Whether the optimizer's momentum is ``betas[0]`` (else ``momentum``)."""
    if "momentum" not in opt.defaults and "betas" not in opt.defaults:
        raise ValueError(
            f"{who}: cycle_momentum needs an optimizer with a momentum or betas "
            "(or pass cycle_momentum=False)"
        )
    return "betas" in opt.defaults


def _set_momentum(group, use_beta1: bool, value: float) -> None:
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


class CyclicLR(LRScheduler):
    """Cyclical learning rates between ``base_lr`` and ``max_lr`` (modes
    ``triangular``, ``triangular2``, ``exp_range`` or a ``scale_fn``), the
    momentum cycled inversely: ``CyclicLR(opt, 0.001, 0.1, step_size_up=200)``.
    Steps once per batch."""

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr,
        max_lr,
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum=0.8,
        max_momentum=0.9,
        last_epoch: int = -1,
    ) -> None:
        who = "CyclicLR"
        self.optimizer = _optimizer(optimizer, who)
        base_lrs = _per_group(optimizer, base_lr, f"{who}: base_lr")
        if last_epoch == -1:
            for lr, g in zip(base_lrs, optimizer.param_groups):
                g["lr"] = lr
        self.max_lrs = _per_group(optimizer, max_lr, f"{who}: max_lr")
        up = float(_count(step_size_up, f"{who}: step_size_up", 1))
        down = (
            up
            if step_size_down is None
            else float(_count(step_size_down, f"{who}: step_size_down", 0))
        )
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(
                f"{who}: mode must be 'triangular', 'triangular2' or 'exp_range' (or give "
                f"a scale_fn), got {mode!r}"
            )
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(
                f"{who}: scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}"
            )
        self.mode, self.gamma = mode, float(gamma)
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum:
            self.use_beta1 = _momentum_key(optimizer, who)
            self.base_momentums = _per_group(optimizer, base_momentum, f"{who}: base_momentum")
            self.max_momentums = _per_group(optimizer, max_momentum, f"{who}: max_momentum")
            if last_epoch == -1:
                for mx, b, g in zip(
                    self.max_momentums, self.base_momentums, optimizer.param_groups
                ):
                    _set_momentum(g, self.use_beta1, mx)
                    g["max_momentum"] = mx
                    g["base_momentum"] = b
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref: Callable[[float], float] = lambda x: 1.0
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = lambda x: 1 / (2.0 ** (x - 1))
            self.scale_mode = "cycle"
        else:
            gamma = self.gamma
            self._scale_fn_ref = lambda x: gamma**x
            self.scale_mode = "iterations"

    def scale_fn(self, x) -> float:
        f = self._scale_fn_custom if self._scale_fn_custom is not None else self._scale_fn_ref
        return f(x)

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale = x / self.step_ratio
        else:
            scale = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [
            b + (mx - b) * scale * self.scale_fn(at) for b, mx in zip(self.base_lrs, self.max_lrs)
        ]
        if self.cycle_momentum:
            for b, mx, g in zip(
                self.base_momentums, self.max_momentums, self.optimizer.param_groups
            ):
                _set_momentum(g, self.use_beta1, mx - (mx - b) * scale * self.scale_fn(at))
        return lrs

    def state_dict(self) -> dict[str, Any]:
        out = super().state_dict()
        out.pop("_scale_fn_ref", None)
        fn = out.pop("_scale_fn_custom")
        out["_scale_fn_custom"] = (
            fn.__dict__.copy()
            if fn is not None and not isinstance(fn, types.FunctionType)
            else None
        )
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the learning rate from ``max_lr / div_factor`` up to
    ``max_lr`` over ``pct_start`` of ``total_steps``, then down to
    ``initial_lr / final_div_factor`` (``anneal_strategy`` "cos" or "linear";
    ``three_phase`` comes back to the initial rate before the final decay), the
    momentum cycled inversely between ``max_momentum`` and ``base_momentum``:
    ``OneCycleLR(opt, max_lr=0.1, total_steps=1000)``. Steps once per batch."""

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr,
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        who = "OneCycleLR"
        self.optimizer = _optimizer(optimizer, who)
        if total_steps is not None:
            self.total_steps = _count(total_steps, f"{who}: total_steps", 1)
        elif epochs is not None and steps_per_epoch is not None:
            e = _count(epochs, f"{who}: epochs", 1)
            self.total_steps = e * _count(steps_per_epoch, f"{who}: steps_per_epoch", 1)
        else:
            raise ValueError(f"{who}: give total_steps, or epochs and steps_per_epoch")
        if (
            isinstance(pct_start, bool)
            or not isinstance(pct_start, float)
            or not 0 <= pct_start <= 1
        ):
            raise ValueError(f"{who}: pct_start must be a float in [0, 1], got {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"{who}: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}"
            )
        self._anneal_func_type = anneal_strategy
        n = self.total_steps
        up_end = float(pct_start * n) - 1
        if three_phase:
            self._schedule_phases = [
                dict(end_step=up_end, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=float(2 * pct_start * n) - 2, start_lr="max_lr",
                     end_lr="initial_lr", start_momentum="base_momentum",
                     end_momentum="max_momentum"),
                dict(end_step=n - 1, start_lr="initial_lr", end_lr="min_lr",
                     start_momentum="max_momentum", end_momentum="max_momentum"),
            ]  # fmt: skip
        else:
            self._schedule_phases = [
                dict(end_step=up_end, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=n - 1, start_lr="max_lr", end_lr="min_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum"),
            ]  # fmt: skip
        max_lrs = _per_group(optimizer, max_lr, f"{who}: max_lr")
        if last_epoch == -1:
            for mx, g in zip(max_lrs, optimizer.param_groups):
                g["initial_lr"] = mx / div_factor
                g["max_lr"] = mx
                g["min_lr"] = g["initial_lr"] / final_div_factor
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum:
            self.use_beta1 = _momentum_key(optimizer, who)
            mxs = _per_group(optimizer, max_momentum, f"{who}: max_momentum")
            bs = _per_group(optimizer, base_momentum, f"{who}: base_momentum")
            if last_epoch == -1:
                for mx, b, g in zip(mxs, bs, optimizer.param_groups):
                    _set_momentum(g, self.use_beta1, mx)
                    g["max_momentum"] = mx
                    g["base_momentum"] = b
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"OneCycleLR: stepped {step} times, more than total_steps={self.total_steps}"
            )
        lrs = []
        for g in self.optimizer.param_groups:
            start = 0.0
            for i, ph in enumerate(self._schedule_phases):
                end = ph["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = self._anneal(g[ph["start_lr"]], g[ph["end_lr"]], pct)
                    if self.cycle_momentum:
                        mom = self._anneal(g[ph["start_momentum"]], g[ph["end_momentum"]], pct)
                    break
                start = ph["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                _set_momentum(g, self.use_beta1, mom)
        return lrs


class SequentialLR(LRScheduler):
    """Schedulers one after another, switching at the ``milestones`` epochs:
    ``SequentialLR(opt, [LinearLR(opt, 0.1, total_iters=5), CosineAnnealingLR(opt,
    T_max=95)], milestones=[5])``."""

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: Sequence[LRScheduler],
        milestones: Sequence[int],
        last_epoch: int = -1,
    ) -> None:
        who = "SequentialLR"
        _optimizer(optimizer, who)
        if len(schedulers) < 1:
            raise ValueError(f"{who}: give at least one scheduler")
        for i, s in enumerate(schedulers):
            if isinstance(s, ReduceLROnPlateau):
                raise ValueError(
                    f"{who}: scheduler {i} is a ReduceLROnPlateau, whose step needs a metric"
                )
            if getattr(s, "optimizer", None) is not optimizer:
                raise ValueError(f"{who}: scheduler {i} belongs to another optimizer")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"{who}: {len(schedulers)} schedulers need {len(schedulers) - 1} milestones, "
                f"got {len(milestones)}"
            )
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # undo the schedulers' initial steps, then take the first one's again
        for g in optimizer.param_groups:
            g["lr"] = g["initial_lr"]
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = self._schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Take one off the ``last_epoch`` of each scheduler, nested ones too."""
        s = self if sched is None else sched
        if hasattr(s, "_schedulers"):
            for sub in s._schedulers:
                self.recursive_undo(sub)
        elif hasattr(s, "last_epoch"):
            s.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        s = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            s._update_lr(0)
        else:
            s.step()
        self._last_lr = s.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        subs = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for s, d in zip(self._schedulers, subs):
            s.load_state_dict(d)


class ChainedScheduler(LRScheduler):
    """Several schedulers stepped together, each from the learning rates the
    previous one wrote: ``ChainedScheduler([ConstantLR(opt, 0.1, 2),
    ExponentialLR(opt, 0.9)])``."""

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        who = "ChainedScheduler"
        if len(schedulers) < 1:
            raise ValueError(f"{who}: give at least one scheduler")
        optimizer = optimizer or schedulers[0].optimizer
        for i, s in enumerate(schedulers):
            if isinstance(s, ReduceLROnPlateau):
                raise ValueError(
                    f"{who}: scheduler {i} is a ReduceLROnPlateau, whose step needs a metric"
                )
            if getattr(s, "optimizer", None) is not optimizer:
                raise ValueError(f"{who}: scheduler {i} belongs to another optimizer")
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = _lrs(optimizer)

    def step(self) -> None:  # type: ignore[override]
        for s in self._schedulers:
            s.step()
        self._last_lr = _lrs(self.optimizer)

    state_dict = SequentialLR.state_dict
    load_state_dict = SequentialLR.load_state_dict


class ReduceLROnPlateau(LRScheduler):
    """The learning rate times ``factor`` when a metric has not improved for
    ``patience`` epochs (``mode`` "min" or "max", improvement by ``threshold``,
    relative or absolute), then ``cooldown`` epochs of rest, never below
    ``min_lr``: ``sched.step(val_loss)``."""

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr=0,
        eps: float = 1e-8,
    ) -> None:
        who = "ReduceLROnPlateau"
        factor = _real(factor, f"{who}: factor")
        if factor >= 1.0:
            raise ValueError(f"{who}: factor must be < 1, got {factor}")
        self.factor = factor
        self.optimizer = _optimizer(optimizer, who)
        if isinstance(min_lr, (list, tuple)):
            self.default_min_lr = None
            self.min_lrs = _per_group(optimizer, min_lr, f"{who}: min_lr")
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = _count(patience, f"{who}: patience", 0)
        self.cooldown = _count(cooldown, f"{who}: cooldown", 0)
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _lrs(optimizer)
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None) -> None:  # type: ignore[override]
        """Record this epoch's ``metrics`` (a number, or a one-element tensor)."""
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _lrs(self.optimizer)

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"ReduceLROnPlateau: the optimizer has {len(groups)} parameter groups, "
                    f"min_lr gave {len(self.min_lrs)}"
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for i, g in enumerate(groups):
            old = float(g["lr"])
            new = max(old * self.factor, self.min_lrs[i])
            if old - new > self.eps:
                g["lr"] = new

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}"
            )
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
