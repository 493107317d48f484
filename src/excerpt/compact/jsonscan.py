"""JSON read for its structure with byte spans, and the paths that name a part of it.

The scanner works on the raw bytes (decoded as latin-1, so a character index is a byte
offset): every value records where it starts and ends in the original, so a part of a
document can be returned as the exact bytes it was written with. It is iterative (nesting
of any depth), keeps duplicate keys in order, and accepts the tokens Python writes for
non-finite numbers (``NaN``, ``Infinity``, ``-Infinity``); numbers of any size stay text.

Paths: ``$`` the whole document, then steps: ``.name`` or ``["name"]`` (the first member of
that name), ``[N]`` (the Nth item of an array, or the Nth member of an object, in document
order, from 0; negative from the end), ``[A:B]`` (items or members A to B-1: the bytes from
the first one's start to the last one's end).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

__all__ = ["Node", "check_path", "decode_string", "parse", "path_span", "step_of"]

_WS = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STEP = re.compile(
    r'\.([A-Za-z_][A-Za-z0-9_]*)|\[(-?\d+)\]|\[(-?\d*):(-?\d*)\]|\[("(?:[^"\\]|\\.)*")\]'
)


@dataclass(slots=True)
class Node:
    """A value at ``text[start:end]``; a container's members are ``(key, member_start,
    node)`` (key None in an array; ``member_start`` where the key starts)."""

    kind: str  # object, array, string, number, literal
    start: int
    end: int = -1
    members: list[tuple[str | None, int, Node]] = field(default_factory=list)


def parse(text: str) -> Node | None:
    """The document's root node, or None when ``text`` is not one JSON value."""
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    stack: list[Node] = []
    pending_key: list[tuple[str, int] | None] = []
    root: Node | None = None
    while True:
        if pos >= len(text):
            return None
        ch = text[pos]
        parent = stack[-1] if stack else None
        if parent is not None and parent.kind == "object" and pending_key[-1] is None:
            if ch == "}" and not parent.members:
                pos = _close(stack, pending_key, pos)
            else:
                m = _STRING.match(text, pos)
                if m is None:
                    return None
                colon = _WS.match(text, m.end()).end()  # type: ignore[union-attr]
                if text[colon : colon + 1] != ":":
                    return None
                pending_key[-1] = (m.group(), pos)
                pos = _WS.match(text, colon + 1).end()  # type: ignore[union-attr]
                continue
        elif parent is not None and parent.kind == "array" and ch == "]" and not parent.members:
            pos = _close(stack, pending_key, pos)
        else:
            node, pos = _value(text, pos)
            if node is None:
                return None
            if parent is None:
                root = node
            else:
                key = pending_key[-1]
                parent.members.append((key[0], key[1], node) if key else (None, node.start, node))
                pending_key[-1] = None
            if node.kind in ("object", "array"):
                stack.append(node)
                pending_key.append(None)
                pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
                continue
        # after a complete value: a comma, a close, or the end of the document
        while True:
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if not stack:
                return root if pos == len(text) else None
            closer = "}" if stack[-1].kind == "object" else "]"
            if text[pos : pos + 1] == ",":
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                break
            if text[pos : pos + 1] != closer:
                return None
            pos = _close(stack, pending_key, pos)


def _close(stack: list[Node], pending_key: list[tuple[str, int] | None], pos: int) -> int:
    stack[-1].end = pos + 1
    stack.pop()
    pending_key.pop()
    return pos + 1


def _value(text: str, pos: int) -> tuple[Node | None, int]:
    ch = text[pos]
    if ch == "{":
        return Node("object", pos), pos + 1
    if ch == "[":
        return Node("array", pos), pos + 1
    if ch == '"':
        m = _STRING.match(text, pos)
        return (Node("string", pos, m.end()), m.end()) if m else (None, pos)
    for word in _LITERALS:
        if text.startswith(word, pos):
            return Node("literal", pos, pos + len(word)), pos + len(word)
    m = _NUMBER.match(text, pos)
    if m and m.end() > pos:
        return Node("number", pos, m.end()), m.end()
    return None, pos


def decode_string(raw: str) -> str:
    """A string token's value (``raw`` as latin-1 of its bytes); undecodable bytes kept as
    surrogate escapes."""
    body = raw.encode("latin-1").decode("utf-8", "surrogateescape")
    try:
        value = json.loads(body)
    except ValueError:
        return body[1:-1]
    return value if isinstance(value, str) else body[1:-1]


def step_of(parent: Node, index: int) -> str:
    """The path step naming member ``index`` of ``parent``: ``.name`` or ``["name"]`` when
    its key is unique in the object, else ``[index]``."""
    key = parent.members[index][0]
    if key is None:
        return f"[{index}]"
    if sum(1 for k, _, _ in parent.members if k == key) > 1:
        return f"[{index}]"
    name = decode_string(key)
    if _NAME.fullmatch(name):
        return f".{name}"
    return f"[{key.encode('latin-1').decode('utf-8', 'surrogateescape')}]"


def check_path(path: str) -> None:
    """Raises ValueError when ``path`` is not a path."""
    rest = path.strip()
    if not rest.startswith("$"):
        raise ValueError("a path starts with $")
    rest = rest[1:]
    while rest:
        m = _STEP.match(rest)
        if m is None:
            raise ValueError(f"cannot read the path at {rest[:30]!r}")
        rest = rest[m.end() :]
        if m.group(3) is not None and rest:
            raise ValueError("a slice [A:B] ends a path")


def path_span(root: Node, path: str) -> tuple[int, int] | None:
    """The byte span ``path`` names in the document of ``root``, or None when it names
    nothing.

    Raises:
        ValueError: ``path`` is not a path.
    """
    check_path(path)
    rest = path.strip()[1:]
    node = root
    while rest:
        m = _STEP.match(rest)
        if m is None:
            raise ValueError(f"cannot read the path at {rest[:30]!r}")
        rest = rest[m.end() :]
        if node.kind not in ("object", "array"):
            return None
        members = node.members
        if m.group(1) is not None or m.group(5) is not None:
            if node.kind != "object":
                return None
            wanted = m.group(1) if m.group(1) is not None else json.loads(m.group(5))
            found = [n for k, _, n in members if k is not None and decode_string(k) == wanted]
            if not found:
                return None
            node = found[0]
        elif m.group(2) is not None:
            i = int(m.group(2))
            if not -len(members) <= i < len(members):
                return None
            node = members[i][2]
        else:
            a = int(m.group(3)) if m.group(3) else 0
            b = int(m.group(4)) if m.group(4) else len(members)
            chosen = members[slice(a, b)]
            if rest:
                raise ValueError("a slice [A:B] ends a path")
            if not chosen or slice(a, b).step:
                return None
            return chosen[0][1], chosen[-1][2].end
    return node.start, node.end
