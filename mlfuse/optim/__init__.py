"""Optimizers with PyTorch's update rules, argument names and API: ``SGD``
(momentum, Nesterov, weight decay), ``Adam`` and ``AdamW`` (``amsgrad``),
``RMSprop``, ``Adagrad``, ``Adadelta``, ``Adamax``, ``NAdam``, ``RAdam``, and
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

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from mlfuse import dtypes, graph
from mlfuse.autograd import enable_grad, no_grad
from mlfuse.targets import get_target
from mlfuse.tensor import Tensor

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
    "LAMB",
    "LARS",
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
}

# keys PyTorch's schedulers keep in a parameter group (allowed in a new group too)
_SCHEDULER_KEYS = {"initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum"}


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
    update from ``self._scalars(group, p)`` (the hyperparameters as buffers)."""

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
            if not (p.requires_grad and p.is_leaf):
                raise ValueError(
                    f"{name}: parameter {i} {p.shape} is not a leaf that "
                    "requires grad (make it with requires_grad=True)"
                )
        seen = {id(p) for p in self.params}
        if len({id(p) for p in ps}) != len(ps) or any(id(p) in seen for p in ps):
            raise ValueError(f"{name}: a parameter appears twice (in one group or two)")
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
                if arr.shape != p.shape:
                    raise ValueError(
                        f"{name}: state {sname!r} of parameter {k} has shape {arr.shape}, "
                        f"the parameter {p.shape}"
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


from mlfuse.optim import lr_scheduler  # noqa: E402 - needs Optimizer
