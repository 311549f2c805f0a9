"""Fusion report: kernels and bytes moved for every case of spec/fusion_cases.md.

    python bench/fusion_report.py [--json out.json]

For each case: kernels scheduled (against the target and tinygrad 0.14's
count), bytes the kernels read and write, the minimum a fused program must
move (every input read once, every output written once), peak memory, the
reason for every kernel boundary, and whether the result matches numpy.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

import mlfuse
from mlfuse.examples import FUSION_CASES


def report() -> list[dict]:
    rows = []
    for case in FUSION_CASES:
        outs, refs = case.build(np.random.default_rng(0))
        inputs = {id(n): n.buffer.nbytes for o in outs for n in _inputs(o)}
        items = mlfuse.schedule(*outs)
        mlfuse.realize(*outs)
        err = max(float(np.abs(o.numpy() - r).max()) for o, r in zip(outs, refs))
        minimum = sum(inputs.values()) + sum(o.numel() * o.dtype.itemsize for o in outs)
        rows.append(
            {
                "case": case.name,
                "program": case.program,
                "kernels": len(items),
                "target": case.target,
                "tinygrad": case.tinygrad,
                "bytes_read": sum(i.bytes_read for i in items),
                "bytes_written": sum(i.bytes_written for i in items),
                "min_bytes": minimum,
                "boundaries": [f"{i.name}: {', '.join(i.reasons)}" for i in items],
                "max_error": err,
                "ok": len(items) <= case.target and err < 1e-3,
            }
        )
    return rows


def _inputs(t):
    from mlfuse.graph import toposort

    return [n for n in toposort([t.node]) if n.realized]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    rows = report()
    head = (
        f"{'case':22s} {'kernels':>7s} {'target':>6s} {'tinygrad':>8s} {'read B':>9s} "
        f"{'write B':>9s} {'moved/min':>9s}  boundaries"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        moved = (r["bytes_read"] + r["bytes_written"]) / r["min_bytes"]
        flag = "" if r["ok"] else "  <-- FAILS"
        print(
            f"{r['case']:22s} {r['kernels']:7d} {r['target']:6d} {r['tinygrad']:8d} "
            f"{r['bytes_read']:9d} {r['bytes_written']:9d} {moved:9.2f}  "
            f"{'; '.join(r['boundaries'])}{flag}"
        )
    total_k = sum(r["kernels"] for r in rows)
    total_t = sum(r["tinygrad"] for r in rows)
    print(
        f"\n{total_k} kernels in all (tinygrad 0.14: {total_t}); "
        f"{sum(r['ok'] for r in rows)}/{len(rows)} cases meet their target and match numpy"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
