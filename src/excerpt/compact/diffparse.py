"""Diffs read for their structure: each file's section (its headers, hunks and binary
patch) with the names ``expand --path FILE`` accepts for it, in ``git diff``, ``git log -p``
and plain unified diffs. Paths are read as git writes them (quoted C-style when they hold
unusual bytes, ``a/``/``b/`` prefixes, renames, ``/dev/null`` for a created or deleted
file)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Hunk", "Section", "file_sections", "looks_like_diff", "parse_diff"]

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_DIFF_START = re.compile(rb"^(diff --git |diff -|--- \S|Index: |commit [0-9a-f]{7,})", re.M)
_GIT_START = re.compile(rb"^diff --git \S", re.M)
_COMMIT = re.compile(rb"commit [0-9a-f]{7,}\b|From [0-9a-f]{40} ")
_SECTION = re.compile(rb"diff -|Index: \S")
_BINARY = re.compile(
    rb"(?:(?:literal|delta) \d+|[A-Za-z][0-9A-Za-z!#$%&()*+;<=>?@^_`{|}~-]*|)\r?\n?"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Hunk:
    """A hunk: its ``@@`` line (0-based), one past its last body line, and the first line of
    each side in its file."""

    head: int
    end: int
    old_start: int
    new_start: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Section:
    """One file's part of a diff: lines ``start`` to ``end - 1`` (0-based), from its first
    header to the line before the next section or commit. ``path`` is the file's name (the
    old one for a deletion); ``names`` every name ``--path`` accepts for it."""

    start: int
    end: int
    path: str
    names: frozenset[str]
    created: bool
    deleted: bool
    hunks: tuple[Hunk, ...]
    binary: tuple[int, int] | None  # the lines of a ``GIT binary patch`` body


def looks_like_diff(data: bytes) -> bool:
    """A unified diff (a header, then a hunk) or git's (a ``diff --git`` line, even when no
    hunk follows: binary and mode changes have none) in the first 64 KiB?"""
    head = data[:65536]
    if _GIT_START.search(head):
        return True
    return bool(_DIFF_START.search(head)) and bool(re.search(rb"^@@ -\d", head, re.M))


@dataclass(slots=True)
class _Open:
    """A section being read: what its header lines said so far."""

    start: int
    git: bool
    paths: dict[str, bytes | None] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    hunks: list[Hunk] = field(default_factory=list)
    binary: tuple[int, int] | None = None

    def header(self, lines: list[bytes], i: int) -> int:
        """Read the header line ``i``; the index of the next line to read."""
        line = lines[i].rstrip(b"\r\n")
        if line.startswith(b"diff --git "):
            pair = _git_pair(line[11:])
            if pair:
                self.paths["git_old"], self.paths["git_new"] = pair
        elif self.takes_pair(lines, i):
            self.paths["old"] = _header_path(line[4:])
            self.paths["new"] = _header_path(lines[i + 1].rstrip(b"\r\n")[4:])
            self.flags.add("pair")
            return i + 2
        elif line.startswith((b"new file mode", b"deleted file mode")):
            self.flags.add("created" if line.startswith(b"new") else "deleted")
        elif line.startswith((b"rename from ", b"rename to ")):
            self.flags.add("renamed")
            key = "old" if line.startswith(b"rename from") else "new"
            self.paths.setdefault(key, _unquote(line.split(b" ", 2)[2]))
        elif line == b"GIT binary patch":
            j = i + 1
            while j < len(lines) and _BINARY.fullmatch(lines[j]):
                j += 1
            end = j
            while end > i + 1 and lines[end - 1].strip() == b"":
                end -= 1
            if end > i + 1:
                self.binary = (i + 1, end)
            return j
        return i + 1

    def takes_pair(self, lines: list[bytes], i: int) -> bool:
        """Are lines ``i`` and ``i + 1`` this section's ``---``/``+++`` pair?"""
        return (
            "pair" not in self.flags
            and not self.hunks
            and self.binary is None
            and i + 1 < len(lines)
            and lines[i].startswith(b"--- ")
            and lines[i + 1].startswith(b"+++ ")
        )

    def close(self, end: int) -> Section:
        p = self.paths
        created = "created" in self.flags or ("pair" in self.flags and p["old"] is None)
        deleted = "deleted" in self.flags or ("pair" in self.flags and p["new"] is None)
        old = p.get("old") or p.get("git_old")
        new = p.get("new") or p.get("git_new")
        raw = [x for x in (new, old if deleted or "renamed" in self.flags else None) if x]
        names = {_text(x) for x in raw}
        for x in raw:  # git's a/ and b/ prefixes, or a plain diff's first directory
            if self.git and x.startswith((b"a/", b"b/")):
                names.add(_text(x[2:]))
            elif not self.git and b"/" in x:
                names.add(_text(x.split(b"/", 1)[1]))
        shown = (new if not deleted else old) or old or new or b"?"
        if self.git and shown.startswith((b"a/", b"b/")):
            shown = shown[2:]
        return Section(
            start=self.start, end=end, path=_text(shown), names=frozenset(names),
            created=created, deleted=deleted, hunks=tuple(self.hunks), binary=self.binary,
        )  # fmt: skip


def parse_diff(lines: list[bytes]) -> tuple[list[Section], list[Hunk]]:
    """The file sections of a diff given as its lines, and the hunks outside any section."""
    sections: list[Section] = []
    loose: list[Hunk] = []
    current: _Open | None = None
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        m = _HUNK.match(line) if line.startswith(b"@@") else None
        if m is not None:
            hunk = _read_hunk(lines, i, m)
            (current.hunks if current is not None else loose).append(hunk)
            i = hunk.end
            continue
        commit = _COMMIT.match(line) is not None
        if commit or _SECTION.match(line) or _plain_start(lines, i, current):
            if current is not None:
                sections.append(current.close(i))
            current = None if commit else _Open(start=i, git=line.startswith(b"diff --git "))
        i = current.header(lines, i) if current is not None else i + 1
    if current is not None:
        sections.append(current.close(n))
    return sections, loose


def file_sections(sections: list[Section], path: str) -> list[Section]:
    """The sections of file ``path`` (its new name, its old one for a deletion or rename)."""
    want = path[2:] if path.startswith("./") else path
    return [s for s in sections if want in s.names]


def _plain_start(lines: list[bytes], i: int, current: _Open | None) -> bool:
    """Does a plain unified diff's ``---``/``+++`` pair start a section at line ``i``?"""
    if not (lines[i].startswith(b"--- ") and i + 1 < len(lines)):
        return False
    return lines[i + 1].startswith(b"+++ ") and not (
        current is not None and current.takes_pair(lines, i)
    )


def _read_hunk(lines: list[bytes], i: int, m: re.Match[bytes]) -> Hunk:
    old = int(m.group(2)) if m.group(2) is not None else 1
    new = int(m.group(4)) if m.group(4) is not None else 1
    j, n = i + 1, len(lines)
    while j < n and (old > 0 or new > 0):
        first = lines[j][:1]
        if first == b" " or lines[j] in (b"\n", b"\r\n"):  # an empty context line lost its space
            old, new = old - 1, new - 1
        elif first == b"-":
            old -= 1
        elif first == b"+":
            new -= 1
        elif first != b"\\":
            break
        j += 1
    while j < n and lines[j][:1] == b"\\":  # "\ No newline at end of file" after the last line
        j += 1
    return Hunk(head=i, end=j, old_start=int(m.group(1)), new_start=int(m.group(3)))


def _git_pair(rest: bytes) -> tuple[bytes, bytes] | None:
    """The two paths of a ``diff --git`` line (prefixes kept)."""
    if rest.startswith(b'"') or rest.endswith(b'"'):
        parts = re.findall(rb'"(?:[^"\\]|\\.)*"|\S+', rest)
        return (_unquote(parts[0]), _unquote(parts[1])) if len(parts) == 2 else None
    half = len(rest) // 2
    if len(rest) % 2 and rest[half : half + 1] == b" " and rest[2:half] == rest[half + 3 :]:
        return rest[:half], rest[half + 1 :]
    at = rest.find(b" b/")
    return (rest[:at], rest[at + 1 :]) if at > 0 else None


def _header_path(rest: bytes) -> bytes | None:
    """The path of a ``---``/``+++`` line: unquoted, without a timestamp; None for
    /dev/null."""
    raw = _unquote(rest) if rest.startswith(b'"') else rest.split(b"\t", 1)[0]
    return None if raw == b"/dev/null" else raw


_ESCAPES = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b",
            b"f": b"\f", b"r": b"\r", b"v": b"\v"}  # fmt: skip


def _unquote(raw: bytes) -> bytes:
    """A path as git writes it, quoted C-style when it holds unusual bytes."""
    if not (len(raw) >= 2 and raw.startswith(b'"') and raw.endswith(b'"')):
        return raw
    return re.sub(
        rb"\\([0-7]{3}|.)",
        lambda m: (
            bytes([int(m.group(1), 8) & 0xFF])
            if len(m.group(1)) == 3
            else _ESCAPES.get(m.group(1), m.group(1))
        ),
        raw[1:-1],
    )


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")
