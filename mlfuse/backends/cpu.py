"""``torch.backends.cpu``: the vector instructions mlfuse's CPU kernels use."""

from __future__ import annotations


def get_cpu_capability() -> str:
    """PyTorch's name of the widest vector unit LLVM targets on this CPU
    (``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"``)."""
    import llvmlite.binding as llvm

    features = llvm.get_host_cpu_features()
    if features.get("avx512f"):
        return "AVX512"
    if features.get("avx2"):
        return "AVX2"
    return "DEFAULT"
