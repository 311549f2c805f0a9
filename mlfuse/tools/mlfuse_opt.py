"""``mlfuse-opt``: xDSL's opt driver with mlfuse's dialects, passes and targets.

    mlfuse-opt input.mlir -p 'lazy-canonicalize,push-views' --print-between-passes
    mlfuse-opt input.mlir -p 'convert-kernel-to-loops,...,convert-loops-to-llvm' -t llvm

Everything of ``xdsl-opt`` works (``-p`` with options, ``--verify-diagnostics``,
``--split-input-file``, ``--time-passes`` ...), and the verifier runs after
every pass. Every registered compilation target (:mod:`mlfuse.targets`) adds
its passes and its ``-t`` emitters (the CPU: ``convert-parallel-to-cpu``,
``cpu-entry-points``; ``-t llvm``, ``-t llvm-opt``, ``-t asm``). Of xDSL's own
``-t`` targets only ``mlir`` is offered: the others (``x86-asm``,
``riscv-asm``, ``wgsl`` ...) take xDSL's own low-level dialects, not mlfuse
IR, and asking for one says so. ``--help`` lists mlfuse's passes first, each
with its one-line description and options, then the ``-t`` targets, then
xDSL's passes. Errors are printed as diagnostics with a non-zero exit status,
never as a Python traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import textwrap
from collections.abc import Callable

from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from mlfuse.passes import all_passes
from mlfuse.targets import targets


XDSL_TARGETS = ("mlir",)
"""The ``-t`` targets of xDSL that mlfuse-opt offers (the IR printer)."""

DESCRIPTION = (
    "mlfuse's IR optimizer: parse a module (lazy, kernel, loops or llvm dialect), run the "
    "passes given with -p and print the result with -t (default: the IR)."
)


def _first_line(doc: str | None) -> str:
    """A docstring's first line, or its first paragraph when the sentence runs on."""
    para = (doc or "").strip().split("\n\n")[0]
    return " ".join(para.split()).replace("``", "")


def _options(cls: type) -> str:
    """A pass's options as ``-p`` spells them: ``max-buffers=32 horizontal=True``."""
    if not dataclasses.is_dataclass(cls):
        return ""
    out = []
    for f in dataclasses.fields(cls):
        if f.name == "name" or not f.init:
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = "<required>"
        if isinstance(default, bool):
            default = str(default).lower()
        out.append(f"{f.name.replace('_', '-')}={default}")
    return " ".join(out)


def _listing(title: str, entries: list[tuple[str, str, str]]) -> list[str]:
    """``title:`` then ``  name  description`` (wrapped) and its options below it."""
    lines = [f"{title}:"]
    width = max((len(n) for n, _, _ in entries), default=0) + 2
    for name, desc, options in entries:
        wrapped = textwrap.wrap(desc, 96 - width, break_on_hyphens=False) or [""]
        lines.append(f"  {name.ljust(width)}{wrapped[0]}")
        lines += [f"  {' ' * width}{w}" for w in wrapped[1:]]
        if options:
            lines.append(f"  {' ' * width}options: {options}")
    return lines


def pass_help(passes: dict[str, Callable[[], type]]) -> list[str]:
    """mlfuse's passes, then each target's, with description and options."""
    from mlfuse.passes import PASSES
    from mlfuse.targets import targets

    def entry(name: str, factory: Callable[[], type]) -> tuple[str, str, str]:
        cls = factory()
        return name, _first_line(cls.__doc__), _options(cls)

    lines = _listing("mlfuse passes (-p)", [entry(n, f) for n, f in PASSES.items()])
    seen = set(PASSES)
    for t in targets():
        own = [entry(n, f) for n, f in t.passes().items() if n not in seen]
        seen.update(t.passes())
        if own:
            lines += ["", *_listing(f"passes of the {t.name} target (-p)", own)]
    return lines


class MlfuseOptMain(xDSLOptMain):
    """xDSL's opt driver with mlfuse's dialects and the passes and emitters of every target."""

    version_format = "mlfuse-opt (mlfuse 0.1.0, xdsl {xdsl_version})"
    removed_targets: dict[str, object]
    """xDSL's ``-t`` targets mlfuse-opt does not offer (they cannot take mlfuse IR)."""

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
        mine = set(self.available_targets)
        super().register_all_targets()
        self.removed_targets = {
            n: f for n, f in self.available_targets.items() if n not in mine | set(XDSL_TARGETS)
        }
        for n in self.removed_targets:
            del self.available_targets[n]

    def target_help(self) -> list[str]:
        """The ``-t`` targets with what each prints (mlfuse's first, then xDSL's ``mlir``)."""
        entries = []
        for name, factory in self.available_targets.items():
            if name == "mlir":
                desc = "the IR after the passes (default)"
            else:
                desc = _first_line(factory().__doc__)  # type: ignore[operator]
                desc = re.sub(r"^-t [\w-]+: ", "", desc)
            entries.append((name, desc, ""))
        return _listing("output targets (-t)", entries)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        from mlfuse.passes import all_passes

        mine = all_passes()
        xdsl = [n for n in self.available_passes if n not in mine]
        arg_parser.prog = "mlfuse-opt"
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        arg_parser.description = textwrap.fill(arg_parser.description or "", 96)
        arg_parser.epilog = "\n".join(
            [
                *pass_help(mine),
                "",
                *self.target_help(),
                "",
                "xDSL's passes (-p; they act on the dialects they name, mostly not mlfuse's):",
                *textwrap.wrap(
                    ", ".join(xdsl),
                    96,
                    initial_indent="  ",
                    subsequent_indent="  ",
                    break_on_hyphens=False,
                ),
            ]
        )
        for action in arg_parser._actions:
            if "-p" in action.option_strings:
                action.help = (
                    "comma-separated passes, each with options in braces: "
                    "'push-views,group-reduces{max-buffers=8 horizontal=false}' "
                    "(the passes are listed below)"
                )
            elif "-t" in action.option_strings:
                action.help = (
                    f"what to print: {', '.join(self.available_targets)} (listed below; "
                    "default: mlir)"
                )
        parser_error = arg_parser.error

        def error(message: str):
            m = re.search(r"-t/--target: invalid choice: '([^']*)'", message)
            if m and m.group(1) in self.removed_targets:
                mlfuse = [n for n in self.available_targets if n not in XDSL_TARGETS]
                arg_parser.exit(
                    2,
                    f"mlfuse-opt: error: argument -t/--target: '{m.group(1)}' is xDSL's target "
                    "for its own low-level dialects and cannot take mlfuse IR; mlfuse's targets: "
                    f"{', '.join(mlfuse)}, mlir (-t asm prints the host's assembly)\n",
                )
            parser_error(message)

        arg_parser.error = error  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    try:
        MlfuseOptMain(description=DESCRIPTION, args=argv).run()
    except SystemExit as e:  # --help, --version and command-line errors (argparse)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
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
