"""Tensor.rearrange: einops patterns against numpy's reshape/transpose, the
gradient through them, and the errors a bad pattern gets."""

import numpy as np
import pytest

from mlfuse import Tensor
from mlfuse.errors import ArgumentError, ArgumentTypeError, PatternError

X = np.arange(6 * 4 * 2 * 3 * 5, dtype=np.float32).reshape(6, 4, 2, 3, 5)


def ref_depth_to_space(x, h1, w1):
    b, chw, h, w = x.shape
    c = chw // (h1 * w1)
    y = x.reshape(b, c, h1, w1, h, w).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(b, c, h * h1, w * w1)


@pytest.mark.parametrize(
    "pattern, sizes, expected",
    [
        ("a b c d e -> e d c b a", {}, X.transpose(4, 3, 2, 1, 0)),
        ("a b c d e -> (a b) (c d e)", {}, X.reshape(24, 30)),
        ("a b c d e -> (b a) c d e", {}, X.transpose(1, 0, 2, 3, 4).reshape(24, 2, 3, 5)),
        (
            "(a2 a1) b c d e -> a1 (b a2) c d e",
            {"a1": 3},
            X.reshape(2, 3, 4, 2, 3, 5).transpose(1, 2, 0, 3, 4, 5).reshape(3, 8, 2, 3, 5),
        ),
        ("a ... e -> e ... a", {}, X.transpose(4, 1, 2, 3, 0)),
        ("a ... -> a (...)", {}, X.reshape(6, 120)),
        ("... d e -> (e ...) d", {}, X.transpose(4, 0, 1, 2, 3).reshape(5 * 48, 3)),
        ("a b ... -> (b a) ...", {}, X.transpose(1, 0, 2, 3, 4).reshape(24, 2, 3, 5)),
        ("... -> ...", {}, X),
        ("a b c d e -> a b 1 c d e ()", {}, X.reshape(6, 4, 1, 2, 3, 5, 1)),
        (
            "a b c d e ... -> (...) e d c b a",
            {},
            X.transpose(4, 3, 2, 1, 0).reshape(1, 5, 3, 2, 4, 6),
        ),
        (
            "a b c d e -> b (c a) (e d)",
            {"a": 6, "c": 2},
            X.transpose(1, 2, 0, 4, 3).reshape(4, 12, 15),
        ),
    ],
)
def test_matches_numpy(pattern, sizes, expected):
    out = Tensor(X).rearrange(pattern, **sizes)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_depth_to_space_and_back():
    x = np.random.default_rng(0).standard_normal((2, 12, 5, 7)).astype(np.float32)
    y = Tensor(x).rearrange("b (c h1 w1) h w -> b c (h h1) (w w1)", h1=2, w1=2)
    np.testing.assert_array_equal(y.numpy(), ref_depth_to_space(x, 2, 2))
    back = y.rearrange("b c (h h1) (w w1) -> b (c h1 w1) h w", h1=np.int64(2), w1=2)
    np.testing.assert_array_equal(back.numpy(), x)


def test_unit_dims_squeeze_and_unsqueeze():
    x = Tensor(np.arange(20, dtype=np.int32).reshape(10, 2, 1, 1))
    y = x.rearrange("b c () 1 -> c b")
    np.testing.assert_array_equal(y.numpy(), np.arange(20).reshape(10, 2).T)
    assert y.rearrange("c b -> b 1 c ()").shape == (10, 1, 2, 1)


def test_unicode_and_long_names():
    out = Tensor(X).rearrange(
        "camelCase under_scored cApiTaLs ß ... -> ß ... (under_scored camelCase) cApiTaLs"
    )
    np.testing.assert_array_equal(out.numpy(), X.transpose(3, 4, 1, 0, 2).reshape(3, 5, 24, 2))


def test_gradient_flows_back_through_the_views():
    x = Tensor(X, requires_grad=True)
    w = np.random.default_rng(1).standard_normal((4, 30)).astype(np.float32)
    y = x.rearrange("(a2 a1) b c d e -> a1 a2 b (c d e)", a1=3)
    (y * Tensor(w)).sum().backward()
    expected = np.broadcast_to(w, (3, 2, 4, 30)).transpose(1, 0, 2, 3).reshape(X.shape)
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@pytest.mark.parametrize(
    "pattern, sizes, error, message",
    [
        ("a b c d e -> a b c d", {}, PatternError, r"only on the left \['e'\]"),
        ("a b c d -> a b c d", {}, ArgumentError, "has 4 dims, the tensor 5"),
        (
            "a b c d e f ... -> a b c d e f ...",
            {},
            ArgumentError,
            "has 6 dims and ..., the tensor 5",
        ),
        (
            "a b c d e -> a b c d e",
            {"a": 5},
            PatternError,
            "axis 'a' has size 5, dim 0 of the tensor has 6",
        ),
        ("(a b) c d e f -> a b c d e f", {}, ArgumentError, "give the sizes of all but one"),
        ("(a b) c d e f -> a b c d e f", {"a": 4}, ArgumentError, "4 does not divide 6"),
        ("a b c d e -> a b c d e", {"z": 1}, PatternError, "size given for 'z'"),
        ("a b c 1 e -> a b c e", {}, PatternError, "a unit dim has size 1, dim 3"),
        ("a a c d e -> a c d e", {}, PatternError, "axis 'a' appears twice"),
        ("a b ... ... -> a b ...", {}, PatternError, "'...' appears twice"),
        ("a b c d e -> a b c -> d e", {}, PatternError, "exactly one '->'"),
        ("a (b c d e -> a b c d e", {}, PatternError, r"unbalanced '\('"),
        ("a b) c d e -> a b c d e", {}, PatternError, r"unbalanced '\)'"),
        ("a ((b c)) d e -> a b c d e", {}, PatternError, "nested parentheses"),
        ("(a ...) -> a ...", {}, PatternError, "'...' cannot be inside parentheses on the left"),
        ("a b c d e -> a b c d e 2", {}, PatternError, "'2' in the right side"),
        ("_a b c d e -> _a b c d e", {}, PatternError, "'_a' in the left side"),
        ("a b c d ...e -> a b c d ...e", {}, PatternError, r"'\.\.\.e'"),
        ("a b c d e -> a b c d e", {"a": -1}, ArgumentError, "must be non-negative"),
        ("a b c d e -> a b c d e", {"a": 6.0}, ArgumentTypeError, "must be an int, got 6.0"),
    ],
)
def test_bad_patterns_name_the_problem(pattern, sizes, error, message):
    with pytest.raises(error, match=message):
        Tensor(X).rearrange(pattern, **sizes)


def test_errors_are_the_classes_tinygrad_and_einops_raise():
    # tinygrad asserts on a malformed pattern; einops raises a RuntimeError
    with pytest.raises(AssertionError):
        Tensor(X).rearrange("a b c d e -> f b c d e")
    with pytest.raises(RuntimeError):
        Tensor(X).rearrange("a b c d e -> f b c d e")
    with pytest.raises(TypeError):
        Tensor(X).rearrange(3)
