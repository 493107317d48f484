"""JSON: a run of similar objects in an array (or in an object's members) becomes one
marker with their count and schema; the first and last, and every item that differs from the
rest (other keys, other types) or carries an error, stay as written. Everything else of the
document stays byte for byte: a field that does not repeat is never elided.

When most items of such a container carry errors (``jsonerrors`` says which do, and what
their messages are), keeping each of them would keep nearly all: the items are grouped by
shape and by the error fields they have, the first of each group stays as written, and a
run of the others becomes one marker that writes each distinct error message once, as its
raw JSON, with the names of the items that have it (``jsonfold``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from excerpt.compact.jsonerrors import EMPTY, Scan, error_kind, error_named
from excerpt.compact.jsonfold import ErrorRun, error_elisions
from excerpt.compact.jsonscan import Node, decode_string, step_of
from excerpt.compact.view import Elision

__all__ = ["json_elisions"]

MIN_ITEMS = 5
MIN_BYTES = 120

Shape = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Plan:
    """The members of a container that stay; ``errors`` when most of them carry an error."""

    kept: set[int]
    errors: bool


def json_elisions(text: str, root: Node) -> list[Elision]:
    """The elisions of a parsed document (``text`` its bytes as latin-1)."""
    scan = Scan(text)
    out: list[Elision] = []
    runs: list[ErrorRun] = []
    # (a value, its path, is it held under an error-named key: an ``errors`` list's items)
    stack: list[tuple[Node, str, bool]] = [(root, "$", False)]
    while stack:
        node, path, an_error = stack.pop()
        if node.kind not in ("object", "array"):
            continue
        plan = _plan(scan, node, an_error)
        if plan is None:
            kept: set[int] | None = None
        elif not plan.errors:
            kept = plan.kept
            out.extend(_runs(text, node, path, kept))
        else:
            kept = set(plan.kept)
            for run in ErrorRun.of(scan, node, path, plan.kept, an_error):
                if run.worth_it():
                    runs.append(run)
                else:  # the items stay, and are read like any other
                    kept.update(range(run.first, run.stop))
        for i, (key, _, child) in enumerate(node.members):
            if kept is None or i in kept:
                named = key is not None and error_named(scan.name(key))
                stack.append((child, path + step_of(node, i), an_error or named))
    return out + error_elisions(scan, root, runs, out)


def _signature(text: str, node: Node) -> Shape | None:
    """An object's shape: its keys in order with each value's kind."""
    if node.kind != "object":
        return None
    return tuple((k or "", v.kind) for k, _, v in node.members)


def _schema(text: str, items: list[Node]) -> str:
    """The shape of a run of items, with how many of them have each key of an object
    field (fields deeper than the items' own keys can differ between them)."""
    parts = []
    for index, (key, kind) in enumerate(_signature(text, items[0]) or ()):
        name = decode_string(key) if key else "?"
        if kind != "object":
            parts.append(f"{name}: {kind}")
            continue
        counts = Counter(
            decode_string(sub) for item in items for sub, _, _ in item.members[index][2].members
            if sub is not None
        )  # fmt: skip
        inner = ", ".join(
            k if n == len(items) else f"{k} in {n}" for k, n in sorted(counts.items())
        )
        parts.append(f"{name}: {{{inner}}}")
    schema = ", ".join(parts)
    return schema if len(schema) <= 300 else schema[:300] + "…"


def _plan(scan: Scan, node: Node, errors: bool) -> _Plan | None:
    """What of a container of similar objects stays, or None when it is not one (too few
    members, or no shape most of them share and no errors most of them carry); with
    ``errors`` the container is a list of errors, each item an error whole."""
    members = node.members
    if len(members) < MIN_ITEMS:
        return None
    shapes = [_signature(scan.text, v) for _, _, v in members]
    if sum(1 for s in shapes if s is not None) * 2 < len(members):  # mostly not objects
        return None
    bearing = [
        s is not None and (scan.raw(v) not in EMPTY if errors else scan.bearing(v))
        for (_, _, v), s in zip(members, shapes, strict=True)
    ]
    if sum(bearing) * 2 > len(members):
        return _Plan(kept=_group_firsts(scan, node, shapes, bearing, errors), errors=True)
    common, count = Counter(s for s in shapes if s is not None).most_common(1)[0]
    if count * 2 < len(members) or count < MIN_ITEMS - 2:
        return None
    kept = {0, len(members) - 1}
    for i, shape in enumerate(shapes):
        if shape != common or bearing[i]:
            kept.add(i)
    return _Plan(kept=kept, errors=False)


def _group_firsts(
    scan: Scan, node: Node, shapes: list[Shape | None], bearing: list[bool], errors: bool
) -> set[int]:
    """Of items grouped by shape and by the members that carry their errors (none, for an
    item without errors or an item of a list of errors), the first of each group; and every
    item that is not an object or holds a key or string a marker cannot write byte for
    byte."""
    kept: set[int] = set()
    seen: set[tuple[Shape, frozenset[str]]] = set()
    for i, (shape, (_, _, item)) in enumerate(zip(shapes, node.members, strict=True)):
        if shape is None or not scan.clean(item):
            kept.add(i)
            continue
        kind = error_kind(scan, item) if bearing[i] and not errors else frozenset()
        if (shape, kind) not in seen:
            seen.add((shape, kind))
            kept.add(i)
    return kept


def _runs(text: str, node: Node, path: str, kept: set[int]) -> list[Elision]:
    """One elision per run of members not kept: from the first one's start (its key, in an
    object) to the last one's end."""
    members = node.members
    out = []
    i = 0
    while i < len(members):
        if i in kept:
            i += 1
            continue
        j = i
        while j < len(members) and j not in kept:
            j += 1
        start = members[i][1]
        end = members[j - 1][2].end  # the separator after the run stays in the view
        if j - i < 2 or end - start < MIN_BYTES:  # a marker would cost about as much
            i = j
            continue
        schema = _schema(text, [members[a][2] for a in range(i, j)])
        noun = "items" if node.kind == "array" else "members"
        out.append(
            Elision(
                start=start, end=end, what=f"similar {noun}", count=j - i,
                path=f"{path}[{i}:{j}]", detail=f"each {{{schema}}}",
            )
        )  # fmt: skip
        i = j
    return out
