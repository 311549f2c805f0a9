"""Attention and transformer layers with ``torch.nn``'s names, arguments,
parameters and results.

``nn.MultiheadAttention`` projects query, key and value, attends per head and
projects back (``in_proj_weight``/``in_proj_bias``, or ``q_proj_weight``,
``k_proj_weight``, ``v_proj_weight`` when ``kdim``/``vdim`` differ from
``embed_dim``; ``out_proj`` is a ``Linear``). ``nn.TransformerEncoderLayer``
and ``nn.TransformerDecoderLayer`` are PyTorch's post-norm (or ``norm_first``)
blocks, ``nn.TransformerEncoder``/``nn.TransformerDecoder`` stack deep copies
of one, and ``nn.Transformer`` is the encoder-decoder model. Masks follow
PyTorch: a bool ``attn_mask`` or ``key_padding_mask`` is True where attention
is *not* allowed, a float one is added to the scores.

    layer = nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, batch_first=True)
    enc = nn.TransformerEncoder(layer, num_layers=2)
    y = enc(x, src_key_padding_mask=pad)       # x: (batch, seq, 64)
"""

from __future__ import annotations

import contextlib
import copy
import enum
import math

from mlfuse import dtypes
from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError
from mlfuse.nn import functional as F
from mlfuse.nn.modules import Dropout, LayerNorm, Linear, Module, ModuleList, _param, _positive_int
from mlfuse.tensor import Tensor


def _xavier(shape, dtype=None, device=None) -> Tensor:
    """``nn.init.xavier_uniform_``: uniform in ``+-sqrt(6 / (fan_in + fan_out))``."""
    bound = math.sqrt(6 / (shape[0] + shape[1]))
    return _param(Tensor.uniform(*shape, low=-bound, high=bound, dtype=dtype, device=device))


def _cast_params(module: Module, dtype, device) -> None:
    """Give every parameter of ``module`` (sub-modules included) ``dtype`` and
    ``device`` where they are given (the layers built with ``nn.Linear`` and
    ``nn.LayerNorm``, which take neither)."""
    if dtype is None and device is None:
        return
    for _, m in module.named_modules():
        for k, v in list(vars(m).items()):
            if isinstance(v, Tensor) and k not in getattr(m, "_buffer_names", ()):
                setattr(m, k, _param(v.cast(dtype or v.dtype).to(device or v.device)))


def _check_p(p, name: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ArgumentError(f"{name}: dropout must be a number in [0, 1], got {p!r}")
    return float(p)


class MultiheadAttention(Module):
    """Attention of ``num_heads`` heads of ``embed_dim // num_heads`` dims:
    ``out, weights = nn.MultiheadAttention(64, 4)(q, k, v)``. Inputs are
    (L, N, E), (N, L, E) with ``batch_first``, or unbatched (L, E); ``weights``
    is (N, L, S), averaged over the heads (or (N, num_heads, L, S) with
    ``average_attn_weights=False``), None with ``need_weights=False``."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        name = "MultiheadAttention"
        self.embed_dim = _positive_int(embed_dim, f"{name}: embed_dim")
        self.num_heads = _positive_int(num_heads, f"{name}: num_heads")
        if embed_dim % num_heads:
            raise ArgumentError(
                f"{name}: embed_dim {embed_dim} must be divisible by num_heads {num_heads}"
            )
        self.kdim = embed_dim if kdim is None else _positive_int(kdim, f"{name}: kdim")
        self.vdim = embed_dim if vdim is None else _positive_int(vdim, f"{name}: vdim")
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        self.dropout = _check_p(dropout, name)
        self.batch_first = bool(batch_first)
        e = embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = _xavier((3 * e, e), dtype, device)
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = _xavier((e, e), dtype, device)
            self.k_proj_weight = _xavier((e, self.kdim), dtype, device)
            self.v_proj_weight = _xavier((e, self.vdim), dtype, device)
        zeros = lambda k: _param(Tensor.zeros(k, dtype=dtype, device=device))  # noqa: E731
        self.in_proj_bias = zeros(3 * e) if bias else None
        self.out_proj = Linear(e, e, bias=bias)
        if bias:
            self.out_proj.bias = zeros(e)
        _cast_params(self.out_proj, dtype, device)
        if add_bias_kv:  # nn.init.xavier_normal_ of (1, 1, E): std sqrt(1 / E)
            std = math.sqrt(1.0 / e)
            self.bias_k = _param(Tensor.randn(1, 1, e, dtype=dtype, device=device) * std)
            self.bias_v = _param(Tensor.randn(1, 1, e, dtype=dtype, device=device) * std)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = bool(add_zero_attn)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ):
        """``(attn_output, attn_weights or None)``: ``mha.forward(x, x, x,
        key_padding_mask=pad, need_weights=False)``, ``F.multi_head_attention_forward``
        with the layer's weights. ``is_causal`` with no ``attn_mask`` masks the
        upper triangle (PyTorch asks for the mask too; given one, it is used as it is)."""
        q, k, v = query, key, value
        if self.batch_first and all(isinstance(t, Tensor) and t.ndim == 3 for t in (q, k, v)):
            q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
        out, weights = F._multi_head_attention(
            q, k, v, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
            self.out_proj.bias, self.training, key_padding_mask, need_weights, attn_mask,
            not self._qkv_same_embed_dim, self.q_proj_weight, self.k_proj_weight,
            self.v_proj_weight, None, None, average_attn_weights, is_causal,
            "MultiheadAttention",
        )  # fmt: skip
        if self.batch_first and out.ndim == 3:
            out = out.transpose(0, 1)
        return out, weights

    def _settings(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"


def _activation(activation, name: str):
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise ArgumentError(f"{name}: activation should be relu/gelu, not {activation!r}")
    if not callable(activation):
        raise ArgumentError(f"{name}: activation must be 'relu', 'gelu' or a callable")
    return activation


def _norm(d_model: int, eps: float, bias: bool) -> LayerNorm:
    ln = LayerNorm(d_model, eps=eps)
    if not bias:
        ln.bias = None
    return ln


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with dropout, a residual
    and layer norm (after it, or before with ``norm_first``):
    ``nn.TransformerEncoderLayer(64, 4, dim_feedforward=128)(x, src_mask=mask)``."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation="relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        name = type(self).__name__
        _positive_int(dim_feedforward, f"{name}: dim_feedforward")
        p = _check_p(dropout, name)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=p, bias=bias, batch_first=batch_first, device=device,
            dtype=dtype,
        )  # fmt: skip
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(p)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = bool(norm_first)
        self.norm1 = _norm(d_model, layer_norm_eps, bias)
        self.norm2 = _norm(d_model, layer_norm_eps, bias)
        self.dropout1, self.dropout2 = Dropout(p), Dropout(p)
        self.activation = _activation(activation, name)
        self.batch_first = bool(batch_first)
        _cast_params(self, dtype, device)

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        """The layer's output, of ``src``'s shape: ``layer.forward(x, src_mask=mask)``."""
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal) -> Tensor:
        y = self.self_attn(
            x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
            need_weights=False, is_causal=bool(is_causal),
        )[0]  # fmt: skip
        return self.dropout1(y)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention, attention over ``memory`` and a feed-forward block, each
    with dropout, a residual and layer norm:
    ``nn.TransformerDecoderLayer(64, 4)(tgt, memory, tgt_mask=causal)``."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation="relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        name = type(self).__name__
        _positive_int(dim_feedforward, f"{name}: dim_feedforward")
        p = _check_p(dropout, name)
        kw = dict(dropout=p, bias=bias, batch_first=batch_first, device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(p)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = bool(norm_first)
        self.norm1 = _norm(d_model, layer_norm_eps, bias)
        self.norm2 = _norm(d_model, layer_norm_eps, bias)
        self.norm3 = _norm(d_model, layer_norm_eps, bias)
        self.dropout1, self.dropout2, self.dropout3 = Dropout(p), Dropout(p), Dropout(p)
        self.activation = _activation(activation, name)
        self.batch_first = bool(batch_first)
        _cast_params(self, dtype, device)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """The layer's output, of ``tgt``'s shape:
        ``layer.forward(tgt, memory, tgt_mask=mask)``."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(
            x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
        )
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal) -> Tensor:
        y = self.self_attn(
            x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
            need_weights=False, is_causal=bool(is_causal),
        )[0]  # fmt: skip
        return self.dropout1(y)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal) -> Tensor:
        y = self.multihead_attn(
            x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
            need_weights=False, is_causal=bool(is_causal),
        )[0]  # fmt: skip
        return self.dropout2(y)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _clones(layer: Module, num_layers: int, name: str) -> ModuleList:
    if not isinstance(layer, Module):
        raise TypeError(f"{name}: the layer must be a Module, got {type(layer).__name__}")
    _positive_int(num_layers, f"{name}: num_layers")
    return ModuleList(copy.deepcopy(layer) for _ in range(num_layers))


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` applied in turn, then
    ``norm`` if given: ``nn.TransformerEncoder(layer, 6)(x, mask=mask)``."""

    def __init__(
        self,
        encoder_layer: Module,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        self.layers = _clones(encoder_layer, num_layers, "TransformerEncoder")
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        """Every layer on the previous one's output: ``enc.forward(x, mask=mask)``."""
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))  # fmt: skip
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer`` applied in turn (each
    attending over ``memory``), then ``norm`` if given:
    ``nn.TransformerDecoder(layer, 6)(tgt, memory, tgt_mask=causal)``."""

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None):
        self.layers = _clones(decoder_layer, num_layers, "TransformerDecoder")
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Every layer on the previous one's output:
        ``dec.forward(tgt, memory, tgt_mask=causal)``."""
        x = tgt
        for layer in self.layers:
            x = layer(
                x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=bool(tgt_is_causal), memory_is_causal=bool(memory_is_causal),
            )  # fmt: skip
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need", PyTorch's
    ``nn.Transformer`` (every weight matrix initialised xavier-uniform):
    ``nn.Transformer(64, 4, 2, 2, 128)(src, tgt, tgt_mask=causal)``."""

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation="relu",
        custom_encoder: Module | None = None,
        custom_decoder: Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        kw = dict(
            dropout=dropout, activation=activation, layer_norm_eps=layer_norm_eps,
            batch_first=batch_first, norm_first=norm_first, bias=bias, device=device, dtype=dtype,
        )  # fmt: skip
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, **kw)
            norm = _norm(d_model, layer_norm_eps, bias)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, **kw)
            norm = _norm(d_model, layer_norm_eps, bias)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, bool(batch_first)
        _cast_params(self, dtype, device)
        with no_grad():
            for _, p in self.named_parameters():
                if p.ndim > 1:
                    p.assign(_xavier(p.shape, p.dtype, p.device).detach()).realize()

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Encode ``src``, decode ``tgt`` against it: ``model.forward(src, tgt,
        tgt_mask=nn.Transformer.generate_square_subsequent_mask(len))``."""
        batched = src.ndim == 3
        b = 0 if self.batch_first else 1
        if batched and src.shape[b] != tgt.shape[b]:
            raise ArgumentError("Transformer: the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ArgumentError(
                f"Transformer: the feature number of src and tgt must be equal to d_model "
                f"{self.d_model}, got {src.shape[-1]} and {tgt.shape[-1]}"
            )
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
            is_causal=src_is_causal,
        )  # fmt: skip
        return self.decoder(
            tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )  # fmt: skip

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """The float causal mask: 0 on and below the diagonal, -inf above:
        ``nn.Transformer.generate_square_subsequent_mask(5)``."""
        _positive_int(sz, "generate_square_subsequent_mask: sz")
        keep = Tensor.ones(sz, sz, dtype=dtypes.bool_, device=device).tril()
        return keep.where(0.0, -math.inf).cast(dtype or dtypes.default_float)


class SDPBackend(enum.IntEnum):
    """PyTorch's attention kernels' names (``torch.nn.attention.SDPBackend``)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_ALLOWED: list[frozenset] = [frozenset(SDPBackend) - {SDPBackend.ERROR}]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Allow only ``backends`` (one or a list of :class:`SDPBackend`) for
    ``F.scaled_dot_product_attention`` inside the block. mlfuse computes
    attention with its own fused kernels whichever are named, so the choice is
    checked and remembered (``allowed_backends()``), and the results are the same."""
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    for b in chosen:
        if not isinstance(b, SDPBackend):
            raise TypeError(f"sdpa_kernel: expected SDPBackend values, got {b!r}")
    _ALLOWED.append(frozenset(chosen))
    try:
        yield
    finally:
        _ALLOWED.pop()


def allowed_backends() -> frozenset:
    """The backends the innermost :func:`sdpa_kernel` allows (all, outside one)."""
    return _ALLOWED[-1]


__all__ = [
    "SDPBackend",
    "sdpa_kernel",
    "MultiheadAttention",
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]
