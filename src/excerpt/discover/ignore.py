"""Ignore files matched the way git matches them.

In: the bytes of one ignore file (``.gitignore``, ``.excerptignore``) or a list of globs. Out:
``IgnoreRules``, which say of a path relative to the file's directory whether the last line
that matches it ignores it (True), re-includes it (False), or no line matches (None).

git's rules, as its ``dir.c`` applies them: lines end at ``\\n`` only (a ``\\r`` before it is
dropped, a leading UTF-8 BOM skipped, a NUL ends the line); a line starting with ``#`` is a
comment; trailing spaces are trimmed unless escaped (tabs are kept); ``!`` negates; a
trailing ``/`` matches directories only; a pattern with no other ``/`` is matched against the
last component at any depth, any other one against the whole path from the file's directory
(a leading ``/`` only anchors). The glob syntax is ``excerpt.discover.wildmatch``'s. A line
git can never match (a trailing ``\\``, an unclosed ``[``) matches nothing here either.

Nothing under an ignored directory comes back, whatever a later line says: a walk does not
enter a directory ``verdict`` ignores; for a flat list of paths, ``ignores`` looks at each
parent directory first.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from excerpt.core.globs import escapes_nothing
from excerpt.discover.wildmatch import (
    ANY,
    LINEAR,
    LazyMatcher,
    Matcher,
    compile_matcher,
    compile_set,
    literal,
    plain_length,
    translate,
)

__all__ = ["IgnoreRules", "pattern_problem", "split_lines"]

_BACKSLASH = 0x5C


@dataclass(frozen=True, slots=True, kw_only=True)
class _Rule:
    """One pattern line, ready to match."""

    negative: bool
    dir_only: bool
    basename: bool  # no slash: matched against the last component
    literal: bytes | None  # the whole pattern, when it has no wildcard
    source: str | None  # otherwise its regular expression; None: it matches nothing
    match: Matcher | None

    def matches(self, path: bytes, name: bytes, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        subject = name if self.basename else path
        if self.literal is not None:
            return subject == self.literal
        return self.match is not None and self.match(subject)


_CHUNK = 128  # wildcard lines per combined test: a huge file stays within RE2's memory


@dataclass(frozen=True, slots=True)
class _Chunk:
    """Consecutive lines with wildcards: one linear-time test of whether any matches a path
    (most paths match none), then one set match of which."""

    lines: tuple[int, ...]  # their indices among the rules, in file order
    any: Matcher | None  # None: ask each line
    which: Callable[[bytes], list[int] | None] | None  # the positions in ``lines`` matching

    def last(self, rules: tuple[_Rule, ...], path: bytes, is_dir: bool) -> int:
        """The index of the last of these lines matching ``path``, or -1."""
        if self.any is not None and not self.any(path):
            return -1
        found = None if self.which is None else self.which(path)
        if found:
            hits = [self.lines[j] for j in found if is_dir or not rules[self.lines[j]].dir_only]
            return max(hits, default=-1)
        name = path.rpartition(b"/")[2]
        for i in reversed(self.lines):  # no set, or it gave up: ask each line, last first
            if rules[i].matches(path, name, is_dir):
                return i
        return -1


@dataclass(frozen=True, slots=True)
class _Index:
    """Where to look: literal lines by subject (most lines of real files), then the lines
    with wildcards, last chunk first."""

    names: tuple[dict[bytes, int], dict[bytes, int]]  # [is_dir]: name -> last literal line
    paths: tuple[dict[bytes, int], dict[bytes, int]]
    chunks: tuple[_Chunk, ...]  # last first


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """The patterns of one ignore file, in file order (the last match decides)."""

    rules: tuple[_Rule, ...]
    _index: _Index = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", _index(self.rules))

    @classmethod
    def from_bytes(cls, data: bytes) -> IgnoreRules:
        """The rules of an ignore file's raw content."""
        return cls._of(split_lines(data))

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> IgnoreRules:
        """The rules of pattern lines, each without its line end (comments and blank lines
        allowed)."""
        return cls._of(os.fsencode(line) for line in lines)

    @classmethod
    def _of(cls, lines: Iterable[bytes]) -> IgnoreRules:
        rules = (_rule(line) for line in lines if line and not line.startswith(b"#"))
        return cls(tuple(r for r in rules if r is not None))

    def __bool__(self) -> bool:
        return bool(self.rules)

    def verdict(self, path: bytes, is_dir: bool) -> bool | None:
        """True: ``path`` is ignored; False: re-included by a ``!`` line; None: no line
        matches it. ``path`` is relative to the file's directory, without a trailing ``/``."""
        index = self._index
        name = path[path.rfind(b"/") + 1 :]
        best = max(index.names[is_dir].get(name, -1), index.paths[is_dir].get(path, -1))
        for chunk in index.chunks:
            if chunk.lines[-1] < best:
                break
            best = max(best, chunk.last(self.rules, path, is_dir))
            if best >= chunk.lines[0]:
                break
        return None if best < 0 else not self.rules[best].negative

    def ignores(self, path: str, cache: dict[bytes, bool] | None = None) -> bool:
        """Whether git, with only these rules at the root, would leave out file ``path``: a
        parent directory is ignored, or the file itself is. ``cache`` keeps the verdicts on
        directories across calls."""
        encoded = os.fsencode(path)
        cut = encoded.find(b"/")
        while cut >= 0:
            parent = encoded[:cut]
            ignored = None if cache is None else cache.get(parent)
            if ignored is None:
                ignored = self.verdict(parent, True) is True
                if cache is not None:
                    cache[parent] = ignored
            if ignored:
                return True
            cut = encoded.find(b"/", cut + 1)
        return self.verdict(encoded, False) is True


def _index(rules: tuple[_Rule, ...]) -> _Index:
    names: tuple[dict[bytes, int], dict[bytes, int]] = ({}, {})
    paths: tuple[dict[bytes, int], dict[bytes, int]] = ({}, {})
    wild: list[int] = []
    for i, rule in enumerate(rules):
        if rule.literal is not None:
            table = names if rule.basename else paths
            for is_dir in (True,) if rule.dir_only else (False, True):
                table[is_dir][rule.literal] = i
        elif rule.match is not None:
            wild.append(i)
    chunks = [_chunk(rules, wild[k : k + _CHUNK]) for k in range(0, len(wild), _CHUNK)]
    return _Index(names=names, paths=paths, chunks=tuple(reversed(chunks)))


def _chunk(rules: tuple[_Rule, ...], lines: list[int]) -> _Chunk:
    # a name pattern matches a path whose last component it matches
    sources = [
        f"(?:{ANY}*/)?{rules[i].source}" if rules[i].basename else str(rules[i].source)
        for i in lines
    ]
    if not LINEAR:
        return _Chunk(lines=tuple(lines), any=None, which=None)
    return _Chunk(
        lines=tuple(lines),
        any=compile_matcher("|".join(f"(?:{s})" for s in sources)),
        which=compile_set(sources) if len(sources) > 1 else None,
    )


def split_lines(data: bytes) -> list[bytes]:
    """The lines of an ignore file as git splits them: at ``\\n`` only, a ``\\r`` before it
    dropped, a leading UTF-8 BOM skipped."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    return [line[:-1] if line.endswith(b"\r") else line for line in data.split(b"\n")]


def _trim_trailing_spaces(line: bytes) -> bytes:
    """``line`` without its unescaped trailing spaces (tabs stay, as in git)."""
    last_space: int | None = None
    i = 0
    while i < len(line):
        if line[i] == 0x20:
            if last_space is None:
                last_space = i
        else:
            last_space = None
            if line[i] == _BACKSLASH:
                i += 1
                if i == len(line):
                    return line
        i += 1
    return line if last_space is None else line[:last_space]


def _rule(line: bytes) -> _Rule | None:
    line = _trim_trailing_spaces(line.partition(b"\0")[0])  # a NUL ends git's string
    negative = line.startswith(b"!")
    pattern = line[1:] if negative else line
    dir_only = pattern.endswith(b"/")
    if dir_only:
        pattern = pattern[:-1]
    if not pattern:
        return None  # matches nothing (a lone "!" or "/")
    basename = b"/" not in pattern
    plain = plain_length(pattern)
    if basename:
        source = None if plain == len(pattern) else translate(pattern, pathname=False)
    else:
        if pattern.startswith(b"/"):
            pattern, plain = pattern[1:], plain - 1
        # git compares the plain prefix first and matches only the rest as a pattern: a "**"
        # right after that prefix counts as the pattern's start (foo**/bar matches foo/x/bar)
        rest = None if plain == len(pattern) else translate(pattern[plain:], pathname=True)
        source = None if rest is None else literal(pattern[:plain]) + rest
    is_literal = plain == len(pattern)
    return _Rule(
        negative=negative,
        dir_only=dir_only,
        basename=basename,
        literal=pattern if is_literal else None,
        source=source,
        match=None if source is None else _matcher(pattern, source, basename=basename),
    )


def _matcher(pattern: bytes, source: str, *, basename: bool) -> Matcher:
    """``source`` compiled when first needed; ``*literal`` against a name is a suffix test
    (as git does it)."""
    suffix = pattern[1:]
    if basename and pattern.startswith(b"*") and suffix and plain_length(suffix) == len(suffix):
        return lambda subject: subject.endswith(suffix)
    return LazyMatcher(source)


def pattern_problem(line: str) -> str | None:
    """Why ``line`` of an ignore file is certainly a mistake, or None: it ends in an
    unescaped backslash, which escapes nothing (git keeps the line and never matches it)."""
    return "it ends in a backslash that escapes nothing" if escapes_nothing(line) else None
