"""Stochastic Weight Averaging and exponential moving averages of weights, with
PyTorch's names, arguments and behaviour (``torch.optim.swa_utils``):
``AveragedModel``, ``SWALR``, ``update_bn`` and the averaging functions
``get_swa_avg_fn``, ``get_ema_avg_fn``, ``get_swa_multi_avg_fn`` and
``get_ema_multi_avg_fn``::

    swa_model = mlfuse.optim.swa_utils.AveragedModel(model)
    swa_sched = mlfuse.optim.swa_utils.SWALR(opt, swa_lr=0.05)
    for epoch in range(epochs):
        for x, y in loader:
            ...
            opt.step()
        if epoch >= swa_start:
            swa_model.update_parameters(model)   # the running mean, in place
            swa_sched.step()                     # writes the lr buffers: no recompile
    update_bn(loader, swa_model)                 # batch-norm statistics of the average

An update of the averaged weights is built as lazy graph under ``no_grad``,
assigned in place into the averaged model's own tensors (they stay the same
objects) and realized as one schedule. The number of models averaged
(``n_averaged``) is a buffer on the device that the update reads, so updating
again compiles nothing new.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from copy import deepcopy
from typing import Any

import numpy as np

from mlfuse.autograd import no_grad
from mlfuse.nn.modules import Module, _BatchNorm
from mlfuse.optim import Optimizer
from mlfuse.optim.lr_scheduler import LRScheduler, _optimizer
from mlfuse.tensor import Tensor, realize

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]

PARAM_LIST = Sequence[Tensor]


def _check_decay(decay) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def _weight(n, like: Tensor) -> Tensor | float:
    """``1 / (n + 1)``, the weight of the newest model in an equal average of
    ``n + 1``: a number for an int ``n``, else computed on the device in the
    dtype of ``like`` (so a count that changes compiles nothing new)."""
    if isinstance(n, Tensor):
        return 1.0 / (n.to(like.device).cast(like.dtype) + 1)
    return 1.0 / (n + 1)


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """An averaging function for ``AveragedModel(multi_avg_fn=...)``: the
    exponential moving average ``W_ema <- decay * W_ema + (1 - decay) * W_model``
    of lists of tensors, updated in place (``decay`` in [0, 1], default 0.999):
    ``AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.99))``."""
    _check_decay(decay)

    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _) -> None:
        with no_grad():
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                if p_ema.dtype.is_float:
                    p_ema.copy_(p_ema.lerp(p_model, 1 - decay))
                else:
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """An averaging function for ``AveragedModel(multi_avg_fn=...)``: the equal
    average (SWA) of lists of tensors, updated in place; given the number of
    models already averaged ``n`` (an int or a tensor),
    ``W_avg <- W_avg + (W_model - W_avg) / (n + 1)``."""

    def swa_update(
        averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST, num_averaged
    ) -> None:
        with no_grad():
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                if p_avg.dtype.is_float:
                    p_avg.copy_(p_avg.lerp(p_model, _weight(num_averaged, p_avg)))
                else:
                    p_avg.copy_(p_avg + (p_model - p_avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """An averaging function for ``AveragedModel(avg_fn=...)``: the exponential
    moving average of one tensor, ``decay * W_ema + (1 - decay) * W_model``
    returned (``decay`` in [0, 1], default 0.999):
    ``AveragedModel(model, avg_fn=get_ema_avg_fn(0.99))``."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """An averaging function for ``AveragedModel(avg_fn=...)``: the equal average
    (SWA) of one tensor, ``W_avg + (W_model - W_avg) / (n + 1)`` returned, ``n``
    the number of models already averaged (an int or a tensor)."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_device_dtype(pairs: list[tuple[Tensor, Tensor]]) -> dict[tuple, list]:
    groups: dict[tuple, list[tuple[Tensor, Tensor]]] = {}
    for a, m in pairs:
        groups.setdefault((a.device, a.dtype), []).append((a, m))
    return groups


class AveragedModel(Module):
    """A running average of a model's weights, PyTorch's ``AveragedModel``: for
    Stochastic Weight Averaging (the default, an equal average) or an
    exponential moving average (``multi_avg_fn=get_ema_multi_avg_fn(decay)``).

    It holds a deep copy of ``model`` as ``.module`` (moved to ``device`` if
    given) and the buffer ``n_averaged`` (int64, the number of models averaged);
    calling it calls the copy. ``update_parameters(model)`` copies the model's
    parameters the first time and averages them in afterwards: with
    ``multi_avg_fn(averaged_list, model_list, n_averaged)``, which updates the
    averaged tensors in place (called once per device and dtype), or with
    ``avg_fn(averaged, model_param, n_averaged)``, which returns the new value
    of one tensor (only one of the two may be given). With ``use_buffers`` the
    buffers are averaged too; without, they are copied from ``model``.

    The averaged tensors keep their identity (updated in place, no gradient
    recorded); ``avg_fn`` and ``multi_avg_fn`` are not in ``state_dict()``::

        ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
        ema.update_parameters(model)
        y = ema(x)
    """

    def __init__(
        self,
        model: Module,
        device: int | str | None = None,
        avg_fn: Callable[[Tensor, Tensor, Tensor | int], Tensor] | None = None,
        multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Tensor | int], None] | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        dev = (
            f"cuda:{device}" if isinstance(device, int) and not isinstance(device, bool) else device
        )
        if dev is not None:
            self.module = self.module.to(dev)
        self.register_buffer("n_averaged", Tensor(np.zeros((), np.int64), device=dev))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Call the averaged copy of the model: ``swa_model(x)``."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current parameters (and buffers, with
        ``use_buffers``) into this model's, in place; the first call copies
        them. Increments ``n_averaged``."""
        if self.use_buffers:
            mine = [*self.module.parameters(), *self.module.buffers()]
            theirs = [*model.parameters(), *model.buffers()]
        else:
            mine, theirs = list(self.parameters()), list(model.parameters())
        n = self.n_averaged
        first = int(n.item()) == 0
        with no_grad():
            pairs = [(a, m.detach().to(a.device)) for a, m in zip(mine, theirs)]
            if first:
                for a, m in pairs:
                    a.copy_(m)
            elif self.multi_avg_fn is not None or self.avg_fn is None:
                for (device, _), group in _group_by_device_dtype(pairs).items():
                    avgs, models = [a for a, _ in group], [m for _, m in group]
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(avgs, models, n.to(device))
                    elif device.split(":")[0] != "cpu":  # PyTorch's foreach (lerp) path
                        get_swa_multi_avg_fn()(avgs, models, n.to(device))
                    else:
                        fn = get_swa_avg_fn()
                        for a, m in group:
                            a.copy_(fn(a, m, n.to(device)))
            else:
                for a, m in pairs:
                    a.copy_(self.avg_fn(a.detach(), m, n.to(a.device)))
            if not self.use_buffers:
                # buffers not averaged follow the source model
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.copy_(b_model.detach().to(b_swa.device))
            n.assign(n + 1)
        realize(*mine, *self.module.buffers(), n)


def update_bn(loader: Iterable[Any], model: Module, device: int | str | None = None) -> None:
    """Recompute the running statistics of every batch norm in ``model`` with
    one pass over ``loader``, PyTorch's ``update_bn``: the statistics are reset,
    then each batch (a tensor, or a list/tuple whose first item is the input;
    moved to ``device`` if given) goes through the model in training mode with
    the cumulative average (PyTorch's ``momentum=None``: the batch ``k`` is
    weighted ``1/k``), so each running statistic ends as the mean of the
    batches' (the variance: of their unbiased variances). The layers' momenta
    and the model's training mode are restored afterwards:
    ``update_bn(train_loader, swa_model)``."""
    with no_grad():
        momenta: dict[Module, Any] = {}
        for m in model.modules():
            if isinstance(m, _BatchNorm):
                m.reset_running_stats()
                momenta[m] = m.momentum
                m.momentum = None  # cumulative averages
        if not momenta:
            return
        dev = (
            f"cuda:{device}" if isinstance(device, int) and not isinstance(device, bool) else device
        )
        was_training = model.training
        model.train()
        stats = [
            t
            for m in momenta
            for t in (m.running_mean, m.running_var, m.num_batches_tracked)
            if t is not None
        ]
        try:
            for batch in loader:
                if isinstance(batch, (list, tuple)):
                    batch = batch[0]
                if dev is not None:
                    batch = batch.to(dev)
                model(batch)
                realize(*stats)  # one batch at a time: the graph does not grow
        finally:
            for m, mom in momenta.items():
                m.momentum = mom
            model.train(was_training)


def _format_param(name: str, optimizer: Optimizer, param) -> list:
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has "
                f"{len(optimizer.param_groups)}."
            )
        return list(param)
    return [param] * len(optimizer.param_groups)


class SWALR(LRScheduler):
    """Anneals each parameter group's learning rate to a fixed ``swa_lr`` (one
    number, or one per group) over ``anneal_epochs`` steps, then keeps it there,
    PyTorch's ``SWALR``: ``anneal_strategy`` ``"cos"`` (``alpha = (1 - cos(pi
    t)) / 2``) or ``"linear"`` (``alpha = t``), ``t = step / anneal_epochs``
    capped at 1, ``lr = swa_lr * alpha + lr_start * (1 - alpha)``. It records
    ``'swa_lr'`` in each group; stepping writes the optimizer's learning-rate
    buffers, so nothing recompiles::

        swa_sched = SWALR(opt, swa_lr=0.05, anneal_epochs=5, anneal_strategy="linear")
        swa_sched.step()
    """

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | Sequence[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        swa_lrs = _format_param("swa_lr", _optimizer(optimizer, "SWALR"), swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        # the learning rate the anneal started from, given the one it reached at alpha
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def _alpha(self, step: int) -> float:
        return self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))

    def get_lr(self) -> list[float]:
        """The learning rates of the current step (chainable form): each group's
        start value, recovered from its current ``'lr'``, moved towards its
        ``'swa_lr'`` by the anneal; ``'swa_lr'`` once ``anneal_epochs`` are done."""
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha, alpha = self._alpha(step - 1), self._alpha(step)
        groups = self.optimizer.param_groups
        return [
            g["swa_lr"] * alpha
            + self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) * (1 - alpha)
            for g in groups
        ]

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state: everything but the optimizer and the anneal
        function (PyTorch's)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict()`` saved (the anneal function from its strategy)."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
