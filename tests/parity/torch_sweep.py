"""PyTorch's own sample inputs through mlfuse, compared with PyTorch in one process.

PyTorch's test suite describes its operators (``OpInfo``: sample inputs, error
inputs, dtypes, autograd support) and modules (``ModuleInfo``: constructor and
forward inputs). This script runs those samples through the mlfuse function or
module of the same name and prints one line per difference:

    MISSING  no mlfuse function/module of that name
    RAISE    mlfuse raised where PyTorch computed a result
    WRONG    values or shapes differ (float32: rtol 1e-4, float64: 1e-7)
    DTYPE    the values agree, the result dtype does not
    GRAD     the gradients of sum(out * w) differ (--grad)
    NOERROR  PyTorch raised for an error input, mlfuse did not
    ERRTYPE  both raised, mlfuse's error is not an instance of PyTorch's class

and a count of each at the end. Not every line is a defect: an OpInfo whose
``op`` is a lambda reordering its arguments (where, embedding, the polygamma variants)
or whose result is random (dropout) shows up too; read the lines.

Needs torch and expecttest (neither is an mlfuse dependency); not collected by
pytest. Examples::

    python tests/parity/torch_sweep.py ops --dtypes float32,float64 --grad
    python tests/parity/torch_sweep.py ops --only nn.functional.conv2d,linalg.qr
    python tests/parity/torch_sweep.py ops --shard 0/2   # and 1/2 in a second process
    python tests/parity/torch_sweep.py modules --grad
"""

from __future__ import annotations

import argparse
import collections
import signal
import sys

import numpy as np
import torch

import mlfuse
from mlfuse import Tensor
from mlfuse.complex_tensors import from_numpy as complex_from_numpy

DTYPES = {
    torch.bool: "bool", torch.uint8: "uint8", torch.int8: "int8", torch.int16: "int16",
    torch.int32: "int32", torch.int64: "int64", torch.float16: "float16",
    torch.float32: "float32", torch.float64: "float64", torch.complex64: "complex64",
    torch.complex128: "complex128",
}  # fmt: skip
RANDOM = ("rand", "dropout", "normal", "bernoulli", "multinomial", "uniform", "empty",
          "exponential", "geometric", "cauchy", "log_normal", "poisson", "randperm")  # fmt: skip
TOL = {np.float16: (1e-2, 1e-3), np.float32: (1e-4, 1e-5), np.complex64: (1e-4, 1e-5)}


class Unconvertible(Exception):
    """A sample holds something mlfuse has no counterpart for (a generator, a dtype)."""


class Timeout(Exception):
    """One call ran past its time limit (a compile-time blowup)."""


def _alarm(*_):
    raise Timeout


def to_mlfuse(x):
    """A torch value (tensors, dtypes, sizes, nested containers) as mlfuse's."""
    if isinstance(x, torch.Tensor):
        if x.dtype not in DTYPES or x.is_meta or x.ndim > 32:
            raise Unconvertible(f"{x.dtype} tensor of {x.ndim} dims on {x.device}")
        a = x.detach().cpu().resolve_conj().resolve_neg().numpy().copy()
        if x.is_complex():
            return complex_from_numpy(a)
        return Tensor(a, dtype=getattr(mlfuse.dtypes, DTYPES[x.dtype]))
    if isinstance(x, torch.dtype):
        if x not in DTYPES:
            raise Unconvertible(str(x))
        return getattr(mlfuse.dtypes, DTYPES[x])
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(to_mlfuse(v) for v in x)
    if isinstance(x, dict):
        return {k: to_mlfuse(v) for k, v in x.items()}
    if isinstance(x, torch.Generator):
        raise Unconvertible("generator")
    if isinstance(x, torch.memory_format):
        return getattr(mlfuse, str(x).split(".")[-1])
    if isinstance(x, torch.device):
        return "cpu"
    if isinstance(x, slice):
        return slice(to_mlfuse(x.start), to_mlfuse(x.stop), to_mlfuse(x.step))
    return x


def to_numpy(y):
    if isinstance(y, torch.Tensor):
        y = y.detach()
        return (y.float() if y.dtype == torch.bfloat16 else y).resolve_conj().resolve_neg().numpy()
    if isinstance(y, Tensor):
        return np.asarray(y.numpy())
    if isinstance(y, (list, tuple)):
        return [to_numpy(v) for v in y]
    return y


def differ(want, got) -> str | None:
    """How mlfuse's result ``got`` differs from PyTorch's ``want`` (None: alike)."""
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"structure: {type(got).__name__} for {len(want)} results"
        for i, (w, g) in enumerate(zip(want, got)):
            r = differ(w, g)
            if r:
                return f"[{i}] {r}"
        return None
    if isinstance(want, np.ndarray):
        got = np.asarray(got)
        if want.shape != got.shape:
            return f"shape {got.shape} vs {want.shape}"
        kind = np.complex128 if np.iscomplexobj(want) else np.float64
        if want.dtype == bool or got.dtype == bool:
            ok = np.array_equal(want.astype(got.dtype), got)
        else:
            rtol, atol = TOL.get(want.dtype.type, (1e-7, 1e-9))
            ok = np.allclose(got.astype(kind), want.astype(kind), rtol, atol, equal_nan=True)
        if not ok:
            with np.errstate(invalid="ignore"):
                d = np.abs(got.astype(kind) - want.astype(kind))
            return f"values, max difference {np.nanmax(d) if d.size else 0:.3g}"
        if want.dtype != got.dtype:
            return f"dtype {got.dtype} vs {want.dtype}"
        return None
    if isinstance(want, (bool, int, float, complex)):
        try:
            ok = np.allclose(complex(want), complex(got), 1e-4, 1e-6, equal_nan=True)
        except TypeError:
            return f"a {type(got).__name__} for a {type(want).__name__}"
        return None if ok else f"{got} vs {want}"
    return None


def _tensors(x, acc):
    if isinstance(x, (torch.Tensor, Tensor)):
        acc.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _tensors(v, acc)
    elif isinstance(x, dict):
        for v in x.values():
            _tensors(v, acc)
    return acc


def _weighted_sum(outs, weights, to):
    total = None
    for o, w in zip(outs, weights):
        term = (o * to(w, o)).sum()
        total = term if total is None else total + term
    return total


def gradients_differ(call_torch, call_mlfuse, inputs) -> str | None:
    """Compare d sum(w * out) / d input for the floating-point tensors of ``inputs``
    (a list of torch tensors): ``call_*(leaves)`` builds the outputs from them."""
    leaves = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in inputs]
    rng = np.random.default_rng(0)
    try:
        results = [o for o in _tensors(call_torch(leaves), []) if o.is_floating_point()]
        if not any(o.requires_grad for o in results):
            return None
        # a weight per real result; those PyTorch does not differentiate weigh 0
        weights = [
            rng.standard_normal(tuple(o.shape)) if o.requires_grad else np.zeros(tuple(o.shape))
            for o in results
        ]
        outs = [o for o in results if o.requires_grad]
        live = [w for o, w in zip(results, weights) if o.requires_grad]
        _weighted_sum(outs, live, lambda w, o: torch.tensor(w, dtype=o.dtype)).backward()
    except RuntimeError:  # PyTorch differentiates not every input (running stats, weights)
        return None
    mleaves = [to_mlfuse(t) for t in inputs]
    for m, t in zip(mleaves, leaves):
        if t.requires_grad:
            m.requires_grad_()
    mouts = [o for o in _tensors(call_mlfuse(mleaves), []) if o.dtype.is_float]
    if len(mouts) != len(results):
        return f"{len(mouts)} real results for {len(results)}"
    _weighted_sum(mouts, weights, lambda w, o: Tensor(w, dtype=o.dtype)).backward()
    found = []
    for i, (t, m) in enumerate(zip(leaves, mleaves)):
        if t.grad is None:
            continue
        if m.grad is None:
            found.append(f"input {i} {tuple(t.shape)}: no gradient")
        elif r := differ(t.grad.numpy(), np.asarray(m.grad.numpy())):
            found.append(f"input {i}: {r}")
    return "; ".join(found) or None


def _describe(*xs) -> str:
    def d(x):
        if isinstance(x, torch.Tensor):
            return f"T{tuple(x.shape)}{'' if x.dtype == torch.float32 else str(x.dtype)[6:]}"
        if isinstance(x, (list, tuple)):
            return "[" + ",".join(d(v) for v in x) + "]"
        if isinstance(x, dict):
            return "{" + ",".join(f"{k}={d(v)}" for k, v in x.items()) + "}"
        return repr(x)[:40]

    return " ".join(d(x) for x in xs)


def _resolve_op(name: str):
    """The mlfuse callable for an OpInfo name: ``(f, is_method)`` or None."""
    obj = mlfuse
    parts = name.split(".")
    if len(parts) > 1:
        for p in parts:
            obj = getattr(obj, p, None)
            if obj is None:
                return None
        return obj, False
    f = getattr(mlfuse, name, None)
    if callable(f):
        return f, False
    if hasattr(Tensor, name):
        return name, True
    return None


def _attempt(fn, tag: str, where: str, out, stats, seconds: int = 120):
    """``(True, fn())``, or ``(False, None)`` with a TIMEOUT or RAISE line."""
    try:
        return True, _guarded(fn, seconds)
    except Timeout:
        print(f"TIMEOUT {tag} | {where}", file=out)
        stats["timeout"] += 1
    except Exception as e:
        msg = str(e).split("\n")[0][:160]
        print(f"RAISE {tag} {type(e).__name__}: {msg} | {where}", file=out)
        stats["raise"] += 1
    return False, None


def _guarded(fn, seconds: int):
    signal.alarm(seconds)
    try:
        return fn()
    finally:
        signal.alarm(0)


def sweep_ops(only, dtypes, max_samples, grad, shard, out, stats):
    from torch.testing._internal.common_methods_invocations import op_db

    names = sorted({o.name for o in op_db})
    if shard:
        k, n = shard
        names = names[k::n]
    for op in op_db:
        full = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        if op.name not in names or (only and op.name not in only and full not in only):
            continue
        if any(r in op.name for r in RANDOM) or op.name.startswith(("masked.", "sparse.", "_")):
            continue
        found = _resolve_op(op.name)
        if found is None:
            print(f"MISSING {full}", file=out)
            stats["missing"] += 1
            continue
        f, method = found

        def call(x, args, kw, f=f, method=method):
            return getattr(x, f)(*args, **kw) if method else f(x, *args, **kw)

        for dt in dtypes:
            if dt not in op.supported_dtypes("cpu"):
                continue
            try:
                samples = list(op.sample_inputs("cpu", dt, requires_grad=False))[:max_samples]
            except Exception as e:  # PyTorch's own sample generator failing
                print(f"NOSAMPLES {full} {DTYPES[dt]}: {e}", file=out)
                continue
            for i, s in enumerate(samples):
                tag = f"{full} {DTYPES[dt]} #{i}"
                try:
                    want = op(s.input, *s.args, **s.kwargs)
                except Exception:
                    continue
                try:
                    x, args, kw = to_mlfuse(s.input), to_mlfuse(list(s.args)), to_mlfuse(s.kwargs)
                except Exception:  # no mlfuse counterpart (a generator, a meta tensor ...)
                    continue
                where = _describe(s.input, list(s.args), s.kwargs)
                ran, got = _attempt(lambda: to_numpy(call(x, args, kw)), tag, where, out, stats)  # noqa: B023
                if not ran:
                    continue
                r = differ(to_numpy(want), got)
                if r:
                    kind = "DTYPE" if r.startswith("dtype") else "WRONG"
                    print(f"{kind} {tag} {r} | {where}", file=out)
                    stats[kind.lower()] += 1
                    continue
                stats["ok"] += 1
                if not (grad and op.supports_autograd and dt.is_floating_point):
                    continue
                tin = [t for t in _tensors([s.input, list(s.args), s.kwargs], [])]
                floats = [t for t in tin if t.is_floating_point()]
                if not floats:
                    continue

                def rebuild(leaves, conv, floats=floats, s=s):
                    swap = {id(a): b for a, b in zip(floats, leaves)}

                    def sub(v):
                        if isinstance(v, torch.Tensor):
                            return swap.get(id(v), v if conv is None else conv(v))
                        if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
                            return type(v)(sub(u) for u in v)
                        if isinstance(v, dict):
                            return {k: sub(u) for k, u in v.items()}
                        return v if conv is None else conv(v)

                    return sub(s.input), sub(list(s.args)), sub(dict(s.kwargs))

                def torch_call(leaves, rebuild=rebuild, op=op):
                    a, b, c = rebuild(leaves, None)
                    return op(a, *b, **c)

                def mlfuse_call(leaves, rebuild=rebuild, call=call):
                    a, b, c = rebuild(leaves, to_mlfuse)
                    return call(a, b, c)

                try:
                    r = _guarded(lambda: gradients_differ(torch_call, mlfuse_call, floats), 180)  # noqa: B023
                except Timeout:
                    r = "gradient timeout"
                except Exception as e:
                    r = f"gradient raised {type(e).__name__}: {str(e).splitlines()[0][:120]}"
                if r:
                    print(f"GRAD {tag} {r} | {where}", file=out)
                    stats["grad"] += 1
                else:
                    stats["gradok"] += 1
            if dt == dtypes[0] and op.error_inputs_func is not None:
                _error_inputs(op, full, call, out, stats)
        out.flush()


def _error_inputs(op, full, call, out, stats):
    try:
        cases = list(op.error_inputs("cpu"))
    except Exception:
        return
    for j, ei in enumerate(cases):
        s = ei.sample_input
        try:
            x, args, kw = to_mlfuse(s.input), to_mlfuse(list(s.args)), to_mlfuse(s.kwargs)
        except Exception:  # no mlfuse counterpart (a generator, a meta tensor ...)
            continue
        try:
            _guarded(lambda: to_numpy(call(x, args, kw)), 60)  # noqa: B023
        except Timeout:
            continue
        except Exception as e:
            if isinstance(e, ei.error_type):
                stats["errok"] += 1
            else:
                print(f"ERRTYPE {full} error #{j}: {type(e).__name__} for "
                      f"{ei.error_type.__name__}: {str(e)[:100]}", file=out)  # fmt: skip
                stats["errtype"] += 1
            continue
        print(f"NOERROR {full} error #{j}: PyTorch raises {ei.error_type.__name__} "
              f"{ei.error_regex[:80]!r} | {_describe(s.input, list(s.args), s.kwargs)}",
              file=out)  # fmt: skip
        stats["noerror"] += 1


def sweep_modules(only, dtype, grad, out, stats):
    from torch.testing._internal.common_modules import module_db

    for info in module_db:
        name = info.module_cls.__name__
        if (only and name not in only) or "Lazy" in name or "Fractional" in name:
            continue
        cls = getattr(mlfuse.nn, name, None)
        if cls is None:
            print(f"MISSING {name}", file=out)
            stats["missing"] += 1
            continue
        inputs = info.module_inputs_func(
            info, device="cpu", dtype=dtype, requires_grad=False, training=True
        )
        for i, sample in enumerate(inputs[:8]):
            tag = f"{name} #{i}"
            ctor, fwd = sample.constructor_input, sample.forward_input
            if fwd is None:
                continue
            where = _describe(list(ctor.args), ctor.kwargs, list(fwd.args))
            try:
                torch.manual_seed(0)
                tm = info.module_cls(*ctor.args, **ctor.kwargs).to(dtype)
                want = tm(*fwd.args, **fwd.kwargs)
            except Exception:
                continue

            try:
                cargs, ckw = to_mlfuse(list(ctor.args)), to_mlfuse(ctor.kwargs)
                fargs, fkw = to_mlfuse(list(fwd.args)), to_mlfuse(fwd.kwargs)
                state = {k: to_mlfuse(v) for k, v in tm.state_dict().items()}
            except Exception:  # no mlfuse counterpart
                continue

            def build(cls=cls, cargs=cargs, ckw=ckw, state=state):
                m = cls(*cargs, **ckw).to(getattr(mlfuse.dtypes, DTYPES[dtype]))
                m.load_state_dict(state)
                return m

            ran, mm = _attempt(build, tag, where, out, stats)
            if not ran:
                continue
            ran, got = _attempt(lambda: to_numpy(mm(*fargs, **fkw)), tag, where, out, stats)  # noqa: B023
            if not ran:
                continue
            if r := differ(to_numpy(want), got):
                print(f"WRONG {tag} {r} | {where}", file=out)
                stats["wrong"] += 1
                continue
            stats["ok"] += 1
            if grad:
                _module_gradients(tm, mm, fwd, tag, out, stats)
        out.flush()


def _module_gradients(tm, mm, fwd, tag, out, stats):
    """The gradients of the inputs and of every parameter, by name."""
    tensors = [a for a in fwd.args if isinstance(a, torch.Tensor)]
    if len(tensors) != len(fwd.args):
        return
    fkw = to_mlfuse(fwd.kwargs)
    tm.zero_grad()
    mm.zero_grad()
    try:
        r = _guarded(
            lambda: gradients_differ(
                lambda ls: tm(*ls, **fwd.kwargs), lambda ls: mm(*ls, **fkw), tensors
            ),
            180,
        )
    except Timeout:
        r = "gradient timeout"
    except Exception as e:
        r = f"gradient raised {type(e).__name__}: {str(e).splitlines()[0][:120]}"
    found = [r] if r else []
    params = dict(mm.named_parameters())
    for n, p in tm.named_parameters():
        q = params.get(n)
        if p.grad is None:
            continue
        if q is None or q.grad is None:
            found.append(f"{n}: no gradient")
        elif d := differ(p.grad.numpy(), np.asarray(q.grad.numpy())):
            found.append(f"{n}: {d}")
    if found:
        print(f"GRAD {tag} {'; '.join(found)}", file=out)
        stats["grad"] += 1
    else:
        stats["gradok"] += 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=("ops", "modules"))
    p.add_argument("--only", default="", help="comma-separated OpInfo/module names")
    p.add_argument("--dtypes", default="float32", help="e.g. float32,float64,int64,bool")
    p.add_argument("--max-samples", type=int, default=8)
    p.add_argument("--grad", action="store_true", help="compare gradients too")
    p.add_argument("--shard", default=None, help="k/n: the k-th of n slices of the ops")
    a = p.parse_args(argv)
    signal.signal(signal.SIGALRM, _alarm)
    only = set(filter(None, a.only.split(",")))
    dtypes = tuple(getattr(torch, d) for d in a.dtypes.split(","))
    stats: collections.Counter = collections.Counter()
    if a.what == "ops":
        shard = tuple(map(int, a.shard.split("/"))) if a.shard else None
        sweep_ops(only, dtypes, a.max_samples, a.grad, shard, sys.stdout, stats)
    else:
        sweep_modules(only, dtypes[0], a.grad, sys.stdout, stats)
    print(dict(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
