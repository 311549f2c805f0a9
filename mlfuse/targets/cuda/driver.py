"""The CUDA driver API through ctypes on ``libcuda.so.1``.

mlfuse needs a dozen driver calls (initialize, a context, allocate and copy
memory, load PTX, launch, synchronize); ctypes reaches them in any
environment with an NVIDIA driver, with no Python package to install and no
CUDA toolkit (the driver's own JIT turns PTX into machine code). Every call
is checked: a failing one raises :class:`CudaError` with the driver's error
name and what mlfuse was doing (the kernel's name for launches).

Where there is no driver or no GPU, :func:`driver` raises
:class:`CudaUnavailable` (an ``ImportError``-free, catchable reason).
"""

from __future__ import annotations

import ctypes
import os
import threading
from functools import cache

from mlfuse.errors import OutOfMemoryError

_c = ctypes
CUresult = _c.c_int
CUdeviceptr = _c.c_uint64

COMPUTE_CAPABILITY_MAJOR = 75
COMPUTE_CAPABILITY_MINOR = 76
MULTIPROCESSOR_COUNT = 16
CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_NOT_READY = 600
CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
JIT_LOG_BYTES = 16384
"""Room for what the driver's PTX compiler says when it rejects a module."""
LIBRARY = "libcuda.so.1"
PLACES = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/local/nvidia/lib64",
    "/usr/lib/wsl/lib",
)
"""Where drivers install libcuda.so.1 when the loader's search path misses it
(containers mount it under /usr/local/nvidia; WSL under /usr/lib/wsl)."""


def _load(library: str | None) -> ctypes.CDLL:
    """The driver library: ``library`` if named, else ``libcuda.so.1`` through the
    loader's search path, then in the places drivers install it."""
    if library is not None:
        return _c.CDLL(library)
    try:
        return _c.CDLL(LIBRARY)
    except OSError as first:
        for place in PLACES:
            path = os.path.join(place, LIBRARY)
            if os.path.exists(path):
                return _c.CDLL(path)
        raise first


class CudaUnavailable(RuntimeError):
    """No usable CUDA driver or device on this machine."""


class CudaError(RuntimeError):
    """A CUDA driver call failed."""


class CudaOutOfMemory(CudaError, OutOfMemoryError):
    """The device has no memory left for an allocation (``mlfuse.cuda.OutOfMemoryError``)."""


class Driver:
    """One device's primary context and the driver calls mlfuse makes on it
    (``library``: the driver's shared library, ``MLFUSE_CUDA_DRIVER`` or
    ``libcuda.so.1``)."""

    def __init__(self, ordinal: int = 0, library: str | None = None):
        library = library or os.environ.get("MLFUSE_CUDA_DRIVER")
        try:
            self.lib = _load(library)
        except OSError as e:
            raise CudaUnavailable(f"no CUDA driver ({library or LIBRARY}): {e}") from None
        self._lock = threading.Lock()
        self._threads = threading.local()  # a context is current per thread
        self._declared: dict[str, object] = {}  # the functions called only on request
        self._declare()
        rc = self.lib.cuInit(0)
        if rc != 0:
            raise CudaUnavailable(f"the CUDA driver did not initialize: {self.error_name(rc)}")
        count = _c.c_int()
        self.check(self.lib.cuDeviceGetCount(_c.byref(count)), "counting devices")
        if count.value <= ordinal:
            raise CudaUnavailable(f"no CUDA device {ordinal} ({count.value} found)")
        self.device = _c.c_int()
        self.check(self.lib.cuDeviceGet(_c.byref(self.device), ordinal), "opening the device")
        self.context = _c.c_void_p()
        self.check(
            self.lib.cuDevicePrimaryCtxRetain(_c.byref(self.context), self.device),
            "creating a context",
        )
        self.make_current()
        name = _c.create_string_buffer(256)
        self.check(self.lib.cuDeviceGetName(name, 256, self.device), "naming the device")
        self.name = name.value.decode()
        major = self.attribute(COMPUTE_CAPABILITY_MAJOR)
        minor = self.attribute(COMPUTE_CAPABILITY_MINOR)
        self.arch = f"sm_{major}{minor}"
        self.multiprocessors = self.attribute(MULTIPROCESSOR_COUNT)

    def _declare(self) -> None:
        L = self.lib
        p, u64, sz = _c.c_void_p, CUdeviceptr, _c.c_size_t
        sigs = {
            "cuInit": [_c.c_uint],
            "cuDeviceGetCount": [_c.POINTER(_c.c_int)],
            "cuDeviceGet": [_c.POINTER(_c.c_int), _c.c_int],
            "cuDeviceGetName": [_c.c_char_p, _c.c_int, _c.c_int],
            "cuDeviceGetAttribute": [_c.POINTER(_c.c_int), _c.c_int, _c.c_int],
            "cuDevicePrimaryCtxRetain": [_c.POINTER(p), _c.c_int],
            "cuCtxSetCurrent": [p],
            "cuCtxSynchronize": [],
            "cuMemAlloc_v2": [_c.POINTER(u64), sz],
            "cuMemFree_v2": [u64],
            "cuMemcpyHtoD_v2": [u64, p, sz],
            "cuMemcpyDtoH_v2": [p, u64, sz],
            "cuMemcpyDtoD_v2": [u64, u64, sz],
            "cuModuleLoadDataEx": [
                _c.POINTER(p),
                _c.c_char_p,
                _c.c_uint,
                _c.POINTER(_c.c_int),
                _c.POINTER(p),
            ],
            "cuModuleGetFunction": [_c.POINTER(p), p, _c.c_char_p],
            "cuLaunchKernel": [p] + [_c.c_uint] * 6 + [_c.c_uint, p, p, p],
            "cuGetErrorName": [CUresult, _c.POINTER(_c.c_char_p)],
            "cuGetErrorString": [CUresult, _c.POINTER(_c.c_char_p)],
        }
        for name, args in sigs.items():
            fn = getattr(L, name)
            fn.argtypes = args
            fn.restype = CUresult

    # -- errors -------------------------------------------------------------
    def error_name(self, rc: int) -> str:
        name, text = _c.c_char_p(), _c.c_char_p()
        self.lib.cuGetErrorName(rc, _c.byref(name))
        self.lib.cuGetErrorString(rc, _c.byref(text))
        n = name.value.decode() if name.value else f"CUDA error {rc}"
        return f"{n} ({text.value.decode()})" if text.value else n

    def check(self, rc: int, doing: str) -> None:
        if rc != 0:
            kind = CudaOutOfMemory if rc == CUDA_ERROR_OUT_OF_MEMORY else CudaError
            raise kind(f"{doing}: {self.error_name(rc)}")

    # -- the device -----------------------------------------------------------
    def make_current(self) -> None:
        self.check(self.lib.cuCtxSetCurrent(self.context), "making the context current")
        self._threads.current = True

    def _here(self) -> None:
        """Make the context current in the calling thread, once per thread (the
        driver's current context is a thread's: calls from a thread that never
        set it fail with CUDA_ERROR_INVALID_CONTEXT)."""
        if not getattr(self._threads, "current", False):
            self.make_current()

    def attribute(self, which: int) -> int:
        v = _c.c_int()
        self.check(self.lib.cuDeviceGetAttribute(_c.byref(v), which, self.device), "a query")
        return v.value

    def synchronize(self, doing: str = "synchronizing") -> None:
        self._here()
        self.check(self.lib.cuCtxSynchronize(), doing)

    def _optional(self, name: str, argtypes: list):
        """A driver function mlfuse calls only on request (declared on first use)."""
        found = self._declared.get(name)
        if found is None:
            try:
                found = getattr(self.lib, name)
            except AttributeError:
                raise CudaError(f"the CUDA driver has no {name}") from None
            found.argtypes, found.restype = argtypes, CUresult
            self._declared[name] = found
        return found

    def total_memory(self) -> int:
        """The device's memory in bytes."""
        n = _c.c_size_t()
        fn = self._optional("cuDeviceTotalMem_v2", [_c.POINTER(_c.c_size_t), _c.c_int])
        self.check(fn(_c.byref(n), self.device), "asking the device's memory")
        return n.value

    def memory_info(self) -> tuple[int, int]:
        """(free, total) bytes of device memory."""
        self._here()
        free, total = _c.c_size_t(), _c.c_size_t()
        fn = self._optional("cuMemGetInfo_v2", [_c.POINTER(_c.c_size_t)] * 2)
        self.check(fn(_c.byref(free), _c.byref(total)), "asking the free memory")
        return free.value, total.value

    # -- events ---------------------------------------------------------------
    def event_create(self) -> _c.c_void_p:
        self._here()
        ev = _c.c_void_p()
        fn = self._optional("cuEventCreate", [_c.POINTER(_c.c_void_p), _c.c_uint])
        self.check(fn(_c.byref(ev), 0), "creating an event")
        return ev

    def event_record(self, ev) -> None:
        """Record ``ev`` on the stream mlfuse launches on (the default stream)."""
        self._here()
        fn = self._optional("cuEventRecord", [_c.c_void_p, _c.c_void_p])
        self.check(fn(ev, None), "recording an event")

    def event_synchronize(self, ev) -> None:
        self._here()
        self.check(self._optional("cuEventSynchronize", [_c.c_void_p])(ev), "waiting for an event")

    def event_done(self, ev) -> bool:
        self._here()
        rc = self._optional("cuEventQuery", [_c.c_void_p])(ev)
        if rc == CUDA_ERROR_NOT_READY:
            return False
        self.check(rc, "querying an event")
        return True

    def event_elapsed_ms(self, start, end) -> float:
        self._here()
        ms = _c.c_float()
        fn = self._optional(
            "cuEventElapsedTime", [_c.POINTER(_c.c_float), _c.c_void_p, _c.c_void_p]
        )
        self.check(fn(_c.byref(ms), start, end), "timing between events")
        return ms.value

    def event_destroy(self, ev) -> None:
        self._here()
        self.check(self._optional("cuEventDestroy_v2", [_c.c_void_p])(ev), "destroying an event")

    # -- memory -------------------------------------------------------------
    def alloc(self, nbytes: int) -> int:
        self._here()
        ptr = CUdeviceptr()
        self.check(
            self.lib.cuMemAlloc_v2(_c.byref(ptr), max(nbytes, 1)), f"allocating {nbytes} bytes"
        )
        return ptr.value

    def free(self, ptr: int) -> None:
        self._here()
        self.check(self.lib.cuMemFree_v2(ptr), "freeing device memory")

    def to_device(self, dst: int, host: int, nbytes: int) -> None:
        self._here()
        self.check(self.lib.cuMemcpyHtoD_v2(dst, host, nbytes), "copying to the device")

    def to_host(self, host: int, src: int, nbytes: int) -> None:
        self._here()
        self.check(self.lib.cuMemcpyDtoH_v2(host, src, nbytes), "copying from the device")

    def device_copy(self, dst: int, src: int, nbytes: int) -> None:
        self._here()
        self.check(self.lib.cuMemcpyDtoD_v2(dst, src, nbytes), "copying on the device")

    # -- kernels --------------------------------------------------------------
    def load(self, ptx: str) -> ctypes.c_void_p:
        """Load a PTX module (the driver compiles it for this device); a rejected
        one raises CudaError with what the driver's compiler said."""
        self._here()
        mod = _c.c_void_p()
        log = _c.create_string_buffer(JIT_LOG_BYTES)
        keys = (_c.c_int * 2)(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        values = (_c.c_void_p * 2)(_c.cast(log, _c.c_void_p), _c.c_void_p(JIT_LOG_BYTES))
        with self._lock:
            rc = self.lib.cuModuleLoadDataEx(_c.byref(mod), ptx.encode() + b"\0", 2, keys, values)
        if rc != 0:
            said = log.value.decode(errors="replace").strip()
            raise CudaError(f"loading PTX: {self.error_name(rc)}" + (f"\n{said}" if said else ""))
        return mod

    def function(self, module: ctypes.c_void_p, name: str) -> ctypes.c_void_p:
        self._here()
        fn = _c.c_void_p()
        self.check(
            self.lib.cuModuleGetFunction(_c.byref(fn), module, name.encode()),
            f"finding kernel {name}",
        )
        return fn

    def launch(self, fn, name: str, grid: int, block: int, pointers) -> None:
        """Launch ``fn`` with one pointer argument per buffer (asynchronous)."""
        self._here()
        n = len(pointers)
        args = (CUdeviceptr * n)(*pointers)
        at = _c.addressof(args)  # kernelParams: the address of each argument's value
        params = (_c.c_void_p * n)(*range(at, at + 8 * n, 8))
        rc = self.lib.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, None, params, None)
        if rc != 0:  # (the message is made only then: launches are the hot path)
            self.check(rc, f"launch of {name} ({grid} blocks of {block} threads)")


_lock = threading.Lock()


@cache
def _open() -> Driver:
    return Driver()


def driver() -> Driver:
    """The driver of device 0, opened on first use (raises :class:`CudaUnavailable`)."""
    with _lock:
        return _open()


def available() -> bool:
    """Whether a CUDA device can be used here."""
    try:
        driver()
    except CudaUnavailable:
        return False
    return True
