"""Where parameters and samples of a distribution may lie (PyTorch's
``torch.distributions.constraints``): ``constraints.positive``,
``constraints.interval(0, 1)``, ``constraints.simplex``...

``check(value)`` gives a bool tensor, one entry per event (the ``event_dim``
rightmost dims are reduced). Checks read the values back to the host (they
realize a lazy tensor): they back the argument and sample validation of the
distributions, which needs the answer on the host anyway."""

from __future__ import annotations

import numpy as np

from mlfuse.tensor import Tensor

__all__ = [
    "Constraint",
    "MixtureSameFamilyConstraint",
    "boolean",
    "cat",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "half_open_interval",
    "independent",
    "integer_interval",
    "interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_definite",
    "positive_integer",
    "positive_semidefinite",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


def _np(v) -> np.ndarray:
    if isinstance(v, Tensor):
        return v.numpy()
    return np.asarray(v)


def _fmt(v) -> str:
    if isinstance(v, Tensor):
        return (
            f"tensor({np.array2string(_np(v), separator=', ')})"
            if v.numel() < 16
            else (f"<Tensor of shape {tuple(v.shape)}>")
        )
    return repr(v)


class Constraint:
    """A region a variable lies in. ``is_discrete``: whether it is a discrete
    set; ``event_dim``: how many rightmost dims form one event (``check``
    reduces them)."""

    is_discrete = False
    event_dim = 0

    def check(self, value) -> Tensor:
        """A bool tensor of ``value.shape[:value.ndim - event_dim]``: whether each
        event of ``value`` satisfies the constraint."""
        ok = np.asarray(self._check(_np(value)), bool)
        like = value if isinstance(value, Tensor) else None
        return Tensor(ok, device=like.device if like is not None else None)

    def _check(self, v: np.ndarray) -> np.ndarray:
        """The check on host values."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a variable whose support depends on other variables
    (``constraints.dependent(is_discrete=True, event_dim=1)`` sets the static
    attributes); it has no check of its own."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """Whether ``constraint`` is a dependent one (no check of its own)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that reads as a dependent constraint on the class and as the
    value the function gives on an instance::

        @constraints.dependent_property(is_discrete=False, event_dim=0)
        def support(self):
            return constraints.interval(self.low, self.high)
    """

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` over events of ``reinterpreted_batch_ndims`` more dims:
    an event is valid when all its entries are."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(
                f"independent: base_constraint must be a Constraint, got "
                f"{type(base_constraint).__name__}"
            )
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(
                "independent: reinterpreted_batch_ndims must be a non-negative int, got "
                f"{reinterpreted_batch_ndims!r}"
            )
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def _check(self, v):
        ok = np.asarray(self.base_constraint._check(v), bool)
        n = self.reinterpreted_batch_ndims
        if ok.ndim < n:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {v.ndim}")
        return ok.reshape(ok.shape[: ok.ndim - n] + (-1,)).all(-1) if n else ok

    def __repr__(self) -> str:
        name = self.__class__.__name__[1:]
        return f"{name}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class MixtureSameFamilyConstraint(Constraint):
    """The support of a :class:`~mlfuse.distributions.MixtureSameFamily`: the
    component distributions' ``base_constraint``, checked against every
    component (the value gains the component dim back) and all of them required."""

    def __init__(self, base_constraint: Constraint):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(
                f"base_constraint must be a Constraint, got {type(base_constraint).__name__}"
            )
        self.base_constraint = base_constraint

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        """Whether the component constraint is a discrete set."""
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        """The component constraint's event dims."""
        return self.base_constraint.event_dim

    def _check(self, v):
        v = np.asarray(v)
        ed = self.event_dim
        if v.ndim < ed:
            raise ValueError(f"Expected value.dim() >= {ed} but got {v.ndim}")
        ok = np.asarray(self.base_constraint._check(np.expand_dims(v, -1 - ed)), bool)
        keep = v.ndim - ed
        return ok.reshape(ok.shape[:keep] + (-1,)).all(-1)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    """The two values 0 and 1."""

    is_discrete = True

    def _check(self, v):
        return (v == 0) | (v == 1)


class _OneHot(Constraint):
    """One-hot vectors."""

    is_discrete = True
    event_dim = 1

    def _check(self, v):
        return ((v == 0) | (v == 1)).all(-1) & (v.sum(-1) == 1)


class _IntegerInterval(Constraint):
    """Integers in ``[lower_bound, upper_bound]``."""

    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _check(self, v):
        return (v % 1 == 0) & (_np(self.lower_bound) <= v) & (v <= _np(self.upper_bound))

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__[1:]}(lower_bound={_fmt(self.lower_bound)}, "
            f"upper_bound={_fmt(self.upper_bound)})"
        )


class _IntegerGreaterThan(Constraint):
    """Integers from ``lower_bound`` up."""

    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def _check(self, v):
        return (v % 1 == 0) & (v >= _np(self.lower_bound))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={_fmt(self.lower_bound)})"


class _Multinomial(Constraint):
    """Vectors of non-negative counts summing to at most ``upper_bound`` (the
    weaker check PyTorch makes: the sum is not required to equal it)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def _check(self, v):
        return (v >= 0).all(-1) & (v.sum(-1) <= _np(self.upper_bound))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(upper_bound={_fmt(self.upper_bound)})"


class _Real(Constraint):
    """The extended real line (anything but NaN)."""

    def _check(self, v):
        return v == v


class _GreaterThan(Constraint):
    """``(lower_bound, inf]``."""

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def _check(self, v):
        return _np(self.lower_bound) < v

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={_fmt(self.lower_bound)})"


class _GreaterThanEq(_GreaterThan):
    """``[lower_bound, inf)``."""

    def _check(self, v):
        return _np(self.lower_bound) <= v


class _LessThan(Constraint):
    """``[-inf, upper_bound)``."""

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def _check(self, v):
        return v < _np(self.upper_bound)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(upper_bound={_fmt(self.upper_bound)})"


class _Interval(Constraint):
    """``[lower_bound, upper_bound]``."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _check(self, v):
        return (_np(self.lower_bound) <= v) & (v <= _np(self.upper_bound))

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__[1:]}(lower_bound={_fmt(self.lower_bound)}, "
            f"upper_bound={_fmt(self.upper_bound)})"
        )


class _HalfOpenInterval(_Interval):
    """``[lower_bound, upper_bound)``."""

    def _check(self, v):
        return (_np(self.lower_bound) <= v) & (v < _np(self.upper_bound))


class _Simplex(Constraint):
    """Non-negative vectors (the last dim) that sum to 1 (within 1e-6)."""

    event_dim = 1

    def _check(self, v):
        return (v >= 0).all(-1) & (np.abs(v.sum(-1) - 1) < 1e-6)


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices."""

    event_dim = 2

    def _check(self, v):
        return (np.tril(v) == v).reshape(v.shape[:-2] + (-1,)).all(-1)


class _LowerCholesky(Constraint):
    """Lower-triangular square matrices with a positive diagonal."""

    event_dim = 2

    def _check(self, v):
        lower = (np.tril(v) == v).reshape(v.shape[:-2] + (-1,)).all(-1)
        return lower & (np.diagonal(v, 0, -2, -1) > 0).all(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: lower triangular, a
    positive diagonal and rows of unit Euclidean norm (within ``10 n eps``)."""

    event_dim = 2

    def _check(self, v):
        eps = np.finfo(v.dtype).eps if np.issubdtype(v.dtype, np.floating) else 2.0**-52
        tol = eps * v.shape[-1] * 10
        unit = (np.abs(np.sqrt((v.astype(np.float64) ** 2).sum(-1)) - 1.0) <= tol).all(-1)
        return _LowerCholesky()._check(v) & unit


class _Square(Constraint):
    """Square matrices."""

    event_dim = 2

    def _check(self, v):
        return np.full(v.shape[:-2], v.shape[-2] == v.shape[-1], bool)


class _Symmetric(_Square):
    """Symmetric square matrices (within 1e-6)."""

    def _check(self, v):
        sq = super()._check(v)
        if not sq.all():
            return sq
        return np.isclose(v, np.swapaxes(v, -1, -2), atol=1e-6).all(-1).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric positive-semidefinite matrices (no negative eigenvalue)."""

    def _check(self, v):
        sym = super()._check(v)
        if not sym.all():
            return sym
        return (np.linalg.eigvalsh(v.astype(np.float64)) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric positive-definite matrices."""

    def _check(self, v):
        sym = super()._check(v)
        if not sym.all():
            return sym
        flat = v.reshape((-1,) + v.shape[-2:]).astype(np.float64)
        ok = np.empty(flat.shape[0], bool)
        for i, m in enumerate(flat):
            try:
                np.linalg.cholesky(m)
                ok[i] = True
            except np.linalg.LinAlgError:
                ok[i] = False
        return ok.reshape(v.shape[:-2])


def _narrow(v: np.ndarray, dim: int, start: int, length: int) -> np.ndarray:
    index = [slice(None)] * v.ndim
    index[dim] = slice(start, start + length)
    return v[tuple(index)]


class _Cat(Constraint):
    """The constraints ``cseq`` on consecutive pieces of ``dim`` (of sizes
    ``lengths``, 1 each by default), as ``cat`` lays them out."""

    def __init__(self, cseq, dim: int = 0, lengths=None):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise TypeError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        """Whether any of the constraints is discrete."""
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        """The largest event dims of the constraints."""
        return max(c.event_dim for c in self.cseq)

    def _check(self, v):
        v = np.asarray(v)
        if not -v.ndim <= self.dim < v.ndim:
            raise ValueError(f"dim {self.dim} out of range for value with {v.ndim} dimensions")
        checks, start = [], 0
        for c, length in zip(self.cseq, self.lengths):
            checks.append(np.asarray(c._check(_narrow(v, self.dim, start, length)), bool))
            start += length
        return np.concatenate(checks, self.dim)


class _Stack(Constraint):
    """The constraints ``cseq``, one per entry of ``dim``, as ``stack`` lays
    them out."""

    def __init__(self, cseq, dim: int = 0):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise TypeError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        """Whether any of the constraints is discrete."""
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        """The largest event dims of the constraints (one more when ``dim``
        counts from the right into them)."""
        dim = max(c.event_dim for c in self.cseq)
        if self.dim + dim < 0:
            dim += 1
        return dim

    def _check(self, v):
        v = np.asarray(v)
        if not -v.ndim <= self.dim < v.ndim:
            raise ValueError(f"dim {self.dim} out of range for value with {v.ndim} dimensions")
        parts = [np.take(v, i, axis=self.dim) for i in range(v.shape[self.dim])]
        return np.stack([np.asarray(c._check(p), bool) for p, c in zip(parts, self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
