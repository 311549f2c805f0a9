"""Recurrent layers with ``torch.nn``'s names, arguments, parameters and results.

``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` run a sequence through ``num_layers``
stacked layers (each direction of a ``bidirectional`` one on its own), and the
cells ``nn.RNNCell``, ``nn.LSTMCell``, ``nn.GRUCell`` one step. Parameters
(``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``,
``weight_hr_l0`` with ``proj_size``, ``_reverse`` for the second direction;
``weight_ih``... for the cells) have PyTorch's names, shapes, gate order
(LSTM ``i, f, g, o``; GRU ``r, z, n``) and initialisation (uniform in
``+-1/sqrt(hidden_size)``), so a PyTorch state dict loads as it is:

    lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
    out, (h_n, c_n) = lstm(x)              # x: (batch, seq, 8)

A sequence of length T is T lazy steps, realized together (realize the
results together too, ``mlfuse.realize(out, h_n)``: realized one by one, each
would compute the sequence again). A step is one kernel: the state times each
gate's rows of ``w_hh`` fused with the gates' activations, its new state
stored (``contiguous``), so the program grows linearly with T instead of
recomputing earlier steps inside later kernels. Autograd does not
differentiate the step ops one by one: each layer and direction is one
composite function whose gradient rule is back-propagation through time
written out: the gate values of all the steps are recomputed at once from
the stored states, the backward loop carries only ``dh``/``dc`` (a product
per gate a step), and the input and weight gradients are one matmul each over
the stacked gate gradients.
"""

from __future__ import annotations

import math

import numpy as np

from mlfuse import dtypes
from mlfuse.autograd import is_grad_enabled, no_grad
from mlfuse.errors import ArgumentError, UnsupportedModeError
from mlfuse.nn import functional as F
from mlfuse.nn import init
from mlfuse.nn.modules import Module, _param, _positive_int
from mlfuse.tensor import Tensor, _derivative

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# ---------------------------------------------------------------------------
# one layer, one direction, forward in time: the value and its gradient rule
# ---------------------------------------------------------------------------


def _mm(a: Tensor, w: Tensor) -> Tensor:
    """``a @ w.T`` over the leading dims of ``a`` (PyTorch's (out, in) weight)."""
    return a @ w.T


def _flat_mm_t(a: Tensor, b: Tensor) -> Tensor:
    """``sum over (t, n) of a[t, n, :, None] * b[t, n, None, :]``: a weight's gradient."""
    return a.reshape(-1, a.shape[-1]).T @ b.reshape(-1, b.shape[-1])


def _previous(first: Tensor, seq: Tensor) -> Tensor:
    """The state each step starts from: ``first`` then ``seq[:-1]`` (T, N, H)."""
    return first.unsqueeze(0) if seq.shape[0] == 1 else first.unsqueeze(0).cat(seq[:-1], dim=0)


def _stack_steps(steps: list[Tensor]) -> Tensor:
    return steps[0].unsqueeze(0) if len(steps) == 1 else Tensor.stack(steps)


def _gates(t: Tensor | None, k: int) -> list:
    """``t`` split into its ``k`` gates on the last dim (views), or Nones."""
    return list(t.chunk(k, -1)) if t is not None else [None] * k


def _layer_value(
    mode: str, x: Tensor, h0: Tensor, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mask=None
) -> Tensor:
    """The packed result of one layer over x (T, N, I): the hidden states (T,
    N, H_out) and, for an LSTM, the cell states after them on the last dim.
    With ``mask`` (T, N, 1), a sequence's states stay as they were at the steps
    it is not running (so the last step holds its final state).

    The input projection is one matmul for all the steps; a step multiplies
    the state by each gate's rows of ``w_hh`` apart (a product per gate, read at
    one place, fuses with the gate's activation: one kernel a step, writing
    the new state)."""
    k = _GATES[mode]
    gi = _mm(x, w_ih)
    if b_ih is not None:
        gi = gi + b_ih
    if b_hh is not None and mode != "GRU":
        gi = gi + b_hh  # inside the reset gate's product for a GRU
    gi = gi.contiguous()
    whs, bhs = _gates(w_hh.T, k), _gates(b_hh, k)
    h, c = h0, c0
    cols: list[list[Tensor]] = []  # per step: the packed values
    for t in range(x.shape[0]):
        gx = _gates(gi[t], k)
        gh = [h @ w for w in whs]
        if mode == "LSTM":
            i, f, g, o = (a + b for a, b in zip(gx, gh))
            i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
            c_new = f * c + i * g
            tc = c_new.tanh()
            h_new = o * tc
            if w_hr is not None:
                h_new = _mm(h_new, w_hr)
            if mask is not None:
                c_new, h_new = mask[t].where(c_new, c), mask[t].where(h_new, h)
            c, h = c_new.contiguous(), h_new.contiguous()  # (one kernel writes them all)
            cols.append([h, c])
        elif mode == "GRU":
            if b_hh is not None:
                gh = [a + b for a, b in zip(gh, bhs)]
            r, z = (gx[0] + gh[0]).sigmoid(), (gx[1] + gh[1]).sigmoid()
            n = (gx[2] + r * gh[2]).tanh()
            h_new = (1 - z) * n + z * h
            h = (mask[t].where(h_new, h) if mask is not None else h_new).contiguous()
            cols.append([h])
        else:
            pre = gx[0] + gh[0]
            h_new = pre.tanh() if mode == "RNN_TANH" else pre.relu()
            h = (mask[t].where(h_new, h) if mask is not None else h_new).contiguous()
            cols.append([h])
    parts = [_stack_steps([step[j] for step in cols]) for j in range(len(cols[0]))]
    return (parts[0].cat(*parts[1:], dim=-1) if len(parts) > 1 else parts[0]).contiguous()


def _layer_grads(mode, srcs, packed: Tensor, g: Tensor, has_bias: bool, has_proj: bool):
    """Back-propagation through time for :func:`_layer_value`: the gradients
    of ``srcs`` (x, h0, [c0], w_ih, w_hh, [b_ih, b_hh], [w_hr]) given the
    gradient ``g`` of the packed result. The gate values of every step are
    recomputed at once from the stored states (two matmuls for all the
    steps); the loop over the steps (last first) computes only the gradients
    that flow into the previous state (a product per gate and, for an LSTM,
    the cell state's), and everything else is computed for all the steps at
    once afterwards."""
    it = iter(srcs)
    x, h0 = next(it), next(it)
    c0 = next(it) if mode == "LSTM" else None
    w_ih, w_hh = next(it), next(it)
    b_ih, b_hh = (next(it), next(it)) if has_bias else (None, None)
    w_hr = next(it) if has_proj else None
    steps = x.shape[0]
    k = _GATES[mode]
    h_out = h0.shape[-1]
    hsz = w_hh.shape[0] // k
    ys = packed[..., :h_out]
    g = g.contiguous()
    gy = g[..., :h_out]
    h_prev = _previous(h0, ys)
    whs = list(w_hh.chunk(k, 0))  # each gate's rows: (H, H_out)
    kept: list[Tensor] = []  # the gate values of every step
    if k > 1:
        gi = _mm(x, w_ih) + (b_ih if b_ih is not None else 0)
        gh = _mm(h_prev, w_hh) + (b_hh if b_hh is not None else 0)
        if mode == "LSTM":  # c, sigmoid(i), sigmoid(f), tanh(g), sigmoid(o), tanh(c)
            i, f, gg, o = (gi + gh).chunk(4, -1)
            cs = packed[..., h_out:]
            acts = i.sigmoid().cat(f.sigmoid(), gg.tanh(), o.sigmoid(), cs.tanh(), dim=-1)
            kept = [cs, *acts.contiguous().chunk(5, -1)]
        else:  # r, z, n, W_hn h + b_hn
            ir, iz, in_ = gi.chunk(3, -1)
            hr, hz, hn = gh.chunk(3, -1)
            r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
            kept = list(r.cat(z, (in_ + r * hn).tanh(), hn, dim=-1).contiguous().chunk(4, -1))

    # the gradients flowing into each step's state from the step after it
    carry_h: list[Tensor] = [h0.zeros_like()]
    carry_c: list[Tensor] = [h0.zeros_like() if c0 is None else c0.zeros_like()]
    d_c0 = dh0_direct = None
    if mode == "LSTM":
        cs, gc = kept[0], g[..., h_out : h_out + hsz]
        acts, tcs = kept[1:5], kept[5]
        c_prev = _previous(c0, cs)

        def gates(dh, dc_in, t):
            """The gradients of the gate pre-activations at ``t``, and of the
            previous cell state."""
            i, f, gg, o = (a[t] for a in acts)
            tc = tcs[t]
            dm = dh @ w_hr if w_hr is not None else dh
            dc = gc[t] + dc_in + dm * o * (1 - tc * tc)
            d = [dc * gg * i * (1 - i), dc * c_prev[t] * f * (1 - f), dc * i * (1 - gg * gg)]
            return d + [dm * tc * o * (1 - o)], dc * f

        for t in reversed(range(1, steps)):
            d, dc_prev = gates(gy[t] + carry_h[-1], carry_c[-1], t)
            carry_c.append(dc_prev.contiguous())
            carry_h.append(sum(a @ w for a, w in zip(d, whs)).contiguous())
        dh_all = gy + _stack_steps(carry_h[::-1])
        d, dc0 = gates(dh_all, _stack_steps(carry_c[::-1]), slice(None))
        d_gi = d_gh = d[0].cat(*d[1:], dim=-1).contiguous()
        d_c0 = dc0[0]
    elif mode == "GRU":

        def gates(dh, t):
            """The gradients of the hidden projections at ``t`` (of the input
            ones: the same but the last gate's is not multiplied by r), and
            what flows into the previous state directly."""
            r, z, n, hn = (a[t] for a in kept)
            dn = dh * (1 - z) * (1 - n * n)
            dz = dh * (h_prev[t] - n) * z * (1 - z)
            dr = dn * hn * r * (1 - r)
            return [dr, dz, dn], r, dh * z

        for t in reversed(range(1, steps)):
            (dr, dz, dn), r, direct = gates(gy[t] + carry_h[-1], t)
            dgh = dr @ whs[0] + dz @ whs[1] + (dn * r) @ whs[2]
            carry_h.append((direct + dgh).contiguous())
        dh_all = gy + _stack_steps(carry_h[::-1])
        (dr, dz, dn), r, direct = gates(dh_all, slice(None))
        d_gi = dr.cat(dz, dn, dim=-1).contiguous()
        d_gh = dr.cat(dz, dn * r, dim=-1).contiguous()
        dh0_direct = direct[0]
    else:

        def pre(dh, y):
            return dh * (1 - y * y) if mode == "RNN_TANH" else (y > 0).where(dh, 0)

        for t in reversed(range(1, steps)):
            carry_h.append((pre(gy[t] + carry_h[-1], ys[t]) @ w_hh).contiguous())
        dh_all = gy + _stack_steps(carry_h[::-1])
        d_gi = d_gh = pre(dh_all, ys).contiguous()

    d_h0 = d_gh[0] @ w_hh
    if dh0_direct is not None:
        d_h0 = d_h0 + dh0_direct
    out = [_mm(d_gi, w_ih.T), d_h0]
    if mode == "LSTM":
        out.append(d_c0)
    out += [_flat_mm_t(d_gi, x), _flat_mm_t(d_gh, h_prev)]
    if has_bias:
        out += [d_gi.sum((0, 1)), d_gh.sum((0, 1))]
    if has_proj:
        m = kept[4] * kept[5]  # the hidden state before the projection: sigmoid(o) tanh(c)
        out.append(_flat_mm_t(dh_all, m))
    return tuple(None if d is None else d.cast(s.dtype) for d, s in zip(out, srcs))


def _layer(mode: str, x: Tensor, h0: Tensor, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mask=None):
    """One layer and direction over x (T, N, I), forward in time: the hidden
    states (T, N, H_out) and, for an LSTM, the cell states (T, N, H) (else
    None), views of :func:`_layer_value`'s packed result, which autograd
    differentiates by :func:`_layer_grads` (with a ``mask`` of running steps,
    through its ops)."""
    if mask is not None:
        packed = _layer_value(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mask)
        h_out, hsz = h0.shape[-1], w_hh.shape[0] // _GATES[mode]
        return packed[..., :h_out], (packed[..., h_out : h_out + hsz] if mode == "LSTM" else None)
    has_bias, has_proj = b_ih is not None, w_hr is not None
    srcs = [x, h0] + ([c0] if mode == "LSTM" else []) + [w_ih, w_hh]
    srcs += [b_ih, b_hh] if has_bias else []
    srcs += [w_hr] if has_proj else []
    args = (mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)
    if not is_grad_enabled() or not any(s.requires_grad for s in srcs):
        packed = _layer_value(*args)
    else:
        with no_grad():
            value = _layer_value(*args)

        def rule(ctx, g):
            return _layer_grads(mode, ctx.srcs, ctx.out, g, has_bias, has_proj)

        packed = _derivative(mode.lower(), value, tuple(srcs), rule)
    h_out, hsz = h0.shape[-1], w_hh.shape[0] // _GATES[mode]
    ys = packed[..., :h_out]
    return ys, (packed[..., h_out : h_out + hsz] if mode == "LSTM" else None)


# ---------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------


def _float_input(x, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: input must be a Tensor, got {type(x).__name__}")
    if not x.dtype.is_float:
        raise ArgumentError(f"{name}: input must be a float tensor, got {x.dtype.name}")
    return x


def _state(s, want: tuple[int, ...], batched: bool, what: str, name: str) -> Tensor:
    """A given state checked against its shape ``want`` (batched form)."""
    if not isinstance(s, Tensor):
        raise TypeError(f"{name}: {what} must be a Tensor, got {type(s).__name__}")
    if not batched:
        if s.ndim != len(want) - 1:
            raise ArgumentError(
                f"{name}: for unbatched input {what} must be {len(want) - 1}-d "
                f"{want[:-2] + want[-1:]}, got {s.ndim}-d {s.shape}"
            )
        s = s.unsqueeze(-2)
    if s.shape != want:
        raise ArgumentError(f"{name}: {what} must have shape {want}, got {s.shape}")
    return s


def _check_dropout(p, name: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ArgumentError(f"{name}: dropout must be a number in [0, 1], got {p!r}")
    return float(p)


def _uniform(shape, bound, dtype, device) -> Tensor:
    return _param(Tensor.uniform(*shape, low=-bound, high=bound, dtype=dtype, device=device))


# ---------------------------------------------------------------------------
# sequence layers
# ---------------------------------------------------------------------------


def _reversed(x: Tensor, rev: Tensor | None) -> Tensor:
    """x (T, N, F) reversed in time: wholly, or each sequence within its own
    length (``rev[t, n]``: the step read at t; the padding stays in place)."""
    if rev is None:
        return x.flip(0)
    return x.gather(0, rev.unsqueeze(-1).expand(*x.shape))


def _reset(module: Module, hidden_size: int) -> None:
    """Every parameter drawn again uniformly in ``+-1/sqrt(hidden_size)`` (PyTorch's)."""
    bound = 1 / math.sqrt(hidden_size)
    for p in module.parameters():
        init.uniform_(p, -bound, bound)


class RNNBase(Module):
    """The base of ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU``: their parameters and
    sequence loop for ``mode`` ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'`` or
    ``'GRU'``, PyTorch's constructor (which runs, too):
    ``nn.RNNBase("GRU", 8, 16, num_layers=2)(x)`` is ``nn.GRU(8, 16, 2)(x)``."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        name = type(self).__name__
        if mode not in _GATES:
            raise UnsupportedModeError(
                f"{name}: unrecognized RNN mode {mode!r} (one of {', '.join(map(repr, _GATES))})"
            )
        self.mode = mode
        self.input_size = _positive_int(input_size, f"{name}: input_size")
        self.hidden_size = _positive_int(hidden_size, f"{name}: hidden_size")
        self.num_layers = _positive_int(num_layers, f"{name}: num_layers")
        self.dropout = _check_dropout(dropout, name)
        if isinstance(proj_size, bool) or not isinstance(proj_size, int) or proj_size < 0:
            raise ArgumentError(f"{name}: proj_size must be an int >= 0, got {proj_size!r}")
        if proj_size and mode != "LSTM":
            raise ArgumentError(f"{name}: proj_size is only supported for LSTM, not RNN or GRU")
        if proj_size >= hidden_size:
            raise ArgumentError(
                f"{name}: proj_size {proj_size} has to be smaller than hidden_size {hidden_size}"
            )
        self.bias, self.batch_first = bool(bias), bool(batch_first)
        self.bidirectional, self.proj_size = bool(bidirectional), proj_size
        gates = _GATES[mode] * hidden_size
        real = proj_size or hidden_size
        dirs = 2 if bidirectional else 1
        bound = 1 / math.sqrt(hidden_size)
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            layer_in = input_size if layer == 0 else real * dirs
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                shapes = [
                    (f"weight_ih{sfx}", (gates, layer_in)),
                    (f"weight_hh{sfx}", (gates, real)),
                ]
                if bias:
                    shapes += [(f"bias_ih{sfx}", (gates,)), (f"bias_hh{sfx}", (gates,))]
                if proj_size:
                    shapes.append((f"weight_hr{sfx}", (proj_size, hidden_size)))
                for pname, shape in shapes:
                    setattr(self, pname, _uniform(shape, bound, dtype, device))
                    self._flat_weights_names.append(pname)

    def flatten_parameters(self) -> None:
        """Nothing to do (PyTorch packs the weights for cuDNN; kept so code that
        calls it runs): ``lstm.flatten_parameters()``."""

    def reset_parameters(self) -> None:
        """Draw every weight and bias again, uniform in ``+-1/sqrt(hidden_size)``
        (PyTorch's initialisation): ``lstm.reset_parameters()``."""
        _reset(self, self.hidden_size)

    @property
    def all_weights(self) -> list[list[Tensor]]:
        """The parameters of each layer and direction, in PyTorch's order:
        ``lstm.all_weights[0]`` is ``[weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0]``."""
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        names = self._flat_weights_names
        return [[getattr(self, k) for k in names[i : i + per]] for i in range(0, len(names), per)]

    def _weights(self, layer: int, reverse: bool) -> tuple:
        sfx = f"_l{layer}" + ("_reverse" if reverse else "")
        get = lambda k: getattr(self, f"{k}{sfx}", None)  # noqa: E731
        b = (get("bias_ih"), get("bias_hh")) if self.bias else (None, None)
        return (get("weight_ih"), get("weight_hh"), *b, get("weight_hr"))

    def forward(self, input: Tensor, hx=None):  # noqa: A002 - PyTorch's names
        """The output of the last layer for every step, and the final state of
        every layer and direction: ``out, h_n = gru(x, h_0)``, ``out, (h_n, c_n) =
        lstm(x)``. ``input`` is (L, N, input_size), (N, L, input_size) with
        ``batch_first``, or unbatched (L, input_size); states are (num_layers *
        num_directions, N, H), or (num_layers * num_directions, H) unbatched,
        zeros when not given. A :class:`~mlfuse.nn.utils.rnn.PackedSequence` input
        gives a packed output, each sequence's state held after its last step and
        its reverse direction started at its own end; states are then in the
        batch's original order."""
        from mlfuse.nn.utils.rnn import PackedSequence, pad_packed_sequence, repack_like

        name = type(self).__name__
        mask = rev = None
        packed = input if isinstance(input, PackedSequence) else None
        if packed is not None:
            x, lens_t = pad_packed_sequence(packed)  # (T, B, input_size), original order
            x = _float_input(x, name)
            steps, lens = x.shape[0], lens_t.numpy()
            t = np.arange(steps)[:, None]
            running = t < lens[None, :]
            mask = Tensor(running[..., None], device=x.device)  # (T, B, 1)
            # the reverse direction reads each sequence backwards from its own end
            rev = Tensor(np.where(running, lens[None, :] - 1 - t, t), dtype=dtypes.int64,
                         device=x.device)  # fmt: skip
        else:
            x = _float_input(input, name)
        if x.ndim not in (2, 3):
            raise ArgumentError(
                f"{name}: input must be 3-d (batched) or 2-d (unbatched), got {x.ndim}-d {x.shape}"
            )
        batched = x.ndim == 3
        x = x.transpose(0, 1) if batched and self.batch_first and packed is None else x
        x = x if batched else x.unsqueeze(1)  # (L, N, input_size)
        if x.shape[-1] != self.input_size:
            raise ArgumentError(
                f"{name}: input has {x.shape[-1]} features on its last dim, the layer's "
                f"input_size is {self.input_size}"
            )
        if x.shape[0] == 0:
            raise ArgumentError(f"{name}: the input sequence is empty (length 0)")
        dirs = 2 if self.bidirectional else 1
        n = x.shape[1]
        real = self.proj_size or self.hidden_size
        lstm = self.mode == "LSTM"
        h_shape = (self.num_layers * dirs, n, real)
        c_shape = (self.num_layers * dirs, n, self.hidden_size)
        dt, dev = self.weight_ih_l0.dtype, self.weight_ih_l0.device
        if hx is None:
            h0 = Tensor.zeros(h_shape, dtype=dt, device=dev)
            c0 = Tensor.zeros(c_shape, dtype=dt, device=dev) if lstm else None
        elif lstm:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise ArgumentError(
                    f"{name}: hx must be a tuple (h_0, c_0), got {type(hx).__name__}"
                )
            h0 = _state(hx[0], h_shape, batched, "h_0", name)
            c0 = _state(hx[1], c_shape, batched, "c_0", name)
        else:
            h0, c0 = _state(hx, h_shape, batched, "hx", name), None
        layer_in = x
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                xin = _reversed(layer_in, rev) if d else layer_in
                y, cs = _layer(
                    self.mode, xin, h0[k], c0[k] if lstm else None, *self._weights(layer, d == 1),
                    mask=mask,
                )  # fmt: skip
                h_n.append(y[-1])
                if lstm:
                    c_n.append(cs[-1])
                outs.append(_reversed(y, rev) if d else y)
            layer_in = outs[0] if dirs == 1 else outs[0].cat(outs[1], dim=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        out = layer_in
        hn = Tensor.stack(h_n)
        cn = Tensor.stack(c_n) if lstm else None
        if packed is not None:  # zeros after each sequence's end, packed as the input
            out = repack_like(mask.where(out, 0.0), packed)
            return (out, (hn, cn)) if lstm else (out, hn)
        if not batched:
            out, hn = out.squeeze(1), hn.squeeze(1)
            cn = cn.squeeze(1) if lstm else None
        elif self.batch_first:
            out = out.transpose(0, 1)
        return (out, (hn, cn)) if lstm else (out, hn)

    def _settings(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        for k, default in (("bias", True), ("batch_first", False), ("dropout", 0.0)):
            if getattr(self, k) != default:
                s += f", {k}={getattr(self, k)}"
        if self.bidirectional:
            s += ", bidirectional=True"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        return s


class RNN(RNNBase):
    """Elman RNN, ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or
    relu), stacked ``num_layers`` deep: ``out, h_n = nn.RNN(8, 16, 2)(x, h_0)``;
    ``out`` is (L, N, D * hidden_size), ``h_n`` (num_layers * D, N, hidden_size)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ArgumentError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(
            "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size,
            num_layers, bias, batch_first, dropout, bidirectional, 0, device, dtype,
        )  # fmt: skip


class LSTM(RNNBase):
    """Long short-term memory (gates ``i, f, g, o``; with ``proj_size`` the hidden
    state is projected by ``weight_hr``): ``out, (h_n, c_n) = nn.LSTM(8, 16,
    batch_first=True)(x)``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            "LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, proj_size, device, dtype,
        )  # fmt: skip


class GRU(RNNBase):
    """Gated recurrent unit (gates ``r, z, n``; ``n = tanh(W_in x + b_in + r *
    (W_hn h + b_hn))``, ``h' = (1 - z) n + z h``): ``out, h_n = nn.GRU(8, 16)(x)``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            "GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, 0, device, dtype,
        )  # fmt: skip


# ---------------------------------------------------------------------------
# cells
# ---------------------------------------------------------------------------


class RNNCellBase(Module):
    """The base of ``nn.RNNCell``, ``nn.LSTMCell`` and ``nn.GRUCell``: the
    parameters of ``num_chunks`` gates (``weight_ih`` (num_chunks * hidden_size,
    input_size), ``weight_hh``, ``bias_ih``, ``bias_hh``), PyTorch's constructor,
    for cells of one's own: ``class MyCell(nn.RNNCellBase): ...
    super().__init__(8, 16, bias=True, num_chunks=4)``."""

    mode: str | None = None  # the built-in cells' step ("RNN_TANH", "LSTM"...)

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device=None,
        dtype=None,
    ) -> None:
        name = type(self).__name__
        self.input_size = _positive_int(input_size, f"{name}: input_size")
        self.hidden_size = _positive_int(hidden_size, f"{name}: hidden_size")
        _positive_int(num_chunks, f"{name}: num_chunks")
        self.bias = bool(bias)
        gates, bound = num_chunks * hidden_size, 1 / math.sqrt(hidden_size)
        self.weight_ih = _uniform((gates, input_size), bound, dtype, device)
        self.weight_hh = _uniform((gates, hidden_size), bound, dtype, device)
        self.bias_ih = _uniform((gates,), bound, dtype, device) if bias else None
        self.bias_hh = _uniform((gates,), bound, dtype, device) if bias else None

    def reset_parameters(self) -> None:
        """Draw every weight and bias again, uniform in ``+-1/sqrt(hidden_size)``
        (PyTorch's initialisation): ``cell.reset_parameters()``."""
        _reset(self, self.hidden_size)

    def _step(self, input, hx):
        name = type(self).__name__
        x = _float_input(input, name)
        if x.ndim not in (1, 2):
            raise ArgumentError(
                f"{name}: expected input to be 1-d or 2-d, got {x.ndim}-d {x.shape}"
            )
        batched = x.ndim == 2
        x = x if batched else x.unsqueeze(0)
        if x.shape[-1] != self.input_size:
            raise ArgumentError(
                f"{name}: input has {x.shape[-1]} features on its last dim, the cell's "
                f"input_size is {self.input_size}"
            )
        want = (x.shape[0], self.hidden_size)
        dt, dev = self.weight_ih.dtype, self.weight_ih.device
        lstm = self.mode == "LSTM"
        if hx is None:
            h0 = Tensor.zeros(want, dtype=dt, device=dev)
            c0 = Tensor.zeros(want, dtype=dt, device=dev) if lstm else None
        elif lstm:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise ArgumentError(f"{name}: hx must be a tuple (h, c), got {type(hx).__name__}")
            h0 = _state(hx[0], want, batched, "h", name)
            c0 = _state(hx[1], want, batched, "c", name)
        else:
            h0, c0 = _state(hx, want, batched, "hx", name), None
        h, c = _layer(
            self.mode, x.unsqueeze(0), h0, c0, self.weight_ih, self.weight_hh,
            self.bias_ih, self.bias_hh, None,
        )  # fmt: skip
        h, c = h[0], (c[0] if lstm else None)
        if not batched:
            h = h.squeeze(0)
            c = c.squeeze(0) if lstm else None
        return (h, c) if lstm else h

    def _settings(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        return s


class RNNCell(RNNCellBase):
    """One Elman step ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu):
    ``h = nn.RNNCell(8, 16)(x, h)`` with x (N, 8) or (8,)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device=None,
        dtype=None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ArgumentError(
                f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}"
            )
        self.nonlinearity = nonlinearity
        self.mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        """The next hidden state (hx: zeros when not given): ``cell.forward(x, h)``."""
        return self._step(input, hx)


class LSTMCell(RNNCellBase):
    """One LSTM step (gates ``i, f, g, o``), returning ``(h', c')``:
    ``h, c = nn.LSTMCell(8, 16)(x, (h, c))``; ``cell(x)`` starts from zeros (as
    PyTorch's, and tinygrad's ``cell(x, hc)``)."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        self.mode = "LSTM"
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx=None) -> tuple[Tensor, Tensor]:  # noqa: A002
        """The next ``(h, c)`` from ``hx = (h, c)`` (zeros when None):
        ``cell.forward(x, (h, c))``."""
        return self._step(input, hx)


class GRUCell(RNNCellBase):
    """One GRU step (gates ``r, z, n``): ``h = nn.GRUCell(8, 16)(x, h)``."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        self.mode = "GRU"
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        """The next hidden state (hx: zeros when not given): ``cell.forward(x, h)``."""
        return self._step(input, hx)


__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
