"""The CUDA target's driver bindings (ctypes on the driver API), on any machine.

A GPU machine runs them against the real driver (test_cuda.py). Here they run
against a stand-in library with the driver's signatures (data/libcuda_standin.c,
compiled with the C compiler found here; host memory, launches that record
their arguments), so what crosses the ctypes boundary is checked: device
pointers, copies, the launch shape and each kernel parameter, the JIT options
that bring back the PTX compiler's message, error names, late errors.
"""

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mlfuse import Tensor, dtypes, graph
from mlfuse.driver import run_passes
from mlfuse.targets.cuda import driver as cuda_driver
from mlfuse.targets.cuda.driver import CudaError, Driver
from mlfuse.targets.cuda.target import CudaTarget

SOURCE = Path(__file__).parent / "data" / "libcuda_standin.c"


@pytest.fixture(scope="module")
def standin(tmp_path_factory) -> str:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build the stand-in driver")
    lib = tmp_path_factory.mktemp("standin") / "libcuda_standin.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", str(SOURCE), "-o", str(lib)], check=True)
    return str(lib)


@pytest.fixture
def target(standin, monkeypatch):
    """A CUDA target whose driver is the stand-in."""
    d = Driver(library=standin)
    monkeypatch.setattr(cuda_driver, "driver", lambda: d)
    return CudaTarget()


def _lib(standin):
    lib = ctypes.CDLL(standin)
    lib.standin_last_param.restype = ctypes.c_uint64
    return lib


def test_the_driver_opens_and_describes_its_device(standin):
    d = Driver(library=standin)
    assert (d.name, d.arch, d.multiprocessors) == ("Stand-in GPU 0", "sm_90", 132)
    with pytest.raises(cuda_driver.CudaUnavailable, match="no CUDA device 1"):
        Driver(1, library=standin)
    with pytest.raises(cuda_driver.CudaUnavailable, match=r"no CUDA driver \(/no/such/lib.so\)"):
        Driver(library="/no/such/lib.so")


def test_memory_round_trips_through_device_pointers(target):
    x = np.arange(1000, dtype=np.float32)
    a = target.from_numpy(x)
    assert a.ptr % 256 == 0
    b = target.alloc(1000, dtypes.float32)
    target.copy(b, a)
    np.testing.assert_array_equal(target.to_numpy(b), x)
    w = target.window(a, 64, 100)
    assert w.ptr == a.ptr + 256
    np.testing.assert_array_equal(target.to_numpy(w), x[64:164])
    at = a.ptr
    target.free(a)
    assert target.alloc(1000, dtypes.float32).ptr == at  # the freed allocation, from the pool
    with pytest.raises(ValueError, match="was freed"):
        target.to_numpy(a)


def test_launches_pass_the_shape_and_one_device_pointer_per_buffer(target, standin):
    x = Tensor(np.ones((64, 1024), np.float32), device="cuda_sim")
    mod = graph.compiled_for(graph.collect([x.softmax(1).node])).module.clone()
    run_passes(mod, CudaTarget.kernel_pipeline)
    (kernel,) = target.compile(mod).values()  # real PTX, "loaded" by the stand-in
    out, inp = (
        target.alloc(64 * 1024, dtypes.float32),
        target.from_numpy(np.ones(65536, np.float32)),
    )
    target.launch(kernel, [out, inp])
    lib = _lib(standin)
    assert (lib.standin_last_grid(), lib.standin_last_block()) == (kernel.grid, kernel.block)
    assert (kernel.grid, kernel.block) == (64, 256)
    assert lib.standin_last_nparams() == 2
    assert [lib.standin_last_param(i) for i in range(2)] == [out.ptr, inp.ptr]
    with pytest.raises(ValueError, match="takes 2 buffers, got 1"):
        target.launch(kernel, [out])


def test_rejected_ptx_reports_what_the_jit_said(standin):
    d = Driver(library=standin)
    with pytest.raises(
        CudaError,
        match=r"loading PTX: CUDA_ERROR_INVALID_PTX \(a PTX JIT compilation failed\)\n"
        r"ptxas application ptx input, line 1; fatal   : Parsing error near 'not ptx at a'",
    ):
        d.load("not ptx at all")
    mod = d.load(".visible .entry k0(\n.param .u64 k0_param_0\n)\n{ ret; }")
    with pytest.raises(CudaError, match="finding kernel k1: CUDA_ERROR_NOT_FOUND"):
        d.function(mod, "k1")


def test_a_late_failure_names_the_last_kernel(target, standin):
    x = Tensor(np.ones(256, np.float32), device="cuda_sim")
    mod = graph.compiled_for(graph.collect([(x + 1).node])).module.clone()
    run_passes(mod, CudaTarget.kernel_pipeline)
    (kernel,) = target.compile(mod).values()
    bufs = [target.alloc(256, dtypes.float32), target.from_numpy(np.ones(256, np.float32))]
    target.launch(kernel, bufs)
    _lib(standin).standin_fail_next_sync(719)
    with pytest.raises(
        CudaError, match=rf"CUDA_ERROR_LAUNCH_FAILED \(the last kernel launched was {kernel.name}\)"
    ):
        target.synchronize()


def test_compiled_kernels_are_saved_as_ptx_and_load_again(target, standin):
    assert target.toolchain().startswith("cuda llvmlite") and " sm_90 +ptx80" in target.toolchain()
    x = Tensor(np.ones((64, 1024), np.float32), device="cuda_sim")
    mod = graph.compiled_for(graph.collect([(x.softmax(1) + x.sum(0)).node])).module.clone()
    run_passes(mod, CudaTarget.kernel_pipeline)
    compiled = target.compile(mod)
    assert len(compiled) == 2
    data = target.save(compiled)
    assert data is not None and b".visible .entry" in data
    loaded = target.load(data)
    for name, k in compiled.items():
        assert (loaded[name].grid, loaded[name].block, loaded[name].num_buffers) == (
            k.grid,
            k.block,
            k.num_buffers,
        )
    with pytest.raises(ValueError, match="not saved kernels"):
        target.load(b"junk")
    with pytest.raises(ValueError, match="saved kernels do not load"):
        target.load(b'{"k0": [2, 1, 32]}\0not ptx')


_PROCESS = """
import sys
import numpy as np
from mlfuse import Tensor
from mlfuse.targets.cuda.target import CudaTarget

if sys.argv[1] == "no-compile":  # the kernels must come from the disk cache
    def refuse(*args, **kwargs):
        raise SystemExit("compiled something")
    CudaTarget.compile = refuse
x = Tensor(np.ones((64, 256), np.float32), device="cuda")
y = (x.softmax(1) * 2).sum(0).realize()
print(len(y.numpy()))
"""


def test_a_second_process_loads_the_ptx_from_the_disk_cache(standin, tmp_path):
    import os
    import sys

    env = dict(os.environ, MLFUSE_CUDA_DRIVER=standin, MLFUSE_CACHE_DIR=str(tmp_path))
    for mode in ("compile", "no-compile"):
        done = subprocess.run(
            [sys.executable, "-c", _PROCESS, mode], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0 and done.stdout.strip() == "256", (mode, done.stderr[-2000:])


def test_a_buffer_goes_back_to_the_pool_when_its_last_reference_goes(target, standin):
    lib = _lib(standin)
    lib.standin_live_allocations.restype = ctypes.c_long
    a = target.alloc(1000, dtypes.float32)
    at, live = a.ptr, lib.standin_live_allocations()
    w = target.window(a, 64, 100)
    del w  # a window owns no memory: its base stays
    assert a.ptr == at and target._pooled == 0
    np.testing.assert_array_equal(target.to_numpy(a).size, 1000)
    del a
    assert target._pooled == 4000
    b = target.alloc(1000, dtypes.float32)
    assert b.ptr == at and lib.standin_live_allocations() == live  # no new allocation
    explicit = target.alloc(10, dtypes.float32)
    target.free(explicit)
    del explicit  # freed already: not pooled twice
    assert target._pool[40] == [target._pool[40][0]]


def test_an_allocation_the_device_refuses_gives_the_pool_back_first(target, standin):
    lib = _lib(standin)
    lib.standin_live_allocations.restype = ctypes.c_long
    pooled = [target.alloc(256, dtypes.float32) for _ in range(3)]
    del pooled  # three buffers of 1 KiB in the pool
    assert target._pooled == 3 * 1024
    lib.standin_limit_allocations(ctypes.c_long(lib.standin_live_allocations()))
    try:
        big = target.alloc(1 << 20, dtypes.float32)  # refused, then given after the trim
        assert big.ptr is not None and target._pooled == 0
        lib.standin_limit_allocations(ctypes.c_long(lib.standin_live_allocations()))
        with pytest.raises(CudaError, match=r"allocating 8 bytes: CUDA_ERROR_OUT_OF_MEMORY"):
            target.alloc(2, dtypes.float32)  # nothing left to give back
    finally:
        lib.standin_limit_allocations(ctypes.c_long(1 << 40))


_LOOP = """
import ctypes, sys
import numpy as np
from mlfuse import Tensor
lib = ctypes.CDLL(sys.argv[1])
x = Tensor(np.ones((256, 256), np.float32), device="cuda")
(x * 2 + 1).softmax(1).realize()
before = lib.standin_live_allocations()
for _ in range(50):
    y = (x * 2 + 1).softmax(1).realize()
print(lib.standin_live_allocations() - before)
"""


def test_realizes_in_a_loop_reuse_device_memory(standin, tmp_path):
    import os
    import sys

    env = dict(os.environ, MLFUSE_CUDA_DRIVER=standin, MLFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-c", _LOOP, standin], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) <= 2, done.stdout  # was one new allocation per realize


def test_each_thread_that_calls_the_driver_gets_the_context(target):
    """The driver's current context is per thread: a thread that never made it
    current would get CUDA_ERROR_INVALID_CONTEXT (as the stand-in's calls do)."""
    import threading

    x = np.arange(256, dtype=np.float32)
    got, errors = [], []

    def work():
        try:
            b = target.from_numpy(x)
            got.append(target.to_numpy(b))
            target.synchronize()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors, errors
    np.testing.assert_array_equal(got[0], x)


def test_the_driver_is_found_where_drivers_install_it(standin, tmp_path, monkeypatch):
    """A libcuda.so.1 the loader's search path misses (a container's
    /usr/local/nvidia/lib64) is looked for in the places drivers install it."""
    name = "libmlfuse_test_cuda.so.1"
    shutil.copy(standin, tmp_path / name)
    monkeypatch.setattr(cuda_driver, "LIBRARY", name)
    monkeypatch.setattr(cuda_driver, "PLACES", ("/no/such/place", str(tmp_path)))
    monkeypatch.delenv("MLFUSE_CUDA_DRIVER", raising=False)
    assert Driver().name == "Stand-in GPU 0"
    monkeypatch.setattr(cuda_driver, "PLACES", ())
    with pytest.raises(cuda_driver.CudaUnavailable, match=f"no CUDA driver \\({name}\\)"):
        Driver()


def test_memory_counters_follow_the_live_buffers(target):
    a = target.alloc(256, dtypes.float32)  # 1 KiB
    assert target.allocated == 1024 and target.peak_allocated == 1024
    b = target.alloc(2, dtypes.float64)
    assert target.allocated == 1040
    del a  # to the pool: no longer allocated, still reserved
    assert target.allocated == 16 and target._pooled == 1024
    assert target.peak_allocated == 1040 and target.peak_reserved == 1040
    c = target.alloc(256, dtypes.float32)  # from the pool
    assert target.allocated == 1040 and target._pooled == 0
    w = target.window(c, 64, 16)
    del w  # a window holds no memory of its own
    assert target.allocated == 1040
    del b, c


def test_events_time_and_memory_queries(target):
    import time

    d = target.driver
    start, end, never = d.event_create(), d.event_create(), d.event_create()
    d.event_record(start)
    time.sleep(0.02)
    d.event_record(end)
    d.event_synchronize(end)
    assert d.event_done(end) and 15 <= d.event_elapsed_ms(start, end) < 1000
    with pytest.raises(CudaError, match="timing between events: CUDA_ERROR_INVALID_HANDLE"):
        d.event_elapsed_ms(start, never)
    for ev in (start, end, never):
        d.event_destroy(ev)
    assert d.total_memory() == 80 << 30
    free, total = d.memory_info()
    assert total == 80 << 30 and free <= total


def test_torch_cuda_answers_through_the_driver(standin, monkeypatch):
    import time

    import mlfuse
    from mlfuse.targets import get_target

    d = Driver(library=standin)
    monkeypatch.setattr(cuda_driver, "driver", lambda: d)
    monkeypatch.setattr(get_target("cuda"), "_driver", None)
    cuda = mlfuse.cuda
    assert cuda.is_available() and not cuda.is_initialized()
    assert cuda.memory_allocated() == 0
    cuda.init()
    assert cuda.is_initialized() and cuda.get_device_capability() == (9, 0)
    props = cuda.get_device_properties(0)
    assert (props.name, props.total_memory, props.major, props.multi_processor_count) == (
        "Stand-in GPU 0",
        80 << 30,
        9,
        132,
    )
    before = cuda.memory_allocated()
    x = Tensor(np.ones(1024, np.float32), device="cuda")
    assert cuda.memory_allocated() - before == 4096
    assert cuda.max_memory_allocated() >= cuda.memory_allocated()
    assert cuda.memory_stats()["allocated_bytes.all.current"] == cuda.memory_allocated()
    del x
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == cuda.memory_allocated()
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    start.record()
    time.sleep(0.01)
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 5
    with pytest.raises(RuntimeError, match="both events need enable_timing=True"):
        cuda.Event().elapsed_time(end)
    assert issubclass(cuda.OutOfMemoryError, RuntimeError)
    lib = _lib(standin)
    lib.standin_live_allocations.restype = ctypes.c_long
    cuda.empty_cache()  # the pool back to the driver: nothing to retry with
    lib.standin_limit_allocations(ctypes.c_long(lib.standin_live_allocations()))
    try:
        with pytest.raises(cuda.OutOfMemoryError, match="CUDA_ERROR_OUT_OF_MEMORY"):
            Tensor(np.ones(3, np.float32), device="cuda").realize()
    finally:
        lib.standin_limit_allocations(ctypes.c_long(1 << 40))
    cuda.empty_cache()
