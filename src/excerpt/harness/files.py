"""The repository's files as harness inference sees them: listed safely, read safely, cited.

Every read goes through the guarded reader, so a sensitive or hostile file is never opened;
nothing is executed and nothing is written.
"""

from __future__ import annotations

import json
import re
import tomllib
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any

from excerpt.core.settings import Limits
from excerpt.discover import FileContent, discover, read_file

__all__ = ["RepoFiles"]

_MAX_MANIFEST_BYTES = 1024 * 1024
# JSON with comments (deno.jsonc, tsconfig.json): strings are kept whole, comments and the
# commas before a closing bracket go
_JSONC = re.compile(r'("(?:\\.|[^"\\\n])*")|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.S)


class RepoFiles:
    """A listing of the workspace plus cached, decoded reads of the files inference asks for."""

    def __init__(self, root: Path, limits: Limits | None = None) -> None:
        self.root = root
        self.limits = limits or Limits()
        found = discover(root, self.limits)
        self.paths: tuple[str, ...] = tuple(c.path for c in found.candidates)
        self.truncated = found.truncated
        self._texts: dict[str, str | None] = {}
        self.notes: list[str] = []  # what the readers left out and why, for the harness notes

    @cached_property
    def path_set(self) -> frozenset[str]:
        return frozenset(self.paths)

    def exists(self, rel: str) -> bool:
        return rel in self.path_set

    def text(self, rel: str) -> str | None:
        """The file's text, or None when it is absent, refused, binary or too large."""
        if rel not in self._texts:
            self._texts[rel] = self._read(rel) if rel in self.path_set else None
        return self._texts[rel]

    def _read(self, rel: str) -> str | None:
        got = read_file(self.root, rel, self.limits)
        if not isinstance(got, FileContent) or got.binary or got.size > _MAX_MANIFEST_BYTES:
            return None
        return got.data.decode("utf-8", "replace").removeprefix("\ufeff")

    def toml(self, rel: str) -> dict[str, Any] | None:
        """The parsed TOML document, or None when absent or malformed (never raises)."""
        text = self.text(rel)
        if text is None:
            return None
        try:
            return tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError):
            return None

    def json(self, rel: str, *, comments: bool = False) -> Any:
        """The parsed JSON document (with ``comments``: JSONC, as deno.jsonc and tsconfig.json
        allow), or None when absent or malformed (never raises)."""
        text = self.text(rel)
        if text is None:
            return None
        if comments:
            text = _JSONC.sub(lambda m: m.group(1) or "", text)
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            return None

    def line_of(self, rel: str, pattern: str, *, after: str | None = None) -> int:
        """1-based line of the first match of ``pattern`` (after the first match of ``after``
        when given); 1 when nothing matches, so evidence always names a real file."""
        text = self.text(rel) or ""
        lines = text.splitlines()
        start = 0
        if after is not None:
            anchor = re.compile(after)
            start = next((i for i, line in enumerate(lines) if anchor.search(line)), 0)
        regex = re.compile(pattern)
        for number in range(start, len(lines)):
            if regex.search(lines[number]):
                return number + 1
        return 1

    def cite(self, rel: str, pattern: str | None = None, *, after: str | None = None) -> str:
        """``file:line`` evidence for ``rel``."""
        line = 1 if pattern is None else self.line_of(rel, pattern, after=after)
        return f"{rel}:{line}"

    def in_dir(self, directory: str, name: str) -> str:
        """The repository-relative path of ``name`` inside ``directory`` (``.`` = root)."""
        return name if directory == "." else f"{directory}/{name}"

    def dir_of(self, rel: str) -> str:
        parent = str(PurePosixPath(rel).parent)
        return "." if parent in ("", ".") else parent
