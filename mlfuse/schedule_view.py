"""Pictures of a schedule: a Graphviz graph and a self-contained HTML page.

Both show the kernels in launch order (ops, front-end origin, iteration space,
bytes), the buffers between them (which kernel writes each, which kernels read
it; the graph's inputs and outputs), the reason each kernel output is a buffer
of its own, and the merges the scheduler refused::

    mlfuse.schedule(y).write_dot("y.dot")      # dot -Tsvg y.dot > y.svg
    mlfuse.schedule(y).write_html("y.html")    # open in any browser
"""

from __future__ import annotations

import html
import re
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mlfuse.driver import Schedule

_REFUSED = re.compile(r"^(\S+) \(.*?\) (->|\+) (\S+) \(.*?\): (.*)$")


@dataclass
class _Buffer:
    name: str
    nbytes: int
    writer: str | None = None  # the kernel writing it; None for an input or constant
    reason: str = ""  # why the writer materializes it
    readers: list[str] = field(default_factory=list)
    role: str = ""  # "input", "output i", or both


def buffers(s: Schedule) -> dict[str, _Buffer]:
    """Every buffer of ``s`` with its writer, readers, role and reason, in first-use order."""
    out: dict[str, _Buffer] = {}

    def get(name: str) -> _Buffer:
        if name not in out:
            out[name] = _Buffer(name, s.buffers.get(name, 0))
        return out[name]

    for name in s.inputs:
        get(name).role = "input"
    for it in s:
        for name in it.reads:
            get(name).readers.append(it.name)
        for i, name in enumerate(it.writes):
            b = get(name)
            b.writer = it.name
            b.reason = it.reasons[i] if i < len(it.reasons) else ""
    for i, name in enumerate(s.outputs):
        b = get(name)
        b.role = ", ".join(r for r in (b.role, f"output {i}") if r)
    return out


def refused(s: Schedule) -> list[tuple[str | None, str | None, str, str]]:
    """(kernel a, kernel b, "->" or "+", reason) of each refused merge; the
    kernels are None where the line does not name two kernels of ``s``."""
    names = {it.name for it in s}
    out = []
    for line in s.not_fused:
        m = _REFUSED.match(line)
        if m and m.group(1) in names and m.group(3) in names:
            out.append((m.group(1), m.group(3), m.group(2), m.group(4)))
        else:
            out.append((None, None, "", line))
    return out


# ---------------------------------------------------------------------------
# Graphviz
# ---------------------------------------------------------------------------


def _q(text: str, width: int = 48) -> str:
    """A DOT string literal, long lines wrapped."""
    lines = []
    for part in text.split("\n"):
        lines += textwrap.wrap(part, width) or [""]
    body = "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines)
    return f'"{body}"'


def to_dot(s: Schedule) -> str:
    """``digraph schedule``: kernels are boxes, buffers ellipses (inputs blue,
    outputs green), an edge from a kernel to a buffer carries the reason it is
    materialized, and a dashed red edge joins two kernels whose merge was
    refused, labelled with the reason."""
    out = [
        "digraph schedule {",
        "  rankdir=TB;",
        '  node [fontname="monospace", fontsize=10];',
        '  edge [fontname="monospace", fontsize=9];',
    ]
    bufs = buffers(s)
    for b in bufs.values():
        fill = "#d1fae5" if "output" in b.role else "#dbeafe" if b.role else "#f3f4f6"
        role = f"\n{b.role}" if b.role else ""
        out.append(
            f"  {_q('buf:' + b.name)} [shape=ellipse, style=filled, fillcolor={_q(fill)}, "
            f"label={_q(f'{b.name}{role}' + chr(10) + f'{b.nbytes} B')}];"
        )
    for it in s:
        origin = f"\nfrom {', '.join(it.origin)}" if it.origin else ""
        label = (
            f"{it.name}: {' '.join(it.ops) or 'copy'}{origin}\nspace {list(it.space)}\n"
            f"reads {it.bytes_read} B, writes {it.bytes_written} B"
        )
        out.append(
            f'  {_q("kernel:" + it.name)} [shape=box, style="rounded,filled", '
            f'fillcolor="#fef3c7", label={_q(label)}];'
        )
        for name in it.reads:
            out.append(f"  {_q('buf:' + name)} -> {_q('kernel:' + it.name)};")
        for name in it.writes:
            reason = bufs[name].reason
            out.append(
                f"  {_q('kernel:' + it.name)} -> {_q('buf:' + name)} [label={_q(reason, 28)}];"
            )
    for a, b, kind, reason in refused(s):
        if a is None:
            continue
        style = 'color="#dc2626", fontcolor="#dc2626", style=dashed, constraint=false'
        if kind == "+":
            style += ", dir=none"
        out.append(
            f"  {_q('kernel:' + a)} -> {_q('kernel:' + b)} "
            f"[{style}, label={_q('not fused: ' + reason, 36)}];"
        )
    loose = [reason for a, _, _, reason in refused(s) if a is None]
    if loose:
        out.append(
            f"  notes [shape=note, label={_q('not fused:' + chr(10) + chr(10).join(loose))}];"
        )
    out.append("}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #111; }
code, .mono { font-family: ui-monospace, monospace; font-size: 0.9em; }
.flow { display: flex; flex-direction: column; gap: 0.6em; max-width: 60em; }
.kernel { border: 2px solid #d97706; background: #fef3c7; border-radius: 8px; padding: 0.6em; }
.kernel h3 { margin: 0 0 0.3em 0; }
.bufs { display: flex; flex-wrap: wrap; gap: 0.4em; }
.buf { border-radius: 999px; padding: 0.15em 0.7em; background: #f3f4f6;
       border: 1px solid #9ca3af; }
.buf.input { background: #dbeafe; } .buf.output { background: #d1fae5; }
.reason { color: #92400e; }
.refused { color: #b91c1c; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; }
"""


def _buf(b: _Buffer) -> str:
    cls = "output" if "output" in b.role else "input" if b.role else ""
    role = f" ({html.escape(b.role)})" if b.role else ""
    return (
        f'<a class="buf mono {cls}" href="#buf-{html.escape(b.name)}">'
        f"{html.escape(b.name)}{role} {b.nbytes} B</a>"
    )


def to_html(s: Schedule) -> str:
    """A page with the kernels in launch order (each with the buffers it reads,
    the buffers it writes and why), the refused merges and a table of buffers."""
    e = html.escape
    bufs = buffers(s)
    parts = [
        "<!DOCTYPE html>",
        '<html><head><meta charset="utf-8"><title>mlfuse schedule</title>',
        f"<style>{_CSS}</style></head><body>",
        f"<h1>mlfuse schedule: {len(s)} kernel(s)</h1>",
        '<div class="flow">',
        '<div><b>inputs</b> <span class="bufs">'
        + " ".join(_buf(bufs[n]) for n in s.inputs)
        + "</span></div>",
    ]
    for it in s:
        origin = f" <i>from {e(', '.join(it.origin))}</i>" if it.origin else ""
        reads = " ".join(_buf(bufs[n]) for n in it.reads) or "nothing"
        writes = []
        for n in it.writes:
            b = bufs[n]
            readers = ", ".join(b.readers) or "no kernel"
            writes.append(
                f"<li>{_buf(b)} <span class='reason'>because: {e(b.reason)}</span>; "
                f"read by {e(readers)}</li>"
            )
        parts.append(
            f'<div class="kernel" id="kernel-{e(it.name)}"><h3 class="mono">{e(it.name)}: '
            f"{e(' '.join(it.ops) or 'copy')}{origin}</h3>"
            f"<div>space <code>{e(str(list(it.space)))}</code>, reads {it.bytes_read} B, "
            f"writes {it.bytes_written} B</div>"
            f"<div>reads: <span class='bufs'>{reads}</span></div>"
            f"<div>writes:<ul>{''.join(writes)}</ul></div></div>"
        )
    parts.append(
        '<div><b>outputs</b> <span class="bufs">'
        + " ".join(_buf(bufs[n]) for n in s.outputs)
        + "</span></div></div>"
    )
    parts.append("<h2>Refused merges</h2><ul>")
    for a, b, kind, reason in refused(s):
        what = f"{e(a)} {e(kind)} {e(b)}: " if a is not None else ""
        parts.append(f"<li class='refused'>{what}{e(reason)}</li>")
    if not s.not_fused:
        parts.append("<li>none</li>")
    parts.append("</ul>")
    parts.append(
        "<h2>Buffers</h2><table><tr><th>buffer</th><th>bytes</th><th>role</th>"
        "<th>written by</th><th>why</th><th>read by</th></tr>"
    )
    for b in bufs.values():
        parts.append(
            f"<tr id='buf-{e(b.name)}'><td class='mono'>{e(b.name)}</td><td>{b.nbytes}</td>"
            f"<td>{e(b.role)}</td><td>{e(b.writer or '-')}</td><td>{e(b.reason)}</td>"
            f"<td>{e(', '.join(b.readers) or '-')}</td></tr>"
        )
    parts.append("</table></body></html>")
    return "\n".join(parts) + "\n"
