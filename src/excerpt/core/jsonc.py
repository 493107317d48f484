"""JSON with comments, read and edited in place: a client's settings file changed at one key
and left byte for byte everywhere else (its comments, blank lines, order and indentation).

VS Code, Zed, Gemini CLI and opencode read their settings as JSONC (``//`` and ``/* */``
comments, trailing commas). ``loads`` reads one; ``set_at`` gives the text with one value set
(or removed) at a path of object keys, by editing only the span of that value, or inserting
one property after the last of its object. The Python libraries that edit JSONC in place
either run Node.js or are GPL-licensed, hence this small one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JsoncError", "loads", "set_at"]


class JsoncError(ValueError):
    """The text is not JSON with comments, or a path runs through a value that is no object."""


_TOKEN = re.compile(
    r"""(?P<ws>[ \t\r\n\ufeff]+)
      | (?P<line>//[^\n]*)
      | (?P<block>/\*.*?\*/)
      | (?P<string>"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")
      | (?P<number>-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)
      | (?P<word>true|false|null)
      | (?P<punct>[{}\[\]:,])""",
    re.VERBOSE | re.DOTALL,
)


@dataclass(slots=True)
class _Node:
    start: int
    end: int  # one past the value's last character
    value: Any = None
    props: list[_Prop] = field(default_factory=list)  # an object's, in order


@dataclass(slots=True)
class _Prop:
    key: str
    start: int  # the key's opening quote
    node: _Node
    comma: int | None  # the comma after the value, when there is one


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, int, int]] = []
        at = 0
        while at < len(text):
            m = _TOKEN.match(text, at)
            if m is None:
                raise self._error("unexpected character", at)
            kind = str(m.lastgroup)
            if kind not in ("ws", "line", "block"):
                self.tokens.append((kind, m.start(), m.end()))
            at = m.end()
        self.i = 0

    def _error(self, what: str, at: int) -> JsoncError:
        line = self.text.count("\n", 0, at) + 1
        col = at - (self.text.rfind("\n", 0, at) + 1) + 1
        return JsoncError(f"{what} at line {line}, column {col}")

    def _next(self) -> tuple[str, int, int]:
        if self.i >= len(self.tokens):
            raise self._error("unexpected end", len(self.text))
        token = self.tokens[self.i]
        self.i += 1
        return token

    def _peek(self) -> str:
        if self.i >= len(self.tokens):
            raise self._error("unexpected end", len(self.text))
        kind, start, end = self.tokens[self.i]
        return self.text[start:end] if kind == "punct" else kind

    def document(self) -> _Node:
        node = self.value()
        if self.i < len(self.tokens):
            raise self._error("more after the value", self.tokens[self.i][1])
        return node

    def value(self) -> _Node:
        kind, start, end = self._next()
        raw = self.text[start:end]
        if kind in ("string", "number", "word"):
            return _Node(start, end, json.loads(raw))
        if raw == "{":
            return self._object(start)
        if raw == "[":
            return self._array(start)
        raise self._error(f"unexpected {raw!r}", start)

    def _object(self, start: int) -> _Node:
        node = _Node(start, start, {})
        while self._peek() != "}":
            kind, key_start, key_end = self._next()
            if kind != "string":
                raise self._error("expected a property name", key_start)
            if self._peek() != ":":
                raise self._error("expected ':'", key_end)
            self._next()
            prop = _Prop(json.loads(self.text[key_start:key_end]), key_start, self.value(), None)
            node.props.append(prop)
            node.value[prop.key] = prop.node.value  # the last of a repeated key, as JSON
            if self._peek() == ",":
                prop.comma = self._next()[1]
            elif self._peek() != "}":
                raise self._error(
                    "expected ',' or '}'", self.tokens[min(self.i, len(self.tokens) - 1)][1]
                )
        node.end = self._next()[2]
        return node

    def _array(self, start: int) -> _Node:
        node = _Node(start, start, [])
        while self._peek() != "]":
            node.value.append(self.value().value)
            if self._peek() == ",":
                self._next()
            elif self._peek() != "]":
                raise self._error(
                    "expected ',' or ']'", self.tokens[min(self.i, len(self.tokens) - 1)][1]
                )
        node.end = self._next()[2]
        return node


def loads(text: str) -> Any:
    """The value of a JSONC text (comments and trailing commas allowed).

    Raises:
        JsoncError: it is not JSON with comments (with the line and column).
    """
    return _Parser(text).document().value


def set_at(text: str, path: Sequence[str], value: Any | None) -> str:
    """``text`` with ``value`` at ``path`` (object keys from the top), or that property taken
    out when ``value`` is None; every other byte of ``text`` kept. Objects missing along the
    path are made. An empty or blank text is an empty object.

    Raises:
        JsoncError: the text is not JSONC, or a value along the path is not an object.
    """
    if not path:
        raise JsoncError("an empty path")
    if not text.strip():
        text = "{}\n"
    root = _Parser(text).document()
    node = root
    for depth, key in enumerate(path):
        if not isinstance(node.value, dict):
            shown = ".".join(path[:depth]) or "the top level"
            raise JsoncError(f"{shown} is not an object")
        prop = next((p for p in reversed(node.props) if p.key == key), None)
        if prop is None:
            if value is None:
                return text  # nothing to take out
            nested: Any = value
            for inner in reversed(path[depth + 1 :]):
                nested = {inner: nested}
            return _insert(text, node, key, nested)
        if depth == len(path) - 1:
            if value is None:
                return _remove(text, node, prop)
            indent = _line_indent(text, prop.start)
            return text[: prop.node.start] + _dump(value, text, indent) + text[prop.node.end :]
        node = prop.node
    raise AssertionError("unreachable")


def _unit(text: str) -> str:
    """The file's indentation step (two spaces when it shows none)."""
    m = re.search(r"\n([ \t]+)\S", text)
    return m.group(1) if m else "  "


def _line_indent(text: str, at: int) -> str:
    begin = text.rfind("\n", 0, at) + 1
    return re.match(r"[ \t]*", text[begin:at]).group(0)  # type: ignore[union-attr]


def _dump(value: Any, text: str, indent: str) -> str:
    return json.dumps(value, indent=_unit(text), ensure_ascii=False).replace("\n", "\n" + indent)


def _insert(text: str, obj: _Node, key: str, value: Any) -> str:
    if obj.props:
        last = obj.props[-1]
        indent = _line_indent(text, last.start)
        entry = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, text, indent)}"
        if last.comma is not None:  # a trailing comma: the new property goes after it
            return text[: last.comma + 1] + f"\n{indent}{entry}," + text[last.comma + 1 :]
        return text[: last.node.end] + f",\n{indent}{entry}" + text[last.node.end :]
    outer = _line_indent(text, obj.start)
    indent = outer + _unit(text)
    entry = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, text, indent)}"
    inside = text[obj.start + 1 : obj.end - 1]
    rest = inside if inside.strip() else f"\n{outer}"  # a comment inside stays, after it
    return text[: obj.start + 1] + f"\n{indent}{entry}" + rest + text[obj.end - 1 :]


def _remove(text: str, obj: _Node, prop: _Prop) -> str:
    """Take a property out: its whole lines when it has them to itself, and the comma before
    it when it was the last one."""
    index = obj.props.index(prop)
    start, end = prop.start, prop.comma + 1 if prop.comma is not None else prop.node.end
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if not text[line_start:start].strip() and not text[end:line_end].strip():
        start, end = line_start, min(line_end + 1, len(text))
    elif prop.comma is not None:  # inline: the space after its comma goes with it
        while end < len(text) and text[end] in " \t":
            end += 1
    out = text[:start] + text[end:]
    if prop.comma is None and index > 0:
        comma = obj.props[index - 1].comma
        assert comma is not None and comma < start
        out = out[:comma] + out[comma + 1 :]
    return out
