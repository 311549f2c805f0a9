"""``MLFUSE_DEBUG_DIR``: a folder per compiled schedule with every stage of its compile.

With ``MLFUSE_DEBUG_DIR=path``, each schedule the driver compiles gets a new
folder ``path/NNNN-<hash>`` (numbered in order, the hash is of its lazy IR)::

    00-lazy.mlir                the lazy-dialect function as compiled
    01-lazy-canonicalize.mlir   the module after each pass of the lazy pipeline
    ...
    06-plan-memory.mlir         kernels and schedule
    kernels/00-kernels.mlir     the kernels this schedule compiled (renamed apart)
    kernels/01-<pass>.mlir      those kernels after each pass of the target's pipeline
    cpu/                        the target's own artifacts (the CPU: llvm.ll,
                                llvm-O3.ll, kernels.s; CUDA: nvptx.ll, kernels.ptx)
    summary.txt                 the schedule, refused merges, buffers and pass times

Kernels an earlier schedule compiled come from the kernel cache and are not
lowered again; the summary says which.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from mlfuse.driver import Compiled
    from mlfuse.targets import Target

_NUMBERED = re.compile(r"^(\d{4,})-")


def _safe(name: str) -> str:
    """A pass spec as a file name: ``convert-kernel-to-loops{grid=true}`` ->
    ``convert-kernel-to-loops_grid_true_``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


class DebugDir:
    """The folder of one compiled schedule."""

    def __init__(self, path: Path):
        self.path = path
        self.compiled_as: dict[str, str] = {}
        """schedule kernel name -> its name in ``kernels/`` ("" when it was cached)."""
        self.artifacts: list[str] = []

    @classmethod
    def create(cls, module: ModuleOp) -> DebugDir | None:
        """A new numbered folder for the lazy ``module`` under ``MLFUSE_DEBUG_DIR``
        (None when the variable is unset), with ``00-lazy.mlir`` written."""
        root = os.environ.get("MLFUSE_DEBUG_DIR")
        if not root:
            return None
        text = str(module)
        digest = hashlib.sha1(text.encode()).hexdigest()[:8]
        base = Path(root)
        base.mkdir(parents=True, exist_ok=True)
        while True:  # another process may take a number first: try the next
            taken = [int(m.group(1)) for p in base.iterdir() if (m := _NUMBERED.match(p.name))]
            path = base / f"{max(taken, default=0) + 1:04d}-{digest}"
            try:
                path.mkdir()
                break
            except FileExistsError:
                continue
        d = cls(path)
        (path / "00-lazy.mlir").write_text(text + "\n")
        return d

    def write_ir(self, folder: str, index: int, name: str, module: ModuleOp) -> None:
        """``folder/NN-<name>.mlir`` with ``module``'s text."""
        where = self.path / folder
        where.mkdir(exist_ok=True)
        (where / f"{index:02d}-{_safe(name)}.mlir").write_text(f"{module}\n")

    def write_artifacts(self, target: Target, module: ModuleOp) -> None:
        """The target's own forms of the lowered kernels, in a folder named after it."""
        where = self.path / target.name
        where.mkdir(exist_ok=True)
        self.artifacts = [f"{target.name}/{n}" for n in target.write_artifacts(module, where)]

    def write_summary(self, compiled: Compiled, target: str, seconds: float) -> None:
        """``summary.txt``: the schedule, its buffers, refused merges and the pass times."""
        from mlfuse.driver import format_timings

        items = compiled.items
        lines = [
            f"schedule {self.path.name}: {len(items)} kernel(s) for {target}, compiled in "
            f"{seconds * 1e3:.1f} ms, peak {compiled.peak_bytes} B",
            "",
            "kernels (launch order):",
        ]
        for it in items:
            lines.append(f"  {it}")
            lines.append(f"      reads {', '.join(it.reads) or '-'}; writes {', '.join(it.writes)}")
        lines += ["", "refused merges:"]
        lines += [f"  {r}" for r in items.not_fused] or ["  none"]  # type: ignore[attr-defined]
        lines += ["", "buffers:"]
        inputs, outputs = set(items.inputs), set(items.outputs)  # type: ignore[attr-defined]
        for name, nbytes in items.buffers.items():  # type: ignore[attr-defined]
            role = " (input)" if name in inputs else ""
            role += " (output)" if name in outputs else ""
            lines.append(f"  {name}: {nbytes} B{role}")
        lines += ["", "kernels compiled here (as named in kernels/):"]
        for name, unique in self.compiled_as.items():
            lines.append(f"  {name}: {unique or 'cached (compiled by an earlier schedule)'}")
        if self.artifacts:
            lines += ["", f"{target} artifacts: {', '.join(self.artifacts)}"]
        lines += ["", "pass times:"]
        lines += [f"  {line}" for line in format_timings(compiled.timings)]
        (self.path / "summary.txt").write_text("\n".join(lines) + "\n")
