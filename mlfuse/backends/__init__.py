"""PyTorch's ``torch.backends`` switches: ``mlfuse.backends.cudnn.benchmark = True``,
``mlfuse.backends.cuda.matmul.allow_tf32 = False``, ``mlfuse.backends.mps.is_available()``.

mlfuse generates its own kernels, so the switches that choose among vendor
libraries' algorithms change nothing here, and the ones that allow less
precise arithmetic (TF32, reduced-precision reductions) are remembered but
never needed: float32 products always use float32 FMAs, every kernel computes
the same result on every run (deterministic), and there is no cuDNN, MPS or
oneDNN to use. Each submodule says what it answers.
"""

from __future__ import annotations

from mlfuse.backends import cpu, cuda, cudnn, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkldnn", "mps", "openmp", "opt_einsum"]
