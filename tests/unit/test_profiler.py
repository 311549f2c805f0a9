"""``mlfuse.profiler``: kernel launches and compilations recorded inside a
profile block, named by their origin, grouped, scoped by record_function,
exported as a Chrome trace, and selected by a step schedule."""

from __future__ import annotations

import json

import numpy as np

import mlfuse
from mlfuse import Tensor
from mlfuse.profiler import ProfilerAction, profile, record_function, schedule


def test_kernels_and_compiles_are_recorded(tmp_path):
    x = Tensor(np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32))
    w = Tensor(np.random.default_rng(1).standard_normal((32, 8)).astype(np.float32))
    (x @ w).softmax(-1).realize()  # compiled before the block: a cached schedule
    outside = (x * 3).realize()
    with profile() as prof:
        with record_function("step"):
            (x @ w).softmax(-1).realize()
        ((x @ w).softmax(-1) * 2).realize()  # a new schedule: compiled inside
    assert outside is not None
    events = prof.events()
    kinds = [e.kind for e in events]
    assert kinds.count("range") == 1 and kinds.count("compile") == 1
    kernels = [e for e in events if e.kind == "kernel"]
    assert len(kernels) >= 2 and all(e.duration_us > 0 for e in kernels)
    assert any("softmax" in e.name for e in kernels)  # named by the front-end ops
    assert any(e.scope == "step" for e in kernels) and any(e.scope == "" for e in kernels)
    assert all(e.bytes > 0 for e in kernels)
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    assert "Calls" in table and "step" in table and "Self time total" in table
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    assert len(trace) == len(events) and {t["ph"] for t in trace} == {"X"}
    with profile() as quiet:  # nothing realized: nothing recorded
        x * 2
    assert len(quiet.events()) == 0


def test_schedule_selects_steps():
    s = schedule(wait=1, warmup=1, active=2, repeat=1)
    assert [s(i) for i in range(6)] == [
        ProfilerAction.NONE,
        ProfilerAction.WARMUP,
        ProfilerAction.RECORD,
        ProfilerAction.RECORD_AND_SAVE,
        ProfilerAction.NONE,
        ProfilerAction.NONE,
    ]
    x = Tensor(np.ones(8, np.float32))
    saved = []
    with profile(schedule=schedule(wait=1, warmup=1, active=2),
                 on_trace_ready=lambda p: saved.append(len(p.events()))) as prof:  # fmt: skip
        for i in range(6):
            (x * float(i)).sum().realize()
            prof.step()
    assert saved == [2]  # steps 2 and 3: one kernel each


def test_record_function_as_decorator():
    @record_function("double")
    def double(t):
        return (t * 2).realize()

    with profile() as prof:
        double(Tensor([1.0, 2.0]))
    names = [e.name for e in prof.events() if e.kind == "range"]
    assert names == ["double"]
    assert not mlfuse.profiler.active()
