"""tinygrad's helper names: GlobalCounters, Device, getenv, TinyJit, dtypes.from_py..."""

import numpy as np
import pytest

import mlfuse
from mlfuse import Device, GlobalCounters, Tensor, TinyJit, dtypes
from mlfuse.errors import ArgumentError


def test_global_counters_count_what_ran():
    a, b = Tensor.randn(64, 64).realize(), Tensor.randn(64, 64).realize()
    GlobalCounters.reset()
    assert GlobalCounters.kernel_count == 0 and GlobalCounters.global_ops == 0
    (a @ b).relu().realize()
    assert GlobalCounters.kernel_count == 1  # the product and its relu: one kernel
    assert GlobalCounters.global_ops == 2 * 64**3
    assert GlobalCounters.global_mem == 3 * 64 * 64 * 4  # two inputs read, one output written
    assert GlobalCounters.time_sum_s > 0
    (a + 1).realize()
    (b * 2).realize()
    assert GlobalCounters.kernel_count == 3


def test_device_and_getenv(monkeypatch):
    assert Device.DEFAULT == mlfuse.get_default_device()
    assert Device.canonicalize("CPU") == "cpu"
    assert Device["cpu"] is mlfuse.targets.get_target("cpu")
    monkeypatch.setenv("MLFUSE_TEST_BS", "48")
    assert mlfuse.getenv("MLFUSE_TEST_BS", 32) == 48
    assert mlfuse.getenv("MLFUSE_TEST_UNSET", 7) == 7


def test_dtype_helpers():
    assert dtypes.from_py(True) == dtypes.bool_ and dtypes.from_py(3) == dtypes.int64
    assert dtypes.from_py([1, 2.5]) == dtypes.float32 and dtypes.from_py([]) == dtypes.float32
    assert dtypes.finfo(dtypes.float32) == (8, 23) and dtypes.finfo(dtypes.bfloat16) == (8, 7)
    with pytest.raises(TypeError, match="not a float dtype"):
        dtypes.finfo(dtypes.int8)


def test_tensor_helpers():
    x = Tensor([1.0, 2.0])
    assert x.replace(x * 2) is x and x.numpy().tolist() == [2.0, 4.0]
    with pytest.raises(ArgumentError, match="must match"):
        x.replace(Tensor([1, 2]))
    assert x.const_like(3).numpy().tolist() == [3.0, 3.0]
    assert Tensor.empty_like(x).shape == (2,) and Tensor.empty_like(x).dtype == x.dtype
    assert x.to_("cpu") is x


def test_tinyjit_is_mlfuse_jit():
    @TinyJit
    def f(t):
        return (t * 2 + 1).realize()

    for i in range(4):
        np.testing.assert_array_equal(f(Tensor([1.0, 2.0]) * i).numpy(), [2 * i + 1, 4 * i + 1])
    assert isinstance(f, mlfuse.Jit)
