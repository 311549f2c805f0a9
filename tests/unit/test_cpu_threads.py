"""CPU launches split over threads only when splitting was measured to pay.

The kernels here are stand-ins with Python bodies (a ``CpuKernel`` with its
entry point replaced), so the decision can be driven by known costs: one whose
time follows its chunk's length gains by splitting; one whose every call costs
the same (the cost of handing chunks to threads, with no work to share) does
not. A real kernel checks that results do not depend on the choice.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor
from mlfuse.targets.cpu import threads


@pytest.fixture
def two_threads():
    before = mlfuse.get_num_threads()
    mlfuse.set_num_threads(2)
    yield
    mlfuse.set_num_threads(before)


def stand_in(body) -> tuple[threads.CpuKernel, list]:
    k = threads.CpuKernel("stand_in", 0, 1, 1000, 1 << 24, None)
    calls = []

    def fn(pointers, lo, hi):
        calls.append((lo, hi))
        body(lo, hi)

    k.fn = fn
    return k, calls


def test_a_kernel_whose_time_follows_its_range_splits(two_threads):
    k, calls = stand_in(lambda lo, hi: time.sleep((hi - lo) * 20e-6))  # sleeping releases the GIL
    for _ in range(3):
        k(None)
    assert k.split_decision() == {2: True}
    # launches 1 and 2 ran on one thread, the third split into [0, 500) and [500, 1000)
    assert calls[:2] == [(0, 1000), (0, 1000)] and sorted(calls[2:]) == [(0, 500), (500, 1000)]
    calls.clear()
    k(None)
    assert sorted(calls) == [(0, 500), (500, 1000)]


def test_a_kernel_that_does_not_gain_stays_on_one_thread(two_threads):
    k, calls = stand_in(lambda lo, hi: time.sleep(0.01))  # the same cost for any range
    for _ in range(3):
        k(None)
    assert k.split_decision() == {2: False}
    calls.clear()
    k(None)
    assert calls == [(0, 1000)]


def test_small_kernels_never_time_themselves(two_threads):
    k, calls = stand_in(lambda lo, hi: None)
    k.work = threads.MIN_WORK_PER_THREAD  # two chunks would each get half of that
    for _ in range(4):
        k(None)
    assert k.split_decision() == {} and calls == [(0, 1000)] * 4


def test_results_do_not_depend_on_the_split(two_threads):
    x = np.random.default_rng(0).standard_normal((1024, 2048)).astype(np.float32)
    t = Tensor(x).realize()
    outs = [(t * 2 + 1).softmax(1).numpy() for _ in range(5)]  # measured, then decided
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])
    e = np.exp((x * 2 + 1) - (x * 2 + 1).max(1, keepdims=True))
    np.testing.assert_allclose(outs[-1], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
