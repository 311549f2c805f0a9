"""The caches of compiled code: kernels in memory (bounded, least recently
used dropped), and kernels and whole schedules on disk (:mod:`disk_cache`).

A schedule found on disk is rebuilt here without the compiler: this module,
the executor and a target's loader import no xDSL dialect, so a second process
running a program the first one compiled starts computing within milliseconds
of ``import mlfuse``.
"""

from __future__ import annotations

import hashlib
import pickle
from collections import OrderedDict

from mlfuse.runtime import disk_cache
from mlfuse.targets import CompiledKernel, Target, get_target

KERNEL_CACHE_SIZE = 4096
"""Compiled kernels kept in memory."""

SCHEDULE_FORMAT = 1
"""The layout of a saved schedule (entries of another layout are not read)."""

kernels: OrderedDict[tuple[str, str], CompiledKernel] = OrderedDict()
"""(target name, kernel key: its text without name and annotations) -> the
compiled kernel."""


def remember(key: tuple[str, str], k: CompiledKernel) -> None:
    kernels[key] = k
    if len(kernels) > KERNEL_CACHE_SIZE:
        kernels.popitem(last=False)


def _kernel_disk_key(target: Target, key: tuple[str, str]) -> str | None:
    chain = target.toolchain()
    return f"{disk_cache.code_version()}\n{chain}\n{key[1]}" if chain else None


def kernels_from_disk(todo: dict, target: Target) -> None:
    """Take the kernels of ``todo`` (kernel key -> anything) that the disk cache
    holds into memory, and drop them from ``todo``. An entry that does not load
    is left to be compiled."""
    if not disk_cache.enabled():
        return
    batches: dict[str, dict[str, CompiledKernel] | None] = {}
    for key in list(todo):
        dk = _kernel_disk_key(target, key)
        where = disk_cache.get("kernel", dk) if dk else None
        if where is None:
            continue
        batch, _, symbol = where.decode(errors="replace").partition("\n")
        if batch not in batches:
            data = disk_cache.get("object", batch)
            try:
                batches[batch] = target.load(data) if data is not None else None
            except ValueError:
                batches[batch] = None
        loaded = batches[batch]
        if loaded is not None and symbol in loaded:
            remember(key, loaded[symbol])
            del todo[key]


def kernels_to_disk(names: dict[tuple[str, str], str], compiled, target: Target) -> None:
    """Save what one compile made (``names``: kernel key -> its name in
    ``compiled``), and where each kernel's code is in it."""
    if not disk_cache.enabled() or not target.toolchain():
        return
    data = target.save({u: compiled[u] for u in names.values()})
    if data is None:
        return
    batch = hashlib.sha256(target.toolchain().encode() + data).hexdigest()
    disk_cache.put("object", batch, data)
    for key, unique in names.items():
        disk_cache.put("kernel", _kernel_disk_key(target, key), f"{batch}\n{unique}".encode())


def _schedule_disk_key(cache_key: str, target: Target) -> str | None:
    chain = target.toolchain()
    if not chain:
        return None
    return f"schedule {SCHEDULE_FORMAT} {disk_cache.code_version()}\n{chain}\n{cache_key}"


def save_schedule(cache_key: str, c, launches: dict[str, str], target: Target) -> None:
    """Save compiled schedule ``c`` (a ``driver.Compiled``): its program's steps
    with each launch's kernel named by its key (``launches``: schedule name ->
    key; the code is in the kernel entries), its items and its module's text."""
    if not disk_cache.enabled():
        return
    key = _schedule_disk_key(cache_key, target)
    if key is None:
        return
    prog = c.program
    steps = [
        ("launch", launches[st[1].name], st[1].name, st[1].args) if st[0] == "launch" else st
        for st in prog.steps
    ]
    record = {
        "program": {
            "num_inputs": prog.num_inputs,
            "input_types": prog.input_types,
            "steps": steps,
            "outputs": prog.outputs,
            "views": prog.views,
            "consts": prog.consts,
            "num_slots": prog.num_slots,
        },
        "items": [vars(i) for i in c.items],
        "schedule": {k: v for k, v in vars(c.items).items()},  # not_fused, buffers...
        "text": str(c.module),
    }
    disk_cache.put("schedule", key, pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))


class LoadedSchedule:
    """A compiled schedule read from disk: ``program`` runs it; ``items``,
    ``module`` and ``peak_bytes`` (as on ``driver.Compiled``) are rebuilt when
    first asked for, with the compiler's modules."""

    timings: list = []

    def __init__(self, program, items: list[dict], schedule: dict, text: str):
        self.program = program
        self._items, self._schedule, self._text = items, schedule, text
        self._full = None

    def _compiled(self):
        if self._full is None:
            from mlfuse import driver

            items = driver.Schedule([driver.ScheduleItem(**i) for i in self._items])
            vars(items).update(self._schedule)
            self._full = driver.Compiled(None, self.program, items, [], text=self._text)
        return self._full

    @property
    def items(self):
        return self._compiled().items

    @property
    def module(self):
        return self._compiled().module

    @property
    def peak_bytes(self) -> int:
        return self._compiled().peak_bytes


def load_schedule(cache_key: str, target: Target | str | None = None) -> LoadedSchedule | None:
    """The compiled schedule saved under ``cache_key``, its kernels from memory
    or the disk cache; None when anything is missing."""
    from mlfuse.runtime.executor import Launch, Program

    tgt = target if isinstance(target, Target) else get_target(target)
    if not disk_cache.enabled():
        return None
    key = _schedule_disk_key(cache_key, tgt)
    data = disk_cache.get("schedule", key) if key else None
    if data is None:
        return None
    try:
        record = pickle.loads(data)
        p = record["program"]
        todo = {
            (tgt.name, st[1]): None
            for st in p["steps"]
            if st[0] == "launch" and (tgt.name, st[1]) not in kernels
        }
        if todo:
            kernels_from_disk(todo, tgt)
        if todo:
            return None
        prog = Program.__new__(Program)
        prog.target = tgt
        prog.num_inputs, prog.input_types = p["num_inputs"], p["input_types"]
        prog.steps = [
            ("launch", Launch(kernels[(tgt.name, st[1])], st[2], st[3]))
            if st[0] == "launch"
            else st
            for st in p["steps"]
        ]
        prog.outputs, prog.views, prog.consts = p["outputs"], p["views"], p["consts"]
        prog.num_slots = p["num_slots"]
        return LoadedSchedule(prog, record["items"], record["schedule"], record["text"])
    except (pickle.UnpicklingError, EOFError, ImportError, AttributeError, KeyError,
            IndexError, TypeError, ValueError):  # fmt: skip
        return None  # an entry of another layout: compile again
