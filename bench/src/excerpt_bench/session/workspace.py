"""The tree a scripted agent explores: the files a ripgrep search visits, their text, and
searches over them. In: a directory, or the files of a recording. Out: paths, lines, hits.

ripgrep's defaults decide what is searched: hidden files and directories (a name starting
with ``.``) are skipped, symlinks are not followed, and a file holding a NUL byte is binary
and skipped. A benchmark tree is a commit's tracked files, so ignore files change nothing.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from excerpt.tooling import sha256_hex

__all__ = ["Corpus", "Hits"]


# path -> 1-based line numbers holding a match, ascending
Hits = dict[str, list[int]]


@dataclass(slots=True)
class _File:
    data: bytes
    text: str = ""
    starts: list[int] = field(default_factory=list)  # offset of each line's first character
    lines: list[str] = field(default_factory=list)

    def load(self) -> None:
        if self.starts:
            return
        self.text = self.data.decode("utf-8", "replace")
        self.starts = [0, *(m.end() for m in re.finditer("\n", self.text))]
        if self.starts[-1] == len(self.text) and len(self.starts) > 1:
            self.starts.pop()  # a final newline ends the last line; it starts none
        self.lines = self.text.split("\n")
        if self.text.endswith("\n"):
            self.lines.pop()


class Corpus:
    """The searchable files of one tree, by repository-relative POSIX path."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self._files = {p: _File(data=d) for p, d in sorted(files.items()) if _searchable(p, d)}
        self._searches: dict[tuple[str, bool, str | None], Hits] = {}
        self.digest = sha256_hex(
            "".join(f"{p}\0{sha256_hex(f.data)}\n" for p, f in self._files.items()).encode(
                "utf-8", "surrogateescape"
            )
        )

    @classmethod
    def from_dir(cls, root: Path) -> Corpus:
        """Every regular file under ``root`` that ripgrep would visit."""
        files: dict[str, bytes] = {}
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in filenames:
                full = Path(dirpath) / name
                if name.startswith(".") or full.is_symlink() or not full.is_file():
                    continue
                rel = full.relative_to(root).as_posix()
                try:
                    files[rel] = full.read_bytes()
                except OSError:
                    continue
        return cls(files)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(self._files)

    def blobs(self) -> dict[str, bytes]:
        """Each file's bytes (what a recording keeps)."""
        return {p: f.data for p, f in self._files.items()}

    def __contains__(self, path: object) -> bool:
        return path in self._files

    def lines(self, path: str) -> list[str]:
        """The file's lines without their ``\\n`` (a ``\\r`` before it stays)."""
        f = self._files[path]
        f.load()
        return f.lines

    def ends_with_newline(self, path: str) -> bool:
        return self._files[path].data.endswith(b"\n")

    def line_bytes(self, path: str, number: int) -> int:
        """UTF-8 bytes of line ``number`` (1-based) with its terminator."""
        return len(self.lines(path)[number - 1].encode("utf-8")) + 1

    def resolve(self, named: str) -> str | None:
        """The tree's path for a path a task names: itself, or the one file whose path ends
        with it on a directory boundary (a traceback's absolute or installed path)."""
        named = named.lstrip("/")
        if named in self._files:
            return named
        parts = named.split("/")
        for start in range(1, len(parts)):
            tail = "/".join(parts[start:])
            found = [p for p in self._files if p == tail or p.endswith("/" + tail)]
            if len(found) == 1:
                return found[0]
            if found:
                return None
        return None

    def search(self, text: str, *, ignore_case: bool = False, path: str | None = None) -> Hits:
        """Lines holding ``text`` as a fixed string, by file in path order (one file when
        ``path`` is given). Remembered: the same search costs nothing the second time."""
        key = (text, ignore_case, path)
        if key in self._searches:
            return self._searches[key]
        rx = re.compile(re.escape(text), re.IGNORECASE if ignore_case else 0)
        hits: Hits = {}
        for name in [path] if path is not None else self._files:
            f = self._files.get(name)
            if f is None:
                continue
            f.load()
            if rx.search(f.text) is None:
                continue
            found = {bisect.bisect_right(f.starts, m.start()) for m in rx.finditer(f.text)}
            hits[name] = sorted(found)
        self._searches[key] = hits
        return hits

    def search_any(self, texts: Iterable[str], *, ignore_case: bool, path: str) -> list[int]:
        """Lines of ``path`` holding any of ``texts``."""
        found: set[int] = set()
        for text in texts:
            found.update(self.search(text, ignore_case=ignore_case, path=path).get(path, ()))
        return sorted(found)


def _searchable(path: str, data: bytes) -> bool:
    if any(part.startswith(".") for part in path.split("/")):
        return False
    return b"\0" not in data
