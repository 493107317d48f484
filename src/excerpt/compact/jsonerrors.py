"""Errors in JSON: which values carry one, the messages they carry, and the names of the
items that carry them.

A value carries an error when, at any depth, it has

- a member named like an error (``error``, ``errors``, ``problems``, ``missing``,
  ``invalid``, ``stack``, ``traceback``…, or a compound such as ``lastError`` or
  ``failureMessages`` with a string or a container) with a value (not null, false, 0, "",
  [] or {});
- a status-like member (``status``, ``level``, ``severity``, ``outcome``…) whose string says
  error, fail, warn…, or a numeric ``severity`` beside a message (linters' diagnostics);
- a count of errors, failures or warnings above zero (``errorCount``, ``numFailedTests``);
- a string that starts like an error (``Error: …``, ``Traceback``, ``failed …``).

Its messages are every string under an error-named member (array items one by one; a stack
trace, or a ``trace`` of an object that failed, is counted instead), a scalar value of an
error-named member (``"missing": true``), the message-named members (``message``,
``reason``, ``detail``…) of an object with a bad status, severity or error count, and a
string that starts like an error; a bad status counts as a message for an item with none.
Each is kept as the raw JSON tokens of its key and value, so a view that writes it holds its
bytes exactly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from excerpt.compact.jsonscan import Node, decode_string

__all__ = ["Finding", "Scan", "error_kind", "error_named", "findings", "format_id", "writable"]

_ERROR_KEY = re.compile(
    r"^(errors?|err|exception|failures?|fault|warnings?|problems?|missing|invalid|"
    r"extraneous|stack|stacktrace|traceback)$",
    re.IGNORECASE,
)
_TRACE_KEY = re.compile(r"^(stack|stacktrace|stack_trace|traceback|backtrace|trace)$", re.I)
_STATUS_KEY = re.compile(r"^(status|level|severity|state|outcome|result|conclusion)$", re.I)
_BAD = re.compile(r"error|fail|fatal|crit|warn|exception|broken|invalid|missing|panic", re.I)
_STARTS_BAD = re.compile(r"\s*(error|fatal|exception|traceback|failed)\b", re.I)
_MESSAGE_WORDS = {"message", "messages", "msg", "reason", "detail", "details", "description",
                  "summary"}  # fmt: skip
_COUNT_WORDS = {"count", "counts", "num", "number", "total"}
_BAD_WORDS = {"error", "errors", "fail", "failed", "failure", "failures", "fatal", "warning",
              "warnings", "problem", "problems"}  # fmt: skip
_ERROR_WORDS = {"error", "errors", "exception", "exceptions", "failure", "failures", "fault",
                "warning", "warnings", "problem", "problems", "missing", "invalid"}  # fmt: skip
_ID_WORDS = {"id": 0, "uuid": 0, "nodeid": 0, "name": 1, "fullname": 1, "title": 1,
             "fulltitle": 1, "key": 2, "path": 3, "file": 3, "filepath": 3, "filename": 3,
             "url": 4, "uri": 4}  # fmt: skip
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_FIELD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_PLAIN_ID = re.compile(r'[^,;()"\\]+')
_CONTAINERS = ("object", "array")
EMPTY = ("null", "false", '""', "[]", "{}", "0")

Kind = Literal["message", "status", "trace", "flag"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One error field of an item: ``key`` and ``value`` its raw tokens (``listed`` when the
    value is one item of the key's array); ``where`` the names of the sub-items it sits in
    (below the item); ``kind`` a message (written out), a bad status (written out for an item
    with no message), a stack trace (counted) or a flag (an error count: it marks the item,
    the messages say why)."""

    kind: Kind
    key: str
    value: str
    where: tuple[str, ...] = ()
    listed: bool = False


class Scan:
    """A document read for errors: its text (its bytes as latin-1), its member names decoded
    once each, and, once asked, whether each value carries an error and whether each holds
    a key or string a marker cannot write; each value is read once for each question."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._names: dict[str, str] = {}
        self._bearing: dict[int, bool] = {}  # by a value's start: no two values share one
        self._dirty: dict[int, bool] = {}

    def raw(self, node: Node) -> str:
        return self.text[node.start : node.end]

    def name(self, raw: str | None) -> str:
        if raw is None:
            return ""
        got = self._names.get(raw)
        if got is None:
            got = self._names[raw] = decode_string(raw)
        return got

    def bearing(self, node: Node) -> bool:
        """Does the value carry an error at any depth?"""
        return self._settle(node, self._bearing, self._own_error)

    def clean(self, node: Node) -> bool:
        """Can a marker write every key and string of the value byte for byte?"""
        return not self._settle(node, self._dirty, self._own_dirty)

    def _settle(self, node: Node, known: dict[int, bool], own: Callable[[Node], bool]) -> bool:
        """``own`` of the value or of any value it holds, each container's answer kept."""
        if node.kind not in _CONTAINERS:
            return own(node)
        order, stack = [], [node]
        while stack:  # each container before what it holds
            cur = stack.pop()
            if cur.start not in known:
                order.append(cur)
                stack.extend(v for _, _, v in cur.members if v.kind in _CONTAINERS)
        for cur in reversed(order):  # what it holds first
            inner = (known[v.start] for _, _, v in cur.members if v.kind in _CONTAINERS)
            known[cur.start] = own(cur) or any(inner)
        return known[node.start]

    def _own_error(self, node: Node) -> bool:
        if node.kind == "array":
            return any(_starts_bad(self, v) for _, _, v in node.members)
        if node.kind != "object":
            return False
        return _bad_object(self, node) or any(
            next(_member(self, k or "", v, (), False), None) is not None for k, _, v in node.members
        )

    def _own_dirty(self, node: Node) -> bool:
        if node.kind == "string":
            return writable(self.raw(node)) is None
        return any(
            (k is not None and writable(k) is None)
            or (v.kind == "string" and writable(self.raw(v)) is None)
            for k, _, v in node.members
        )


def error_kind(scan: Scan, item: Node) -> frozenset[str]:
    """The item's own members that carry an error (a count aside: the messages say why)."""
    bad = _bad_object(scan, item)
    out = set()
    for key, _, value in item.members:
        fields = _member(scan, key or "", value, (), bad)
        if any(f.kind != "flag" for f in fields) or (
            value.kind in _CONTAINERS and scan.bearing(value)
        ):
            out.add(key or "")
    return frozenset(out)


def findings(scan: Scan, node: Node, *, an_error: bool = False) -> Iterator[Finding]:
    """The error fields of a value, in document order of the objects holding them; with
    ``an_error`` (an item of an ``errors`` list) every string in it."""
    if an_error:
        yield from _whole_error(scan, "", node, ())
        return
    # (value, the key it is held under, sub-item names, in a bad object's subtree)
    stack: list[tuple[Node, str, tuple[str, ...], bool]] = [(node, "", (), False)]
    while stack:
        cur, held, where, inherited = stack.pop()
        nested: list[tuple[Node, str, tuple[str, ...], bool]] = []
        if cur.kind == "array":
            for _, _, value in cur.members:
                if _starts_bad(scan, value):
                    yield Finding("message", held, scan.raw(value), where, listed=True)
                elif value.kind in _CONTAINERS:
                    step = identifier(scan, value) if value.kind == "object" else None
                    nested.append((value, held, (*where, step) if step else where, False))
        else:
            bad = inherited or _bad_object(scan, cur)
            collection = all(v.kind == "object" for _, _, v in cur.members)
            for key, _, value in cur.members:
                yield from _member(scan, key or "", value, where, bad)
                if value.kind in _CONTAINERS and not _claimed(scan, key, value, bad):
                    step = format_id(scan.name(key)) if collection and key is not None else None
                    inner = bad and value.kind == "object"
                    nested.append((value, key or "", (*where, step) if step else where, inner))
        stack.extend(reversed(nested))


def _member(
    scan: Scan, key: str, value: Node, where: tuple[str, ...], bad: bool
) -> Iterator[Finding]:
    """The findings one member of an object gives by itself (its subtree aside, unless an
    error-named key claims it whole)."""
    name = scan.name(key)
    raw = scan.raw(value)
    if raw in EMPTY:
        return
    if _is_trace(name, bad):
        yield Finding("trace", key, "", where)
    elif error_named(name) and (_ERROR_KEY.match(name) or value.kind not in ("number", "literal")):
        # a compound name with a bare true or number is as often a setting (``showErrors``)
        if value.kind in _CONTAINERS:
            yield from _whole_error(scan, key, value, where)
        else:
            yield Finding("message", key, raw, where)
    elif value.kind == "string":
        s = decode_string(raw)
        if _STATUS_KEY.match(name) and _BAD.search(s):
            yield Finding("status", key, raw, where)
        elif _STARTS_BAD.match(s) or (bad and _message_named(name)):
            yield Finding("message", key, raw, where)
    elif value.kind == "number" and _is_count(name) and _positive(raw):
        yield Finding("flag", key, "", where)
    elif value.kind == "array" and bad and _message_named(name):
        for _, _, item in value.members:
            if item.kind == "string":
                yield Finding("message", key, scan.raw(item), where, listed=True)


def _whole_error(scan: Scan, key: str, value: Node, where: tuple[str, ...]) -> Iterator[Finding]:
    """Every string under an error-named member, each with the key nearest it; a stack
    trace inside is counted, not written; a flag when it holds no string (``"errors":
    [404]``): an error all the same."""
    said = False
    stack: list[tuple[Node, str, bool]] = [(value, key, False)]
    while stack:
        cur, held, listed = stack.pop()
        if cur.kind == "string":
            said = True
            yield Finding("message", held, scan.raw(cur), where, listed=listed)
            continue
        nested = []
        for sub, _, item in cur.members:
            if sub is not None and _TRACE_KEY.match(scan.name(sub)):
                if scan.raw(item) not in EMPTY:
                    said = True
                    yield Finding("trace", sub, "", where)
                continue
            if item.kind in ("string", "object", "array"):
                nested.append((item, held if sub is None else sub, sub is None))
        stack.extend(reversed(nested))
    if not said and scan.raw(value) not in EMPTY:
        yield Finding("flag", key, "", where)


def _starts_bad(scan: Scan, node: Node) -> bool:
    return node.kind == "string" and bool(_STARTS_BAD.match(decode_string(scan.raw(node))))


def _is_trace(name: str, bad: bool) -> bool:
    """A stack trace: ``stack``, ``traceback``…, or a ``trace`` of an object that failed
    (elsewhere a ``trace`` is as likely a tracing id)."""
    return bool(_TRACE_KEY.match(name)) and (bad or name.lower() != "trace")


def _claimed(scan: Scan, key: str | None, value: Node, bad: bool) -> bool:
    """Is a container member already read whole by ``_member`` (error-named, or a trace)?"""
    name = scan.name(key)
    return (error_named(name) or _is_trace(name, bad)) and scan.raw(value) not in EMPTY


def _bad_object(scan: Scan, node: Node) -> bool:
    """Does the object say it failed: a bad status, a numeric severity beside a message, or
    an error count above zero?"""
    names = [scan.name(k) for k, _, _ in node.members]
    has_message = any(_message_named(n) for n in names)
    for name, (_, _, value) in zip(names, node.members, strict=True):
        if not _STATUS_KEY.match(name) and not _is_count(name):
            continue
        raw = scan.raw(value)
        if value.kind == "string" and _BAD.search(decode_string(raw)):
            return True
        counts = _is_count(name) or (name.lower() == "severity" and has_message)
        if value.kind == "number" and counts and _positive(raw):
            return True
    return False


def _positive(number: str) -> bool:
    try:
        return float(number) > 0
    except ValueError:  # pragma: no cover - the scanner's numbers all read as floats
        return False


def error_named(name: str) -> bool:
    """``error``, ``problems``, ``invalid``…, or a compound that names an error or its
    message (``lastError``, ``failureMessages``; not ``errorCount`` or ``errorRate``, nor a
    name that is data rather than a field: ``process-warning``)."""
    if _ERROR_KEY.match(name):
        return True
    if not _FIELD.fullmatch(name):
        return False
    words = [w.lower() for w in _WORD.findall(name)]
    return (
        len(words) > 1
        and words[-1] in _ERROR_WORDS | _MESSAGE_WORDS
        and not _ERROR_WORDS.isdisjoint(words)
    )


def _message_named(name: str) -> bool:
    words = _WORD.findall(name)
    return bool(words) and words[-1].lower() in _MESSAGE_WORDS


def _is_count(name: str) -> bool:
    """``fatalErrorCount``, ``num_failed``: a count of errors, failures or warnings."""
    words = {w.lower() for w in _WORD.findall(name)}
    return bool(words & _COUNT_WORDS and words & _BAD_WORDS)


def identifier(scan: Scan, item: Node) -> str | None:
    """The item's id-, name-, key-, path- or url-like field (a scalar), formatted for a
    marker, or None."""
    best: tuple[int, str] | None = None
    for key, _, value in item.members:
        if value.kind not in ("string", "number"):
            continue
        rank = _id_rank(scan.name(key))
        if rank is None or (best is not None and best[0] <= rank):
            continue
        raw = scan.raw(value)
        best = (rank, format_id(decode_string(raw)) if value.kind == "string" else raw)
    return None if best is None else best[1]


def _id_rank(name: str) -> int | None:
    """How id-like a member name is (lower is better): ``id`` before ``recordId`` before
    ``name``…; None when it names no identifier."""
    exact = _ID_WORDS.get(name.lower())
    if exact is not None:
        return exact * 2
    words = _WORD.findall(name)
    last = _ID_WORDS.get(words[-1].lower()) if len(words) > 1 else None
    return None if last is None else last * 2 + 1


def format_id(name: str) -> str:
    """A name as written in a marker: bare when it reads unambiguously on one line, else as
    a JSON string."""
    plain = _PLAIN_ID.fullmatch(name) and name.isprintable() and name == name.strip()
    return name if plain and " > " not in name and len(name) <= 200 else json.dumps(name)


def writable(raw: str) -> str | None:
    """A raw token (latin-1 text of its bytes) as marker text that encodes back to the same
    bytes on one line, or None when it cannot be (bytes that are not UTF-8, a line or
    paragraph separator)."""
    try:
        out = raw.encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:
        return None
    return out if len(out.splitlines()) <= 1 else None
