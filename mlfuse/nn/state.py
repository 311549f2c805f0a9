"""tinygrad's ``nn.state``: parameters and state dicts of any object holding
tensors (modules, lists, dicts, plain classes), and the safetensors file format::

    from mlfuse.nn.state import get_parameters, get_state_dict, safe_save, safe_load
    opt = mlfuse.optim.Adam(get_parameters(model))
    safe_save(get_state_dict(model), "model.safetensors")
    load_state_dict(model, safe_load("model.safetensors"))

safetensors files are the Hugging Face format (an 8-byte header length, a JSON
header of names, dtypes, shapes and byte ranges, then the raw little-endian
data), readable by the ``safetensors`` package and PyTorch's loaders.
"""

from __future__ import annotations

import json
import struct
from collections import OrderedDict

import numpy as np

from mlfuse import dtypes
from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError
from mlfuse.nn.modules import Module
from mlfuse.tensor import Tensor

__all__ = [
    "get_state_dict", "get_parameters", "load_state_dict", "safe_save", "safe_load",
    "safe_load_metadata",
]  # fmt: skip

# safetensors' dtype names
_CODES = {
    "float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16", "int64": "I64",
    "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL",
    "uint16": "U16", "uint32": "U32", "uint64": "U64",
}  # fmt: skip
_NAMES = {v: k for k, v in _CODES.items()}


def get_state_dict(obj, prefix: str = "", tensor_type=Tensor) -> dict[str, Tensor]:
    """Every tensor reachable from ``obj`` by dotted name (attributes, list
    positions, dict keys; a module's own ``state_dict`` where it has one):
    ``get_state_dict(model)["l1.weight"]``."""
    out: dict[str, Tensor] = {}
    stack: list[tuple[str, object]] = [(prefix, obj)]
    seen: set[int] = set()
    while stack:  # iterative: deep models do not exhaust the recursion limit
        pre, o = stack.pop()
        if isinstance(o, tensor_type):
            out[pre.rstrip(".")] = o
            continue
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, Module):  # its own names (a Sequential's "0.weight"...)
            for k, v in o.state_dict(keep_vars=True).items():
                out[pre + k] = v
            continue
        if hasattr(o, "_asdict"):
            items = list(o._asdict().items())
        elif isinstance(o, (OrderedDict, dict)):
            items = list(o.items())
        elif isinstance(o, (list, tuple)):
            items = list(enumerate(o))
        elif hasattr(o, "__dict__"):
            items = list(vars(o).items())
        else:
            continue
        stack.extend((f"{pre}{k}.", v) for k, v in reversed(items))
    return out


def get_parameters(obj) -> list[Tensor]:
    """Every tensor reachable from ``obj`` (see :func:`get_state_dict`):
    ``Adam(get_parameters(model))``. A tensor reachable under several names (tied
    weights) is listed once."""
    return list({id(t): t for t in get_state_dict(obj).values()}.values())


def load_state_dict(
    model,
    state_dict: dict,
    strict: bool = True,
    verbose: bool = False,
    consume: bool = False,
    realize: bool = True,
) -> list[Tensor]:
    """Write ``state_dict``'s tensors into the model's, by name, in place, and return
    them (``strict``: every model tensor must be present, a KeyError names the first
    missing; ``consume``: entries are removed from ``state_dict`` as they are used;
    shapes ``()`` and ``(1,)`` load into each other, as tinygrad's and PyTorch's
    ``num_batches_tracked`` differ): ``load_state_dict(model, sd)``."""
    mine = get_state_dict(model)
    loaded = []
    with no_grad():
        for k, t in mine.items():
            if k not in state_dict:
                if strict:
                    raise KeyError(f"load_state_dict: {k!r} is not in the state dict")
                continue
            v = state_dict[k]
            v = v if isinstance(v, Tensor) else Tensor(np.asarray(v))
            if v.shape != t.shape:
                if {v.shape, t.shape} != {(), (1,)}:
                    raise ArgumentError(
                        f"Shape mismatch in layer `{k}`: Expected shape {t.shape}, but found "
                        f"{v.shape} in state dict."
                    )
                v = v.reshape(t.shape)
            t.assign(v.cast(t.dtype).to(t.device))
            if realize:
                t.realize()
            if verbose:
                print(f"loaded {k} {t.shape} {t.dtype.name}")
            if consume:
                del state_dict[k]
            loaded.append(t)
    return loaded


def safe_save(tensors: dict[str, Tensor], fn: str, metadata: dict[str, str] | None = None):
    """Write ``tensors`` to the safetensors file ``fn``: ``safe_save(sd, "m.safetensors")``."""
    header: dict[str, object] = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    blobs, at = [], 0
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"safe_save: {name} is a {type(t).__name__}, not a Tensor")
        code = _CODES.get(t.dtype.name)
        if code is None:
            raise ArgumentError(f"safe_save: {name} has dtype {t.dtype.name}, not in safetensors")
        data = _host_bytes(t)
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)  # the data starts 8-byte aligned
    with open(fn, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)


def _host_bytes(t: Tensor) -> bytes:
    if t.dtype.name == "bfloat16":  # the upper halves of the float32 values
        f32 = np.ascontiguousarray(t.numpy().astype("<f4"))
        return (f32.view("<u4") >> 16).astype("<u2").tobytes()
    arr = np.ascontiguousarray(t.numpy())
    return arr.astype(arr.dtype.newbyteorder("<")).tobytes()


def _read_header(fn: str) -> tuple[dict, int]:
    with open(fn, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ArgumentError(f"{fn} is not a safetensors file (shorter than its header size)")
        (n,) = struct.unpack("<Q", raw)
        try:
            header = json.loads(f.read(n))
        except (ValueError, UnicodeDecodeError) as e:
            raise ArgumentError(f"{fn} is not a safetensors file: bad JSON header ({e})") from e
    return header, 8 + n


def safe_load_metadata(fn: str) -> dict:
    """The safetensors header of ``fn`` (names to dtype, shape, byte range; and
    ``__metadata__``): ``safe_load_metadata("m.safetensors")``."""
    return _read_header(fn)[0]


def safe_load(fn: str, device: str | None = None) -> dict[str, Tensor]:
    """The tensors of the safetensors file ``fn`` by name (on ``device``):
    ``sd = safe_load("m.safetensors")``."""
    header, start = _read_header(fn)
    data = np.memmap(fn, dtype=np.uint8, mode="r")
    out: dict[str, Tensor] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        kind = _NAMES.get(info.get("dtype"))
        if kind is None:
            raise ArgumentError(f"safe_load: {name} has unsupported dtype {info.get('dtype')!r}")
        lo, hi = info["data_offsets"]
        raw = np.asarray(data[start + lo : start + hi])
        shape = tuple(info["shape"])
        if kind == "bfloat16":
            vals = (raw.view("<u2").astype("<u4") << 16).view("<f4").reshape(shape)
        else:
            np_dt = dtypes.as_dtype(kind).np
            vals = raw.view(np.dtype(np_dt).newbyteorder("<")).reshape(shape)
        out[name] = Tensor(np.array(vals), kind, device)
    return out
