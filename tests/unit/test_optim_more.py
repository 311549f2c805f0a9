"""Rprop, ASGD, Adafactor and LBFGS against PyTorch's update rules written out in
float64 numpy (these run everywhere) and against torch.optim itself where it is
installed: parameters compared after every step, state dicts (ours and
PyTorch's), bad arguments, and hyperparameters set between steps compiling
nothing new."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlfuse import Tensor, optim

RNG = np.random.default_rng(7)
W0 = RNG.uniform(0.2, 2.0, (3, 4))  # a matrix (Adafactor: factored second moment)
B0 = RNG.uniform(0.2, 2.0, (4,))  # and a vector (Adafactor: full second moment)
STEPS = 5


def grad_of(p: np.ndarray) -> np.ndarray:
    """The gradient of sum(p**3 / 3 - p), what the tests minimize."""
    return p * p - 1.0


def run_ours(cls, steps, lrs=None, **kw):
    """``steps`` steps of ``cls`` on W0 and B0 (a new lr each if ``lrs``): the
    parameters after each step, as float64 numpy."""
    w, b = Tensor(W0.copy(), requires_grad=True), Tensor(B0.copy(), requires_grad=True)
    opt = cls([w, b], **kw)
    out = []
    for s in range(steps):
        if lrs is not None:
            opt.lr = lrs[s]
        opt.zero_grad()
        ((w**3 / 3 - w).sum() + (b**3 / 3 - b).sum()).backward()
        opt.step()
        out.append([w.numpy().astype(np.float64), b.numpy().astype(np.float64)])
    return out, opt


def assert_steps_close(got, want, rtol=1e-10, atol=1e-13):
    assert len(got) == len(want)
    for s, (g, w) in enumerate(zip(got, want)):
        for gi, wi in zip(g, w):
            np.testing.assert_allclose(gi, wi, rtol=rtol, atol=atol, err_msg=f"step {s + 1}")


# ---------------------------------------------------------------------------
# PyTorch's rules (torch.optim's documented algorithms), float64 numpy
# ---------------------------------------------------------------------------


def rprop_ref(steps, lrs, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    ps = [W0.copy(), B0.copy()]
    sizes = [np.full_like(p, lrs[0]) for p in ps]  # the step sizes start at the first lr
    prevs = [np.zeros_like(p) for p in ps]
    out = []
    for _ in range(steps):
        for i, p in enumerate(ps):
            g = -grad_of(p) if maximize else grad_of(p)
            agree = g * prevs[i]
            factor = np.where(agree > 0, etas[1], np.where(agree < 0, etas[0], 1.0))
            sizes[i] = np.clip(sizes[i] * factor, *step_sizes)
            g = np.where(agree < 0, 0.0, g)  # a flipped sign: no step, forget g
            ps[i] = p - np.sign(g) * sizes[i]
            prevs[i] = g
        out.append([p.copy() for p in ps])
    return out


def asgd_ref(steps, lrs, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False):
    ps = [W0.copy(), B0.copy()]
    axs = [np.zeros_like(p) for p in ps]
    eta, mu = lrs[0], 1.0
    out, avg = [], []
    for t in range(1, steps + 1):
        for i, p in enumerate(ps):
            g = (-grad_of(p) if maximize else grad_of(p)) + weight_decay * p
            ps[i] = p * (1 - lambd * eta) - eta * g
            axs[i] = ps[i].copy() if mu == 1 else axs[i] + mu * (ps[i] - axs[i])
        # the next step's eta and mu, from this step's lr and count
        lr = lrs[t - 1]
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)
        out.append([p.copy() for p in ps])
        avg.append([a.copy() for a in axs])
    return out, avg


def adafactor_ref(steps, lrs, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0,
                  maximize=False, ps=None):  # fmt: skip
    ps = [W0.copy(), B0.copy()] if ps is None else [p.copy() for p in ps]
    eps1 = np.finfo(np.float64).eps if eps[0] is None else eps[0]
    rows = [np.zeros((*p.shape[:-1], 1)) for p in ps]
    cols = [np.zeros((*p.shape[:-2], 1, p.shape[-1])) if p.ndim > 1 else None for p in ps]
    vs = [np.zeros_like(p) for p in ps]
    out = []
    for t in range(1, steps + 1):
        lr = lrs[t - 1]
        for i, p in enumerate(ps):
            g = -grad_of(p) if maximize else grad_of(p)
            w = t**beta2_decay  # 1 - beta2_t
            rho = min(lr, 1 / math.sqrt(t))
            alpha = max(eps[1], np.sqrt(np.mean(p * p))) * rho
            p = p * (1 - lr * weight_decay)
            if p.ndim > 1:
                rows[i] = rows[i] + w * ((g * g).mean(-1, keepdims=True) - rows[i])
                cols[i] = cols[i] + w * ((g * g).mean(-2, keepdims=True) - cols[i])
                v = rows[i] * cols[i] / np.maximum(rows[i].mean(-2, keepdims=True), eps1)
            else:
                vs[i] = vs[i] + w * (g * g - vs[i])
                v = vs[i]
            u = g / np.sqrt(np.maximum(v, eps1 * eps1))
            ps[i] = p - alpha / max(1.0, np.sqrt(np.mean(u * u)) / d) * u
        out.append([p.copy() for p in ps])
    return out


# ---------------------------------------------------------------------------
# the update rules
# ---------------------------------------------------------------------------


def lrs_for(name, steps=STEPS):
    base = {"Rprop": 0.05, "ASGD": 0.1, "Adafactor": 0.05}[name]
    return [base * 0.9**s for s in range(steps)]  # a new learning rate every step


CASES = [
    ("Rprop", dict()),
    ("Rprop", dict(etas=(0.3, 1.5), step_sizes=(0.01, 0.08), maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lambd=0.1, alpha=0.5, t0=2, weight_decay=0.1)),
    ("ASGD", dict(lambd=0.01, t0=0, maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.2, weight_decay=0.1)),
    ("Adafactor", dict(eps=(None, 2.0), maximize=True)),  # alpha: eps2 * rho
]


def reference(name, lrs, **kw):
    if name == "Rprop":
        return rprop_ref(len(lrs), lrs, **kw)
    if name == "ASGD":
        return asgd_ref(len(lrs), lrs, **kw)[0]
    return adafactor_ref(len(lrs), lrs, **kw)


def case_id(c):
    return c[0] + "-" + "-".join(f"{k}={v}" for k, v in c[1].items())


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_against_the_update_rule(case):
    """Five steps, a new learning rate each, every step against the rule."""
    name, kw = case
    lrs = lrs_for(name)
    got, _ = run_ours(getattr(optim, name), STEPS, lrs=lrs, lr=lrs[0], **kw)
    assert_steps_close(got, reference(name, lrs, **kw))


def test_asgd_keeps_the_average():
    """``ax`` is the parameters while mu is 1 (the first t0 steps), then their
    running average."""
    lrs = lrs_for("ASGD")
    kw = dict(lambd=0.1, t0=2)
    _, opt = run_ours(optim.ASGD, STEPS, lrs=lrs, lr=lrs[0], **kw)
    _, avg = asgd_ref(STEPS, lrs, **kw)
    w, b = opt.params
    np.testing.assert_allclose(opt.state[w]["ax"].numpy(), avg[-1][0], rtol=1e-12)
    np.testing.assert_allclose(opt.state[b]["ax"].numpy(), avg[-1][1], rtol=1e-12)
    sd = opt.state_dict()["state"][0]
    assert set(sd) == {"step", "eta", "mu", "ax"}
    lr, t = lrs[-1], STEPS
    assert sd["step"].item() == t
    np.testing.assert_allclose(sd["eta"].item(), lr / (1 + 0.1 * lr * t) ** 0.75, rtol=1e-13)
    assert sd["mu"].item() == 1 / (t - 2)


def test_adafactor_factors_matrices_only():
    x = Tensor(RNG.uniform(0.2, 2.0, (2, 3, 4)), requires_grad=True)
    v = Tensor(RNG.uniform(0.2, 2.0, (5,)), requires_grad=True)
    s = Tensor(np.array(1.5), requires_grad=True)
    x0, v0, s0 = x.numpy().copy(), v.numpy().copy(), s.numpy().copy()
    opt = optim.Adafactor([x, v, s], lr=0.05)
    for _ in range(3):
        opt.zero_grad()
        sum((p**3 / 3 - p).sum() for p in (x, v, s)).backward()
        opt.step()
    assert opt.state[x]["row_var"].shape == (2, 3, 1)
    assert opt.state[x]["col_var"].shape == (2, 1, 4)
    assert set(opt.state[x]) == {"row_var", "col_var"}
    assert set(opt.state[v]) == {"variance"} and opt.state[s]["variance"].shape == ()
    want = adafactor_ref(3, [0.05] * 3, ps=[x0, v0, s0])[-1]
    for got, w in zip((x, v, s), want):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-10)


def test_float32_parameters():
    """Float32 parameters: the scalars are float32 on the device, within float32
    noise of the float64 rule."""
    lrs = [0.05] * 4
    for name, kw in (("Rprop", {}), ("ASGD", dict(lambd=0.1)), ("Adafactor", {})):
        w = Tensor(W0.astype(np.float32), requires_grad=True)
        opt = getattr(optim, name)([w], lr=0.05, **kw)
        for _ in range(4):
            opt.zero_grad()
            (w**3 / 3 - w).sum().backward()
            opt.step()
        assert w.dtype.name == "float32"
        want = reference(name, lrs, **kw)[-1][0]
        if name == "Adafactor":  # eps1 None: float32's epsilon; no difference at these sizes
            want = adafactor_ref(4, lrs, eps=(np.finfo(np.float32).eps, 1e-3))[-1][0]
        np.testing.assert_allclose(w.numpy(), want, rtol=2e-5, err_msg=name)


def test_changing_hyperparameters_compiles_nothing_new(monkeypatch):
    """Every hyperparameter set every step (as schedulers do): after the first
    two steps nothing compiles."""
    from mlfuse import driver

    monkeypatch.setenv("MLFUSE_CACHE", "0")
    count: list[int] = []
    real = driver.compile_module
    monkeypatch.setattr(driver, "compile_module", lambda *a, **k: count.append(1) or real(*a, **k))
    changes = {
        "Rprop": lambda g, s: g.update(etas=(0.5 - 0.01 * s, 1.2 + 0.01 * s),
                                       step_sizes=(1e-6 * (s + 1), 50 - s)),
        "ASGD": lambda g, s: g.update(lambd=1e-3 * (s + 1), alpha=0.7 + 0.01 * s, t0=s,
                                      weight_decay=0.01 * (s + 1)),
        "Adafactor": lambda g, s: g.update(beta2_decay=-0.8 + 0.05 * s, d=1 + s / 10,
                                           eps=(1e-30 * (s + 1), 1e-3 * (s + 1)),
                                           weight_decay=0.01 * (s + 1)),
    }  # fmt: skip
    for name, change in changes.items():
        w = Tensor(W0.copy(), requires_grad=True)
        kw = dict(weight_decay=0.1) if name != "Rprop" else {}
        if name == "Adafactor":
            kw["eps"] = (1e-30, 1e-3)
        opt = getattr(optim, name)([w], **kw)
        for s in range(5):
            opt.lr = 0.0123 + 0.001 * s
            change(opt.param_groups[0], s)
            opt.zero_grad()
            (w**3 / 3 - w).sum().backward()
            opt.step()
            if s == 1:
                compiled = len(count)
        assert len(count) == compiled, f"{name} compiled after its second step"
        assert np.isfinite(w.numpy()).all()


# ---------------------------------------------------------------------------
# state dicts
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,kw,keys",
    [
        ("Rprop", dict(lr=0.05), {"step", "prev", "step_size"}),
        ("ASGD", dict(lr=0.1, lambd=0.1, t0=1), {"step", "eta", "mu", "ax"}),
        ("Adafactor", dict(lr=0.05, weight_decay=0.1), {"step", "row_var", "col_var"}),
    ],
)
def test_state_dict_round_trip(name, kw, keys):
    """Three steps, the state dict (as numpy) loaded into a new optimizer with
    other hyperparameters, three more steps: the same as the original's."""
    cls = getattr(optim, name)
    got, opt = run_ours(cls, 3, **kw)
    sd = opt.state_dict()
    assert set(sd["state"][0]) == keys and sd["state"][0]["step"].item() == 3
    saved = {i: {k: v.numpy() for k, v in e.items()} for i, e in sd["state"].items()}
    w, b = opt.params
    w2, b2 = (Tensor(x.numpy().copy(), requires_grad=True) for x in (w, b))
    opt2 = cls([w2, b2], lr=0.5)
    opt2.load_state_dict({"state": saved, "param_groups": sd["param_groups"]})
    assert opt2.lr == kw["lr"]
    for o, (x, y) in ((opt, (w, b)), (opt2, (w2, b2))):
        for _ in range(3):
            o.zero_grad()
            ((x**3 / 3 - x).sum() + (y**3 / 3 - y).sum()).backward()
            o.step()
    np.testing.assert_array_equal(w2.numpy(), w.numpy())
    np.testing.assert_array_equal(b2.numpy(), b.numpy())


def test_adafactor_state_dict_checks_the_factored_shapes():
    _, opt = run_ours(optim.Adafactor, 1)
    sd = opt.state_dict()
    bad = {0: {"row_var": np.zeros((3, 4))}}
    with pytest.raises(ValueError, match="'row_var' of parameter 0 has shape \\(3, 4\\)"):
        opt.load_state_dict({"state": bad, "param_groups": sd["param_groups"]})
    bad = {1: {"row_var": np.zeros((4, 1))}}
    with pytest.raises(ValueError, match="parameter 1 of shape \\(4,\\) keeps no state 'row_var'"):
        opt.load_state_dict({"state": bad, "param_groups": sd["param_groups"]})


# ---------------------------------------------------------------------------
# bad arguments
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make,err,match",
    [
        (lambda w: optim.Rprop([w], lr=-1), ValueError, "Rprop: lr must be >= 0"),
        (lambda w: optim.Rprop([w], etas=(1.5, 1.2)), ValueError,
         "Rprop: etas must be \\(etaminus, etaplus\\) with 0 < etaminus < 1 < etaplus"),
        (lambda w: optim.Rprop([w], etas=(0.5, 0.9)), ValueError, "etaminus < 1 < etaplus"),
        (lambda w: optim.Rprop([w], etas=0.5), ValueError, "Rprop: etas must be two numbers"),
        (lambda w: optim.Rprop([w], step_sizes=(1.0, 0.1)), ValueError,
         "Rprop: step_sizes must be \\(min, max\\) with 0 <= min <= max"),
        (lambda w: optim.Rprop([w], differentiable=True), NotImplementedError, "Rprop"),
        (lambda w: optim.ASGD([w], lr=-0.1), ValueError, "ASGD: lr must be >= 0"),
        (lambda w: optim.ASGD([w], weight_decay=-1), ValueError,
         "ASGD: weight_decay must be >= 0"),
        (lambda w: optim.ASGD([w], t0="soon"), TypeError, "ASGD: t0 must be a number"),
        (lambda w: optim.Adafactor([w], beta2_decay=0.5), ValueError,
         "Adafactor: beta2_decay must be <= 0, got 0.5"),
        (lambda w: optim.Adafactor([w], d=0.5), ValueError, "Adafactor: d must be >= 1"),
        (lambda w: optim.Adafactor([w], eps=(-1.0, 1e-3)), ValueError,
         "Adafactor: eps\\[0\\] must be >= 0"),
        (lambda w: optim.Adafactor([w], eps=(None, -1e-3)), ValueError,
         "Adafactor: eps\\[1\\] must be >= 0"),
        (lambda w: optim.Adafactor([w], eps=1e-3), ValueError,
         "Adafactor: eps must be a pair \\(eps1 or None, eps2\\)"),
        (lambda w: optim.Adafactor([w], weight_decay=-1), ValueError,
         "Adafactor: weight_decay must be >= 0"),
        (lambda w: optim.LBFGS([w], lr=-1), ValueError, "LBFGS: lr must be >= 0"),
        (lambda w: optim.LBFGS([w], max_iter=0), ValueError, "LBFGS: max_iter must be >= 1"),
        (lambda w: optim.LBFGS([w], max_iter=2.5), TypeError, "max_iter must be an integer"),
        (lambda w: optim.LBFGS([w], history_size=0), ValueError, "history_size must be >= 1"),
        (lambda w: optim.LBFGS([w], tolerance_grad=-1), ValueError,
         "tolerance_grad must be >= 0"),
        (lambda w: optim.LBFGS([w], line_search_fn="armijo"), NotImplementedError,
         "LBFGS: line_search_fn must be None or 'strong_wolfe', got 'armijo'"),
        (lambda w: optim.LBFGS([{"params": [w]}, {"params": [Tensor([1.0], requires_grad=True)]}]),
         ValueError, "LBFGS: doesn't support per-parameter options"),
    ],
)  # fmt: skip
def test_bad_arguments_name_the_problem(make, err, match):
    w = Tensor([1.0], requires_grad=True)
    with pytest.raises(err, match=match):
        make(w)


def test_lbfgs_needs_a_closure():
    w = Tensor([1.0, 2.0], requires_grad=True)
    opt = optim.LBFGS([w])
    (w * w).sum().backward()
    with pytest.raises(TypeError, match="LBFGS: step needs a closure"):
        opt.step()
    with pytest.raises(TypeError, match="LBFGS: step needs a closure"):
        opt.step(3.0)
    with pytest.raises(NotImplementedError, match="cannot be scheduled lazily"):
        opt.schedule_step()
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])


# ---------------------------------------------------------------------------
# LBFGS: a tiny regression with a quartic penalty, against the rule in numpy
# ---------------------------------------------------------------------------

X = RNG.standard_normal((8, 3))
Y = RNG.standard_normal((8, 2))
LW0 = RNG.standard_normal((3, 2)) * 0.3
LB0 = np.zeros(2)


def loss_and_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
    """mean((X W + b - Y)²) + 0.1 sum(W⁴) and its gradient, W and b flat in x."""
    w, b = x[:6].reshape(3, 2), x[6:]
    r = X @ w + b - Y
    dr = 2 * r / r.size
    gw = X.T @ dr + 0.4 * w**3
    return float((r * r).mean() + 0.1 * (w**4).sum()), np.concatenate([gw.ravel(), dr.sum(0)])


def cubic_min_ref(x1, f1, g1, x2, f2, g2, lo=None, hi=None):
    if lo is None:
        lo, hi = min(x1, x2), max(x1, x2)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    sq = d1 * d1 - g1 * g2
    if sq < 0:
        return (lo + hi) / 2
    d2 = math.sqrt(sq)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def wolfe_ref(x, t, d, f, g, gtd, tol, max_ls, c1=1e-4, c2=0.9):
    """The strong Wolfe line search of minFunc (PyTorch's _strong_wolfe)."""

    def at(step):
        fn, gn = loss_and_grad(x + step * d)
        return fn, gn, gn @ d

    dmax = np.abs(d).max()
    fn, gn, sn = at(t)
    n, k, done = 1, 0, False
    pts = None
    tp, fp, gp, sp = 0.0, f, g, gtd
    while k < max_ls:
        if fn > f + c1 * t * gtd or (k > 1 and fn >= fp):
            pts = [[tp, fp, gp, sp], [t, fn, gn, sn]]
            break
        if abs(sn) <= -c2 * gtd:
            pts, done = [[t, fn, gn, sn]], True
            break
        if sn >= 0:
            pts = [[tp, fp, gp, sp], [t, fn, gn, sn]]
            break
        nxt = cubic_min_ref(tp, fp, sp, t, fn, sn, t + 0.01 * (t - tp), 10 * t)
        tp, fp, gp, sp = t, fn, gn, sn
        t = nxt
        fn, gn, sn = at(t)
        n, k = n + 1, k + 1
    if k == max_ls:
        pts = [[0.0, f, g, None], [t, fn, gn, None]]
    lo_i = 0 if pts[0][1] <= pts[-1][1] else 1
    hi_i = 1 - lo_i
    stuck = False
    while not done and k < max_ls:
        if abs(pts[1][0] - pts[0][0]) * dmax < tol:
            break
        t = cubic_min_ref(pts[0][0], pts[0][1], pts[0][3], pts[1][0], pts[1][1], pts[1][3])
        a, b = min(pts[0][0], pts[1][0]), max(pts[0][0], pts[1][0])
        gap = 0.1 * (b - a)
        if min(b - t, t - a) < gap:
            if stuck or t >= b or t <= a:
                t = b - gap if abs(t - b) < abs(t - a) else a + gap
                stuck = False
            else:
                stuck = True
        else:
            stuck = False
        fn, gn, sn = at(t)
        n, k = n + 1, k + 1
        if fn > f + c1 * t * gtd or fn >= pts[lo_i][1]:
            pts[hi_i] = [t, fn, gn, sn]
            lo_i = 0 if pts[0][1] <= pts[1][1] else 1
            hi_i = 1 - lo_i
        else:
            if abs(sn) <= -c2 * gtd:
                done = True
            elif sn * (pts[hi_i][0] - pts[lo_i][0]) >= 0:
                pts[hi_i] = list(pts[lo_i])
            pts[lo_i] = [t, fn, gn, sn]
    return pts[lo_i][1], pts[lo_i][2], pts[lo_i][0], n


def lbfgs_ref(steps, lr=1.0, max_iter=20, max_eval=None, tolerance_grad=1e-7,
              tolerance_change=1e-9, history_size=100, line_search_fn=None):  # fmt: skip
    """PyTorch's LBFGS.step, ``steps`` times: (the first loss, x, n_iter,
    func_evals) after each."""
    max_eval = max_iter * 5 // 4 if max_eval is None else max_eval
    x = np.concatenate([LW0.ravel(), LB0])
    n_iter = func_evals = 0
    d = t = prev_g = None
    dirs, stps, ros, h = [], [], [], 1.0
    out = []
    for _ in range(steps):
        f, g = loss_and_grad(x)
        first, evals = f, 1
        func_evals += 1
        if np.abs(g).max() <= tolerance_grad:
            out.append((first, x.copy(), n_iter, func_evals))
            continue
        it = 0
        while it < max_iter:
            it, n_iter = it + 1, n_iter + 1
            if n_iter == 1:
                d, dirs, stps, ros, h = -g, [], [], [], 1.0
            else:
                y, s = g - prev_g, d * t
                ys = y @ s
                if ys > 1e-10:
                    if len(dirs) == history_size:
                        dirs, stps, ros = dirs[1:], stps[1:], ros[1:]
                    dirs, stps, ros = dirs + [y], stps + [s], ros + [1 / ys]
                    h = ys / (y @ y)
                q, al = -g, [0.0] * len(dirs)
                for i in reversed(range(len(dirs))):
                    al[i] = (stps[i] @ q) * ros[i]
                    q = q - al[i] * dirs[i]
                r = q * h
                for i in range(len(dirs)):
                    r = r + (al[i] - (dirs[i] @ r) * ros[i]) * stps[i]
                d = r
            prev_g, prev_f = g, f
            t = min(1.0, 1.0 / np.abs(g).sum()) * lr if n_iter == 1 else lr
            gtd = g @ d
            if gtd > -tolerance_change:
                break
            if line_search_fn == "strong_wolfe":
                f, g, t, ls = wolfe_ref(x, t, d, f, g, gtd, tolerance_change, max_eval - evals)
                x = x + t * d
                optimal = np.abs(g).max() <= tolerance_grad
            else:
                x, ls, optimal = x + t * d, 0, False
                if it != max_iter:
                    f, g = loss_and_grad(x)
                    ls, optimal = 1, np.abs(g).max() <= tolerance_grad
            evals += ls
            func_evals += ls
            if it == max_iter or evals >= max_eval or optimal:
                break
            if np.abs(d * t).max() <= tolerance_change or abs(f - prev_f) < tolerance_change:
                break
        out.append((first, x.copy(), n_iter, func_evals))
    return out


def run_lbfgs(mod, T, steps, **kw):
    """``steps`` LBFGS steps with ``mod``'s optimizer (ours or torch's) on the
    regression: (the loss returned, flat parameters, n_iter, func_evals) after
    each."""
    w, b = T(LW0.copy(), requires_grad=True), T(LB0.copy(), requires_grad=True)
    x, y = T(X.copy()), T(Y.copy())
    opt = mod.LBFGS([w, b], **kw)

    def closure():
        opt.zero_grad()
        r = x @ w + b - y
        loss = (r * r).mean() + 0.1 * (w**4).sum()
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        st = opt.state[w]
        flat = np.concatenate([w.detach().numpy().ravel(), b.detach().numpy()])
        out.append((float(loss.detach()), flat, st["n_iter"], st["func_evals"]))
    return out, opt, (w, b), closure


def assert_lbfgs_close(got, want, rtol=1e-9):
    for s, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g[2:] == w[2:], f"step {s + 1}: (n_iter, func_evals) {g[2:]} != {w[2:]}"
        np.testing.assert_allclose(g[0], w[0], rtol=rtol, err_msg=f"loss of step {s + 1}")
        np.testing.assert_allclose(g[1], w[1], rtol=rtol, atol=1e-12, err_msg=f"step {s + 1}")


LBFGS_CASES = [
    dict(max_iter=4, history_size=3),  # the history fills and shifts
    dict(lr=0.5, max_iter=5, tolerance_change=1e-6),
    dict(line_search_fn="strong_wolfe", max_iter=6, history_size=3),
    dict(line_search_fn="strong_wolfe", max_iter=8, max_eval=9),
]


@pytest.mark.parametrize(
    "kw", LBFGS_CASES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items())
)
def test_lbfgs_against_the_rule(kw):
    got, *_ = run_lbfgs(optim, Tensor, 3, **kw)
    assert_lbfgs_close(got, lbfgs_ref(3, **kw))
    assert loss_and_grad(got[-1][1])[0] < 0.65 * got[0][0]  # it learns (the minimum: 0.61)


def test_lbfgs_stops_at_a_small_gradient():
    """A start at the minimum: one evaluation, no iteration, nothing moves."""
    w = Tensor(np.array([1.0, -2.0]), requires_grad=True)
    opt = optim.LBFGS([w], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((w - Tensor([1.0, -2.0])) ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 0.0
    assert opt.state[w] == {"func_evals": 1, "n_iter": 0}
    np.testing.assert_array_equal(w.numpy(), [1.0, -2.0])


def test_lbfgs_state_dict_round_trip():
    kw = dict(max_iter=3, history_size=2, line_search_fn="strong_wolfe")
    _, opt, (w, b), _ = run_lbfgs(optim, Tensor, 2, **kw)
    sd = opt.state_dict()
    assert set(sd["state"]) == {0} and sd["param_groups"][0]["line_search_fn"] == "strong_wolfe"
    st = sd["state"][0]
    assert {"d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad"} <= set(st)
    assert len(st["old_dirs"]) == 2 and st["d"].shape == (8,)
    w2, b2 = (Tensor(p.numpy().copy(), requires_grad=True) for p in (w, b))
    opt2 = optim.LBFGS([w2, b2], lr=0.1)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 1 and opt2.param_groups[0]["max_iter"] == 3
    x, y = Tensor(X.copy()), Tensor(Y.copy())
    for o, (p, q) in ((opt, (w, b)), (opt2, (w2, b2))):

        def closure(o=o, p=p, q=q):
            o.zero_grad()
            r = x @ p + q - y
            loss = (r * r).mean() + 0.1 * (p**4).sum()
            loss.backward()
            return loss

        o.step(closure)
    np.testing.assert_array_equal(w2.numpy(), w.numpy())
    np.testing.assert_array_equal(b2.numpy(), b.numpy())
    with pytest.raises(ValueError, match="unknown state 'momentum'"):
        opt2.load_state_dict({"state": {0: {"momentum": 1.0}}, "param_groups": sd["param_groups"]})


# ---------------------------------------------------------------------------
# against torch.optim (float64 both, PyTorch's scalars float64 too)
# ---------------------------------------------------------------------------


@pytest.fixture
def torch64():
    torch = pytest.importorskip("torch")
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # PyTorch's step/eta/mu scalars float64 too
    yield torch
    torch.set_default_dtype(old)


def run_torch(torch, name, steps, lrs, **kw):
    w, b = torch.tensor(W0.copy(), requires_grad=True), torch.tensor(B0.copy(), requires_grad=True)
    opt = getattr(torch.optim, name)([w, b], lr=lrs[0], **kw)
    out = []
    for s in range(steps):
        for g in opt.param_groups:
            g["lr"] = lrs[s]
        opt.zero_grad()
        ((w**3 / 3 - w).sum() + (b**3 / 3 - b).sum()).backward()
        opt.step()
        out.append([w.detach().numpy().copy(), b.detach().numpy().copy()])
    return out, opt, (w, b)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_against_torch_optim(torch64, case):
    name, kw = case
    lrs = lrs_for(name)
    got, ours = run_ours(getattr(optim, name), STEPS, lrs=lrs, lr=lrs[0], **kw)
    want, theirs, _ = run_torch(torch64, name, STEPS, lrs, **kw)
    assert_steps_close(got, want, rtol=1e-12)
    if name == "ASGD":
        for p, q in zip(ours.params, theirs.param_groups[0]["params"]):
            ax = theirs.state[q]["ax"].numpy()
            np.testing.assert_allclose(ours.state[p]["ax"].numpy(), ax, rtol=1e-12)


@pytest.mark.parametrize(
    "name,kw",
    [
        ("Rprop", dict(etas=(0.3, 1.5))),
        ("ASGD", dict(lambd=0.1, t0=1, weight_decay=0.01)),
        ("Adafactor", dict(weight_decay=0.1)),
    ],
)
def test_loads_a_torch_state_dict(torch64, name, kw):
    """Three steps in PyTorch, its state dict loaded here, three more in both."""
    lrs = lrs_for(name, 6)
    _, opt_t, (wt, bt) = run_torch(torch64, name, 3, lrs, **kw)
    w, b = (Tensor(p.detach().numpy().copy(), requires_grad=True) for p in (wt, bt))
    opt = getattr(optim, name)([w, b], lr=lrs[0], **kw)
    opt.load_state_dict(opt_t.state_dict())
    for lr in lrs[3:]:
        for g in opt.param_groups + opt_t.param_groups:
            g["lr"] = lr
        for (p, q), o in (((w, b), opt), ((wt, bt), opt_t)):
            o.zero_grad()
            ((p**3 / 3 - p).sum() + (q**3 / 3 - q).sum()).backward()
            o.step()
    np.testing.assert_allclose(w.numpy(), wt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.numpy(), bt.detach().numpy(), rtol=1e-12)
    assert set(opt.state_dict()["state"][0]) == set(opt_t.state_dict()["state"][0])


@pytest.mark.parametrize(
    "kw", LBFGS_CASES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items())
)
def test_lbfgs_against_torch(torch64, kw):
    got, *_ = run_lbfgs(optim, Tensor, 3, **kw)
    want, *_ = run_lbfgs(torch64.optim, torch64.tensor, 3, **kw)
    assert_lbfgs_close(got, want)


def test_lbfgs_loads_a_torch_state_dict(torch64):
    kw = dict(max_iter=3, history_size=2, line_search_fn="strong_wolfe")
    _, opt_t, (wt, bt), closure_t = run_lbfgs(torch64.optim, torch64.tensor, 2, **kw)
    w, b = (Tensor(p.detach().numpy().copy(), requires_grad=True) for p in (wt, bt))
    opt = optim.LBFGS([w, b])
    opt.load_state_dict(opt_t.state_dict())
    x, y = Tensor(X.copy()), Tensor(Y.copy())

    def closure():
        opt.zero_grad()
        r = x @ w + b - y
        loss = (r * r).mean() + 0.1 * (w**4).sum()
        loss.backward()
        return loss

    for _ in range(2):
        opt.step(closure)
        opt_t.step(closure_t)
    np.testing.assert_allclose(w.numpy(), wt.detach().numpy(), rtol=1e-9)
    np.testing.assert_allclose(b.numpy(), bt.detach().numpy(), rtol=1e-9, atol=1e-12)
    assert opt.state[w]["n_iter"] == opt_t.state[wt]["n_iter"]
