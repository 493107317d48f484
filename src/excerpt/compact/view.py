"""What the compactors share: lines of a payload, the elisions they make, and the marker
each elision leaves in place naming what it took out and the call that brings it back."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Elision", "Surface", "assemble", "expand_call", "split_lines"]

Surface = Literal["cli", "mcp"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Elision:
    """Bytes ``start:end`` of the original left out, replaced in the view by a marker.

    ``what`` says what they are ("unchanged lines", "similar lines", "items"); ``count`` how
    many; ``lines`` the 1-based lines they span (for --lines) or ``path`` the JSON path
    (for --path); ``detail`` a short description (the items' schema, the folded line).
    """

    start: int
    end: int
    what: str
    count: int
    lines: tuple[int, int] | None = None
    path: str | None = None
    detail: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end:
            raise ValueError("an elision spans at least one byte")
        if (self.lines is None) == (self.path is None):
            raise ValueError("an elision is named by lines or by a path")

    def selector(self) -> dict[str, str]:
        if self.lines is not None:
            a, b = self.lines
            return {"lines": f"{a}-{b}"}
        return {"path": str(self.path)}

    def to_dict(self, ident: str, surface: Surface) -> dict[str, object]:
        return {
            "what": self.what,
            "count": self.count,
            "bytes": self.end - self.start,
            **self.selector(),
            "expand": expand_call(ident, self.selector(), surface),
        }


def expand_call(ident: str, selector: dict[str, str], surface: Surface) -> str:
    """The exact call that returns the selected part of original ``ident``."""
    if surface == "mcp":
        args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in selector.items())
        return f'context_expand(id="{ident}"' + (f", {args})" if args else ")")
    parts = [f"excerpt expand {ident}"]
    for key, value in selector.items():
        parts.append(f"--{key} {_shell_quote(value) if key != 'lines' else value}")
    return " ".join(parts)


def _shell_quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def marker(elision: Elision, ident: str, surface: Surface) -> str:
    where = f"L{elision.lines[0]}-L{elision.lines[1]}" if elision.lines else f"{elision.path}"
    detail = f"; {elision.detail}" if elision.detail else ""
    return (
        f"[… {elision.count:,} {elision.what} elided ({where}, {elision.end - elision.start:,}"
        f" bytes{detail}) · {expand_call(ident, elision.selector(), surface)}]"
    )


def split_lines(data: bytes) -> list[bytes]:
    """The lines of ``data``, each with its ``\\n`` (the last may lack one); only ``\\n``
    ends a line, so a ``\\r`` stays inside its line byte for byte."""
    lines = data.split(b"\n")
    out = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def assemble(
    data: bytes, elisions: Sequence[Elision], ident: str, surface: Surface, *, line_marks: bool
) -> bytes:
    """The view: ``data`` with each elision's bytes replaced by its marker (on a line of its
    own when ``line_marks``, the elided lines' indentation kept)."""
    out: list[bytes] = []
    at = 0
    for e in sorted(elisions, key=lambda e: e.start):
        if e.start < at:
            raise ValueError("elisions overlap")
        out.append(data[at : e.start])
        mark = marker(e, ident, surface).encode("utf-8", "backslashreplace")
        if line_marks:
            chunk = data[e.start : e.end]
            indent = chunk[: len(chunk) - len(chunk.lstrip(b" \t"))]
            mark = indent + mark + (b"\n" if chunk.endswith(b"\n") else b"")
        out.append(mark)
        at = e.end
    out.append(data[at:])
    return b"".join(out)
