"""mlfuse: a lazy-tensor compiler on xDSL.

from mlfuse import Tensor
x = Tensor.randn(64, 64, seed=0)
y = x.softmax(-1)          # nothing runs yet
mlfuse.schedule(y)         # the kernels it would run (one, here)
y.numpy()                  # compile, run, read back
mlfuse.devices()           # ('cpu',): where tensors can live (Tensor(..., device=...))
"""

from mlfuse import dtypes
from mlfuse.dtypes import bool_, float32, float64, int32, int64
from mlfuse.targets import devices, get_default_device, set_default_device
from mlfuse.tensor import (
    Tensor,
    cat,
    lazy_ir,
    manual_seed,
    maximum,
    minimum,
    realize,
    schedule,
    schedule_ir,
    stack,
    where,
)

__all__ = [
    "Tensor",
    "dtypes",
    "cat",
    "stack",
    "where",
    "maximum",
    "minimum",
    "manual_seed",
    "realize",
    "schedule",
    "schedule_ir",
    "lazy_ir",
    "devices",
    "get_default_device",
    "set_default_device",
    "bool_",
    "int32",
    "int64",
    "float32",
    "float64",
]
__version__ = "0.1.0"
