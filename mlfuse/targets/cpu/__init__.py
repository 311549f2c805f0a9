"""The CPU target: everything mlfuse does differently for the host CPU lives here.

* ``target.py``: :class:`CpuTarget`, the implementation of the target protocol;
* ``parallel_to_cpu.py``: the ``convert-parallel-to-cpu`` pass ([lo, hi) chunks);
* ``entry_points.py``: the ``cpu-entry-points`` pass (kernels take a pointer array);
* ``jit.py``: the host triple, LLVM's O3 and MCJIT;
* ``threads.py``: compiled kernels and the thread pool that runs their chunks;
* ``buffer.py``: buffers in host memory;
* ``emitters.py``: ``mlfuse-opt -t llvm``, ``-t llvm-opt`` and ``-t asm``.
"""

from mlfuse.targets.cpu.buffer import CpuBuffer
from mlfuse.targets.cpu.target import CpuTarget

__all__ = ["CpuBuffer", "CpuTarget"]
