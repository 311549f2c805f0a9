"""Train a small MLP on scikit-learn's bundled handwritten digits (8x8 images,
10 classes, 1797 samples) with mlfuse: forward, backward and the Adam update
of each step run as one compiled schedule, captured once by ``mlfuse.jit`` and
replayed for every later batch.

    pip install -e '.[examples]'      # scikit-learn, for its bundled dataset
    python examples/train_digits.py   # ~97% test accuracy in a few seconds

Options: --epochs N, --batch N, --hidden N, --lr X, --seed N.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import mlfuse
import mlfuse.nn.functional as F
from mlfuse import Tensor, nn, optim


def load_digits(seed: int):
    try:
        from sklearn.datasets import load_digits as sk_digits
    except ImportError:
        sys.exit("this example reads scikit-learn's bundled digits: pip install -e '.[examples]'")
    d = sk_digits()
    x = (d.data / 16.0).astype(np.float32)  # pixels 0..16 -> 0..1
    y = d.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_test = len(x) // 5
    return (x[n_test:], y[n_test:]), (x[:n_test], y[:n_test])


def accuracy(model: nn.Module, x: np.ndarray, y: np.ndarray) -> float:
    model.eval()
    with mlfuse.no_grad():
        pred = model(Tensor(x)).argmax(1).numpy()
    model.train()
    return float((pred == y).mean())


def main(argv=None) -> float:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    (xtr, ytr), (xte, yte) = load_digits(args.seed)
    mlfuse.manual_seed(args.seed)
    model = nn.Sequential(nn.Linear(64, args.hidden), nn.ReLU(), nn.Linear(args.hidden, 10))
    opt = optim.Adam(model.parameters(), lr=args.lr)
    steps = len(xtr) // args.batch  # full batches only: one compiled step serves all
    total = args.epochs * steps
    print(
        f"digits: {len(xtr)} train / {len(xte)} test images; MLP 64-{args.hidden}-10, Adam, "
        f"batch {args.batch}, {args.epochs} epochs ({total} steps, cosine learning rate)"
    )

    @mlfuse.jit
    def train_step(x: Tensor, y: Tensor) -> Tensor:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        mlfuse.realize(loss, *opt.schedule_step())  # forward + backward + update
        return loss

    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    step = 0
    for epoch in range(args.epochs):
        order = rng.permutation(len(xtr))
        losses = []
        for b in range(steps):
            idx = order[b * args.batch : (b + 1) * args.batch]
            # the learning rate changes every step: a buffer the update kernels read
            opt.lr = args.lr * 0.5 * (1 + np.cos(np.pi * step / total))
            loss = train_step(Tensor(xtr[idx]), Tensor(ytr[idx]))
            losses.append(loss.item())
            step += 1
        if epoch % 5 == 4 or epoch == args.epochs - 1:
            print(
                f"epoch {epoch + 1:3d}  loss {np.mean(losses):.4f}  "
                f"test accuracy {accuracy(model, xte, yte):.4f}  "
                f"({time.perf_counter() - start:.1f} s)"
            )
    acc = accuracy(model, xte, yte)
    print(f"final test accuracy {acc:.4f} after {time.perf_counter() - start:.1f} s")
    return acc


if __name__ == "__main__":
    main()
