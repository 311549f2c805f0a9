"""PyTorch's switches and queries: ``mlfuse.backends``, anomaly detection,
inference mode, deterministic modes, type names, and the creation and
convolution spellings of PyTorch's top level (against float64 numpy)."""

from __future__ import annotations

import array
import math

import numpy as np
import pytest

import mlfuse
import mlfuse.backends.cudnn as cudnn
from mlfuse import Tensor

RNG = np.random.default_rng(3)


def test_backend_switches_are_remembered():
    b = mlfuse.backends
    assert not cudnn.is_available() and cudnn.version() is None
    old = cudnn.benchmark
    b.cudnn.benchmark = True
    assert cudnn.benchmark is True
    with cudnn.flags(enabled=False, deterministic=True):
        assert not cudnn.enabled and cudnn.deterministic
    assert cudnn.enabled and not cudnn.deterministic
    cudnn.benchmark = old
    b.cuda.matmul.allow_tf32 = True
    assert b.cuda.matmul.allow_tf32
    b.cuda.matmul.allow_tf32 = False
    with pytest.raises(AttributeError, match="Unknown attribute allow_tf64"):
        b.cuda.matmul.allow_tf64 = True
    with pytest.raises(TypeError, match="allow_tf32 must be a bool"):
        b.cuda.matmul.allow_tf32 = 1
    with b.cuda.sdp_kernel(enable_flash=False):
        assert not b.cuda.flash_sdp_enabled() and b.cuda.math_sdp_enabled()
    assert b.cuda.flash_sdp_enabled()
    assert b.cuda.is_built() == mlfuse.cuda.is_available()
    assert not b.mps.is_available() and not b.mkldnn.is_available()
    assert b.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")


def test_anomaly_detection_names_the_nan_gradient():
    x = Tensor([0.0, 1.0], requires_grad=True)
    with mlfuse.autograd.detect_anomaly():
        assert mlfuse.is_anomaly_enabled() and mlfuse.is_anomaly_check_nan_enabled()
        with pytest.raises(RuntimeError, match=r"NaN values in the gradient of a float32 tensor"):
            (x.sqrt() * 0).sum().backward()
        y = Tensor([1.0, 4.0], requires_grad=True)
        y.sqrt().sum().backward()  # a finite gradient passes
        np.testing.assert_allclose(y.grad.numpy(), [0.5, 0.25])
    assert not mlfuse.is_anomaly_enabled()
    (x.sqrt() * 0).sum().backward()  # off: the NaN is the gradient
    assert np.isnan(x.grad.numpy()[0])
    mlfuse.set_anomaly_enabled(True)
    try:
        assert mlfuse.autograd.is_anomaly_enabled()
    finally:
        mlfuse.set_anomaly_enabled(False)


def test_modes_and_type_names():
    assert not mlfuse.is_inference_mode_enabled()
    with mlfuse.inference_mode():
        assert mlfuse.is_inference_mode_enabled() and not mlfuse.is_grad_enabled()
        with mlfuse.inference_mode(False):
            assert not mlfuse.is_inference_mode_enabled()
    assert not mlfuse.is_inference_mode_enabled()
    mlfuse.set_deterministic_debug_mode("warn")
    assert mlfuse.are_deterministic_algorithms_enabled()
    assert mlfuse.is_deterministic_algorithms_warn_only_enabled()
    assert mlfuse.get_deterministic_debug_mode() == 1
    mlfuse.set_deterministic_debug_mode(0)
    assert mlfuse.get_deterministic_debug_mode() == 0
    with pytest.raises(ValueError, match="expected 'default', 'warn', 'error'"):
        mlfuse.set_deterministic_debug_mode("loud")
    assert mlfuse.typename(Tensor([1.0])) == "mlfuse.FloatTensor"
    assert mlfuse.typename(Tensor([1], dtype=mlfuse.uint8)) == "mlfuse.ByteTensor"
    assert mlfuse.typename(mlfuse.nn.Linear) == "mlfuse.nn.modules.Linear"
    assert mlfuse.typename(3) == "int"
    assert isinstance(Tensor([1.0]).dtype, mlfuse.dtype) and not mlfuse.is_storage(3)
    mlfuse.set_default_tensor_type("torch.DoubleTensor")
    try:
        assert Tensor([1.0]).dtype == mlfuse.float64
    finally:
        mlfuse.set_default_tensor_type("torch.FloatTensor")
    with pytest.raises(TypeError, match="expected a floating point tensor type"):
        mlfuse.set_default_tensor_type("torch.LongTensor")
    assert mlfuse.set_flush_denormal(True) is False
    mlfuse.set_num_interop_threads(2)
    assert mlfuse.get_num_interop_threads() == 2
    mlfuse.set_warn_always(True)
    assert mlfuse.is_warn_always_enabled()
    mlfuse.set_warn_always(False)


def test_creation_spellings():
    e = mlfuse.empty_permuted((2, 3, 4), (0, 2, 1))
    assert e.shape == (2, 3, 4) and e.stride() == (12, 1, 3) and not e.numpy().any()
    assert mlfuse.empty_strided((2, 3), (1, 2)).shape == (2, 3)
    with pytest.raises(ValueError, match="2 sizes but 1 strides"):
        mlfuse.empty_strided((2, 3), (1,))
    with pytest.raises(ValueError, match="not a permutation of 3 dims"):
        mlfuse.empty_permuted((2, 3, 4), (0, 1, 1))
    f = mlfuse.frombuffer(array.array("f", [1.5, 2.5, 3.5]), dtype=mlfuse.float32)
    np.testing.assert_array_equal(f.numpy(), [1.5, 2.5, 3.5])
    u = mlfuse.frombuffer(b"\x01\x02\x03\x04", dtype=mlfuse.uint8, count=2, offset=1)
    np.testing.assert_array_equal(u.numpy(), [2, 3])
    with pytest.raises(ValueError, match="frombuffer: "):
        mlfuse.frombuffer(b"\x01\x02\x03", dtype=mlfuse.int32)


def _conv2d_ref(x, w, stride, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


def test_convolution_and_norm_spellings():
    x = RNG.standard_normal((2, 3, 6, 6))
    w = RNG.standard_normal((4, 3, 3, 3))
    got = mlfuse.convolution(Tensor(x), Tensor(w), None, (2, 2), (1, 1), (1, 1), False, (0, 0), 1)
    np.testing.assert_allclose(got.numpy(), _conv2d_ref(x, w, 2, 1), rtol=1e-10, atol=1e-10)
    # transposed: the adjoint of the convolution above (<conv(x), y> == <x, convT(y)>)
    y = RNG.standard_normal(got.shape)
    back = mlfuse.convolution(Tensor(y), Tensor(w), None, 2, 1, 1, True, 1, 1)
    assert back.shape == x.shape
    np.testing.assert_allclose((got.numpy() * y).sum(), (x * back.numpy()).sum(), rtol=1e-10)
    with pytest.raises(ValueError, match="weight must have 3 to 5 dims"):
        mlfuse.convolution(Tensor(x), Tensor(w[0, 0]), None, 1, 0, 1, False, 0, 1)
    m = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(mlfuse.frobenius_norm(Tensor(m)).item(), np.linalg.norm(m))
    nuc = np.linalg.svd(m, compute_uv=False).sum()
    np.testing.assert_allclose(mlfuse.nuclear_norm(Tensor(m)).item(), nuc, rtol=1e-10)


def test_inplace_dropouts():
    t = Tensor.ones(64, 16, 3)
    mlfuse.feature_dropout_(t, 0.5, True)
    v = t.numpy()
    assert set(np.unique(v)) <= {0.0, 2.0}
    assert (v == v[:, :, :1]).all()  # whole channels
    assert 0.3 < (v[:, :, 0] == 0).mean() < 0.7
    s = Tensor.ones(1000)
    assert mlfuse.dropout_(s, 0.25, True) is s
    frac = (s.numpy() == 0).mean()
    assert abs(frac - 0.25) < 0.06 and math.isclose(s.numpy().max(), 1 / 0.75, rel_tol=1e-6)
    k = Tensor.ones(5)
    mlfuse.alpha_dropout_(k, 0.5, False)
    np.testing.assert_array_equal(k.numpy(), np.ones(5))
    with pytest.raises(TypeError, match="mlfuse.dropout_ writes into a Tensor"):
        mlfuse.dropout_(np.ones(3), 0.5)


def test_size():
    s = mlfuse.Size([2, 3, 4])
    assert s == (2, 3, 4) and s.numel() == 24 and repr(s) == "mlfuse.Size([2, 3, 4])"
    assert isinstance(s[1:], mlfuse.Size) and s[1:] == (3, 4) and s[0] == 2
    assert s + (5,) == (2, 3, 4, 5) and isinstance(s + (5,), mlfuse.Size)
    assert mlfuse.zeros(s).shape == s and Tensor.ones(2, 3).reshape(mlfuse.Size([3, 2])).shape == (
        3,
        2,
    )
    import pickle

    assert pickle.loads(pickle.dumps(s)) == s
    with pytest.raises(TypeError, match="Size: dims must be ints, got float"):
        mlfuse.Size([2.0])


def test_old_init_spellings_and_invert_permutation():
    import warnings

    w = Tensor.zeros(4, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert mlfuse.nn.init.xavier_uniform(w) is w
    assert "nn.init.xavier_uniform is now deprecated" in str(caught[0].message)
    bound = math.sqrt(6.0 / 7.0)
    assert np.abs(w.numpy()).max() <= bound and w.numpy().std() > 0
    with pytest.warns(FutureWarning, match="nn.init.constant_"):
        mlfuse.nn.init.constant(w, 2.0)
    np.testing.assert_array_equal(w.numpy(), np.full((4, 3), 2.0))
    p = mlfuse.nn.utils.rnn.invert_permutation(Tensor([2, 0, 3, 1]))
    np.testing.assert_array_equal(p.numpy(), [1, 3, 0, 2])
    assert mlfuse.nn.utils.rnn.invert_permutation(None) is None
    with pytest.raises(ValueError, match="expected a 1-d integer tensor"):
        mlfuse.nn.utils.rnn.invert_permutation(Tensor([[0, 1]]))


def test_torchscript_and_compiler_markers():
    @mlfuse.jit.script
    def double(x):
        return x * 2

    np.testing.assert_array_equal(double(Tensor([1.0, 2.0])).numpy(), [2.0, 4.0])
    model = mlfuse.nn.Linear(2, 2)
    assert mlfuse.jit.script(model) is model and mlfuse.jit.trace(model, Tensor.ones(1, 2)) is model
    assert not mlfuse.jit.is_scripting() and not mlfuse.jit.is_tracing()

    @mlfuse.jit.ignore
    def a():
        return 1

    @mlfuse.jit.ignore(drop=True)
    def b():
        return 2

    assert (a(), b(), mlfuse.jit.unused(a)(), mlfuse.jit.annotate(list, [3])) == (1, 2, 1, [3])
    assert not mlfuse.compiler.is_compiling() and mlfuse.compiler.disable(a) is a

    @mlfuse.compiler.disable(recursive=False)
    def c():
        return 4

    assert c() == 4
    # the jit decorator itself still captures and replays
    step = mlfuse.jit(lambda t: (t + 1).realize())
    assert [step(Tensor([float(i)])).item() for i in range(3)] == [1.0, 2.0, 3.0]


def test_legacy_tensor_types():
    a, b = mlfuse.FloatTensor(2, 3), mlfuse.LongTensor([1, 2])
    assert a.shape == (2, 3) and a.dtype == mlfuse.float32 and not a.numpy().any()
    assert b.dtype == mlfuse.int64 and b.numpy().tolist() == [1, 2]
    assert isinstance(a, mlfuse.FloatTensor) and not isinstance(b, mlfuse.FloatTensor)
    assert isinstance(b, mlfuse.LongTensor) and not isinstance(3, mlfuse.LongTensor)
    assert mlfuse.ByteTensor(Tensor([1.0, 2.0])).dtype == mlfuse.uint8
    x = Tensor([1.5, 2.5])
    assert x.type("torch.DoubleTensor").dtype == mlfuse.float64
    assert x.type("torch.LongTensor").numpy().tolist() == [1, 2]
    assert x.type() == "float32" and x.type(mlfuse.float16).dtype == mlfuse.float16
    with pytest.raises(TypeError, match="unknown tensor type 'torch.FooTensor'"):
        x.type("torch.FooTensor")
    mlfuse.set_default_tensor_type(mlfuse.DoubleTensor)
    try:
        assert mlfuse.get_default_dtype() == mlfuse.float64
    finally:
        mlfuse.set_default_tensor_type(mlfuse.FloatTensor)


def test_distributed_guards():
    dist = mlfuse.distributed
    assert not dist.is_available() and not dist.is_initialized()
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="no multi-process backend"):
        dist.init_process_group("nccl")


def test_sdpa_kernel_choice():
    from mlfuse.nn.attention import SDPBackend, allowed_backends, sdpa_kernel

    q = Tensor(np.random.default_rng(0).standard_normal((1, 2, 4, 8)).astype(np.float32))
    plain = mlfuse.nn.functional.scaled_dot_product_attention(q, q, q).numpy()
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
        assert allowed_backends() == {SDPBackend.FLASH_ATTENTION, SDPBackend.MATH}
        chosen = mlfuse.nn.functional.scaled_dot_product_attention(q, q, q).numpy()
    np.testing.assert_array_equal(plain, chosen)
    assert SDPBackend.MATH in allowed_backends() and len(allowed_backends()) == 5
    with pytest.raises(TypeError, match="expected SDPBackend values"):
        with sdpa_kernel(["flash"]):
            pass


def test_random_module_and_aten_spellings():
    with mlfuse.random.fork_rng():
        inside = mlfuse.rand(3).numpy()
    np.testing.assert_array_equal(mlfuse.rand(3).numpy(), inside)  # the stream was restored
    g = mlfuse.random.manual_seed(4)
    assert mlfuse.random.initial_seed() == 4 and g is None
    x = np.random.default_rng(2).standard_normal((2, 3, 4))
    out, mean, rstd = mlfuse.native_layer_norm(Tensor(x), (4,), None, None, 1e-5)
    m = x.mean(-1, keepdims=True)
    r = 1 / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out.numpy(), (x - m) * r, rtol=1e-10)
    assert mean.shape == (2, 3, 1) and rstd.shape == (2, 3, 1)
    kept, mask = mlfuse.native_dropout(Tensor.ones(2000), 0.25, True)
    assert mask.dtype == mlfuse.bool_ and abs((~mask.numpy()).mean() - 0.25) < 0.05
    np.testing.assert_allclose(kept.numpy(), mask.numpy() / 0.75, rtol=1e-6)
    same, all_true = mlfuse.native_dropout(Tensor.ones(3), 0.5, False)
    assert all_true.numpy().all() and same.numpy().tolist() == [1.0, 1.0, 1.0]
    assert mlfuse.get_device(Tensor([1.0])) == -1 and not mlfuse.is_inference(Tensor([1.0]))
    assert mlfuse.matrix_rank(Tensor(np.ones((3, 3)))).item() == 1
    assert (
        mlfuse.get_autocast_cpu_dtype() == mlfuse.bfloat16 and not mlfuse.is_autocast_cpu_enabled()
    )
