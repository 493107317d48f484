"""JSON: a run of similar objects in an array (or in an object's members) becomes one
marker with their count and schema; the first and last, and every item that differs from the
rest (other keys, other types) or carries an error, stay as written. Everything else of the
document stays byte for byte: a field that does not repeat is never elided."""

from __future__ import annotations

import re
from collections import Counter

from excerpt.compact.jsonscan import Node, decode_string, step_of
from excerpt.compact.view import Elision

__all__ = ["json_elisions"]

MIN_ITEMS = 5
MIN_BYTES = 120
_ERROR_KEY = re.compile(
    r"^(errors?|err|exception|failures?|fault|warnings?|problems?|missing|invalid|"
    r"extraneous|stack|stacktrace|traceback)$",
    re.IGNORECASE,
)
_STATUS_KEY = re.compile(r"^(status|level|severity|state|outcome|result|conclusion)$", re.I)
_BAD = re.compile(r"error|fail|fatal|crit|warn|exception|broken|invalid|missing|panic", re.I)
_EMPTY = ("null", "false", '""', "[]", "{}", "0")


def json_elisions(text: str, root: Node) -> list[Elision]:
    """The elisions of a parsed document (``text`` its bytes as latin-1)."""
    out: list[Elision] = []
    stack: list[tuple[Node, str]] = [(root, "$")]
    while stack:
        node, path = stack.pop()
        if node.kind not in ("object", "array"):
            continue
        kept = _kept_members(text, node)
        for i, (_, _, child) in enumerate(node.members):
            if kept is None or i in kept:
                stack.append((child, path + step_of(node, i)))
        if kept is None:
            continue
        out.extend(_runs(text, node, path, kept))
    return out


def _signature(text: str, node: Node) -> tuple[tuple[str, str], ...] | None:
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


def _kept_members(text: str, node: Node) -> set[int] | None:
    """The members of a container of similar objects that stay, or None when it is not
    one (too few members, or no shape most of them share)."""
    members = node.members
    if len(members) < MIN_ITEMS:
        return None
    shapes = [_signature(text, v) for _, _, v in members]
    common, count = (
        Counter(s for s in shapes if s is not None).most_common(1)[0]
        if any(s is not None for s in shapes)
        else (None, 0)
    )
    if common is None or count * 2 < len(members) or count < MIN_ITEMS - 2:
        return None
    kept = {0, len(members) - 1}
    for i, (_, _, value) in enumerate(members):
        if shapes[i] != common or _error_bearing(text, value):
            kept.add(i)
    return kept


def _error_bearing(text: str, node: Node) -> bool:
    """Does the object (at any depth) carry an error: an error-named key with a value, a
    status-like key with a bad value, or a string that starts like an error?"""
    stack = [node]
    while stack:
        cur = stack.pop()
        for key, _, value in cur.members:
            if value.kind in ("object", "array"):
                stack.append(value)
            name = decode_string(key) if key is not None else ""
            raw = text[value.start : value.end]
            if _ERROR_KEY.match(name) and raw not in _EMPTY:
                return True
            if value.kind == "string":
                s = decode_string(raw)
                if _STATUS_KEY.match(name) and _BAD.search(s):
                    return True
                if re.match(r"\s*(error|fatal|exception|traceback|failed)\b", s, re.I):
                    return True
    return False


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
