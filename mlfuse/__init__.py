"""mlfuse: a lazy-tensor compiler on xDSL.

from mlfuse import Tensor
x = Tensor.randn(64, 64, seed=0)
y = x.softmax(-1)          # nothing runs yet
mlfuse.schedule(y)         # the kernels it would run (one, here)
y.numpy()                  # compile, run, read back
mlfuse.devices()           # ('cpu',): where tensors can live (Tensor(..., device=...))
"""

import math

from mlfuse import dtypes
from mlfuse.autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from mlfuse.autograd import grad_of as grad
from mlfuse.errors import (
    ArgumentError,
    ArgumentTypeError,
    DimError,
    DTypeError,
    UnsupportedModeError,
)
from mlfuse.runtime.jit import Jit, jit
from mlfuse.dtypes import (
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from mlfuse.targets import devices, get_default_device, set_default_device
from mlfuse.layouts import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    strided,
)
from mlfuse.tensor import (
    Generator,
    Tensor,
    cat,
    default_generator,
    dstack,
    einsum,
    hstack,
    lazy_ir,
    manual_seed,
    maximum,
    meshgrid,
    minimum,
    realize,
    schedule,
    schedule_ir,
    stack,
    vstack,
    where,
)

__all__ = [
    "Tensor",
    "dtypes",
    "grad",
    "jit",
    "Jit",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "cat",
    "stack",
    "hstack",
    "vstack",
    "dstack",
    "einsum",
    "where",
    "maximum",
    "meshgrid",
    "minimum",
    "manual_seed",
    "Generator",
    "default_generator",
    "dtype",
    "layout",
    "memory_format",
    "strided",
    "contiguous_format",
    "preserve_format",
    "channels_last",
    "channels_last_3d",
    "realize",
    "schedule",
    "schedule_ir",
    "lazy_ir",
    "devices",
    "get_default_device",
    "set_default_device",
    "bool_",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "half",
    "float",
    "double",
    "short",
    "int",
    "long",
    "promote_types",
    "result_type",
    "ArgumentError",
    "ArgumentTypeError",
    "DTypeError",
    "DimError",
    "UnsupportedModeError",
]
# PyTorch's aliases: mlfuse.half is float16, mlfuse.long is int64, ...; mlfuse.dtype is
# the class of them all (``isinstance(x.dtype, mlfuse.dtype)``)
dtype = dtypes.DType
half, float, double = float16, float32, float64  # noqa: A001 - PyTorch's names
short, int, long = int16, int32, int64  # noqa: A001 - PyTorch's names
__version__ = "0.1.0"

from mlfuse import nn, optim  # noqa: E402, F401 - torch.nn / torch.optim's places; need Tensor

# PyTorch's top-level functions (mlfuse.zeros, mlfuse.exp(x), mlfuse.max(x, 1)...); they
# take the place of the ``mlfuse.tensor`` module's name: ``mlfuse.tensor([1, 2])``
from mlfuse import amp, backends, compiler, cpu, cuda, linalg, namespace, profiler  # noqa: E402, F401
from mlfuse import distributed, distributions, random, serialization, special, testing  # noqa: E402, F401
from mlfuse.amp import (  # noqa: E402 - torch.autocast and its switches
    autocast,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_gpu_dtype,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from mlfuse import func  # noqa: E402, F401 - torch.func
from mlfuse.namespace import *  # noqa: E402, F403
from mlfuse.complex_tensors import (  # noqa: E402 - complex tensors: pairs of real ones
    ComplexTensor,
    imag,
    polar,
    real,
    view_as_complex,
    view_as_real,
)
from mlfuse.complex_tensors import make_complex as complex  # noqa: E402, A001 - PyTorch's name

from mlfuse import fft  # noqa: E402 - torch.fft
from mlfuse.stft import istft, stft  # noqa: E402

complex64, complex128 = dtypes.complex64, dtypes.complex128
cfloat, cdouble = complex64, complex128

__all__ += [n for n in namespace.__all__ if n not in __all__]
__all__ += [
    "ComplexTensor",
    "complex",
    "polar",
    "real",
    "imag",
    "view_as_complex",
    "view_as_real",
    "fft",
    "stft",
    "istft",
    "complex64",
    "complex128",
    "cfloat",
    "cdouble",
    "autocast",
    "clear_autocast_cache",
    "get_autocast_cpu_dtype",
    "get_autocast_gpu_dtype",
    "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_gpu_dtype",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
]

from mlfuse import control_flow, lowrank, signal  # noqa: E402, F401 - torch.signal
from mlfuse.control_flow import cond, while_loop  # noqa: E402 - torch.cond, torch.while_loop
from mlfuse.linalg import geqrf, orgqr, ormqr  # noqa: E402 - torch's deprecated spellings
from mlfuse.lowrank import pca_lowrank, svd_lowrank  # noqa: E402

Tensor.geqrf, Tensor.orgqr, Tensor.ormqr = geqrf, orgqr, ormqr
__all__ += ["cond", "while_loop", "geqrf", "orgqr", "ormqr", "pca_lowrank", "svd_lowrank"]

from mlfuse.helpers import Device, GlobalCounters, getenv  # noqa: E402 - tinygrad's names

TinyJit = Jit  # tinygrad's name for mlfuse.jit's captures
__all__ += ["Device", "GlobalCounters", "getenv", "TinyJit"]

# PyTorch's constants and top-level names for classes kept in submodules
from mlfuse.amp import GradScaler  # noqa: E402
from mlfuse.cuda import Event, Stream  # noqa: E402
from mlfuse.errors import OutOfMemoryError  # noqa: E402

pi, e, inf, nan = math.pi, math.e, math.inf, math.nan
newaxis = None
__all__ += ["GradScaler", "Event", "Stream", "OutOfMemoryError", "pi", "e", "inf", "nan", "newaxis"]
# ``mlfuse.bool`` is PyTorch's torch.bool; bound last, as it shadows the builtin here
# (and left out of __all__, so that ``from mlfuse import *`` keeps the builtin)
bool = bool_  # noqa: A001
