"""git's wildmatch, as regular expressions over the bytes of names.

In: a pattern (bytes) and whether ``/`` is special in it (a pattern matched against a whole
path) or not (one matched against a single name). Out: the source of an equivalent regular
expression (each byte written ``\\xNN``, for RE2 in Latin-1 mode or Python's ``re`` over
bytes), or None when git can never match the pattern; and a compiled whole-subject matcher.

What git does, byte for byte: ``?`` and ``*`` do not match ``/``; ``**`` after ``/`` (or at
the start) and before ``/`` (or at the end) matches any run of whole directories (``**/``:
zero or more); any other ``**`` is a ``*``; ``\\`` takes the next byte literally and, at the
end, matches nothing; ``[…]`` takes ``!`` or ``^`` for negation, ``]`` first as a member,
ranges, escapes and the ``[:class:]`` names of git's ASCII-only ctype, never matches ``/``,
and when not closed (or naming an unknown class) makes the pattern match nothing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "ANY",
    "LINEAR",
    "LazyMatcher",
    "Matcher",
    "compile_matcher",
    "compile_set",
    "literal",
    "plain_length",
    "translate",
]

try:
    import re2 as _re2
except ImportError:  # pragma: no cover - then Python's re, on names of bounded length
    _re2 = None

LINEAR = _re2 is not None  # whether matching runs in linear time
log = logging.getLogger(__name__)
Matcher = Callable[[bytes], bool]

_STAR, _QUESTION, _OPEN, _CLOSE, _BACKSLASH = 0x2A, 0x3F, 0x5B, 0x5D, 0x5C
_SLASH, _DASH, _COLON = 0x2F, 0x2D, 0x3A
_GLOB = frozenset((_STAR, _QUESTION, _OPEN, _BACKSLASH))
ANY = r"[\x01-\xff]"  # a name never holds NUL
_NOT_SLASH = r"[\x01-\x2e\x30-\xff]"


def _ascii(test: Callable[[str], bool]) -> frozenset[int]:
    return frozenset(b for b in range(128) if test(chr(b)))


# git's own ctype: ASCII only, whatever the locale; its space is \t \n \r and ' ' only
_CLASSES: dict[bytes, frozenset[int]] = {
    b"alnum": _ascii(lambda c: c.isalnum()),
    b"alpha": _ascii(lambda c: c.isalpha()),
    b"blank": frozenset(b" \t"),
    b"cntrl": frozenset((*range(32), 127)),
    b"digit": _ascii(lambda c: c.isdigit()),
    b"graph": frozenset(range(33, 127)),
    b"lower": _ascii(lambda c: c.islower()),
    b"print": frozenset(range(32, 127)),
    b"punct": _ascii(lambda c: 32 < ord(c) < 127 and not c.isalnum()),
    b"space": frozenset(b" \t\n\r"),
    b"upper": _ascii(lambda c: c.isupper()),
    b"xdigit": frozenset(b"0123456789abcdefABCDEF"),
}


def literal(data: bytes) -> str:
    """``data`` as an expression matching exactly it."""
    return "".join(f"\\x{b:02x}" for b in data)


def translate(pattern: bytes, *, pathname: bool) -> str | None:
    """``pattern`` as a regular expression over bytes; None when it can match nothing.

    ``pathname``: matched against a path, where ``**`` between slashes is special; else
    against a single name, where every ``*`` is one (git lets those match ``/`` too, but a
    name holds none, so both match the same names here, and the expression also serves
    behind a prefix of directories)."""
    one = _NOT_SLASH
    out: list[str] = []
    i, end = 0, len(pattern)
    while i < end:
        byte = pattern[i]
        if byte == _BACKSLASH:
            if i + 1 == end:
                return None  # a trailing backslash escapes nothing: git never matches it
            out.append(literal(pattern[i + 1 : i + 2]))
            i += 2
        elif byte == _QUESTION:
            out.append(one)
            i += 1
        elif byte == _STAR:
            i, star = _stars(pattern, i, one, pathname=pathname)
            out.append(star)
        elif byte == _OPEN:
            got = _bracket(pattern, i)
            if got is None:
                return None
            i, bracket = got
            out.append(bracket)
        else:
            out.append(literal(pattern[i : i + 1]))
            i += 1
    return "".join(out)


def _stars(pattern: bytes, i: int, one: str, *, pathname: bool) -> tuple[int, str]:
    """The run of ``*`` at ``i``: where it ends and what it matches."""
    j = i
    while j < len(pattern) and pattern[j] == _STAR:
        j += 1
    if pathname and j - i > 1 and (i == 0 or pattern[i - 1] == _SLASH):
        after = pattern[j : j + 2]
        if not after:
            return j, ANY + "*"  # a trailing "**" matches everything below
        if after[:1] == b"/":
            return j + 1, f"(?:{ANY}*/)?"  # "**/": any number of whole directories
        if after == b"\\/":
            return j, ANY + "*"  # git lets this one run over slashes, then wants one
    return j, one + "*"


def _bracket(pattern: bytes, i: int) -> tuple[int, str] | None:
    """The ``[…]`` at ``i``: where it ends and the byte class it matches; None when it is
    not closed, names an unknown class or matches no byte (git then never matches)."""
    i += 1
    negated = pattern[i : i + 1] in (b"!", b"^")
    i += negated
    members: set[int] = set()
    previous = 0
    first = True  # a "]" right after the "[" (or "[!") is a member, not the end
    while i < len(pattern) and (first or pattern[i] != _CLOSE):
        first = False
        got = _member(pattern, i, previous, members)
        if got is None:
            return None
        i, previous = got
        i += 1
    if i >= len(pattern):
        return None
    allowed = [b for b in range(1, 256) if (b in members) != negated and b != _SLASH]
    if not allowed:
        return None
    return i + 1, _byte_class(allowed)


def _member(pattern: bytes, i: int, previous: int, members: set[int]) -> tuple[int, int] | None:
    """Add the bracket item at ``i`` to ``members``: a byte, an escaped byte, a range after
    ``previous`` or a ``[:class:]``. Returns the item's last index and the byte a ``-`` after
    it would start a range from (0: none); None when the bracket can match nothing."""
    end = len(pattern)
    byte = pattern[i]
    if byte == _BACKSLASH:
        if i + 1 >= end:
            return None
        members.add(pattern[i + 1])
        return i + 1, pattern[i + 1]
    if byte == _DASH and previous and i + 1 < end and pattern[i + 1] != _CLOSE:
        i += 1
        if pattern[i] == _BACKSLASH:
            i += 1
            if i >= end:
                return None
        members.update(range(previous, pattern[i] + 1))
        return i, 0
    if byte == _OPEN and pattern[i + 1 : i + 2] == b":":
        close = pattern.find(b"]", i + 2)
        if close < 0:
            return None
        if close - i >= 3 and pattern[close - 1] == _COLON:
            named = _CLASSES.get(pattern[i + 2 : close - 1])
            if named is None:
                return None
            members.update(named)
            return close, 0
        # no ":]" before the next "]": a plain "["
    members.add(byte)
    return i, byte


def _byte_class(allowed: list[int]) -> str:
    parts: list[str] = []
    start = prev = allowed[0]
    for byte in [*allowed[1:], -1]:
        if byte == prev + 1:
            prev = byte
            continue
        parts.append(f"\\x{start:02x}" if start == prev else f"\\x{start:02x}-\\x{prev:02x}")
        start = prev = byte
    return "[" + "".join(parts) + "]"


def plain_length(pattern: bytes) -> int:
    """How many leading bytes of ``pattern`` hold no wildcard (git's ``simple_length``)."""
    for i, byte in enumerate(pattern):
        if byte in _GLOB:
            return i
    return len(pattern)


def _options() -> Any:
    assert _re2 is not None
    options = _re2.Options()
    options.encoding = _re2.Options.Encoding.LATIN1
    options.never_capture = True
    options.log_errors = False
    return options


def compile_set(sources: list[str]) -> Callable[[bytes], list[int] | None] | None:
    """Which of ``sources`` match a whole subject, in one pass (RE2's set); None without
    RE2 or when it refuses them. The set answers None, never a wrong list, when it runs out of
    memory: ask each pattern then."""
    if _re2 is None:
        return None
    try:
        found: Any = _re2.Set.FullMatchSet(_options())
        for source in sources:
            found.Add(source.encode("ascii"))
        found.Compile()
    except _re2.error:
        return None
    match: Callable[[bytes], list[int] | None] = found.Match
    return match


class LazyMatcher:
    """``compile_matcher(source)``, compiled when first asked (most lines of a large file
    are only ever asked through a combined test); a pattern RE2 refuses matches nothing."""

    __slots__ = ("_match", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._match: Matcher | None = None

    def __call__(self, subject: bytes) -> bool:
        if self._match is None:
            self._match = compile_matcher(self.source) or _nothing(len(self.source))
        return self._match(subject)


def _nothing(size: int) -> Matcher:
    log.warning("an ignore pattern too large to match (%d bytes as a regex) matches nothing", size)
    return lambda subject: False


def compile_matcher(source: str, *, whole: bool = True) -> Matcher | None:
    """A whole-subject matcher of ``source`` over bytes (each byte one Latin-1 character),
    in linear time (RE2); None when RE2 refuses it as too large for its memory budget. Only
    without RE2 installed is it Python's ``re``, as everywhere else (see core.linear).
    ``whole`` False: a match at the start of the subject is enough (``re.match``)."""
    data = source.encode("ascii")
    if _re2 is None:
        fallback = re.compile(data)
        test = fallback.fullmatch if whole else fallback.match
        return lambda subject: test(subject) is not None
    try:
        compiled: Any = _re2.compile(data, _options())
    except _re2.error:
        return None
    # the module's match objects cost more than the matching of a short name
    inner = getattr(getattr(compiled, "_regexp", None), "Match", None)
    anchor = getattr(
        getattr(_re2, "_Anchor", None), "ANCHOR_BOTH" if whole else "ANCHOR_START", None
    )
    if inner is not None and anchor is not None:
        return lambda subject: bool(inner(anchor, subject, 0, len(subject))[0][0] >= 0)
    public = compiled.fullmatch if whole else compiled.match
    return lambda subject: public(subject) is not None
