"""Diffs (``git diff``, ``git log -p``, unified diffs): every header, commit line and changed
line stays, except where an agent does not read line by line. Those fold, each marker naming
the file and why: the hunks of lockfiles, generated, minified, snapshot and vendored files
(recognised by convention: their names, or a generated-file comment in their first lines),
binary patches, hunks that change only whitespace, and a new file past its head and outline
(a deleted one past its head). Long stretches of unchanged context fold too, keeping any
line that is an error or warning; so does a new file's. Sections and hunks are read by
``diffparse``."""

from __future__ import annotations

import re
from itertools import accumulate

from excerpt.compact.diffparse import Hunk, Section, parse_diff
from excerpt.compact.signals import signal_lines
from excerpt.compact.view import Elision, marker
from excerpt.core.manifests import names

__all__ = ["diff_elisions"]

MIN_RUN = 2  # unchanged lines: fewer are not worth a marker
MIN_BYTES = 110  # no marker is shorter: a shorter stretch stays as it is
MARGIN = 40  # a stretch folds when longer than its marker by at least this many bytes
CONTENT_RUN = 4  # a new or deleted file's lines fold in runs of at least this many
HEAD = 12  # a new or deleted file's first lines stay, up to HEAD_BYTES
HEAD_BYTES = 2048
LONG_FILE = 40  # a new or deleted file with fewer lines and LONG_BYTES stays whole
LONG_BYTES = 4096
OUTLINE_CAP = 40  # at most this many outline lines of a new file stay
GENERATED_HEAD = 10  # a generated-file comment counts in a file's first lines only

MINUS = "\u2212"  # the minus sign of a marker's counts (+12, minus sign 3)

_GENERATED = re.compile(
    rb"@generated|DO NOT EDIT|(?i:auto-?generated|automatically generated|generated automatically)"
)
_COMMENT = re.compile(rb"[ \t]*(?:#|//|/\*|\*|--|;|%|<!--|\"\"\"|'''|\{#|rem\b|REM\b)")
_OUTLINE = re.compile(
    rb"(?:(?:export|pub(?:\([\w:]+\))?|public|private|protected|internal|abstract|final|static"
    rb"|async|unsafe|default|declare|sealed|open|data|inline)\s+)*"
    rb"(?:def|class|function|fn|func|struct|impl|interface|type|module|enum|trait|union|typedef"
    rb"|namespace|package|object|record|protocol|extension|mod|template|const|let|var|val)\b"
    rb"|\[[^\]\n]+\]\s*$"  # an INI or TOML table
    rb"|[A-Za-z_][\w.-]*:\s*$"  # a top-level YAML key
)
_UNDERLINE = re.compile(rb"([=\-~^\"'`#*+])\1{3,}\s*$")  # reStructuredText's, under a title
_HEADING = re.compile(rb"#{1,6} \S")  # Markdown
_MARKDOWN = (".md", ".markdown", ".mdx")
_LOCKFILES = frozenset(names(kinds=("lock",)))
_LOCK_SUFFIXES = (".lock", ".lockfile")
_MINIFIED = (".min.js", ".min.mjs", ".min.cjs", ".min.css", ".map", ".bundle.js")
_SNAPSHOTS = (".snap", ".ambr")
_VENDORED = frozenset({"vendor", "_vendor", "third_party", "third-party", "node_modules"})


# -------------------------------------------------------------------------------- elisions


def diff_elisions(lines: list[bytes]) -> list[Elision]:
    """The elisions of a diff given as its lines (each with its newline)."""
    sections, loose = parse_diff(lines)
    fold = _Folder(lines)
    generated = {s.path for s in sections if _generated_head(lines, s)}
    for s in sections:
        if s.binary is not None:
            fold.binary(s.binary, s.path)
        why = _convention(s.path) or ("a generated file" if s.path in generated else None)
        if why is not None:
            for h in s.hunks:
                fold.whole(h, f"{s.path}, {why}")
        elif (s.created or s.deleted) and _long(lines, s):
            fold.new_or_deleted(s)
        else:
            for h in s.hunks:
                fold.hunk(h, s.path)
    for h in loose:
        fold.hunk(h, None)
    return fold.out


def _convention(path: str) -> str | None:
    """Why a file is not read line by line, from its name alone (None: it is)."""
    *dirs, name = path.split("/")
    low = name.lower()
    if name in _LOCKFILES or low.endswith(_LOCK_SUFFIXES):
        return "a lockfile"
    if low.endswith(_MINIFIED):
        return "a minified file"
    if "__snapshots__" in dirs or low.endswith(_SNAPSHOTS):
        return "a snapshot file"
    return "vendored" if _VENDORED.intersection(dirs) else None


def _generated_head(lines: list[bytes], s: Section) -> bool:
    """Does a comment in the file's first lines, as this section shows them, say it is
    generated?"""
    for h in s.hunks:
        old, new = h.old_start, h.new_start
        for line in lines[h.head + 1 : h.end]:
            if old > GENERATED_HEAD and new > GENERATED_HEAD:
                break
            sign = line[:1]
            at = new if sign == b"+" else old if sign == b"-" else min(old, new)
            if at <= GENERATED_HEAD and _COMMENT.match(line, 1) and _GENERATED.search(line):
                return True
            if sign != b"\\":
                old += sign != b"+"
                new += sign != b"-"
    return False


def _long(lines: list[bytes], s: Section) -> bool:
    """Is a new or deleted file long enough to fold?"""
    sign = b"-" if s.deleted else b"+"
    changed = [line for h in s.hunks for line in lines[h.head + 1 : h.end] if line[:1] == sign]
    return len(changed) >= LONG_FILE or sum(map(len, changed)) >= LONG_BYTES


class _Folder:
    """Elisions of one diff's lines, each made only where it is longer than its marker."""

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines
        self.offsets = [0, *accumulate(len(line) for line in lines)]
        self.out: list[Elision] = []

    def add(self, a: int, b: int, what: str, detail: str, min_run: int = 1) -> None:
        """Lines ``a`` to ``b - 1`` (0-based), when longer than the marker that would take
        their place."""
        size = self.offsets[b] - self.offsets[a]
        if b - a < min_run or size < MIN_BYTES:
            return
        e = Elision(start=self.offsets[a], end=self.offsets[b], what=what, count=b - a,
                    lines=(a + 1, b), detail=detail)  # fmt: skip
        first = self.lines[a]
        indent = len(first) - len(first.lstrip(b" \t"))
        if size >= indent + len(marker(e, "0" * 16, "cli").encode()) + MARGIN:
            self.out.append(e)

    def whole(self, h: Hunk, why: str) -> None:
        body = self.lines[h.head + 1 : h.end]
        plus = sum(line[:1] == b"+" for line in body)
        minus = sum(line[:1] == b"-" for line in body)
        self.add(h.head + 1, h.end, "lines", f"{why}: +{plus:,} {MINUS}{minus:,}")

    def binary(self, span: tuple[int, int], path: str) -> None:
        sizes = [
            f"{m.group(1).decode()} {int(m.group(2)):,} bytes"
            for line in self.lines[span[0] : span[1]]
            if (m := re.match(rb"(literal|delta) (\d+)", line))
        ]
        self.add(*span, "lines", f"binary patch of {path}: " + ", then ".join(sizes))

    def hunk(self, h: Hunk, path: str | None) -> None:
        """An ordinary hunk: whole when it changes only whitespace, else its long stretches
        of unchanged lines."""
        body = self.lines[h.head + 1 : h.end]
        minus = [line[1:] for line in body if line[:1] == b"-"]
        plus = [line[1:] for line in body if line[:1] == b"+"]
        squashed = re.sub(rb"\s+", b"", b"".join(minus))
        if squashed and squashed == re.sub(rb"\s+", b"", b"".join(plus)):
            where = f" in {path}" if path is not None else ""
            detail = f"whitespace-only change{where}: +{len(plus):,} {MINUS}{len(minus):,}"
            self.add(h.head + 1, h.end, "lines", detail)
            return
        i = h.head + 1
        while i < h.end:
            j = i
            while j < h.end and (self.lines[j][:1] == b" " or self.lines[j] in (b"\n", b"\r\n")):
                j += 1
            if j - i >= MIN_RUN and self.offsets[j] - self.offsets[i] >= MIN_BYTES:
                self.runs(i, j, self.signals(i, j), "unchanged lines", "", MIN_RUN)
            i = j + 1 if j == i else j

    def new_or_deleted(self, s: Section) -> None:
        """A new file keeps its head, its outline and its error lines; a deleted one its
        head."""
        sign = b"-" if s.deleted else b"+"
        markdown = s.path.lower().endswith(_MARKDOWN)
        outline = total = size = 0
        kept: dict[int, bool] = {}
        for h in s.hunks:
            signal = self.signals(h.head + 1, h.end) if s.created else {}
            for i in range(h.head + 1, h.end):
                line = self.lines[i]
                if line[:1] != sign:
                    continue
                total += 1
                size += len(line)
                if (total <= HEAD and size <= HEAD_BYTES) or signal.get(i, False):
                    kept[i] = True
                elif s.created and outline < OUTLINE_CAP and _outlines(line, markdown):
                    kept[i] = True
                    outline += 1
                elif s.created and outline < OUTLINE_CAP and _UNDERLINE.match(line, 1):
                    kept[i] = kept[i - 1] = True  # and the title above it
                    outline += 1
        if s.created:
            detail = f"new file {s.path}: +{total:,} in all; head and outline kept"
        else:
            detail = f"deleted file {s.path}: {MINUS}{total:,} in all; head kept"
        what = "removed lines" if s.deleted else "added lines"
        for h in s.hunks:
            self.runs(h.head + 1, h.end, kept, what, detail, CONTENT_RUN)

    def runs(self, a: int, b: int, kept: dict[int, bool], what: str, detail: str,
             min_run: int) -> None:  # fmt: skip
        """The stretches of lines ``a`` to ``b - 1`` outside ``kept``, each as an elision."""
        i = a
        while i < b:
            if kept.get(i, False):
                i += 1
                continue
            j = i
            while j < b and not kept.get(j, False):
                j += 1
            self.add(i, j, what, detail, min_run)
            i = j

    def signals(self, a: int, b: int) -> dict[int, bool]:
        """Which of lines ``a`` to ``b - 1`` are errors or warnings."""
        text = [line.decode("utf-8", "replace").rstrip("\n") for line in self.lines[a:b]]
        return {a + k: True for k, hit in enumerate(signal_lines(text)) if hit}


def _outlines(line: bytes, markdown: bool) -> bool:
    """Does an added line look like a definition or heading (at column 0)?"""
    return bool(_OUTLINE.match(line, 1) or (markdown and _HEADING.match(line, 1)))
