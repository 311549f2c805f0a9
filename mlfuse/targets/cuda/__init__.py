"""The CUDA target: everything mlfuse does differently for NVIDIA GPUs lives here.

* ``target.py``: :class:`CudaTarget`, the implementation of the target protocol;
* ``map_plan.py``: the ``gpu-map-plan`` pass (kernel plans onto blocks and threads);
* ``gpu_to_nvvm.py``: the ``convert-gpu-to-nvvm`` pass (thread ids, shuffles, shared memory);
* ``ptx.py``: LLVM IR for NVPTX, LLVM's O3 and the PTX text;
* ``driver.py``: the CUDA driver API through ctypes (memory, modules, launches);
* ``emitters.py``: ``mlfuse-opt -t ptx`` and ``-t nvptx-llvm``.
"""

from mlfuse.targets.cuda.target import CudaBuffer, CudaTarget

__all__ = ["CudaBuffer", "CudaTarget"]
