"""Limits, locations and settings: the bounded, explicit knobs of discovery and the cache,
and the repository's own defaults (``excerpt.toml``, ``[tool.excerpt]`` in ``pyproject.toml``).

Settings are parsed here from text (pure: the guarded reader in ``excerpt.discover.config``
supplies the text) and layered CLI flag > ``excerpt.toml`` > ``pyproject.toml`` > default.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from excerpt.core.limits import DEFAULT_BUDGET
from excerpt.errors import CacheFault, UsageError

if TYPE_CHECKING:
    import pydantic

    from excerpt.core.settings_file import FileSettings

__all__ = [
    "INDEX_DB",
    "SETTING_KEYS",
    "Limits",
    "Settings",
    "cache_root",
    "parse_settings",
    "refuse_cache_inside",
    "repo_cache_dir",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Discovery and reading limits; every one that is hit is reported."""

    max_file_bytes: int = 2 * 1024 * 1024
    max_files: int = 200_000
    max_total_bytes: int = 2 * 1024 * 1024 * 1024
    binary_prefix_bytes: int = 8192

    def __post_init__(self) -> None:
        if min(self.max_file_bytes, self.max_files, self.max_total_bytes) <= 0:
            raise ValueError("limits must be positive")
        if self.binary_prefix_bytes <= 0:
            raise ValueError("binary_prefix_bytes must be positive")


def cache_root() -> Path:
    """``$EXCERPT_CACHE_DIR`` if set, else the user cache directory for excerpt.

    Raises:
        CacheFault: ``EXCERPT_CACHE_DIR`` names a home directory that cannot be found.
    """
    configured = os.environ.get("EXCERPT_CACHE_DIR")
    if configured:
        try:
            return Path(configured).expanduser().absolute()
        except (RuntimeError, OSError) as exc:  # "~nobody-here/…", or no working directory
            raise CacheFault(f"EXCERPT_CACHE_DIR cannot be used: {configured}: {exc}") from None
    import platformdirs  # only where no cache directory is named

    return Path(platformdirs.user_cache_dir("excerpt", appauthor=False))


def repo_cache_dir(root: Path, base: Path | None = None) -> Path:
    """The cache directory of one repository: keyed by its resolved absolute path.

    Raises:
        CacheFault: the cache would lie inside the repository (excerpt never writes there).
    """
    top = base or cache_root()
    refuse_cache_inside(root, top)
    key = hashlib.sha256(os.fsencode(root)).hexdigest()[:20]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in root.name)[:40] or "root"
    return top / "repos" / f"{name}-{key}"


# the index's database file in a repository's cache directory (``repo_cache_dir``)
INDEX_DB = "index.sqlite3"


def refuse_cache_inside(root: Path, cache: Path) -> None:
    """Refuse a cache directory at or under the repository ``root``.

    Raises:
        CacheFault: ``cache`` (symlinks resolved) is ``root`` or lies under it.
    """
    where = Path(os.path.realpath(cache))
    repo = Path(os.path.realpath(root))
    if where == repo or where.is_relative_to(repo):
        raise CacheFault(
            f"the cache directory {cache} lies inside the repository {root}, and excerpt never "
            "writes inside a repository: set EXCERPT_CACHE_DIR to a directory outside it"
        )


# -- the repository's settings --------------------------------------------------------------

SETTING_KEYS = ("budget", "exclude", "include")
Source = Literal["cli", "excerpt.toml", "pyproject.toml", "default"]
_PYPROJECT_TABLE = re.compile(r"^\s*\[+\s*tool\s*\.\s*excerpt\b", re.M)


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """The effective settings and, per key, where the value came from."""

    budget: int = DEFAULT_BUDGET
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    sources: tuple[tuple[str, Source], ...] = tuple((k, "default") for k in SETTING_KEYS)
    files: tuple[str, ...] = field(default=())  # settings files that held keys, highest first

    def __post_init__(self) -> None:
        if {k for k, _ in self.sources} != set(SETTING_KEYS):
            raise ValueError("every setting needs exactly one source")

    def source(self, key: str) -> Source:
        return dict(self.sources)[key]

    def layered(
        self,
        source: Source,
        *,
        budget: int | None = None,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
    ) -> Settings:
        """These settings with the given (non-None) values taken from ``source``."""
        given = {"budget": budget, "include": include, "exclude": exclude}
        values: dict[str, Any] = {
            k: (tuple(v) if isinstance(v, list | tuple) else v)
            for k, v in given.items()
            if v is not None
        }
        if not values:
            return self
        sources = tuple((k, source if k in values else s) for k, s in self.sources)
        return replace(self, sources=sources, **values)

    def to_dict(self) -> dict[str, Any]:
        """``{key: {"value", "source"}}`` for every setting (``excerpt config --json``)."""
        values = {
            "budget": self.budget,
            "include": list(self.include),
            "exclude": list(self.exclude),
        }
        return {k: {"value": values[k], "source": self.source(k)} for k in SETTING_KEYS}


def parse_settings(*, excerpt_toml: str | None, pyproject: str | None) -> Settings:
    """The settings the two files' texts give (None: the file is absent), layered.

    ``excerpt.toml`` holds the keys at its top level; ``pyproject.toml`` under
    ``[tool.excerpt]``. A ``pyproject.toml`` that is not valid TOML is ignored unless it
    seems to hold a ``[tool.excerpt]`` table (it is the project's file, not excerpt's).

    Raises:
        UsageError: invalid TOML or a key that is unknown or of the wrong type or range,
            naming the file and the key.
    """
    settings = Settings()
    found: list[str] = []
    if pyproject is not None:
        table = _pyproject_table(pyproject)
        if table is not None:
            settings = _layer(settings, "pyproject.toml", table, "pyproject.toml [tool.excerpt]")
            found.append("pyproject.toml")
    if excerpt_toml is not None:
        settings = _layer(
            settings, "excerpt.toml", _toml(excerpt_toml, "excerpt.toml"), "excerpt.toml"
        )
        found.insert(0, "excerpt.toml")
    return replace(settings, files=tuple(found))


def _loads(text: str) -> dict[str, Any]:
    """Parsed TOML.

    Raises:
        ValueError: not TOML, or nested past the parser's depth (its RecursionError).
    """
    try:
        import tomllib

        return tomllib.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _toml(text: str, where: str) -> dict[str, Any]:
    try:
        return _loads(text)
    except ValueError as exc:  # TOMLDecodeError is a ValueError
        raise UsageError(f"{where} is not valid TOML: {exc}") from None


def _pyproject_table(text: str) -> dict[str, Any] | None:
    try:
        doc = _loads(text)
    except ValueError as exc:
        if _PYPROJECT_TABLE.search(text):
            raise UsageError(f"pyproject.toml is not valid TOML: {exc}") from None
        log.debug("pyproject.toml is not valid TOML and has no [tool.excerpt]: ignored")
        return None
    tool = doc.get("tool")
    if not isinstance(tool, dict) or "excerpt" not in tool:
        return None
    table = tool["excerpt"]
    if not isinstance(table, dict):
        raise UsageError("pyproject.toml: tool.excerpt must be a table ([tool.excerpt])")
    return table


def _validated(table: dict[str, Any]) -> FileSettings:
    """``table`` checked by the settings file's schema. pydantic is imported only here: most
    repositories have no settings, and every run would pay for the import.

    Raises:
        pydantic.ValidationError: a key is unknown or of the wrong type or range.
    """
    from excerpt.core.settings_file import FileSettings

    return FileSettings.model_validate(table)


def _layer(settings: Settings, source: Source, table: dict[str, Any], where: str) -> Settings:
    try:
        parsed = _validated(table)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise UsageError(_validation_message(exc, where)) from None
    return settings.layered(
        source, budget=parsed.budget, include=parsed.include, exclude=parsed.exclude
    )


def _validation_message(exc: ValueError, where: str) -> str:
    problems = []
    for error in cast("pydantic.ValidationError", exc).errors(include_url=False):
        loc = error["loc"]
        key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
        key = key if len(key) <= 60 else key[:57] + "..."  # a key is the file's text: keep it short
        if error["type"] == "extra_forbidden":
            hint = ""
            if where == "excerpt.toml" and key == "tool":
                hint = "; excerpt.toml holds its keys at the top level, without [tool.excerpt]"
            known = ", ".join(SETTING_KEYS)
            problems.append(f"unknown key {key!r} (known keys: {known}){hint}")
        else:
            message = str(error["msg"]).removeprefix("Value error, ")
            problems.append(f"{key}: {message}")
    return f"{where}: " + "; ".join(problems)
