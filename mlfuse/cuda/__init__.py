"""``torch.cuda``'s everyday questions, answered for mlfuse's CUDA target:

    device = "cuda" if mlfuse.cuda.is_available() else "cpu"

mlfuse drives one GPU (device 0); these never raise where no driver or GPU
exists (``is_available()`` is False and ``device_count()`` 0 there).
"""

from __future__ import annotations

from mlfuse.errors import ArgumentError, OutOfMemoryError
from mlfuse.targets import get_target

__all__ = [
    "is_available", "device_count", "current_device", "get_device_name", "synchronize",
    "manual_seed", "manual_seed_all", "empty_cache", "set_device", "is_initialized", "init",
    "get_device_capability", "get_device_properties", "is_bf16_supported", "mem_get_info",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "reset_peak_memory_stats", "reset_max_memory_allocated", "memory_stats", "Event",
    "Stream", "current_stream", "default_stream", "stream", "device", "OutOfMemoryError",
    "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state",
]  # fmt: skip


def is_available() -> bool:
    """Whether a CUDA GPU and driver can be used here."""
    return get_target("cuda").available()


def device_count() -> int:
    """GPUs mlfuse can use: 1 where one is available (it drives device 0), else 0."""
    return 1 if is_available() else 0


def current_device() -> int:
    """The GPU in use: always 0."""
    return 0


def set_device(device) -> None:
    """Accepts device 0 (``0``, ``"cuda"``, ``"cuda:0"``), the one mlfuse drives."""
    if str(device) not in ("0", "cuda", "cuda:0"):
        raise ArgumentError(f"set_device: mlfuse drives CUDA device 0 only, got {device!r}")


def get_device_name(device=None) -> str:
    """The GPU's name as the driver reports it."""
    if not is_available():
        raise RuntimeError("get_device_name: no CUDA device is available")
    return get_target("cuda").device_description()


def synchronize(device=None) -> None:
    """Wait for the GPU's queued work (nothing to do where there is no GPU)."""
    if is_available():
        get_target("cuda").synchronize()


def manual_seed(seed: int) -> None:
    """Seed mlfuse's generator (one for every device, as random values are drawn
    on the host)."""
    from mlfuse.tensor import manual_seed as seed_all

    seed_all(seed)


manual_seed_all = manual_seed


def empty_cache() -> None:
    """Give the pool of freed device buffers back to the driver (they return to
    the pool when their tensors die)."""
    if is_available():
        get_target("cuda").trim()


def is_initialized() -> bool:
    """Whether the driver has been opened (it opens on first use)."""
    return get_target("cuda")._driver is not None


def init() -> None:
    """Open the driver now (raises RuntimeError where there is no CUDA device)."""
    _driver("init")


def _driver(what: str):
    if not is_available():
        raise RuntimeError(f"{what}: no CUDA device is available")
    return get_target("cuda").driver


def get_device_capability(device=None) -> tuple[int, int]:
    """The compute capability, ``(9, 0)`` on an H100."""
    arch = _driver("get_device_capability").arch.removeprefix("sm_")
    return int(arch[:-1]), int(arch[-1])


class _DeviceProperties:
    """What ``get_device_properties`` tells: ``name``, ``total_memory`` (bytes),
    ``major``, ``minor``, ``multi_processor_count``."""

    def __init__(self, drv):
        self.name = drv.name
        self.total_memory = drv.total_memory()
        self.major, self.minor = get_device_capability()
        self.multi_processor_count = drv.multiprocessors

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory >> 20}MB, "
            f"multi_processor_count={self.multi_processor_count})"
        )


def get_device_properties(device=None) -> _DeviceProperties:
    """The device's name, memory, compute capability and multiprocessors."""
    return _DeviceProperties(_driver("get_device_properties"))


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 tensors can be used on the GPU: mlfuse computes them in
    float32 on any device it drives, so wherever a device is available."""
    return is_available()


def mem_get_info(device=None) -> tuple[int, int]:
    """``(free, total)`` bytes of device memory, as the driver counts them."""
    return _driver("mem_get_info").memory_info()


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors' device buffers (0 before the driver opens)."""
    return get_target("cuda").allocated if is_initialized() else 0


def max_memory_allocated(device=None) -> int:
    """The most :func:`memory_allocated` has been since the last reset."""
    return get_target("cuda").peak_allocated if is_initialized() else 0


def memory_reserved(device=None) -> int:
    """Bytes mlfuse holds from the driver: live buffers and the pool of freed ones."""
    if not is_initialized():
        return 0
    t = get_target("cuda")
    return t.allocated + t._pooled


def max_memory_reserved(device=None) -> int:
    """The most :func:`memory_reserved` has been since the last reset."""
    return get_target("cuda").peak_reserved if is_initialized() else 0


def reset_peak_memory_stats(device=None) -> None:
    """Start the peaks over from the current amounts."""
    t = get_target("cuda")
    t.peak_allocated = t.allocated
    t.peak_reserved = t.allocated + t._pooled


reset_max_memory_allocated = reset_peak_memory_stats


def memory_stats(device=None) -> dict[str, int]:
    """PyTorch's counters that mlfuse keeps (``allocated_bytes.all.current`` ...)."""
    return {
        "allocated_bytes.all.current": memory_allocated(),
        "allocated_bytes.all.peak": max_memory_allocated(),
        "reserved_bytes.all.current": memory_reserved(),
        "reserved_bytes.all.peak": max_memory_reserved(),
    }


class Event:
    """A point in the GPU's queue of work, for timing: ``start.record(); ...;
    end.record(); end.synchronize(); start.elapsed_time(end)`` (milliseconds).
    mlfuse queues kernels when values are realized: realize (or read) the
    results you time before recording the end."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:  # fmt: skip
        self.enable_timing = enable_timing
        self._ev = None

    def record(self, stream=None) -> None:
        drv = _driver("Event.record")
        if self._ev is None:
            self._ev = drv.event_create()
        drv.event_record(self._ev)

    def synchronize(self) -> None:
        if self._ev is not None:
            get_target("cuda").driver.event_synchronize(self._ev)

    def query(self) -> bool:
        """Whether the work before the record is done (True if never recorded)."""
        return self._ev is None or get_target("cuda").driver.event_done(self._ev)

    def wait(self, stream=None) -> None:
        """Accepted: mlfuse queues all work on one stream, in order."""

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event's record to ``end_event``'s."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("elapsed_time: both events need enable_timing=True")
        if self._ev is None or end_event._ev is None:
            raise RuntimeError("elapsed_time: both events must be recorded first")
        return get_target("cuda").driver.event_elapsed_ms(self._ev, end_event._ev)

    def __del__(self) -> None:
        if self._ev is not None:
            try:
                get_target("cuda").driver.event_destroy(self._ev)
            except Exception:  # pragma: no cover - interpreter shutdown
                pass


class Stream:
    """mlfuse's one queue of GPU work (every kernel runs on it, in order):
    PyTorch's stream API over it (``synchronize``, ``wait_stream``, ``query``,
    ``record_event``)."""

    def __init__(self, device=None, priority: int = 0) -> None:
        self.device = device

    def synchronize(self) -> None:
        synchronize()

    def wait_stream(self, stream: Stream) -> None:
        """Accepted: there is one stream."""

    def wait_event(self, event: Event) -> None:
        """Accepted: there is one stream."""

    def query(self) -> bool:
        synchronize()
        return True

    def record_event(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event


def current_stream(device=None) -> Stream:
    """The stream mlfuse queues work on."""
    return Stream(device)


default_stream = current_stream


class stream:  # noqa: N801 - PyTorch's name
    """``with mlfuse.cuda.stream(s):``: work goes to mlfuse's one stream anyway."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc) -> None:
        return None


class device:  # noqa: N801 - PyTorch's name
    """``with mlfuse.cuda.device(0):``: device 0 (the one mlfuse drives)."""

    def __init__(self, device) -> None:
        if device is not None and not (isinstance(device, int) and device in (-1, 0)):
            set_device(device)
        self.idx = device

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


def seed() -> None:
    """Seed mlfuse's generator from the operating system (shared by all devices)."""
    from mlfuse.tensor import default_generator

    default_generator.seed()


seed_all = seed


def initial_seed() -> int:
    """The seed the generator was last seeded with."""
    from mlfuse.tensor import default_generator

    return default_generator.initial_seed()


def get_rng_state(device="cuda"):
    """The generator's state (one for every device: draws are made on the host)."""
    from mlfuse.namespace import get_rng_state as state

    return state()


def set_rng_state(new_state, device="cuda") -> None:
    """Restore a state :func:`get_rng_state` returned."""
    from mlfuse.namespace import set_rng_state as restore

    restore(new_state)


from mlfuse.cuda import amp  # noqa: E402, F401 - torch.cuda.amp
