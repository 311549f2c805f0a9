"""Optimizers with PyTorch's update rules, argument names and API: ``SGD``
(momentum, Nesterov, weight decay), ``Adam`` and ``AdamW`` (``amsgrad``),
``RMSprop``, ``Adagrad``, ``Adadelta``, ``Adamax``, ``NAdam``, ``RAdam``,
``Rprop``, ``ASGD``, ``Adafactor`` and ``LBFGS`` (driven by a closure), and
tinygrad's ``LAMB``, ``LARS`` and ``OptimizerGroup``; learning-rate schedules are
in ``mlfuse.optim.lr_scheduler``.

A step builds each parameter's update as lazy graph (under ``no_grad``) and
assigns it in place; the optimizer's state (momentum, moments, step counts)
lives in buffers updated the same way. The numbers that can change from step to
step reach the kernels as buffers, not constants: every hyperparameter the
update reads (``lr``, ``momentum``, ``betas``, ``weight_decay``, ``eps``...) is
a one-element buffer that setting it writes, and what depends on the step
(bias corrections, NAdam's momentum product) is computed on the device from
step counts kept there. So a schedule of learning rates, or of momenta,
compiles nothing new, and a step captured by ``mlfuse.jit`` replays with the
current values::

    opt = mlfuse.optim.AdamW(model.parameters(), lr=1e-3)
    sched = mlfuse.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=1000)
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        mlfuse.realize(loss, *opt.schedule_step())   # forward, backward, update: one schedule
        sched.step()                                   # writes the lr buffer: no recompile

``opt.step()`` is ``mlfuse.realize(*opt.schedule_step())``. As in PyTorch,
``params`` may be tensors, ``(name, tensor)`` pairs or dicts of parameter
groups (``[{"params": decay}, {"params": no_decay, "weight_decay": 0.0}]``),
each group a dict in ``opt.param_groups`` whose values can be set between steps
(``opt.param_groups[0]["lr"] = 0.01``; ``opt.lr = 0.01`` sets every group's);
``opt.state[p]`` holds a parameter's state under PyTorch's names, and
``state_dict()`` / ``load_state_dict()`` save and restore it (PyTorch's layout:
a torch optimizer's state dict loads). A switch that changes the update's
structure (``nesterov``, ``amsgrad``, a hyperparameter becoming zero or
non-zero) compiles a new step. Step counts are kept per parameter group and
device, so ``step`` counts the steps in which some parameter of the group had
a gradient. PyTorch's ``foreach``, ``fused`` and ``capturable`` are accepted
and change nothing (the update is one fused, device-side computation anyway).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any

import numpy as np

from mlfuse import dtypes, graph
from mlfuse.autograd import enable_grad, no_grad
from mlfuse.errors import ArgumentTypeError, UnsupportedModeError
from mlfuse.optim import optimizer as _hooks
from mlfuse.targets import get_target
from mlfuse.tensor import FROZEN, Tensor, _newton_schulz_steps
from mlfuse.utils.hooks import RemovableHandle

__all__ = [
    "Optimizer",
    "OptimizerGroup",
    "SGD",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "Adadelta",
    "Adamax",
    "NAdam",
    "RAdam",
    "Rprop",
    "ASGD",
    "Adafactor",
    "LBFGS",
    "LAMB",
    "LARS",
    "Muon",
    "lr_scheduler",
]


# ---------------------------------------------------------------------------
# checking arguments
# ---------------------------------------------------------------------------


def _number(v, what: str, low: float = 0.0, high: float | None = None) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
        raise TypeError(f"{what} must be a number, got {type(v).__name__}")
    v = float(v)
    if not v >= low:
        raise ValueError(f"{what} must be >= {low:g}, got {v:g}")
    if high is not None and not v <= high:
        raise ValueError(f"{what} must be <= {high:g}, got {v:g}")
    return v


def _nonneg(v, what: str) -> float:
    return _number(v, what)


def _unit(v, what: str) -> float:
    return _number(v, what, 0.0, 1.0)


def _flag(v, what: str) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{what} must be True or False, got {v!r}")
    return bool(v)


def _betas(v, what: str) -> tuple[float, float]:
    ok = isinstance(v, (tuple, list)) and len(v) == 2
    ok = ok and all(
        isinstance(b, (int, float, np.floating, np.integer)) and not isinstance(b, bool) for b in v
    )
    if not ok or not all(0 <= b < 1 for b in v):
        raise ValueError(f"{what} must be two numbers in [0, 1), got {v}")
    return (float(v[0]), float(v[1]))


def _real(v, what: str) -> float:
    return _number(v, what, -math.inf)


def _count(v, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {type(v).__name__}")
    if v < 1:
        raise ValueError(f"{what} must be >= 1, got {v}")
    return int(v)


def _pair(v, what: str) -> tuple[float, float]:
    ok = isinstance(v, (tuple, list)) and len(v) == 2
    ok = ok and all(
        isinstance(b, (int, float, np.floating, np.integer)) and not isinstance(b, bool) for b in v
    )
    if not ok:
        raise ValueError(f"{what} must be two numbers, got {v!r}")
    return (float(v[0]), float(v[1]))


def _etas(v, what: str) -> tuple[float, float]:
    """Rprop's ``(etaminus, etaplus)``: ``0 < etaminus < 1 < etaplus``."""
    lo, hi = _pair(v, what)
    if not 0 < lo < 1 < hi:
        raise ValueError(
            f"{what} must be (etaminus, etaplus) with 0 < etaminus < 1 < etaplus, got {v}"
        )
    return (lo, hi)


def _step_sizes(v, what: str) -> tuple[float, float]:
    """Rprop's ``(min, max)`` step sizes: ``0 <= min <= max``."""
    lo, hi = _pair(v, what)
    if not 0 <= lo <= hi:
        raise ValueError(f"{what} must be (min, max) with 0 <= min <= max, got {v}")
    return (lo, hi)


def _eps_pair(v, what: str) -> tuple[float | None, float]:
    """Adafactor's ``(eps1, eps2)``: eps1 None (the dtype's machine epsilon) or
    >= 0, eps2 >= 0."""
    if not isinstance(v, (tuple, list)) or len(v) != 2:
        raise ValueError(f"{what} must be a pair (eps1 or None, eps2), got {v!r}")
    eps1 = None if v[0] is None else _nonneg(v[0], f"{what}[0]")
    return (eps1, _nonneg(v[1], f"{what}[1]"))


def _line_search(v, what: str) -> str | None:
    if v is not None and v != "strong_wolfe":
        raise UnsupportedModeError(f"{what} must be None or 'strong_wolfe', got {v!r}")
    return v


def _pick_betas(betas, b1, b2) -> tuple:
    """PyTorch's ``betas=(b1, b2)``, or tinygrad's ``b1=``, ``b2=`` keywords."""
    if b1 is None and b2 is None:
        return betas
    return (betas[0] if b1 is None else b1, betas[1] if b2 is None else b2)


def _torch_flags(name: str, differentiable: bool) -> None:
    """PyTorch's implementation switches: ``foreach``/``fused``/``capturable``
    change nothing here; ``differentiable`` (autograd through the step) is not
    supported."""
    if differentiable:
        raise NotImplementedError(
            f"{name}: differentiable=True (autograd through the optimizer step) is not "
            "supported; steps run under no_grad"
        )


def _log(b: float) -> float:
    # log(0) as a large negative number: exp(t * it) is 0 for every step t >= 1
    return math.log(b) if b > 0 else -1e4


# the scalars an update reads that are functions of a group's hyperparameter
# (computed on the host in float64 when the hyperparameter is set): name ->
# (the group's key, the function)
_DERIVED: dict[str, tuple[str, Callable[[Any], float]]] = {
    "beta1": ("betas", lambda b: b[0]),
    "beta2": ("betas", lambda b: b[1]),
    "1-beta1": ("betas", lambda b: 1 - b[0]),
    "1-beta2": ("betas", lambda b: 1 - b[1]),
    "log(beta1)": ("betas", lambda b: _log(b[0])),
    "log(beta2)": ("betas", lambda b: _log(b[1])),
    "rho_inf": ("betas", lambda b: 2 / (1 - b[1]) - 1),
    "1-dampening": ("dampening", lambda d: 1 - d),
    "1-alpha": ("alpha", lambda a: 1 - a),
    "1-rho": ("rho", lambda r: 1 - r),
    "momentum_decay*log(0.96)": ("momentum_decay", lambda d: d * math.log(0.96)),
    "etaminus": ("etas", lambda e: e[0]),
    "etaplus": ("etas", lambda e: e[1]),
    "step_size_min": ("step_sizes", lambda m: m[0]),
    "step_size_max": ("step_sizes", lambda m: m[1]),
    "eps1": ("eps", lambda e: 0.0 if e[0] is None else e[0]),
    "eps2": ("eps", lambda e: e[1]),
}

# keys PyTorch's schedulers keep in a parameter group (allowed in a new group too)
_SCHEDULER_KEYS = {"initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum", "swa_lr"}


def _write(t: Tensor, value: float) -> None:
    """Write ``value`` into the one-element buffer of realized ``t``, in place."""
    tgt = get_target(t.device)
    host = dtypes.to_storage(np.full(1, value, dtype=np.float64), t.dtype)
    tgt.copy(t.node.buffer, tgt.from_numpy(host))  # type: ignore[arg-type]


def _scalar_dtype(p: Tensor):
    """The dtype the step's scalar arithmetic runs in for parameter ``p``:
    float64 for float64 parameters, else float32 (half-precision parameters
    get float32 bias corrections, cast once)."""
    return dtypes.float64 if p.dtype == dtypes.float64 else dtypes.float32


def _host(v, what: str) -> np.ndarray:
    """A state value from a state dict (an mlfuse or torch tensor, an array or a
    number) as a float64 numpy array."""
    if isinstance(v, Tensor):
        return v.numpy().astype(np.float64)
    if hasattr(v, "detach") and hasattr(v, "cpu"):  # a torch tensor
        v = v.detach().cpu()
    try:
        return np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what}: cannot read {type(v).__name__} as an array") from e


# ---------------------------------------------------------------------------
# parameter groups and state
# ---------------------------------------------------------------------------


class ParamGroup(dict):
    """One parameter group: ``'params'`` and its hyperparameters, a dict as in
    PyTorch. Setting a value checks it, and setting a number the step reads
    (``group['lr'] = 0.01``, ``'betas'``, ``'momentum'``, ``'weight_decay'``...)
    writes it into the one-element buffers the compiled step reads, so nothing
    recompiles."""

    def __init__(self, opt: Optimizer, items: dict) -> None:
        super().__init__()
        self._opt, self._made = opt, False
        # (scalar name, dtype, device) -> its buffer, and the value last written there
        self._buffers: dict[tuple, Tensor] = {}
        self._written: dict[tuple, float] = {}
        # (counter name, dtype, device) -> the buffer counting it (step, mu_product)
        self._counters: dict[tuple, Tensor] = {}
        for k, v in items.items():
            super().__setitem__(k, opt._check(k, v))
        self._made = True

    def __setitem__(self, key, value) -> None:
        if key == "lr" and self._made:
            # a learning rate set later may be negative: PyTorch's OneCycleLR with a
            # linear anneal goes one step past zero when stepped total_steps times
            value = _number(value, f"{type(self._opt).__name__}: lr", -math.inf)
        else:
            value = self._opt._check(key, value)
        super().__setitem__(key, value)
        for k, t in self._buffers.items():
            if _DERIVED.get(k[0], (k[0],))[0] == key:
                v = self._opt._derived(self, k[0])
                if self._written[k] != v:
                    _write(t, v)
                    self._written[k] = v

    def update(self, *args, **kwargs) -> None:  # type: ignore[override]
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def setdefault(self, key, default=None):  # type: ignore[override]
        if key not in self:
            self[key] = default
        return self[key]

    def __copy__(self) -> dict:
        return dict(self)

    def __deepcopy__(self, memo) -> dict:
        import copy

        return {k: copy.deepcopy(v, memo) if k != "params" else list(v) for k, v in self.items()}


class _State:
    """``opt.state``: each parameter's state (a dict of tensors under PyTorch's
    names: ``opt.state[p]["exp_avg"]``), keyed by the parameter itself."""

    def __init__(self) -> None:
        self._d: dict[int, tuple[Tensor, dict[str, Tensor]]] = {}

    def __getitem__(self, p: Tensor) -> dict[str, Tensor]:
        e = self._d.get(id(p))
        if e is None:
            e = self._d[id(p)] = (p, {})
        return e[1]

    def get(self, p: Tensor, default=None):
        e = self._d.get(id(p))
        return default if e is None else e[1]

    def __contains__(self, p) -> bool:
        return id(p) in self._d

    def __iter__(self) -> Iterator[Tensor]:
        return (p for p, _ in self._d.values())

    def __len__(self) -> int:
        return len(self._d)

    def keys(self) -> list[Tensor]:
        return [p for p, _ in self._d.values()]

    def values(self) -> list[dict[str, Tensor]]:
        return [s for _, s in self._d.values()]

    def items(self) -> list[tuple[Tensor, dict[str, Tensor]]]:
        return list(self._d.values())


# ---------------------------------------------------------------------------
# the base
# ---------------------------------------------------------------------------


class Optimizer:
    """The base: parameter groups (``param_groups``, each a dict of ``'params'``
    and hyperparameters), per-parameter ``state``, ``zero_grad``, ``step`` and
    ``schedule_step``, ``state_dict``/``load_state_dict``, and ``lr`` (every
    group's learning rate, settable between steps).

    A subclass gives ``_CHECKS`` (each hyperparameter's check), ``_STATE`` (its
    per-parameter state names) and ``_update``, which builds one parameter's
    update from ``self._scalars(group, p)`` (the hyperparameters as buffers).

    PyTorch's hooks: ``register_step_pre_hook``/``register_step_post_hook``
    (and the global ones of :mod:`mlfuse.optim.optimizer`) run around every
    subclass's ``step`` (each class's own ``step`` is wrapped when the class is
    defined, as PyTorch's ``profile_hook_step`` does; ``schedule_step`` runs no
    hooks), ``register_state_dict_pre_hook``/``_post_hook`` around
    ``state_dict`` and ``register_load_state_dict_pre_hook``/``_post_hook`` around
    ``load_state_dict``; each returns a handle whose ``remove()`` takes it off."""

    _CHECKS: dict[str, Callable[[Any, str], Any]] = {"lr": _nonneg, "maximize": _flag}
    _STATE: tuple[str, ...] = ()
    _COUNTERS: tuple[str, ...] = ()  # counted per group and device: "step", "mu_product"

    def __init__(self, params: Iterable, defaults) -> None:
        name = type(self).__name__
        if not isinstance(defaults, dict):  # Optimizer(params, lr), mlfuse's older base
            defaults = {"lr": defaults}
        self.defaults: dict[str, Any] = {k: self._check(k, v) for k, v in defaults.items()}
        self.param_groups: list[ParamGroup] = []
        self.state = _State()
        self.steps = 0
        self._stepped: dict[tuple, Tensor] = {}
        if isinstance(params, Tensor):
            raise TypeError(
                f"{name}: params must be an iterable of Tensors or dicts, got a Tensor "
                "(pass [tensor] or model.parameters())"
            )
        params = list(params)
        if not params:
            raise ValueError(f"{name}: got an empty parameter list")
        if not isinstance(params[0], dict):
            params = [{"params": params}]
        for group in params:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        _hook_methods(cls)

    # -- hooks ------------------------------------------------------------------
    def _hook_dict(self, name: str) -> OrderedDict:
        """The optimizer's hooks of one kind (PyTorch's attribute names), made on
        first use: optimizers that skip ``Optimizer.__init__`` have them too."""
        d = self.__dict__.get(name)
        if d is None:
            d = self.__dict__[name] = OrderedDict()
        return d

    def _register(self, name: str, hook, prepend: bool = False) -> RemovableHandle:
        if not callable(hook):
            raise TypeError(
                f"{type(self).__name__}: the hook must be callable, got {type(hook).__name__}"
            )
        hooks = self._hook_dict(name)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Run ``hook(optimizer, args, kwargs)`` before each ``step``; it may return
        ``(new_args, new_kwargs)`` to call ``step`` with instead:
        ``h = opt.register_step_pre_hook(fn); ...; h.remove()``."""
        return self._register("_optimizer_step_pre_hooks", hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Run ``hook(optimizer, args, kwargs)`` after each ``step``:
        ``h = opt.register_step_post_hook(fn)``."""
        return self._register("_optimizer_step_post_hooks", hook)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        """Run ``hook(optimizer)`` before ``state_dict`` builds the dict (first of
        the pre hooks when ``prepend``): ``h = opt.register_state_dict_pre_hook(fn)``."""
        return self._register("_optimizer_state_dict_pre_hooks", hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        """Run ``hook(optimizer, state_dict)`` on what ``state_dict`` returns; it may
        change it in place or return a new one:
        ``h = opt.register_state_dict_post_hook(fn)``."""
        return self._register("_optimizer_state_dict_post_hooks", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        """Run ``hook(optimizer, state_dict)`` before ``load_state_dict`` reads the
        (shallow-copied) dict; it may change it or return one to load instead:
        ``h = opt.register_load_state_dict_pre_hook(fn)``."""
        return self._register("_optimizer_load_state_dict_pre_hooks", hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        """Run ``hook(optimizer)`` after ``load_state_dict``:
        ``h = opt.register_load_state_dict_post_hook(fn)``."""
        return self._register("_optimizer_load_state_dict_post_hooks", hook, prepend)

    # -- groups, hyperparameters ----------------------------------------------
    def _check(self, key: str, value):
        check = self._CHECKS.get(key)
        return check(value, f"{type(self).__name__}: {key}") if check else value

    def _check_group(self, group: ParamGroup) -> None:
        """Checks across a group's hyperparameters (Nesterov needs a momentum...)."""

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyperparameters (the missing
        ones from the optimizer's defaults): ``opt.add_param_group({"params":
        head.parameters(), "lr": 0.1})``."""
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise TypeError(f"{name}: a parameter group must be a dict, got {type(param_group)}")
        if "params" not in param_group:
            raise ValueError(f"{name}: a parameter group needs its 'params'")
        ps = param_group["params"]
        ps = [ps] if isinstance(ps, Tensor) else list(ps)
        names = None
        if ps and all(isinstance(x, tuple) and len(x) == 2 for x in ps):
            names, ps = [n for n, _ in ps], [p for _, p in ps]
        if not ps:
            raise ValueError(f"{name}: got an empty parameter list")
        first = len(self.params)
        for i, p in enumerate(ps, first):
            if not isinstance(p, Tensor):
                raise TypeError(f"{name}: parameter {i} is not a Tensor")
            if not p.is_leaf:
                raise ValueError(
                    f"{name}: parameter {i} {p.shape} is not a leaf (it is computed from "
                    "tensors that require grad); optimize those, or a detach()ed copy"
                )
            if not p.requires_grad and p not in FROZEN and p.dtype.is_float:
                # tinygrad's: a float tensor given to an optimizer learns, unless it was
                # set not to (requires_grad_(False)) or is a module's buffer (running
                # statistics), which PyTorch's optimizers skip (their .grad stays None)
                p.requires_grad_()
        seen = {id(p) for p in self.params}
        if any(id(p) in seen for p in ps):
            raise ValueError(f"{name}: some parameters appear in more than one parameter group")
        if len({id(p) for p in ps}) != len(ps):  # stepped once (tinygrad's), as PyTorch warns
            warnings.warn(
                f"{name}: a parameter group lists a parameter more than once; it is stepped once",
                UserWarning,
                stacklevel=2,
            )
            first: dict[int, int] = {}
            for k, p in enumerate(ps):
                first.setdefault(id(p), k)
            keep = sorted(first.values())
            ps = [ps[k] for k in keep]
            names = [names[k] for k in keep] if names is not None else None
        known = set(self.defaults) | {"params", "param_names"} | _SCHEDULER_KEYS
        unknown = sorted(set(param_group) - known)
        if unknown:
            raise ValueError(
                f"{name}: unknown hyperparameter {unknown[0]!r} in a parameter group "
                f"({name}'s are {', '.join(sorted(self.defaults))})"
            )
        items = {**self.defaults, **param_group, "params": ps}
        if names is not None:
            items["param_names"] = names
        group = ParamGroup(self, items)
        self._check_group(group)
        self.param_groups.append(group)

    @property
    def params(self) -> list[Tensor]:
        """Every group's parameters, in order."""
        return [p for g in self.param_groups for p in g["params"]]

    @property
    def lr(self) -> float:
        """The learning rate of the next step (the first group's); setting it
        sets every group's (writing the buffers the update kernels read)."""
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value) -> None:
        for g in self.param_groups:
            g["lr"] = value

    def _derived(self, group: ParamGroup, name: str) -> float:
        key, fn = _DERIVED.get(name, (name, float))
        return float(fn(group[key]))

    def _scalars(self, group: ParamGroup, p: Tensor) -> Callable[[str], Tensor]:
        """``s(name)``: the group's hyperparameter ``name`` (or a scalar derived
        from one, see ``_DERIVED``) as a one-element buffer on ``p``'s device in
        the scalar dtype: a kernel argument, written when the value is set."""
        dt = _scalar_dtype(p)

        def s(name: str) -> Tensor:
            key = (name, dt, p.device)
            t = group._buffers.get(key)
            if t is None:
                v = self._derived(group, name)
                t = group._buffers[key] = Tensor(np.array(v), dt, p.device)
                group._written[key] = v
            return t

        return s

    def _counter(self, group: ParamGroup, name: str, p: Tensor, init: float, update) -> Tensor:
        """A number kept per group and device (the step count, NAdam's momentum
        product), updated once per step by ``update(old) -> new`` on the device;
        returns this step's value."""
        dt = dtypes.float32 if name == "step" else _scalar_dtype(p)
        key = (name, dt, p.device)
        done = self._stepped.get((id(group), *key))
        if done is not None:
            return done
        t = group._counters.get(key)
        if t is None:
            t = group._counters[key] = Tensor(np.array(init), dt, p.device)
        t.assign(update(t).cast(dt))
        self._stepped[(id(group), *key)] = t
        return t

    def _step_count(self, group: ParamGroup, p: Tensor) -> Tensor:
        """This step's number (1, 2, ...) for ``group`` on ``p``'s device, in
        the scalar dtype."""
        return self._counter(group, "step", p, 0.0, lambda t: t + 1).cast(_scalar_dtype(p))

    def _weight_decay(self, group: ParamGroup, p: Tensor, g: Tensor) -> tuple[Tensor, Tensor]:
        """The value to step from and the gradient after the group's weight
        decay: L2 adds ``weight_decay * p`` to the gradient; decoupled (AdamW's,
        ``decoupled_weight_decay``) shrinks the parameter by ``lr * weight_decay``."""
        if not group["weight_decay"]:
            return p, g
        s, c = self._scalars(group, p), p.dtype
        if group.get("decoupled_weight_decay"):
            return p * (1 - s("lr") * s("weight_decay")).cast(c), g
        return p, g + p * s("weight_decay").cast(c)

    def _zeros(self, p: Tensor, value: float = 0.0) -> Tensor:
        """A buffer shaped like ``p`` filled with ``value`` (momentum, moments)."""
        return Tensor(np.full(p.shape, value), p.dtype, p.device)

    def _state_shape(self, p: Tensor, name: str) -> tuple[int, ...] | None:
        """The shape of ``p``'s state ``name`` (None: ``p`` keeps no such state)."""
        return p.shape

    def _buffer(self, state: dict, name: str, p: Tensor, value: float = 0.0) -> Tensor:
        t = state.get(name)
        if t is None:
            t = state[name] = self._zeros(p, value)
        return t

    # -- stepping ---------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the parameters' gradients (``.grad`` becomes None), or with
        ``set_to_none=False`` make them zeros (``backward`` adds to them)."""
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad = Tensor.zeros(p.shape, dtype=p.dtype, device=p.device)

    def schedule_step(self) -> list[Tensor]:
        """Build this step's updates (parameters and state, assigned in place)
        and return the tensors to realize (those and the gradients), for
        ``mlfuse.realize`` to run in one schedule with the loss:
        ``mlfuse.realize(loss, *opt.schedule_step())``."""
        self.steps += 1
        self._stepped = {}
        out: list[Tensor] = []
        with no_grad():
            i = 0
            for group in self.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is not None:
                        if g.shape != p.shape:
                            raise ValueError(
                                f"parameter {i}: gradient {g.shape}, parameter {p.shape}"
                            )
                        gd = g.detach().cast(p.dtype)
                        if group.get("maximize"):
                            gd = -gd
                        out += self._update(p, gd, group, self.state[p])
                        # .grad still shows the gradient after the step (PyTorch's): realized
                        # with it, it is stored before the parameter is overwritten in place
                        out.append(g)
                    i += 1
            out += list(self._stepped.values())
        return out

    def step(self, closure: Callable[[], Any] | None = None):
        """Update the parameters from their gradients (realizes). With a
        ``closure`` (PyTorch's), call it first, with gradients enabled, and
        return what it returns (the loss)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        todo = self.schedule_step()
        if todo:
            graph.realize([t.node for t in todo])
        return loss

    def _update(self, p: Tensor, g: Tensor, group: ParamGroup, state: dict) -> list[Tensor]:
        """Assign ``p``'s update (and its state's) from gradient ``g``; return
        the tensors assigned."""
        raise NotImplementedError

    # -- saving -----------------------------------------------------------------
    def state_dict(self) -> dict:
        """The optimizer's state in PyTorch's layout: ``{"state": {index:
        {name: tensor}}, "param_groups": [{hyperparameters, "params": [index]}]}``,
        parameters numbered in group order; the tensors are the live state."""
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            d = {k: v for k, v in g.items() if k != "params"}
            d["params"] = [index.setdefault(id(p), len(index)) for p in g["params"]]
            groups.append(d)
        state: dict[int, dict] = {}
        for g in self.param_groups:
            for p in g["params"]:
                s = self.state.get(p)
                if not s:
                    continue
                entry: dict[str, Any] = dict(s)
                for name in self._COUNTERS:
                    dt = dtypes.float32 if name == "step" else _scalar_dtype(p)
                    t = g._counters.get((name, dt, p.device))
                    if t is not None:
                        entry[name] = t
                state[index[id(p)]] = entry
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what ``state_dict()`` saved (or a PyTorch optimizer's state
        dict for the same parameters): hyperparameters and state, written into
        the existing buffers."""
        name = type(self).__name__
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise ValueError(f"{name}: a state dict has exactly 'state' and 'param_groups'")
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError(
                f"{name}: the state dict has {len(saved)} parameter groups, the optimizer "
                f"{len(self.param_groups)}"
            )
        where: dict[Any, tuple[ParamGroup, Tensor]] = {}
        for i, (g, sg) in enumerate(zip(self.param_groups, saved)):
            if len(sg["params"]) != len(g["params"]):
                raise ValueError(
                    f"{name}: parameter group {i} has {len(sg['params'])} parameters in "
                    f"the state dict, {len(g['params'])} in the optimizer"
                )
            where.update({k: (g, p) for k, p in zip(sg["params"], g["params"])})
        values: list[tuple[dict, str, Tensor, np.ndarray]] = []
        counters: dict[tuple, tuple[ParamGroup, float]] = {}
        for k, entry in state_dict["state"].items():
            if k not in where:
                raise ValueError(f"{name}: the state dict has state for unknown parameter {k}")
            g, p = where[k]
            for sname, v in entry.items():
                arr = _host(v, f"{name}: state {sname!r} of parameter {k}")
                if sname in self._COUNTERS or sname == "step":
                    if sname in self._COUNTERS:
                        dt = dtypes.float32 if sname == "step" else _scalar_dtype(p)
                        ck = (sname, dt, p.device)
                        old = counters.get((id(g), *ck))
                        val = float(arr.reshape(-1)[0])
                        if old is None or val > old[1]:
                            counters[(id(g), *ck)] = (g, val)
                    continue
                if sname not in self._STATE:
                    raise ValueError(
                        f"{name}: unknown state {sname!r} for parameter {k} ({name} keeps "
                        f"{', '.join(self._STATE) or 'no state'})"
                    )
                want = self._state_shape(p, sname)
                if want is None:
                    raise ValueError(
                        f"{name}: parameter {k} of shape {p.shape} keeps no state {sname!r}"
                    )
                if arr.shape != want:
                    raise ValueError(
                        f"{name}: state {sname!r} of parameter {k} has shape {arr.shape}, "
                        f"the parameter {p.shape}"
                        + ("" if want == p.shape else f" (the state's shape is {want})")
                    )
                values.append((self.state[p], sname, p, arr))
        for g, sg in zip(self.param_groups, saved):
            for key, v in sg.items():
                # PyTorch's implementation switches (foreach, fused...) are left out
                if key in g and key not in ("params", "param_names") or key in _SCHEDULER_KEYS:
                    g[key] = v
        todo: list[Tensor] = []
        for st, sname, p, arr in values:
            new = Tensor(arr, p.dtype, p.device)
            if sname in st:
                todo.append(st[sname].assign(new))
            else:
                st[sname] = new
        for (_, cname, dt, dev), (g, val) in counters.items():
            t = g._counters.get((cname, dt, dev))
            if t is None:
                g._counters[(cname, dt, dev)] = Tensor(np.array(val), dt, dev)
            else:
                todo.append(t.assign(Tensor(np.array(val), dt, dev)))
        if todo:
            graph.realize([t.node for t in todo])

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


def _outermost(name: str, fn: Callable) -> Callable:
    """``fn(self, ...)`` as the method ``name``, running ``hooked(self, ...)``
    unless a hooked ``name`` of the same optimizer is already running (a
    subclass's ``step`` calling ``super().step()``: the hooks run once)."""

    def decorate(hooked: Callable) -> Callable:
        @functools.wraps(fn)
        def method(self, *args, **kwargs):
            running = self.__dict__.setdefault("_hooks_running", set())
            if name in running:
                return fn(self, *args, **kwargs)
            running.add(name)
            try:
                return hooked(self, *args, **kwargs)
            finally:
                running.discard(name)

        method._mlfuse_hooked = True  # type: ignore[attr-defined]
        return method

    return decorate


def _hooked_step(fn: Callable) -> Callable:
    @_outermost("step", fn)
    def step(self, *args, **kwargs):
        pre = chain(
            _hooks._global_optimizer_pre_hooks.values(),
            self._hook_dict("_optimizer_step_pre_hooks").values(),
        )
        for hook in list(pre):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{type(self).__name__}.step: a step pre hook must return None or a "
                        f"tuple of (new_args, new_kwargs), but got {result!r}."
                    )
                args, kwargs = result
        out = fn(self, *args, **kwargs)
        post = chain(
            self._hook_dict("_optimizer_step_post_hooks").values(),
            _hooks._global_optimizer_post_hooks.values(),
        )
        for hook in list(post):
            hook(self, args, kwargs)
        return out

    return step


def _hooked_state_dict(fn: Callable) -> Callable:
    @_outermost("state_dict", fn)
    def state_dict(self, *args, **kwargs):
        for hook in list(self._hook_dict("_optimizer_state_dict_pre_hooks").values()):
            hook(self)
        out = fn(self, *args, **kwargs)
        for hook in list(self._hook_dict("_optimizer_state_dict_post_hooks").values()):
            result = hook(self, out)
            if result is not None:
                out = result
        return out

    return state_dict


def _hooked_load_state_dict(fn: Callable) -> Callable:
    @_outermost("load_state_dict", fn)
    def load_state_dict(self, state_dict, *args, **kwargs):
        if isinstance(state_dict, dict):
            state_dict = state_dict.copy()  # shallow, as PyTorch's: hooks may edit it
        for hook in list(self._hook_dict("_optimizer_load_state_dict_pre_hooks").values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        out = fn(self, state_dict, *args, **kwargs)
        for hook in list(self._hook_dict("_optimizer_load_state_dict_post_hooks").values()):
            hook(self)
        return out

    return load_state_dict


_HOOKED = {
    "step": _hooked_step,
    "state_dict": _hooked_state_dict,
    "load_state_dict": _hooked_load_state_dict,
}


def _hook_methods(cls: type) -> None:
    """Wrap the hooked methods ``cls`` defines itself (not inherited ones)."""
    for name, wrap in _HOOKED.items():
        fn = cls.__dict__.get(name)
        if callable(fn) and not getattr(fn, "_mlfuse_hooked", False):
            setattr(cls, name, wrap(fn))


_hook_methods(Optimizer)


class OptimizerGroup(Optimizer):
    """Several optimizers stepped as one (tinygrad's): ``OptimizerGroup(
    Adam(body), SGD(head))``; ``param_groups`` is theirs together, so a
    learning-rate scheduler drives all of them."""

    def __init__(self, *optimizers: Optimizer) -> None:  # no super().__init__: holds no groups
        if not optimizers or not all(isinstance(o, Optimizer) for o in optimizers):
            raise TypeError("OptimizerGroup: give it one or more optimizers")
        self.optimizers = optimizers
        self.steps = 0

    def __getitem__(self, i: int) -> Optimizer:
        return self.optimizers[i]

    @property  # type: ignore[override]
    def param_groups(self) -> list[ParamGroup]:  # type: ignore[override]
        return [g for o in self.optimizers for g in o.param_groups]

    @property  # type: ignore[override]
    def defaults(self) -> dict:  # type: ignore[override]
        out: dict = {}
        for o in reversed(self.optimizers):
            out.update(o.defaults)
        return out

    def add_param_group(self, param_group: dict) -> None:
        raise TypeError("OptimizerGroup: add the parameter group to one of its optimizers")

    def zero_grad(self, set_to_none: bool = True) -> None:
        for o in self.optimizers:
            o.zero_grad(set_to_none)

    def schedule_step(self) -> list[Tensor]:
        self.steps += 1
        return [t for o in self.optimizers for t in o.schedule_step()]

    def state_dict(self) -> dict:
        return {"optimizers": [o.state_dict() for o in self.optimizers]}

    def load_state_dict(self, state_dict: dict) -> None:
        saved = state_dict.get("optimizers") if isinstance(state_dict, dict) else None
        if saved is None or len(saved) != len(self.optimizers):
            raise ValueError(
                f"OptimizerGroup: expected {{'optimizers': [{len(self.optimizers)} state dicts]}}"
            )
        for o, s in zip(self.optimizers, saved):
            o.load_state_dict(s)

    def __repr__(self) -> str:
        return "OptimizerGroup(\n" + ",\n".join(repr(o) for o in self.optimizers) + "\n)"


# ---------------------------------------------------------------------------
# the optimizers
# ---------------------------------------------------------------------------


def _bias_correction(t: Tensor, log_beta: Tensor) -> Tensor:
    """``1 - beta**t`` without cancellation: ``-expm1(t log beta)``."""
    return -(t * log_beta).expm1()


class SGD(Optimizer):
    """Stochastic gradient descent with PyTorch's momentum (``b = momentum * b +
    (1 - dampening) * g``, the first step's ``b = g``), optional Nesterov
    momentum, L2 weight decay and ``maximize``; tinygrad's ``classic`` applies
    the learning rate before the momentum: ``SGD(model.parameters(), lr=0.1,
    momentum=0.9)``."""

    _CHECKS = {
        **Optimizer._CHECKS,
        "momentum": _nonneg,
        "dampening": _nonneg,
        "weight_decay": _nonneg,
        "nesterov": _flag,
        "classic": _flag,
    }
    _STATE = ("momentum_buffer",)

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        classic: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _torch_flags("SGD", differentiable)
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
                classic=classic,
            ),
        )

    def _check_group(self, group: ParamGroup) -> None:
        if group["nesterov"] and (group["momentum"] == 0 or group["dampening"] != 0):
            raise ValueError("SGD: Nesterov momentum needs a momentum and zero dampening")

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        lr = s("lr").cast(c)
        _, g = self._weight_decay(group, p, g)
        if group["classic"]:
            g = g * lr
        out = [p]
        if group["momentum"]:
            b = state.get("momentum_buffer")
            if b is None:  # PyTorch starts the buffer at the first gradient
                b, new = self._buffer(state, "momentum_buffer", p), g
            else:
                damped = g * s("1-dampening").cast(c) if group["dampening"] else g
                new = b * s("momentum").cast(c) + damped
            b.assign(new)
            out.append(b)
            g = g + new * s("momentum").cast(c) if group["nesterov"] else new
        p.assign(p - g if group["classic"] else p - g * lr)
        return out


class Adam(Optimizer):
    """Adam (Kingma and Ba) with bias correction, PyTorch's ``eps`` placement, L2
    ``weight_decay`` added to the gradient (decoupled, as AdamW, with
    ``decoupled_weight_decay``), ``amsgrad`` and ``maximize``; tinygrad's
    ``b1=``/``b2=`` spell ``betas``: ``Adam(params, lr=1e-3)``."""

    decoupled = False
    _CHECKS = {
        **Optimizer._CHECKS,
        "betas": _betas,
        "eps": _nonneg,
        "weight_decay": _nonneg,
        "amsgrad": _flag,
        "decoupled_weight_decay": _flag,
    }
    _STATE = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    _COUNTERS = ("step",)

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
        b1: float | None = None,
        b2: float | None = None,
    ) -> None:
        name = type(self).__name__
        _torch_flags(name, differentiable)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=_pick_betas(betas, b1, b2),
                eps=eps,
                weight_decay=weight_decay,
                amsgrad=amsgrad,
                maximize=maximize,
                decoupled_weight_decay=bool(decoupled_weight_decay) or self.decoupled,
            ),
        )

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        t = self._step_count(group, p)
        lr = s("lr")
        base, g = self._weight_decay(group, p, g)
        m, v = self._buffer(state, "exp_avg", p), self._buffer(state, "exp_avg_sq", p)
        m.assign(m + (g - m) * s("1-beta1").cast(c))
        v.assign(v * s("beta2").cast(c) + g * g * s("1-beta2").cast(c))
        out = [p, m, v]
        if group["amsgrad"]:
            vmax = self._buffer(state, "max_exp_avg_sq", p)
            vmax.assign(vmax.maximum(v))
            out.append(vmax)
            v = vmax
        step_size = (lr / _bias_correction(t, s("log(beta1)"))).cast(c)
        bc2_sqrt = _bias_correction(t, s("log(beta2)")).sqrt().cast(c)
        p.assign(base - step_size * m / (v.sqrt() / bc2_sqrt + s("eps").cast(c)))
        return out


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before
    the Adam step; default 0.01, as PyTorch): ``AdamW(params, lr=1e-3)``."""

    decoupled = True

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        b1: float | None = None,
        b2: float | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            differentiable=differentiable,
            b1=b1,
            b2=b2,
        )


class RMSprop(Optimizer):
    """RMSprop with PyTorch's rules: ``square_avg = alpha * square_avg + (1 -
    alpha) g²``, ``eps`` added after the square root, optional ``centered``
    (the running mean of ``g`` subtracted), ``momentum`` on ``g / avg`` and
    L2 ``weight_decay``: ``RMSprop(params, lr=0.01)``."""

    _CHECKS = {
        **Optimizer._CHECKS,
        "alpha": _nonneg,
        "eps": _nonneg,
        "weight_decay": _nonneg,
        "momentum": _nonneg,
        "centered": _flag,
    }
    _STATE = ("square_avg", "momentum_buffer", "grad_avg")

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _torch_flags("RMSprop", differentiable)
        super().__init__(
            params,
            dict(
                lr=lr,
                alpha=alpha,
                eps=eps,
                weight_decay=weight_decay,
                momentum=momentum,
                centered=centered,
                maximize=maximize,
            ),
        )

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        _, g = self._weight_decay(group, p, g)
        sq = self._buffer(state, "square_avg", p)
        sq.assign(sq * s("alpha").cast(c) + g * g * s("1-alpha").cast(c))
        out = [p, sq]
        if group["centered"]:
            ga = self._buffer(state, "grad_avg", p)
            ga.assign(ga + (g - ga) * s("1-alpha").cast(c))
            out.append(ga)
            avg = (sq - ga * ga).sqrt() + s("eps").cast(c)
        else:
            avg = sq.sqrt() + s("eps").cast(c)
        lr = s("lr").cast(c)
        if group["momentum"]:
            b = self._buffer(state, "momentum_buffer", p)
            b.assign(b * s("momentum").cast(c) + g / avg)
            out.append(b)
            p.assign(p - b * lr)
        else:
            p.assign(p - lr * g / avg)
        return out


class Adagrad(Optimizer):
    """Adagrad with PyTorch's rules: the sum of squared gradients (starting at
    ``initial_accumulator_value``), ``eps`` after the square root, the learning
    rate decayed as ``lr / (1 + (step - 1) * lr_decay)`` and L2
    ``weight_decay``: ``Adagrad(params, lr=0.01)``."""

    _CHECKS = {
        **Optimizer._CHECKS,
        "lr_decay": _nonneg,
        "weight_decay": _nonneg,
        "initial_accumulator_value": _nonneg,
        "eps": _nonneg,
    }
    _STATE = ("sum",)
    _COUNTERS = ("step",)

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _torch_flags("Adagrad", differentiable)
        super().__init__(
            params,
            dict(
                lr=lr,
                lr_decay=lr_decay,
                weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value,
                eps=eps,
                maximize=maximize,
            ),
        )

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        t = self._step_count(group, p)
        _, g = self._weight_decay(group, p, g)
        clr = s("lr")
        if group["lr_decay"]:
            clr = clr / (1 + (t - 1) * s("lr_decay"))
        acc = self._buffer(state, "sum", p, group["initial_accumulator_value"])
        acc.assign(acc + g * g)
        p.assign(p - clr.cast(c) * g / (acc.sqrt() + s("eps").cast(c)))
        return [p, acc]


class Adadelta(Optimizer):
    """Adadelta with PyTorch's rules: ``delta = sqrt(acc_delta + eps) /
    sqrt(square_avg + eps) * g``, both averages with ``rho``, the update scaled
    by ``lr`` (default 1.0) and L2 ``weight_decay``: ``Adadelta(params)``."""

    _CHECKS = {**Optimizer._CHECKS, "rho": _unit, "eps": _nonneg, "weight_decay": _nonneg}
    _STATE = ("square_avg", "acc_delta")

    def __init__(
        self,
        params: Iterable,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _torch_flags("Adadelta", differentiable)
        super().__init__(
            params,
            dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize),
        )

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        _, g = self._weight_decay(group, p, g)
        rho, rho1, eps = s("rho").cast(c), s("1-rho").cast(c), s("eps").cast(c)
        sq, acc = self._buffer(state, "square_avg", p), self._buffer(state, "acc_delta", p)
        sq.assign(sq * rho + g * g * rho1)
        delta = (acc + eps).sqrt() / (sq + eps).sqrt() * g
        acc.assign(acc * rho + delta * delta * rho1)
        p.assign(p - delta * s("lr").cast(c))
        return [p, sq, acc]


class Adamax(Optimizer):
    """Adamax (Adam with the infinity norm) with PyTorch's rules: ``exp_inf =
    max(beta2 * exp_inf, |g| + eps)``, the first moment bias-corrected, L2
    ``weight_decay``: ``Adamax(params, lr=2e-3)``."""

    _CHECKS = {**Optimizer._CHECKS, "betas": _betas, "eps": _nonneg, "weight_decay": _nonneg}
    _STATE = ("exp_avg", "exp_inf")
    _COUNTERS = ("step",)

    def __init__(
        self,
        params: Iterable,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _torch_flags("Adamax", differentiable)
        super().__init__(
            params,
            dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize),
        )

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        t = self._step_count(group, p)
        _, g = self._weight_decay(group, p, g)
        m, u = self._buffer(state, "exp_avg", p), self._buffer(state, "exp_inf", p)
        m.assign(m + (g - m) * s("1-beta1").cast(c))
        u.assign((u * s("beta2").cast(c)).maximum(g.abs() + s("eps").cast(c)))
        clr = (s("lr") / _bias_correction(t, s("log(beta1)"))).cast(c)
        p.assign(p - clr * m / u)
        return [p, m, u]


class NAdam(Optimizer):
    """NAdam (Adam with Nesterov momentum) with PyTorch's rules: the momentum
    schedule ``mu_t = beta1 (1 - 0.5 * 0.96**(t * momentum_decay))`` and its
    running product, L2 or (``decoupled_weight_decay``) decoupled weight decay:
    ``NAdam(params, lr=2e-3)``."""

    _CHECKS = {
        **Optimizer._CHECKS,
        "betas": _betas,
        "eps": _nonneg,
        "weight_decay": _nonneg,
        "momentum_decay": _nonneg,
        "decoupled_weight_decay": _flag,
    }
    _STATE = ("exp_avg", "exp_avg_sq")
    _COUNTERS = ("step", "mu_product")

    def __init__(
        self,
        params: Iterable,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _torch_flags("NAdam", differentiable)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                momentum_decay=momentum_decay,
                decoupled_weight_decay=decoupled_weight_decay,
                maximize=maximize,
            ),
        )

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        t = self._step_count(group, p)
        lr, b1, decay = s("lr"), s("beta1"), s("momentum_decay*log(0.96)")
        base, g = self._weight_decay(group, p, g)
        mu = b1 * (1 - 0.5 * (t * decay).exp())
        mu_next = b1 * (1 - 0.5 * ((t + 1) * decay).exp())
        mu_product = self._counter(group, "mu_product", p, 1.0, lambda mp: mp * mu)
        m, v = self._buffer(state, "exp_avg", p), self._buffer(state, "exp_avg_sq", p)
        m.assign(m + (g - m) * s("1-beta1").cast(c))
        v.assign(v * s("beta2").cast(c) + g * g * s("1-beta2").cast(c))
        bc2 = _bias_correction(t, s("log(beta2)")).cast(c)
        denom = (v / bc2).sqrt() + s("eps").cast(c)
        c_grad = (lr * (1 - mu) / (1 - mu_product)).cast(c)
        c_avg = (lr * mu_next / (1 - mu_product * mu_next)).cast(c)
        p.assign(base - c_grad * g / denom - c_avg * m / denom)
        return [p, m, v]


class RAdam(Optimizer):
    """RAdam (rectified Adam) with PyTorch's rules: while the variance's
    degrees of freedom ``rho_t`` are at most 5 the step is bias-corrected
    momentum SGD, after that Adam's step times the rectification; L2 or
    (``decoupled_weight_decay``) decoupled weight decay: ``RAdam(params)``."""

    _CHECKS = {
        **Optimizer._CHECKS,
        "betas": _betas,
        "eps": _nonneg,
        "weight_decay": _nonneg,
        "decoupled_weight_decay": _flag,
    }
    _STATE = ("exp_avg", "exp_avg_sq")
    _COUNTERS = ("step",)

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _torch_flags("RAdam", differentiable)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                decoupled_weight_decay=decoupled_weight_decay,
                maximize=maximize,
            ),
        )

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        t = self._step_count(group, p)
        lr = s("lr")
        base, g = self._weight_decay(group, p, g)
        m, v = self._buffer(state, "exp_avg", p), self._buffer(state, "exp_avg_sq", p)
        m.assign(m + (g - m) * s("1-beta1").cast(c))
        v.assign(v * s("beta2").cast(c) + g * g * s("1-beta2").cast(c))
        log_b2, rho_inf = s("log(beta2)"), s("rho_inf")
        bc1, bc2 = _bias_correction(t, s("log(beta1)")), _bias_correction(t, log_b2)
        rho_t = rho_inf - 2 * t * (t * log_b2).exp() / bc2
        r = rho_t.maximum(5.0)  # the rectification where it is used (rho_t > 5)
        ratio = (r - 4) * (r - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * r)
        rect = ratio.maximum(0.0).sqrt()
        corrected = m / bc1.cast(c) * lr.cast(c)
        adaptive = bc2.sqrt().cast(c) / (v.sqrt() + s("eps").cast(c))
        up = (rho_t > 5.0).where(corrected * adaptive * rect.cast(c), corrected)
        p.assign(base - up)
        return [p, m, v]


class LAMB(Optimizer):
    """LAMB (tinygrad's signature and rules): Adam's bias-corrected step plus
    ``weight_decay * p``, scaled per parameter by the trust ratio ``|p| /
    |update|`` (1 where either is zero); ``adam=True`` leaves the ratio out
    (AdamW): ``LAMB(params, lr=1e-3, weight_decay=0.01)``. PyTorch's
    ``betas=`` spells ``b1``, ``b2`` too."""

    _CHECKS = {
        **Optimizer._CHECKS,
        "betas": _betas,
        "eps": _nonneg,
        "weight_decay": _nonneg,
        "adam": _flag,
    }
    _STATE = ("exp_avg", "exp_avg_sq")
    _COUNTERS = ("step",)

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        b1: float = 0.9,
        b2: float = 0.999,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        adam: bool = False,
        *,
        betas: tuple[float, float] | None = None,
    ) -> None:
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=(b1, b2) if betas is None else betas,
                eps=eps,
                weight_decay=weight_decay,
                adam=adam,
            ),
        )

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        t = self._step_count(group, p)
        m, v = self._buffer(state, "exp_avg", p), self._buffer(state, "exp_avg_sq", p)
        m.assign(m * s("beta1").cast(c) + g * s("1-beta1").cast(c))
        v.assign(v * s("beta2").cast(c) + g * g * s("1-beta2").cast(c))
        m_hat = m / _bias_correction(t, s("log(beta1)")).cast(c)
        v_hat = v / _bias_correction(t, s("log(beta2)")).cast(c)
        up = m_hat / (v_hat.sqrt() + s("eps").cast(c))
        if group["weight_decay"]:
            up = up + p * s("weight_decay").cast(c)
        lr = s("lr").cast(c)
        if not group["adam"]:
            r1, r2 = p.square().sum().sqrt(), up.square().sum().sqrt()
            lr = lr * (r1 > 0).where((r2 > 0).where(r1 / r2, 1.0), 1.0)
        p.assign(p - lr * up)
        return [p, m, v]


class LARS(Optimizer):
    """LARS (tinygrad's signature and rules): SGD whose step is scaled per
    parameter by the trust ratio ``tcoef * |p| / (|g| + weight_decay * |p|)``
    (1 where either norm is zero), with momentum (from zero, no dampening),
    ``classic`` momentum (the learning rate applied before it, the default),
    ``nesterov`` and weight decay added to the gradient (``pre_wd``) or, with
    ``pre_wd=False``, decoupled after the momentum: ``LARS(params, lr=0.1)``.
    ``tcoef=0`` is tinygrad's SGD."""

    _CHECKS = {
        **Optimizer._CHECKS,
        "momentum": _nonneg,
        "weight_decay": _nonneg,
        "nesterov": _flag,
        "classic": _flag,
        "pre_wd": _flag,
        "tcoef": _nonneg,
    }
    _STATE = ("momentum_buffer",)

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        momentum: float = 0.9,
        weight_decay: float = 1e-4,
        *,
        nesterov: bool = False,
        classic: bool = True,
        pre_wd: bool = True,
        tcoef: float = 1e-3,
    ) -> None:
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                weight_decay=weight_decay,
                nesterov=nesterov,
                classic=classic,
                pre_wd=pre_wd,
                tcoef=tcoef,
            ),
        )

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        wd = s("weight_decay").cast(c)
        r: Tensor | float = 1.0
        if group["tcoef"]:
            r1, r2 = p.square().sum().sqrt(), g.square().sum().sqrt()
            ratio = s("tcoef").cast(c) * r1 / (r2 + wd * r1)
            r = (r1 > 0).where((r2 > 0).where(ratio, 1.0), 1.0)
        if group["pre_wd"] and group["weight_decay"]:
            g = g + p * wd
        lr = s("lr").cast(c)
        if group["classic"]:
            g = g * r * lr
        out = [p]
        if group["momentum"]:
            b = self._buffer(state, "momentum_buffer", p)
            b.assign(b * s("momentum").cast(c) + g)
            out.append(b)
            g = g + b * s("momentum").cast(c) if group["nesterov"] else b
        base = p
        if not group["pre_wd"] and group["weight_decay"]:
            base = p * (1 - wd * lr)
        if not group["classic"]:
            g = g * r * lr
        p.assign(base - g)
        return out


def _ns_coefficients(v, what: str) -> tuple[float, float, float]:
    if not isinstance(v, (tuple, list)) or len(v) != 3:
        raise ValueError(f"{what} must be 3 numbers (a, b, c), got {v!r}")
    return tuple(_real(x, what) for x in v)  # type: ignore[return-value]


def _ns_steps(v, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {type(v).__name__}")
    if not 0 <= v < 100:
        raise ValueError(f"{what} must be in [0, 100), got {v}")
    return int(v)


def _adjust_lr_fn(v, what: str) -> str | None:
    if v not in (None, "original", "match_rms_adamw"):
        raise ValueError(f"{what} must be None, 'original' or 'match_rms_adamw', got {v!r}")
    return v


class Muon(Optimizer):
    """Muon (PyTorch's ``torch.optim.Muon``): SGD momentum (``b = lerp(b, g,
    1 - momentum)``, Nesterov by default) whose update is orthogonalized by the
    Newton-Schulz quintic ``ns_coefficients`` (``ns_steps`` times, after scaling
    by the Frobenius norm, at least ``eps``), applied with decoupled weight decay
    and the learning rate scaled for the matrix's shape (``adjust_lr_fn``:
    ``sqrt(max(1, rows / cols))``, the default, or ``0.2 * sqrt(max(rows,
    cols))`` for ``"match_rms_adamw"``). For 2-D parameters (hidden layers'
    weights); the iteration runs in the parameter's dtype (PyTorch's in
    bfloat16): ``Muon(model.hidden.parameters(), lr=0.02)``."""

    _CHECKS = {
        **Optimizer._CHECKS,
        "momentum": _nonneg,
        "weight_decay": _nonneg,
        "nesterov": _flag,
        "ns_coefficients": _ns_coefficients,
        "eps": _nonneg,
        "ns_steps": _ns_steps,
        "adjust_lr_fn": _adjust_lr_fn,
    }
    _STATE = ("momentum_buffer",)

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
        eps: float = 1e-7,
        ns_steps: int = 5,
        adjust_lr_fn: str | None = None,
    ) -> None:
        super().__init__(
            params,
            dict(
                lr=lr,
                weight_decay=weight_decay,
                momentum=momentum,
                nesterov=nesterov,
                ns_coefficients=ns_coefficients,
                eps=eps,
                ns_steps=ns_steps,
                adjust_lr_fn=adjust_lr_fn,
            ),
        )

    def _check_group(self, group: ParamGroup) -> None:
        for p in group["params"]:
            if p.ndim != 2:
                raise ValueError(
                    "Muon only supports 2-D parameters (hidden layers' weights), got one of "
                    f"shape {p.shape}; optimize the others with AdamW"
                )
            if not dtypes.is_float(p.dtype):
                raise TypeError(f"Muon: parameters must be floating point, got {p.dtype}")

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        mu = s("momentum").cast(c)
        b = self._buffer(state, "momentum_buffer", p)
        b.assign(b + (g - b) * (1 - mu))
        update = g + (b - g) * mu if group["nesterov"] else b
        rows, cols = p.shape
        if rows > cols:
            update = update.mT
        norm = update.square().sum().sqrt().maximum(s("eps").cast(c))
        update = _newton_schulz_steps(update / norm, group["ns_steps"], group["ns_coefficients"])
        if rows > cols:
            update = update.mT
        if group["adjust_lr_fn"] == "match_rms_adamw":
            ratio = 0.2 * math.sqrt(max(rows, cols))
        else:
            ratio = math.sqrt(max(1.0, rows / cols))
        lr = s("lr").cast(c)
        base = p * (1 - lr * s("weight_decay").cast(c)) if group["weight_decay"] else p
        p.assign(base - update * (lr * ratio))
        return [p, b]


class Rprop(Optimizer):
    """Rprop (resilient backpropagation) with PyTorch's rules: each element
    keeps its own step size, multiplied by ``etaplus`` while its gradient keeps
    its sign and by ``etaminus`` when the sign flips (then that element skips
    its step and forgets the gradient), clipped to ``step_sizes``; the
    parameter moves by ``-sign(g) * step_size``. The step sizes start at
    ``lr`` (the first step's): ``Rprop(params, lr=0.01)``."""

    _CHECKS = {**Optimizer._CHECKS, "etas": _etas, "step_sizes": _step_sizes}
    _STATE = ("prev", "step_size")
    _COUNTERS = ("step",)

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _torch_flags("Rprop", differentiable)
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, maximize=maximize))

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        self._step_count(group, p)  # kept for the state dict (PyTorch's "step")
        prev = self._buffer(state, "prev", p)
        size = self._buffer(state, "step_size", p, group["lr"])
        same, flipped = g * prev > 0, g * prev < 0
        factor = same.where(s("etaplus").cast(c), flipped.where(s("etaminus").cast(c), 1.0))
        new_size = (size * factor).maximum(s("step_size_min").cast(c))
        new_size = new_size.minimum(s("step_size_max").cast(c))
        g = flipped.where(0.0, g)
        p.assign(p - g.sign() * new_size)
        size.assign(new_size)
        prev.assign(g)
        return [p, size, prev]


class ASGD(Optimizer):
    """Averaged SGD with PyTorch's rules: ``p = p * (1 - lambd * eta) - eta *
    g`` (L2 ``weight_decay`` added to ``g``), then the running average ``ax``
    of the parameters (``ax = p`` while ``mu`` is 1, ``ax += mu * (p - ax)``
    after ``t0`` steps); ``eta = lr / (1 + lambd * lr * step) ** alpha`` and
    ``mu = 1 / max(1, step - t0)`` are computed after each step for the next:
    ``ASGD(params, lr=0.01)``; ``opt.state[p]["ax"]`` is the average."""

    _CHECKS = {
        **Optimizer._CHECKS,
        "lambd": _real,
        "alpha": _real,
        "t0": _real,
        "weight_decay": _nonneg,
    }
    _STATE = ("ax",)
    _COUNTERS = ("step", "eta", "mu")

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _torch_flags("ASGD", differentiable)
        self._before: dict[tuple, Tensor] = {}
        super().__init__(
            params,
            dict(
                lr=lr,
                lambd=lambd,
                alpha=alpha,
                t0=t0,
                weight_decay=weight_decay,
                maximize=maximize,
            ),
        )

    def schedule_step(self) -> list[Tensor]:
        """As the base's (this step's eta and mu are the values before it)."""
        self._before = {}
        return super().schedule_step()

    def _previous(self, group: ParamGroup, name: str, p: Tensor, init: float, update) -> Tensor:
        """The value counter ``name`` had before this step (what this step uses),
        the counter itself updated by ``update(old) -> new`` for the next."""
        dt = _scalar_dtype(p)
        key = (id(group), name, dt, p.device)
        old = self._before.get(key)
        if old is None:
            t = group._counters.get((name, dt, p.device))
            if t is None:
                t = group._counters[(name, dt, p.device)] = Tensor(np.array(init), dt, p.device)
            old = self._before[key] = t._detached()  # the value now: assigns come after
            self._counter(group, name, p, init, update)
        return old

    def _update(self, p, g, group, state):
        s, c = self._scalars(group, p), p.dtype
        t = self._step_count(group, p)
        lr, lambd = s("lr"), s("lambd")
        eta = self._previous(
            group, "eta", p, group["lr"],
            lambda _: lr / ((1 + lambd * lr * t).log() * s("alpha")).exp(),
        )  # fmt: skip
        mu = self._previous(group, "mu", p, 1.0, lambda _: 1 / (t - s("t0")).maximum(1.0))
        _, g = self._weight_decay(group, p, g)
        eta_c = eta.cast(c)
        new = p * (1 - lambd * eta).cast(c) - g * eta_c
        ax = self._buffer(state, "ax", p)
        ax.assign((mu == 1).where(new, ax + (new - ax) * mu.cast(c)))
        p.assign(new)
        return [p, ax]


class Adafactor(Optimizer):
    """Adafactor (Shazeer and Stern) with PyTorch's rules: the second moment of a
    parameter of two or more dims is kept factored, as the mean of ``g²`` over
    its last dim (``row_var``) and over the one before (``col_var``), its
    estimate ``row_var * col_var / max(mean(row_var), eps1)``; of a vector, in
    full (``variance``). Both average with weight ``step ** beta2_decay``; the
    update ``g / sqrt(max(estimate, eps1²))`` is clipped to RMS ``d`` and scaled
    by ``max(eps2, RMS(p)) * min(lr, 1 / sqrt(step))``; decoupled
    ``weight_decay`` shrinks ``p`` by ``lr * weight_decay``. ``eps1`` None is
    the parameter dtype's machine epsilon: ``Adafactor(params, lr=0.01)``."""

    _CHECKS = {
        **Optimizer._CHECKS,
        "beta2_decay": lambda v, what: _number(v, what, -math.inf, 0.0),
        "eps": _eps_pair,
        "d": lambda v, what: _number(v, what, 1.0),
        "weight_decay": _nonneg,
    }
    _STATE = ("row_var", "col_var", "variance")
    _COUNTERS = ("step",)

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        super().__init__(
            params,
            dict(
                lr=lr,
                beta2_decay=beta2_decay,
                eps=eps,
                d=d,
                weight_decay=weight_decay,
                maximize=maximize,
            ),
        )

    def _state_shape(self, p: Tensor, name: str) -> tuple[int, ...] | None:
        if p.ndim < 2:
            return p.shape if name == "variance" else None
        if name == "row_var":
            return (*p.shape[:-1], 1)
        if name == "col_var":
            return (*p.shape[:-2], 1, p.shape[-1])
        return None

    def _zeros_of(self, state: dict, name: str, p: Tensor) -> Tensor:
        t = state.get(name)
        if t is None:
            shape = self._state_shape(p, name)
            t = state[name] = Tensor(np.zeros(shape), p.dtype, p.device)
        return t

    def _update(self, p, g, group, state):
        s, c, dt = self._scalars(group, p), p.dtype, _scalar_dtype(p)
        t = self._step_count(group, p)
        lr = s("lr")
        weight = (t.log() * s("beta2_decay")).exp().cast(c)  # 1 - beta2_t = t ** beta2_decay
        rho = lr.minimum(t.sqrt().reciprocal())
        n = math.sqrt(p.numel())
        rms_p = p.cast(dt).square().sum().sqrt() / n
        alpha = rms_p.maximum(s("eps2")) * rho
        if group["eps"][0] is None:
            eps1 = 2.0**-7 if c == dtypes.bfloat16 else float(np.finfo(c.np).eps)
            eps1_sq: Tensor | float = eps1 * eps1
        else:
            eps1 = s("eps1").cast(c)
            eps1_sq = (s("eps1") * s("eps1")).cast(c)
        base = p
        if group["weight_decay"]:
            base = p * (1 - lr * s("weight_decay")).cast(c)
        gg = g * g
        if p.ndim > 1:
            row, col = self._zeros_of(state, "row_var", p), self._zeros_of(state, "col_var", p)
            row.assign(row.lerp(gg.mean(-1, keepdim=True), weight))
            col.assign(col.lerp(gg.mean(-2, keepdim=True), weight))
            estimate = row * col / row.mean(-2, keepdim=True).maximum(eps1)
            out = [p, row, col]
        else:
            var = self._zeros_of(state, "variance", p)
            var.assign(var.lerp(gg, weight))
            estimate = var
            out = [p, var]
        up = estimate.maximum(eps1_sq).rsqrt() * g
        rms_up = up.cast(dt).square().sum().sqrt() / n
        denom = (rms_up / s("d")).maximum(1.0)
        p.assign(base - up * (alpha / denom).cast(c))
        return out


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None) -> float:
    """Where the cubic through ``(x1, f1)`` and ``(x2, f2)`` with slopes ``g1``,
    ``g2`` has its minimum, clipped to ``bounds`` (default: between x1 and x2);
    the middle of the bounds where the cubic has none (minFunc's polyinterp,
    as PyTorch's LBFGS)."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    if x1 == x2:
        return (lo + hi) / 2.0
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if not disc >= 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(disc)
    # measured from the point further along
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


class LBFGS(Optimizer):
    """L-BFGS with PyTorch's rules: ``opt.step(closure)`` runs up to
    ``max_iter`` iterations (``max_eval`` evaluations of the closure), each a
    step along the two-loop L-BFGS direction over the last ``history_size``
    curvature pairs, of length ``lr`` (the first ever: ``lr * min(1, 1 /
    |g|_1)``) or, with ``line_search_fn="strong_wolfe"``, found by a line search
    meeting the strong Wolfe conditions; it stops early at a gradient below
    ``tolerance_grad`` or changes below ``tolerance_change``::

        opt = mlfuse.optim.LBFGS(model.parameters(), lr=1, line_search_fn="strong_wolfe")
        def closure():
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            return loss
        opt.step(closure)

    The closure's loss and the dot products that decide the branches are read
    on the host (a sync per iteration); the parameters, the direction and the
    history stay on the device. One parameter group only; the state (the
    history, PyTorch's names) lives in ``opt.state`` of the first parameter."""

    _CHECKS = {
        **Optimizer._CHECKS,
        "max_iter": _count,
        "max_eval": _count,
        "tolerance_grad": _nonneg,
        "tolerance_change": _nonneg,
        "history_size": _count,
        "line_search_fn": _line_search,
    }
    _STATE = (
        "func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag",
        "prev_flat_grad", "prev_loss", "al",
    )  # fmt: skip

    def __init__(
        self,
        params: Iterable,
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if max_eval is None:  # PyTorch's default: max_iter * 1.25
            max_eval = self._check("max_iter", max_iter) * 5 // 4
        super().__init__(
            params,
            dict(
                lr=lr,
                max_iter=max_iter,
                max_eval=max_eval,
                tolerance_grad=tolerance_grad,
                tolerance_change=tolerance_change,
                history_size=history_size,
                line_search_fn=line_search_fn,
            ),
        )
        self._params: list[Tensor] = self.param_groups[0]["params"]
        devices = {p.device for p in self._params}
        if len(devices) != 1:
            raise ValueError(f"LBFGS: the parameters must be on one device, got {devices}")
        self._dtype = self._params[0].dtype
        for p in self._params[1:]:
            self._dtype = dtypes.promote(self._dtype, p.dtype)
        if not self._dtype.is_float:
            raise TypeError(f"LBFGS: the parameters must be floats, got {self._dtype.name}")

    def add_param_group(self, param_group: dict) -> None:
        """The one parameter group (LBFGS takes no others, as PyTorch's)."""
        if self.param_groups:
            raise ValueError(
                "LBFGS: doesn't support per-parameter options (parameter groups): give it one group"
            )
        super().add_param_group(param_group)

    def schedule_step(self) -> list[Tensor]:
        """Not for LBFGS (its step needs the closure): ``opt.step(closure)``."""
        raise NotImplementedError(
            "LBFGS: a step evaluates the closure several times and branches on the "
            "results, so it cannot be scheduled lazily: call opt.step(closure)"
        )

    # -- flat vectors on the device ---------------------------------------------
    def _scalar(self, v: float) -> Tensor:
        """Host number ``v`` as a one-element buffer (a kernel argument, not a
        constant compiled in)."""
        return Tensor(np.array(v), self._dtype, self._params[0].device)

    def _flat_grad(self) -> Tensor:
        parts = []
        for p in self._params:
            g = p.grad
            if g is None:
                parts.append(Tensor.zeros((p.numel(),), dtype=self._dtype, device=p.device))
            else:
                parts.append(g.detach().cast(self._dtype).reshape(-1))
        return parts[0].contiguous() if len(parts) == 1 else Tensor.cat(parts)

    def _evaluate(self, closure) -> tuple[Any, float, Tensor, float]:
        """Call the closure (gradients enabled): its loss as returned and as a
        number, the flat gradient (realized) and its largest magnitude."""
        with enable_grad():
            loss = closure()
        with no_grad():
            g = self._flat_grad()
            gmax = g.abs().max()
            todo = [g, gmax] + ([loss] if isinstance(loss, Tensor) else [])
            graph.realize([t.node for t in todo])
        value = loss.item() if isinstance(loss, Tensor) else float(loss)
        return loss, float(value), g, gmax.item()

    def _add(self, t: float, d: Tensor) -> None:
        """``p += t * d`` (d flat, split over the parameters)."""
        tb, todo, at = self._scalar(t), [], 0
        for p in self._params:
            n = p.numel()
            piece = d[at : at + n].reshape(p.shape) * tb
            todo.append(p.assign(p + piece.cast(p.dtype)))
            at += n
        graph.realize([q.node for q in todo])

    def _copy_params(self) -> list[Tensor]:
        copies = [p.detach().contiguous() for p in self._params]
        graph.realize([c.node for c in copies])
        return copies

    def _set_params(self, values: list[Tensor]) -> None:
        todo = [p.assign(v) for p, v in zip(self._params, values)]
        graph.realize([q.node for q in todo])

    @staticmethod
    def _dot(a: Tensor, b: Tensor) -> Tensor:
        return (a * b).sum()

    # -- the line search ----------------------------------------------------------
    def _directional(self, closure, x: list[Tensor], t: float, d: Tensor):
        """The loss and flat gradient at ``x + t * d`` (the parameters are
        put back to ``x`` afterwards)."""
        self._add(t, d)
        _, f, g, _ = self._evaluate(closure)
        self._set_params(x)
        return f, g

    def _strong_wolfe(self, closure, t, d, f, g, gtd, max_ls, c1=1e-4, c2=0.9):
        """Search along ``d`` from the parameters (loss ``f``, gradient ``g``,
        slope ``gtd``) for a step meeting the strong Wolfe conditions (minFunc's,
        as PyTorch's): bracket one, then zoom in by cubic interpolation. Returns
        the loss, gradient and step found and the number of evaluations."""
        tol = self.param_groups[0]["tolerance_change"]
        x = self._copy_params()
        d_norm = d.abs().max().item()

        def probe(step):
            fn, gn = self._directional(closure, x, step, d)
            return fn, gn, self._dot(gn, d).item()

        f_new, g_new, gtd_new = probe(t)
        evals, it, done = 1, 0, False
        # each point: (step, loss, gradient, slope)
        prev = (0.0, f, g, gtd)
        bracket: list[tuple] = []
        while it < max_ls:
            new = (t, f_new, g_new, gtd_new)
            if f_new > f + c1 * t * gtd or (it > 1 and f_new >= prev[1]):
                bracket = [prev, new]
                break
            if abs(gtd_new) <= -c2 * gtd:
                bracket, done = [new], True
                break
            if gtd_new >= 0:
                bracket = [prev, new]
                break
            # extrapolate: somewhere between just past t and 10 t
            bounds = (t + 0.01 * (t - prev[0]), t * 10)
            t = _cubic_min(prev[0], prev[1], prev[3], t, f_new, gtd_new, bounds)
            prev = new
            f_new, g_new, gtd_new = probe(t)
            evals += 1
            it += 1
        if it >= max_ls:  # out of evaluations: the better of the start and the last
            bracket = [(0.0, f, g, None), (t, f_new, g_new, None)]

        insufficient = False
        low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
        while not done and it < max_ls:
            if abs(bracket[1][0] - bracket[0][0]) * d_norm < tol:
                break
            (a, fa, _, ga), (b, fb, _, gb) = bracket
            t = _cubic_min(a, fa, ga, b, fb, gb)
            top, bottom = max(a, b), min(a, b)
            margin = 0.1 * (top - bottom)
            if min(top - t, t - bottom) < margin:
                # near an end: the second time running (or outside), move in by the margin
                if insufficient or t >= top or t <= bottom:
                    t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                    insufficient = False
                else:
                    insufficient = True
            else:
                insufficient = False
            f_new, g_new, gtd_new = probe(t)
            evals += 1
            it += 1
            new = (t, f_new, g_new, gtd_new)
            if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
                bracket[high] = new  # not a sufficient decrease: the new high end
                low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
            else:
                if abs(gtd_new) <= -c2 * gtd:
                    done = True
                elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                    bracket[high] = bracket[low]
                bracket[low] = new
        t, f_new, g_new, _ = bracket[low]
        return f_new, g_new, t, evals

    # -- the step -------------------------------------------------------------------
    def step(self, closure: Callable[[], Any] | None = None):  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` (required)
        zeroes the gradients, computes the loss, calls ``backward`` and returns
        the loss. Returns the loss of the closure's first call."""
        if closure is None or not callable(closure):
            raise ArgumentTypeError(
                "LBFGS: step needs a closure that zeroes the gradients, computes the loss, "
                "calls backward() and returns the loss: opt.step(closure)"
            )
        group = self.param_groups[0]
        lr = float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        self.steps += 1

        orig_loss, loss, g, gmax = self._evaluate(closure)
        evals = 1
        state["func_evals"] += 1
        if gmax <= tol_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_g = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        with no_grad():
            while n_iter < max_iter:
                n_iter += 1
                state["n_iter"] += 1
                if state["n_iter"] == 1:  # the first iteration ever: steepest descent
                    d = -g
                    old_dirs, old_stps, ro, h_diag = [], [], [], 1
                else:
                    al = state.get("al")
                    if al is None or len(al) < history:
                        al = state["al"] = [*(al or []), *[None] * (history - len(al or []))]
                    pairs = (old_dirs, old_stps, ro, al)
                    d, h_diag = self._direction(g, prev_g, d, t, h_diag, pairs, history)
                prev_g, prev_loss = g, loss
                if state["n_iter"] == 1:
                    t = min(1.0, 1.0 / g.abs().sum().item()) * lr
                else:
                    t = lr
                gtd = self._dot(g, d).item()
                if gtd > -tol_change:  # not a descent direction (any more)
                    break
                if group["line_search_fn"] == "strong_wolfe":
                    loss, g, t, ls_evals = self._strong_wolfe(
                        closure, t, d, loss, g, gtd, max_ls=max_eval - evals
                    )
                    self._add(t, d)
                    optimal = g.abs().max().item() <= tol_grad
                else:
                    self._add(t, d)
                    ls_evals, optimal = 0, False
                    if n_iter != max_iter:  # the last iteration's loss is not needed
                        _, loss, g, gmax = self._evaluate(closure)
                        optimal, ls_evals = gmax <= tol_grad, 1
                evals += ls_evals
                state["func_evals"] += ls_evals
                if n_iter == max_iter or evals >= max_eval or optimal:
                    break
                if (d * self._scalar(t)).abs().max().item() <= tol_change:
                    break
                if abs(loss - prev_loss) < tol_change:
                    break
        state.update(
            d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
            prev_flat_grad=prev_g, prev_loss=prev_loss,
        )  # fmt: skip
        return orig_loss

    def _direction(self, g, prev_g, d, t, h_diag, pairs, history):
        """The L-BFGS direction ``-H g``: the curvature pair of the last move
        joins the history (if ``y.s > 1e-10``; the lists in ``pairs`` change in
        place), then the two-loop recursion over it, from the scaled identity
        ``H_diag = y.s / y.y``."""
        old_dirs, old_stps, ro, al = pairs
        y = g - prev_g
        s = d * self._scalar(t)
        ys = self._dot(y, s)
        graph.realize([y.node, s.node, ys.node])
        if ys.item() > 1e-10:
            if len(old_dirs) == history:
                del old_dirs[0], old_stps[0], ro[0]
            inv, h_diag = 1.0 / ys, ys / self._dot(y, y)
            graph.realize([inv.node, h_diag.node])
            old_dirs.append(y)
            old_stps.append(s)
            ro.append(inv)
        q = -g
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = self._dot(old_stps[i], q) * ro[i]
            q = q - old_dirs[i] * al[i]
            graph.realize([al[i].node, q.node])
        r = q * h_diag
        for i in range(len(old_dirs)):
            be = self._dot(old_dirs[i], r) * ro[i]
            r = r + old_stps[i] * (al[i] - be)
            r.realize()
        return r, h_diag

    # -- saving -------------------------------------------------------------------
    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what ``state_dict()`` saved, or a PyTorch LBFGS's state dict
        for the same parameters: hyperparameters and the history."""
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise ValueError("LBFGS: a state dict has exactly 'state' and 'param_groups'")
        saved = state_dict["param_groups"]
        if len(saved) != 1 or len(saved[0]["params"]) != len(self._params):
            raise ValueError(
                f"LBFGS: the state dict must hold one parameter group of {len(self._params)} "
                "parameters"
            )
        entries = state_dict["state"]
        first = saved[0]["params"][0]
        unknown = [k for k in entries if k != first]
        if unknown:
            raise ValueError(
                f"LBFGS: the state dict has state for parameter {unknown[0]} "
                "(LBFGS keeps its state with the first parameter)"
            )
        entry = entries.get(first, {})
        bad = sorted(set(entry) - set(self._STATE))
        if bad:
            raise ValueError(
                f"LBFGS: unknown state {bad[0]!r} (LBFGS keeps {', '.join(self._STATE)})"
            )
        g = self.param_groups[0]
        for key, v in saved[0].items():
            if key in g and key not in ("params", "param_names") or key in _SCHEDULER_KEYS:
                g[key] = v
        n = sum(p.numel() for p in self._params)
        dev = self._params[0].device

        def tensor(v, what):
            if v is None:
                return None
            if isinstance(v, list):
                return [tensor(x, what) for x in v]
            arr = _host(v, f"LBFGS: state {what!r}")
            if arr.ndim and arr.shape != (n,):
                raise ValueError(
                    f"LBFGS: state {what!r} has shape {arr.shape}, the parameters {n} numbers"
                )
            return Tensor(arr, self._dtype, dev)

        new: dict[str, Any] = {}
        for k, v in entry.items():
            if k in ("func_evals", "n_iter"):
                new[k] = int(_host(v, f"LBFGS: state {k!r}"))
            elif k in ("t", "prev_loss"):
                new[k] = float(_host(v, f"LBFGS: state {k!r}"))
            elif k == "H_diag" and isinstance(v, (int, float)):
                new[k] = v
            else:
                new[k] = tensor(v, k)
        st = self.state[self._params[0]]
        st.clear()
        st.update(new)


from mlfuse.optim import lr_scheduler  # noqa: E402 - needs Optimizer
from mlfuse.optim import swa_utils  # noqa: E402, F401 - needs Optimizer, lr_scheduler
