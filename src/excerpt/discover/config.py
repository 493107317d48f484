"""The repository's own configuration files, read through the guarded reader.

In: a resolved root. Out: the ``Settings`` of ``excerpt.toml`` and ``[tool.excerpt]`` in
``pyproject.toml``, and the lines of ``.excerptignore``, all at the root. Like any workspace
file they are never opened through a symlink that leaves the root, and never written.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from excerpt.core.settings import Limits, Settings, parse_settings
from excerpt.discover.ignore import pattern_problem, split_lines
from excerpt.discover.reader import FileContent, read_file
from excerpt.errors import UsageError

__all__ = ["EXCERPTIGNORE", "read_excerptignore", "read_settings"]

EXCERPTIGNORE = ".excerptignore"
log = logging.getLogger(__name__)


def read_settings(root: Path, limits: Limits | None = None) -> Settings:
    """The settings files' values layered over the defaults (no CLI flags yet).

    Raises:
        UsageError: a settings file is invalid or cannot be read safely (naming it).
    """
    limits = limits or Limits()
    own = _read_text(root, "excerpt.toml", limits)
    try:
        pyproject = _read_text(root, "pyproject.toml", limits)
    except UsageError as exc:
        # the project's file, not excerpt's: one that cannot be read safely holds no settings
        log.warning("%s; its [tool.excerpt] table, if any, is not used", exc.message)
        pyproject = None
    return parse_settings(excerpt_toml=own, pyproject=pyproject)


def read_excerptignore(root: Path, limits: Limits | None = None) -> tuple[str, ...] | None:
    """The lines of the root's ``.excerptignore`` (gitignore syntax), or None without one.

    Raises:
        UsageError: it exists but cannot be read safely, or a line is not a pattern.
    """
    text = _read_text(root, EXCERPTIGNORE, limits or Limits())
    if text is None:
        return None
    lines = tuple(os.fsdecode(line) for line in split_lines(os.fsencode(text)))
    for number, line in enumerate(lines, start=1):
        problem = pattern_problem(line)
        if problem is not None:
            raise UsageError(
                f"{EXCERPTIGNORE}:{number}: not a valid gitignore pattern: {line!r} ({problem})"
            )
    return lines


def _read_text(root: Path, name: str, limits: Limits) -> str | None:
    """The UTF-8 text of root file ``name``; None when there is no such entry."""
    try:
        os.lstat(root / name)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"{name} cannot be read: {exc.strerror}") from None
    got = read_file(root, name, limits)
    if not isinstance(got, FileContent):
        raise UsageError(
            f"{name} is not read ({got.reason}): excerpt reads it only as a regular file"
            " inside the repository"
        )
    if got.binary or got.encoding not in ("utf-8", "utf-8-sig"):
        raise UsageError(f"{name} cannot be read (not UTF-8 text)")
    return got.data.decode("utf-8-sig")
