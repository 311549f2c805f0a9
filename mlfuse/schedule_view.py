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


def _svg(s: Schedule, bufs: dict[str, _Buffer]) -> str:
    """The dataflow as an inline SVG: inputs on top, then each kernel in launch
    order followed by the buffers it writes; arrows from each buffer to its
    readers, the reason on each kernel -> buffer arrow, refused merges dashed red."""
    e = html.escape
    rows: list[list[tuple[str, str]]] = [[("buf", n) for n in s.inputs]]
    for it in s:
        rows.append([("kernel", it.name)])
        rows.append([("buf", n) for n in it.writes if n not in s.inputs])
    rows = [r for r in rows if r]
    col, row_h, kw, kh, margin = 300, 96, 270, 58, 160  # long edges run in the left margin
    width = col * max(len(r) for r in rows) if rows else col
    pos: dict[tuple[str, str], tuple[float, float]] = {}
    for y, r in enumerate(rows):
        for x, node in enumerate(r):
            pos[node] = (margin + (width - col * len(r)) / 2 + col * (x + 0.5), 40 + row_h * y)
    items = {it.name: it for it in s}
    out = [
        f'<svg width="{margin + width + 560}" height="{40 + row_h * len(rows)}" '
        'font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="11">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
    ]

    def edge(a, b, dy_a: float, dy_b: float, label: str = "", extra: str = "") -> None:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        y1, y2 = y1 + dy_a, y2 - dy_b
        mid = (y1 + y2) / 2
        if y2 - y1 > row_h:  # skips a row: from side to side around the nodes between
            (x1, y1), (x2, y2) = pos[a], pos[b]
            if x1 > margin + width / 2:  # a node right of the middle: around the right
                x1, x2 = x1 + 95, x2 + kw / 2
                side = max(x1, x2) + 30 + (y2 - y1) / row_h * 10
            else:
                x1, x2 = x1 - 95, x2 - kw / 2
                side = min(x1, x2) - 30 - (y2 - y1) / row_h * 10
            path = f"M{x1:.0f},{y1:.0f} C{side:.0f},{y1:.0f} {side:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
        else:
            path = f"M{x1:.0f},{y1:.0f} C{x1:.0f},{mid:.0f} {x2:.0f},{mid:.0f} {x2:.0f},{y2:.0f}"
        out.append(f'<path d="{path}" fill="none" stroke="#555" marker-end="url(#arrow)" {extra}/>')
        if label:
            out.append(
                f'<text x="{(x1 + x2) / 2 + 6:.0f}" y="{mid + 4:.0f}" fill="#92400e">'
                f"{e(label)}</text>"
            )

    for it in s:
        for n in it.reads:
            if ("buf", n) in pos:
                edge(("buf", n), ("kernel", it.name), 20, kh / 2)
        for n in it.writes:
            if ("buf", n) in pos:
                edge(("kernel", it.name), ("buf", n), kh / 2, 20, bufs[n].reason)
    right = margin + width - col / 2 + kw / 2  # the right edge of the widest row
    labels: dict[float, int] = {}
    for i, (a, b, _, reason) in enumerate(r for r in refused(s) if r[0] is not None):
        (x1, y1), (x2, y2) = pos[("kernel", a)], pos[("kernel", b)]  # type: ignore[index]
        x1, x2, apex = x1 + kw / 2, x2 + kw / 2, right + 30 + 14 * i
        out.append(
            f'<path d="M{x1:.0f},{y1:.0f} C{apex:.0f},{y1:.0f} {apex:.0f},{y2:.0f} '
            f'{x2:.0f},{y2:.0f}" fill="none" stroke="#dc2626" stroke-dasharray="5,4">'
            f"<title>not fused: {e(reason)}</title></path>"
        )
        mid = (y1 + y2) / 2
        n = labels[mid] = labels.get(mid, -1) + 1
        out.append(
            f'<text x="{x1 + 0.75 * (apex - x1) + 4:.0f}" y="{mid + 14 * n:.0f}" fill="#dc2626">'
            f"not fused: {e(reason.split(' (')[0])}<title>{e(reason)}</title></text>"
        )
    for (kind, name), (x, y) in pos.items():
        if kind == "kernel":
            it = items[name]
            ops = " ".join(it.ops) or "copy"
            ops = ops if len(ops) <= 34 else ops[:33] + "…"
            out.append(
                f'<g><title>{e(str(it))}</title><rect x="{x - kw / 2:.0f}" y="{y - kh / 2:.0f}" '
                f'width="{kw}" height="{kh}" rx="8" fill="#fef3c7" stroke="#d97706"/>'
                f'<text x="{x:.0f}" y="{y - 10:.0f}" text-anchor="middle" font-weight="bold">'
                f"{e(name)}: {e(ops)}</text>"
                f'<text x="{x:.0f}" y="{y + 5:.0f}" text-anchor="middle">space '
                f"{e(str(list(it.space)))}</text>"
                f'<text x="{x:.0f}" y="{y + 20:.0f}" text-anchor="middle">reads '
                f"{it.bytes_read} B, writes {it.bytes_written} B</text></g>"
            )
        else:
            b = bufs[name]
            fill = "#d1fae5" if "output" in b.role else "#dbeafe" if b.role else "#f3f4f6"
            role = f" ({b.role})" if b.role else ""
            out.append(
                f'<g><ellipse cx="{x:.0f}" cy="{y:.0f}" rx="95" ry="20" fill="{fill}" '
                f'stroke="#6b7280"/><text x="{x:.0f}" y="{y - 2:.0f}" text-anchor="middle">'
                f"{e(name)}{e(role)}</text>"
                f'<text x="{x:.0f}" y="{y + 11:.0f}" text-anchor="middle">{b.nbytes} B</text></g>'
            )
    out.append("</svg>")
    return "\n".join(out)


def to_html(s: Schedule) -> str:
    """A page with the dataflow drawn as an inline SVG, the kernels in launch
    order (each with the buffers it reads, the buffers it writes and why), the
    refused merges and a table of buffers."""
    e = html.escape
    bufs = buffers(s)
    parts = [
        "<!DOCTYPE html>",
        '<html><head><meta charset="utf-8"><title>mlfuse schedule</title>',
        f"<style>{_CSS}</style></head><body>",
        f"<h1>mlfuse schedule: {len(s)} kernel(s)</h1>",
        _svg(s, bufs),
        "<h2>Kernels</h2>",
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
