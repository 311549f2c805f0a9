"""``torch.backends.cuda``: ``matmul.allow_tf32`` and the reduced-precision
switches are remembered (mlfuse's float32 products use float32 FMAs whatever
they say), and the scaled-dot-product-attention switches choose nothing:
``F.scaled_dot_product_attention`` is one fused computation of mlfuse's own.
``is_built()`` says whether mlfuse can drive an NVIDIA GPU here."""

from __future__ import annotations

import contextlib

from mlfuse.backends._flags import check_bool


class _MatmulSettings:
    """``torch.backends.cuda.matmul``: switches of float32/half products."""

    _names = (
        "allow_tf32",
        "allow_fp16_reduced_precision_reduction",
        "allow_bf16_reduced_precision_reduction",
        "allow_fp16_accumulation",
    )

    def __init__(self):
        object.__setattr__(self, "_values", dict.fromkeys(self._names, False))
        self._values["allow_fp16_reduced_precision_reduction"] = True
        self._values["allow_bf16_reduced_precision_reduction"] = True

    def __getattr__(self, name: str):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"Unknown attribute {name} of backends.cuda.matmul")

    def __setattr__(self, name: str, value) -> None:
        if name not in self._values:
            raise AttributeError(f"Unknown attribute {name} of backends.cuda.matmul")
        self._values[name] = check_bool(f"backends.cuda.matmul.{name}", value)

    def __repr__(self) -> str:
        return f"<backends.cuda.matmul {self._values}>"


matmul = _MatmulSettings()

_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built() -> bool:
    """Whether mlfuse can reach an NVIDIA GPU's driver here."""
    from mlfuse import cuda

    return cuda.is_available()


def _sdp(kind: str):
    def enable(enabled: bool) -> None:
        _SDP[kind] = check_bool(f"enable_{kind}_sdp", enabled)

    def query() -> bool:
        return _SDP[kind]

    enable.__name__, query.__name__ = f"enable_{kind}_sdp", f"{kind}_sdp_enabled"
    enable.__doc__ = f"Remember whether the {kind} attention kernel is allowed."
    query.__doc__ = f"Whether the {kind} attention kernel is allowed (remembered only)."
    return enable, query


enable_flash_sdp, flash_sdp_enabled = _sdp("flash")
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _sdp("mem_efficient")
enable_math_sdp, math_sdp_enabled = _sdp("math")
enable_cudnn_sdp, cudnn_sdp_enabled = _sdp("cudnn")


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):  # fmt: skip
    """Allow attention kernels inside a ``with`` block (remembered only)."""
    old = dict(_SDP)
    try:
        enable_flash_sdp(enable_flash)
        enable_math_sdp(enable_math)
        enable_mem_efficient_sdp(enable_mem_efficient)
        enable_cudnn_sdp(enable_cudnn)
        yield
    finally:
        _SDP.update(old)


_LINALG = ["default"]


def preferred_linalg_library(backend=None) -> str:
    """The linear-algebra library to prefer (remembered; mlfuse's are its own)."""
    if backend is not None:
        if backend not in ("default", "cusolver", "magma"):
            raise ValueError(f"preferred_linalg_library: unknown backend {backend!r}")
        _LINALG[0] = backend
    return _LINALG[0]
