"""``mlfuse-opt``: xDSL's opt driver with mlfuse's dialects, passes and targets.

    mlfuse-opt input.mlir -p 'lazy-canonicalize,push-views' --print-between-passes
    mlfuse-opt input.mlir -p 'convert-kernel-to-loops,...,convert-loops-to-llvm' -t llvm

Everything of ``xdsl-opt`` works (``-p`` with options, ``--verify-diagnostics``,
``--split-input-file``, ``--time-passes`` ...), and the verifier runs after
every pass. Targets added: ``llvm`` (LLVM IR of the llvm.func ops) and
``llvm-opt`` (the same after LLVM's O3). Errors are printed as diagnostics
with a non-zero exit status, never as a Python traceback.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.target import Target
from xdsl.xdsl_opt_main import xDSLOptMain

from mlfuse.passes import PASSES


@dataclass(frozen=True)
class OptimizedLLVMIRTarget(Target):
    """``-t llvm-opt``: LLVM IR after LLVM's O3 for the host CPU."""

    name = "llvm-opt"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from mlfuse.lowering.llvm_ir import to_llvm_ir
        from mlfuse.runtime.cpu import optimized_ir

        output.write(optimized_ir(to_llvm_ir(module)))


class MlfuseOptMain(xDSLOptMain):
    version_format = "mlfuse-opt (mlfuse 0.1.0, xdsl {xdsl_version})"

    def register_all_dialects(self):
        super().register_all_dialects()

        def lazy():
            from mlfuse.dialects.lazy import Lazy

            return Lazy

        def kernel():
            from mlfuse.dialects.kernel import Kernel

            return Kernel

        self.ctx.register_dialect("lazy", lazy)
        self.ctx.register_dialect("kernel", kernel)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in PASSES.items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        def llvm_target():
            from mlfuse.lowering.llvm_ir import LLVMIRTarget

            return LLVMIRTarget

        self.available_targets["llvm"] = llvm_target
        self.available_targets["llvm-opt"] = lambda: OptimizedLLVMIRTarget
        super().register_all_targets()


def main(argv: list[str] | None = None) -> int:
    try:
        MlfuseOptMain(args=argv).run()
    except ParseError as e:
        print(f"mlfuse-opt: parse error: {e}", file=sys.stderr)
        return 1
    except DiagnosticException as e:
        print(f"mlfuse-opt: error: {e}", file=sys.stderr)
        for note in getattr(e, "__notes__", ()):
            print(note, file=sys.stderr)
        return 1
    except (ValueError, KeyError, NotImplementedError) as e:
        # bad pass names / options, unknown targets, ops a lowering lacks
        msg = str(e)
        if msg.startswith("Unrecognized passes"):
            msg += f"; mlfuse passes: {', '.join(PASSES)} (xDSL's passes also work)"
        print(f"mlfuse-opt: error: {msg}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"mlfuse-opt: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a bug in mlfuse: still a diagnostic, not a traceback
        if os.environ.get("MLFUSE_TRACEBACK"):
            raise
        print(
            f"mlfuse-opt: internal error ({type(e).__name__}): {e}\n"
            "(set MLFUSE_TRACEBACK=1 to see where it happened)",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
