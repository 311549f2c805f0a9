"""PyTorch's short-time Fourier transforms: ``mlfuse.stft`` and ``mlfuse.istft``.

``stft`` cuts a signal into frames ``hop_length`` apart (a view made by
``unfold``), multiplies each by the window and takes its transform with
:mod:`mlfuse.fft` (``rfft`` for a one-sided spectrum); ``istft`` inverts it
by overlap-add (``F.fold``) of the windowed inverse transforms, divided by
the overlap-added squared window, PyTorch's (and librosa's) least-squares
inverse. Both are lazy compositions of tensor ops, so they fuse and carry
gradients::

    spec = mlfuse.stft(x, n_fft=512, hop_length=128, window=mlfuse.hann_window(512),
                       return_complex=True)              # (..., 257, frames) complex64
    y = mlfuse.istft(spec, n_fft=512, hop_length=128, window=mlfuse.hann_window(512),
                     length=x.shape[-1])
"""

from __future__ import annotations

from mlfuse import fft
from mlfuse.complex_tensors import ComplexTensor, view_as_real
from mlfuse.errors import ArgumentError, DTypeError
from mlfuse.tensor import Tensor

__all__ = ["stft", "istft"]


def _window(window, n_fft: int, win_length: int, like: Tensor, fname: str) -> Tensor:
    """The window, zero-padded on both sides to ``n_fft`` (PyTorch centers it)."""
    if window is None:
        w = Tensor.ones(win_length, dtype=like.real.dtype if like.is_complex() else like.dtype,
                        device=like.device)  # fmt: skip
    else:
        if not isinstance(window, Tensor) or window.is_complex():
            raise DTypeError(f"{fname}: window must be a real tensor")
        if window.ndim != 1 or window.shape[0] != win_length:
            raise ArgumentError(
                f"{fname}: expected a 1D window tensor of size equal to win_length={win_length}, "
                f"but got window with size {list(window.shape)}"
            )
        w = window
    left = (n_fft - win_length) // 2
    return w.pad((left, n_fft - win_length - left)) if win_length < n_fft else w


def _lengths(fname: str, n_fft, hop_length, win_length) -> tuple[int, int, int]:
    if isinstance(n_fft, bool) or not isinstance(n_fft, int) or n_fft <= 0:
        raise ArgumentError(f"{fname}: expected 0 < n_fft, but got n_fft={n_fft}")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if isinstance(hop, bool) or not isinstance(hop, int) or hop <= 0:
        raise ArgumentError(f"{fname}: expected hop_length > 0, but got hop_length={hop}")
    if isinstance(win, bool) or not isinstance(win, int) or not 0 < win <= n_fft:
        raise ArgumentError(f"{fname}: expected 0 < win_length <= n_fft, but got win_length={win}")
    return n_fft, hop, win


def stft(
    input,  # noqa: A002 - PyTorch's names
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """The short-time Fourier transform of a 1-d signal or a batch of them
    (``(L,)`` or ``(B, L)``), PyTorch's ``torch.stft``: ``(..., n_fft // 2 + 1,
    frames)`` complex (one-sided for real input), or its real view with a last
    dim of 2 when ``return_complex=False``. ``center`` pads ``n_fft // 2`` on
    both sides with ``pad_mode``; ``normalized`` scales by ``n_fft ** -0.5``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"stft: expected a Tensor, got {type(input).__name__}")
    n_fft, hop, win = _lengths("stft", n_fft, hop_length, win_length)
    is_complex = input.is_complex()
    if return_complex is None:
        raise ArgumentError(
            "stft requires the return_complex parameter be given for real inputs, and will "
            "further require that return_complex=True in a future PyTorch release."
        )
    if input.ndim not in (1, 2):
        raise ArgumentError(f"stft: expected a 1D or 2D tensor, got {input.ndim}D")
    if align_to_window is not None and center:
        raise ArgumentError("stft: align_to_window should only be set when center = false")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    if center:
        pad = n_fft // 2
        if pad_mode not in ("constant", "reflect", "replicate", "circular"):
            raise ArgumentError(f"stft: pad_mode {pad_mode!r} is not supported")

        def padded(t: Tensor) -> Tensor:
            return t.unsqueeze(1).pad((pad, pad), mode=pad_mode).squeeze(1)

        x = ComplexTensor(padded(x.real), padded(x.imag)) if is_complex else padded(x)
    elif align_to_window:
        x = x[..., (n_fft - win) // 2 :]
    length = x.shape[-1]
    if length < n_fft:
        raise ArgumentError(
            f"stft: expected 0 < n_fft <= {length} (the padded input's length), but got "
            f"n_fft={n_fft}"
        )
    w = _window(window, n_fft, win, x, "stft")
    frames = x.unfold(-1, n_fft, hop)  # (B, frames, n_fft)
    frames = frames * w.cast(frames.real.dtype if is_complex else frames.dtype)
    one = (not is_complex) if onesided is None else onesided
    if one and is_complex:
        raise ArgumentError("stft: onesided output is not possible for complex input")
    norm = "ortho" if normalized else "backward"
    spec = fft.rfft(frames, norm=norm) if one else fft.fft(frames, norm=norm)
    spec = spec.transpose(-1, -2)  # (B, freqs, frames)
    if input.ndim == 1:
        spec = spec.squeeze(0)
    return spec if return_complex else view_as_real(spec)


def istft(
    input,  # noqa: A002 - PyTorch's names
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """The inverse of :func:`stft`, PyTorch's ``torch.istft``: overlap-add of the
    windowed inverse transforms of the frames, divided by the overlap-added
    squared window (an error where it is ~0, as PyTorch's NOLA check); ``length``
    trims or zero-pads the result."""
    if not isinstance(input, Tensor):
        raise TypeError(f"istft: expected a Tensor, got {type(input).__name__}")
    if not input.is_complex():
        raise DTypeError("istft requires a complex-valued input tensor")
    n_fft, hop, win = _lengths("istft", n_fft, hop_length, win_length)
    if input.ndim not in (2, 3):
        raise ArgumentError(f"istft: expected a 2D or 3D complex tensor, got {input.ndim}D")
    spec = input if input.ndim == 3 else input.unsqueeze(0)
    freqs, n_frames = spec.shape[-2], spec.shape[-1]
    one = (freqs != n_fft) if onesided is None else onesided
    if one and freqs != n_fft // 2 + 1:
        raise ArgumentError(
            f"istft: expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft / 2 + 1 when onesided=True, but got {freqs}"
        )
    if not one and freqs != n_fft:
        raise ArgumentError(
            f"istft: expected the frequency dimension of the input tensor to match n_fft "
            f"when onesided=False, but got {freqs}"
        )
    if one and return_complex:
        raise ArgumentError("istft: cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    frames_spec = spec.transpose(-1, -2)  # (B, frames, freqs)
    if one:
        frames = fft.irfft(frames_spec, n=n_fft, norm=norm)
    else:
        frames = fft.ifft(frames_spec, n=n_fft, norm=norm)
        if not return_complex:
            frames = frames.real
    part = frames.real.dtype if frames.is_complex() else frames.dtype
    w = _window(window, n_fft, win, frames, "istft").cast(part)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    y = _overlap_add(frames, total, n_fft, hop)
    envelope = _overlap_add((w * w).reshape(1, 1, n_fft).expand(1, n_frames, n_fft), total,
                            n_fft, hop).reshape(total)  # fmt: skip
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if center else total
    if length is not None:
        end = start + length
    env = envelope[start : min(end, total)]
    if env.numel() and float(env.abs().min().item()) < 1e-11:
        raise ArgumentError(
            "istft: window overlap add min: the window's squared overlap-add is ~0 somewhere "
            "(the NOLA condition fails), so the signal cannot be recovered"
        )

    def trim(t: Tensor) -> Tensor:
        t = t[..., start : min(end, total)] / env
        if end > total:  # ``length`` past the frames: zeros, as PyTorch's
            t = t.pad((0, end - total))
        return t

    out = ComplexTensor(trim(y.real), trim(y.imag)) if y.is_complex() else trim(y)
    return out.squeeze(0) if input.ndim == 2 else out


def _overlap_add(frames: Tensor, total: int, n_fft: int, hop: int) -> Tensor:
    """Sum of ``(B, T, n_fft)`` frames placed ``hop`` apart: ``(B, total)``."""
    from mlfuse.nn import functional as F

    if frames.is_complex():
        return ComplexTensor(
            _overlap_add(frames.real, total, n_fft, hop),
            _overlap_add(frames.imag, total, n_fft, hop),
        )
    cols = frames.transpose(-1, -2)  # (B, n_fft, T): fold's columns
    out = F.fold(cols, output_size=(1, total), kernel_size=(1, n_fft), stride=(1, hop))
    return out.reshape(frames.shape[0], total)
