"""PyTorch's ``torch.profiler`` for mlfuse's kernels: what ran, for how long,
moving how many bytes::

    with mlfuse.profiler.profile() as prof:
        with mlfuse.profiler.record_function("forward"):
            loss = model(x).sum().realize()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")      # chrome://tracing, Perfetto

Inside a ``profile`` block every kernel launch is timed (the launch waits for
the kernel to finish, so device kernels are timed too), and every
compilation of a new schedule is recorded as an event of its own. Events are
named by the kernel's front-end origin (``k3 [softmax]``), so averages group
kernels that run the same code; ``record_function`` ranges become events
too, and kernels launched inside one carry its name. ``schedule`` and
``step()`` select which iterations are recorded, as PyTorch's do.
"""

from __future__ import annotations

import enum
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
    "tensorboard_trace_handler", "FunctionEvent",
]  # fmt: skip


class ProfilerActivity(enum.Enum):
    """What to record: mlfuse records kernel launches on every device either way."""

    CPU = "cpu"
    CUDA = "cuda"


class ProfilerAction(enum.Enum):
    """What a :func:`schedule` asks of a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0):
    """PyTorch's step schedule: skip ``skip_first`` steps, then cycles of ``wait``
    idle, ``warmup`` and ``active`` recorded steps (``repeat`` cycles; 0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("schedule: wait, warmup, repeat, skip_first >= 0 and active > 0")

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat and step >= cycle * repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD_AND_SAVE if at == cycle - 1 else ProfilerAction.RECORD

    return action


@dataclass
class FunctionEvent:
    """One recorded event: a kernel launch, a compilation or a ``record_function``
    range (``kind``), with its start and duration in microseconds."""

    name: str
    kind: str
    start_us: float
    duration_us: float
    device: str = "cpu"
    bytes: int = 0
    flops: int = 0
    scope: str = ""

    @property
    def cpu_time_total(self) -> float:
        return self.duration_us


@dataclass
class _Average:
    key: str
    count: int = 0
    total_us: float = 0.0
    bytes: int = 0
    flops: int = 0
    kinds: set = field(default_factory=set)

    @property
    def cpu_time_total(self) -> float:
        return self.total_us

    self_cpu_time_total = cpu_time_total
    cuda_time_total = cpu_time_total
    device_time_total = cpu_time_total

    @property
    def cpu_time(self) -> float:
        return self.total_us / max(self.count, 1)


class EventList(list):
    """Recorded events; :meth:`table` prints them."""

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs) -> str:
        rows = list(self)
        if sort_by is not None and rows:
            key = sort_by.replace("self_", "").replace("cuda_", "cpu_").replace("device_", "cpu_")
            if key in ("cpu_time_total", "count", "cpu_time"):
                rows.sort(key=lambda r: getattr(r, key, 0), reverse=True)
        rows = rows[:row_limit] if row_limit and row_limit > 0 else rows
        head = f"{'Name':<48} {'Calls':>6} {'Total us':>11} {'Avg us':>10} {'GB/s':>8}"
        lines = [head, "-" * len(head)]
        for r in rows:
            count = getattr(r, "count", 1)
            total = r.cpu_time_total
            moved = getattr(r, "bytes", 0)
            rate = f"{moved / max(total, 1e-3) / 1e3:8.2f}" if moved else f"{'':>8}"
            lines.append(
                f"{r.key if hasattr(r, 'key') else r.name:<48.48} {count:>6} {total:>11.1f} "
                f"{total / max(count, 1):>10.1f} {rate}"
            )
        total = sum(r.cpu_time_total for r in self if getattr(r, "kinds", {"kernel"}) != {"range"})
        lines.append(f"Self time total: {total / 1e3:.3f} ms")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


_ACTIVE: list[profile] = []
_SCOPES: list[str] = []


def active() -> bool:
    """Whether a profiler is recording (the executor then times each launch)."""
    return any(p._recording for p in _ACTIVE)


def kernel_ran(name: str, start: float, seconds: float, device: str, item) -> None:
    """Called by the runtime for each timed launch (``item``: its ScheduleItem)."""
    origin = f" [{', '.join(item.origin)}]" if item is not None and item.origin else ""
    ev = FunctionEvent(
        name=f"{name}{origin}" if origin else name,
        kind="kernel",
        start_us=start * 1e6,
        duration_us=seconds * 1e6,
        device=device,
        bytes=(item.bytes_read + item.bytes_written) if item is not None else 0,
        flops=item.flops if item is not None else 0,
        scope=_SCOPES[-1] if _SCOPES else "",
    )
    for p in _ACTIVE:
        if p._recording:
            p._events.append(ev)


def compiled(seconds: float, start: float, kernels: int) -> None:
    """Called when a new schedule was compiled (``kernels`` launches)."""
    ev = FunctionEvent(f"compile ({kernels} kernels)", "compile", start * 1e6, seconds * 1e6)
    for p in _ACTIVE:
        if p._recording:
            p._events.append(ev)


class record_function:  # noqa: N801 - PyTorch's name
    """A named range: an event of its own, and the scope of the kernels launched
    inside it (``with record_function("attention"): ...``; a decorator too)."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self._t0 = 0.0

    def __enter__(self):
        _SCOPES.append(self.name)
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        t1 = time.perf_counter()
        _SCOPES.pop()
        ev = FunctionEvent(self.name, "range", self._t0 * 1e6, (t1 - self._t0) * 1e6)
        for p in _ACTIVE:
            if p._recording:
                p._events.append(ev)

    def __call__(self, fn: Callable) -> Callable:
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)

        return wrapper


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable:  # fmt: skip
    """An ``on_trace_ready`` that writes each recorded cycle as a Chrome trace
    file into ``dir_name``."""

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{os.uname().nodename}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(dir_name, f"{name}.{prof.step_num}.pt.trace.json"))

    return handler


class profile:  # noqa: N801 - PyTorch's name
    """Record mlfuse's kernel launches and compilations inside the block (see
    the module's documentation). ``schedule`` and ``on_trace_ready`` as PyTorch's;
    the other options are accepted (shapes, memory and stacks are not recorded)."""

    def __init__(self, activities=None, schedule: Callable | None = None,
                 on_trace_ready: Callable | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False,
                 experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, use_cuda: bool | None = None) -> None:  # fmt: skip
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self._events: list[FunctionEvent] = []
        self._last: list[FunctionEvent] = []  # the last cycle a schedule saved
        self._recording = False

    def _action(self) -> ProfilerAction:
        return self.schedule(self.step_num) if self.schedule else ProfilerAction.RECORD

    def start(self) -> None:
        _ACTIVE.append(self)
        self._recording = self._action() in (ProfilerAction.RECORD,
                                             ProfilerAction.RECORD_AND_SAVE)  # fmt: skip

    def stop(self) -> None:
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        was = self._recording
        self._recording = False
        if was and self._events and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def step(self) -> None:
        """The end of one training step: the schedule decides what the next records;
        a cycle's last recorded step hands the events to ``on_trace_ready``."""
        done = self._action()
        self.step_num += 1
        if self.schedule is None:
            return
        if done == ProfilerAction.RECORD_AND_SAVE:
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
            self._last, self._events = self._events, []
        self._recording = self._action() in (ProfilerAction.RECORD,
                                             ProfilerAction.RECORD_AND_SAVE)  # fmt: skip

    def events(self) -> EventList:
        """Every recorded event, in order (with a schedule: of the cycle being
        recorded, else of the last one saved)."""
        return EventList(self._events or self._last)

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:  # fmt: skip
        """The events grouped by name: calls, total and average time, bytes."""
        groups: dict[str, _Average] = {}
        for ev in self.events():
            a = groups.setdefault(ev.name, _Average(ev.name))
            a.count += 1
            a.total_us += ev.duration_us
            a.bytes += ev.bytes
            a.flops += ev.flops
            a.kinds.add(ev.kind)
        return EventList(groups.values())

    def export_chrome_trace(self, path: str) -> None:
        """The events as a Chrome trace (``chrome://tracing``, Perfetto)."""
        events = [
            {
                "name": ev.name,
                "cat": ev.kind,
                "ph": "X",
                "ts": ev.start_us,
                "dur": ev.duration_us,
                "pid": os.getpid(),
                "tid": 0 if ev.kind == "range" else 1,
                "args": {
                    "device": ev.device,
                    "bytes": ev.bytes,
                    "flops": ev.flops,
                    "scope": ev.scope,
                },  # fmt: skip
            }
            for ev in self.events()
        ]
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
