"""Each line of the JSON-RPC wire judged before the SDK sees it: passed on, answered with
its error as JSON-RPC 2.0 says, or dropped (``read_frame``).

The SDK's stdio transport drops, unanswered, every line its message model does not
validate (an array, a number, a request without a method, a lone surrogate escape, nesting
past 200 levels), and its client waits forever. Here:

- not JSON (or ``NaN``/``Infinity``, which JSON does not have): -32700 Parse error, id null;
- JSON but not a request object (an array, batches included; a scalar; no ``method``;
  ``jsonrpc`` not ``"2.0"``; an id that is not a string or an integer; ``params`` that are
  a scalar): -32600 Invalid Request, with the request's id when it has a usable one;
- a request whose ``params`` are an array, or that nests deeper than ``MAX_DEPTH`` levels
  or holds more than ``MAX_CONTAINERS`` arrays and objects or ``MAX_VALUES`` values:
  -32602 Invalid params, with its id, found by a linear scan when the frame is too deep or
  too large to parse (only the first ``_SCAN_STEPS`` tokens are read for it);
- text that is not Unicode (invalid UTF-8 bytes, lone surrogate escapes) is read as U+FFFD.

A malformed notification or response is dropped: neither is ever answered. Everything else
goes to the SDK, which answers an unknown method (-32601) and malformed params (-32602).
No I/O (debug log lines aside).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

__all__ = ["MAX_CONTAINERS", "MAX_DEPTH", "MAX_VALUES", "FrameVerdict", "error_frame", "read_frame"]

log = logging.getLogger("excerpt.mcp")

MAX_DEPTH = 100  # levels of arrays and objects in one message; a tool's arguments use 3
MAX_CONTAINERS = 10_000  # arrays and objects in one message
MAX_VALUES = 1_000_000  # values in one message (counted by their commas)
_SCAN_STEPS = 200_000  # how far a frame that is not parsed is read for its id

_ABSENT: Any = object()
_LONE_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# A string, or one that never ends: matching always succeeds at a quote, so one pass.
_STRING_TO_END = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\Z)', re.DOTALL)
# One token of a JSON text: a string, a run of openers, a run of closers, or a literal.
_TOKEN = re.compile(
    r'[\s,:]*+(?:("(?:[^"\\]++|\\.)*+")|([\[{]++)|([\]}]++)|([^\s,:"\[\]{}]++))', re.DOTALL
)


@dataclass(frozen=True, slots=True)
class FrameVerdict:
    """One line judged: a message for the server, or the error to answer it with (or
    neither: a blank line, a malformed notification or response)."""

    message: SessionMessage | None = None
    reply: SessionMessage | None = None


class _TooDeep(Exception):
    pass


def read_frame(line: bytes) -> FrameVerdict:
    """Judge one line of the wire: pass it on, answer it with an error, or drop it.

    A frame the JSON parser would spend long on (more than ``MAX_CONTAINERS`` arrays and
    objects, more than ``MAX_VALUES`` values) or could not parse (deeper than Python's
    recursion limit) is refused from a linear scan, without being parsed."""
    text = line.decode("utf-8", "replace")
    if not text.strip():
        return FrameVerdict()
    if _may_be_heavy(line):
        refused = _heavy(text)
        if refused is not None:
            return refused
    try:
        doc = _DECODER.decode(text)
    except RecursionError:
        return _refused(text, f"nested deeper than {MAX_DEPTH} levels")
    except ValueError:
        return error_frame(None, PARSE_ERROR, "Parse error", "the line is not JSON")
    if isinstance(doc, list):
        detail = "a batch (JSON array) is not supported" if doc else "an empty array"
        return error_frame(None, INVALID_REQUEST, "Invalid Request", detail)
    if not isinstance(doc, dict):
        return error_frame(None, INVALID_REQUEST, "Invalid Request", "a message is a JSON object")
    scrub = _LONE_SURROGATE_ESCAPE.search(text) is not None
    try:
        cleaned = {_text(k, scrub): _checked(v, 1, scrub) for k, v in doc.items()}
    except _TooDeep:
        detail = f"nested deeper than {MAX_DEPTH} levels"
        return _answer_refused(doc.get("id", _ABSENT), doc.get("method"), detail)
    return _message(cleaned)


def _message(doc: dict[str, Any]) -> FrameVerdict:
    rid = doc.get("id", _ABSENT)
    answer = _usable_id(rid)
    if "method" not in doc:
        if rid is not _ABSENT and ("result" in doc or "error" in doc):
            return _validated(doc, None)  # a response: never answered
        return error_frame(answer, INVALID_REQUEST, "Invalid Request", "no method")
    if doc.get("jsonrpc") != "2.0" or not isinstance(doc["method"], str):
        return error_frame(answer, INVALID_REQUEST, "Invalid Request", "not a JSON-RPC 2.0 request")
    if rid is not _ABSENT and answer is None:
        return error_frame(None, INVALID_REQUEST, "Invalid Request", "an id is a string or integer")
    params = doc.get("params")
    if params is not None and not isinstance(params, dict):
        if rid is _ABSENT:
            return FrameVerdict()  # a notification is never answered
        if isinstance(params, list):
            return error_frame(answer, INVALID_PARAMS, "Invalid params", "params are an object")
        return error_frame(answer, INVALID_REQUEST, "Invalid Request", "params are an object")
    return _validated(doc, answer)


def _validated(doc: dict[str, Any], answer: int | str | None) -> FrameVerdict:
    try:
        message = jsonrpc_message_adapter.validate_python(doc, by_name=False)
    except ValidationError:
        if answer is None:
            log.debug("dropped a malformed notification or response")
            return FrameVerdict()
        return error_frame(answer, INVALID_REQUEST, "Invalid Request", "not an MCP message")
    return FrameVerdict(message=SessionMessage(message))


def _answer_refused(rid: Any, method: Any, detail: str) -> FrameVerdict:
    """The answer to a message refused for its size or depth: a request's is -32602 with
    its id; a notification is dropped; a frame without a method is answered with -32600."""
    if method is not None and rid is _ABSENT:
        log.debug("dropped a notification: %s", detail)
        return FrameVerdict()
    if method is not None:
        return error_frame(_usable_id(rid), INVALID_PARAMS, "Invalid params", detail)
    return error_frame(_usable_id(rid), INVALID_REQUEST, "Invalid Request", detail)


def _refused(text: str, detail: str) -> FrameVerdict:
    found = _outline(text)
    if not found.is_object:
        return error_frame(None, INVALID_REQUEST, "Invalid Request", detail)
    if found.rid is _ABSENT and not found.whole:  # an id may be past what was read
        return error_frame(None, INVALID_REQUEST, "Invalid Request", detail)
    return _answer_refused(found.rid, found.method, detail)


def error_frame(rid: int | str | None, code: int, message: str, detail: str) -> FrameVerdict:
    """The JSON-RPC error answering a frame."""
    error = JSONRPCError(
        jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=message, data=detail)
    )
    return FrameVerdict(reply=SessionMessage(error))


def _usable_id(rid: Any) -> int | str | None:
    """The id to answer with: a string or an integer as sent (JSON-RPC allows numbers with
    fractions too, but MCP's ids are strings or integers), else none."""
    if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)):
        return rid
    return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _integer(literal: str) -> int | float:
    """An integer as Python reads it; one too long for int() is kept as a float (the
    schemas' largest fits in 13 digits), so the frame still parses and gets its answer."""
    return int(literal) if len(literal) <= 4000 else float(literal)


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_int=_integer)


def _text(text: str, scrub: bool) -> str:
    return _SURROGATE.sub("\ufffd", text) if scrub else text


def _checked(value: Any, depth: int, scrub: bool) -> Any:
    """``value`` with lone surrogates replaced by U+FFFD when ``scrub``.

    Raises:
        _TooDeep: nested deeper than ``MAX_DEPTH`` levels.
    """
    if isinstance(value, str):
        return _text(value, scrub)
    if isinstance(value, dict | list) and depth >= MAX_DEPTH:
        raise _TooDeep
    if isinstance(value, dict):
        return {_text(k, scrub): _checked(v, depth + 1, scrub) for k, v in value.items()}
    if isinstance(value, list):
        return [_checked(v, depth + 1, scrub) for v in value]
    return value


# --------------------------------------------------------------------------- frames not parsed


def _may_be_heavy(line: bytes) -> bool:
    """Whether the line could hold too many arrays, objects or values, counting their
    characters inside strings too (a cheap over-estimate)."""
    return line.count(b"[") + line.count(b"{") > MAX_CONTAINERS or line.count(b",") >= MAX_VALUES


def _heavy(text: str) -> FrameVerdict | None:
    """The refusal of a frame with too many arrays, objects or values outside its strings;
    None when it may be parsed. (A string that never ends hides what follows it, and the
    parser then reports the frame as not JSON.)"""
    skeleton = _STRING_TO_END.sub("", text)
    if skeleton.count("[") + skeleton.count("{") > MAX_CONTAINERS:
        return _refused(text, f"more than {MAX_CONTAINERS:,} arrays and objects")
    if skeleton.count(",") >= MAX_VALUES:
        return _refused(text, f"more than {MAX_VALUES:,} values")
    return None


@dataclass(slots=True)
class _Outline:
    """What a frame that is not parsed says at its top level."""

    is_object: bool = False
    rid: Any = _ABSENT
    method: Any = None
    whole: bool = False  # read to the end of the top-level object


def _outline(text: str) -> _Outline:
    """Read the id and method at the top level of a frame without parsing it: token by
    token near the top, and through nested values in chunks too short to climb back out
    of them (only their brackets are counted); at most ``_SCAN_STEPS`` steps, and no
    further than both are found."""
    found = _Outline()
    depth, pos, key, expect_key = 0, 0, None, True
    for _ in range(_SCAN_STEPS):
        if found.rid is not _ABSENT and found.method is not None:
            break
        if depth > 2 and not text.startswith('"', pos):
            end = text.find('"', pos, pos + depth - 2)
            chunk = text[pos : end if end != -1 else pos + depth - 2]
            if not chunk:
                break
            depth += chunk.count("[") + chunk.count("{") - chunk.count("]") - chunk.count("}")
            pos += len(chunk)
            continue
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            break
        pos = match.end()
        string, opens, closes, literal = match.groups()
        if depth == 0:
            found.is_object = opens == "{"
            if not found.is_object:
                break
        if opens is not None:
            depth += len(opens)
        elif closes is not None:
            depth -= len(closes)
            if depth <= 0:
                found.whole = True
                break
            expect_key = expect_key or depth == 1
        elif depth == 1 and expect_key and string is not None:
            key = _json_value(string) if "\\" in string else string[1:-1]
            expect_key = False
        elif depth == 1:
            if key == "id":
                found.rid = _json_value(string if string is not None else literal)
            elif key == "method":
                found.method = _json_value(string if string is not None else literal)
            expect_key = True
    return found


def _json_value(token: str | None) -> Any:
    """One scalar token's value (lone surrogates as U+FFFD); None when it is not JSON."""
    if token is None or len(token) > 4000:
        return None
    try:
        value = _DECODER.decode(token)
    except ValueError:
        return None
    return _text(value, True) if isinstance(value, str) else value
