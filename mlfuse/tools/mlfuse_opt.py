"""``mlfuse-opt``: xDSL's opt driver with mlfuse's dialects, passes and targets.

    mlfuse-opt input.mlir -p 'lazy-canonicalize,push-views' --print-between-passes
    mlfuse-opt input.mlir -p 'convert-kernel-to-loops,...,convert-loops-to-llvm' -t llvm

Everything of ``xdsl-opt`` works (``-p`` with options, ``--verify-diagnostics``,
``--split-input-file``, ``--time-passes`` ...), and the verifier runs after
every pass. Every registered compilation target (:mod:`mlfuse.targets`) adds
its passes and its ``-t`` emitters (the CPU: ``convert-parallel-to-cpu``,
``cpu-entry-points``; ``-t llvm``, ``-t llvm-opt``, ``-t asm``). Errors are
printed as diagnostics with a non-zero exit status, never as a Python
traceback.
"""

from __future__ import annotations

import os
import sys

from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from mlfuse.passes import all_passes
from mlfuse.targets import targets


class MlfuseOptMain(xDSLOptMain):
    """xDSL's opt driver with mlfuse's dialects and the passes and emitters of every target."""

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
        for name, factory in all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        owner: dict[str, str] = {}
        for t in targets():
            for name, factory in t.emitters().items():
                if name in owner and self.available_targets[name] is not factory:
                    raise ValueError(
                        f"targets '{owner[name]}' and '{t.name}' both emit '-t {name}'"
                    )
                owner[name] = t.name
                self.available_targets[name] = factory
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
            msg += f"; mlfuse passes: {', '.join(all_passes())} (xDSL's passes also work)"
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
