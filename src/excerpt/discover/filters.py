"""Which listed paths the user left out of the workspace.

In: a root (its ``include``/``exclude`` settings and its ``.excerptignore``) and the CLI's
``--include``/``--exclude`` globs. Out: a ``PathFilter`` that splits a listing into kept paths
and excluded ones (discovery omits those with reason ``excluded``). Every glob is
gitignore-style and relative to the root; ``.excerptignore`` lines come first, then the
``exclude`` globs, so a later ``!pattern`` re-includes. With ``include`` globs, only paths
matching one of them are kept. Globs match as git matches an exclude file at the root
(``excerpt.discover.ignore``): a path under a directory they match is matched too, and a later
``!pattern`` cannot bring back a file below a matched directory. Never opens a file itself
(``excerpt.discover.config`` reads).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from excerpt.core.settings import Limits
from excerpt.discover.config import read_excerptignore, read_settings
from excerpt.discover.ignore import IgnoreRules

__all__ = ["FilterOverrides", "PathFilter", "overriding_filters", "repository_filter"]

T = TypeVar("T")
_Verdicts = tuple[dict[bytes, bool], dict[bytes, bool]]  # include, exclude: per directory


@dataclass(frozen=True, slots=True, kw_only=True)
class PathFilter:
    """Include and exclude globs, compiled once."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    _include: IgnoreRules | None = field(init=False, repr=False, compare=False)
    _exclude: IgnoreRules | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compiled = {
            "_include": IgnoreRules.from_lines(self.include) if self.include else None,
            "_exclude": IgnoreRules.from_lines(self.exclude) if self.exclude else None,
        }
        for name, rules in compiled.items():
            object.__setattr__(self, name, rules)

    def excludes(self, path: str, verdicts: _Verdicts | None = None) -> bool:
        """Whether workspace path ``path`` (POSIX, relative to the root) is left out;
        ``verdicts`` keeps what was found of directories, for the next path of a listing."""
        included, excluded = verdicts or (None, None)
        if self._include is not None and not self._include.ignores(path, included):
            return True
        return self._exclude is not None and self._exclude.ignores(path, excluded)

    def partition(self, listed: Iterable[tuple[str, T]]) -> tuple[list[tuple[str, T]], list[str]]:
        """``listed`` (path first) split into what is kept and the excluded paths (unique)."""
        if self._include is None and self._exclude is None:
            return list(listed), []
        kept: list[tuple[str, T]] = []
        dropped: dict[str, None] = {}
        verdicts: _Verdicts = ({}, {})
        for item in listed:
            if self.excludes(item[0], verdicts):
                dropped[item[0]] = None
            else:
                kept.append(item)
        return kept, list(dropped)


@dataclass(frozen=True, slots=True, kw_only=True)
class FilterOverrides:
    """Globs given for one run (``--include``/``--exclude``); None: use the settings'."""

    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None


_OVERRIDES: ContextVar[FilterOverrides | None] = ContextVar(
    "excerpt_filter_overrides", default=None
)


@contextmanager
def overriding_filters(
    *, include: Sequence[str] | None = None, exclude: Sequence[str] | None = None
) -> Iterator[None]:
    """Discovery inside this block uses these globs in place of the settings' ones.

    The CLI's seam into discovery: the pack and index entry points do not carry filters
    themselves, so one run's flags travel in a context variable, never in global state.
    """
    token = _OVERRIDES.set(
        FilterOverrides(
            include=None if include is None else tuple(include),
            exclude=None if exclude is None else tuple(exclude),
        )
    )
    try:
        yield
    finally:
        _OVERRIDES.reset(token)


def repository_filter(
    root: Path, limits: Limits | None = None, overrides: FilterOverrides | None = None
) -> PathFilter:
    """The filter discovery applies under ``root``: ``.excerptignore``, then the effective
    ``include``/``exclude`` (flags of this run > ``excerpt.toml`` > ``pyproject.toml``).

    Raises:
        UsageError: a settings file or ``.excerptignore`` is invalid or cannot be read safely.
    """
    given = overrides or _OVERRIDES.get() or FilterOverrides()
    settings = read_settings(root, limits).layered(
        "cli", include=given.include, exclude=given.exclude
    )
    ignored = read_excerptignore(root, limits) or ()
    return PathFilter(include=settings.include, exclude=(*ignored, *settings.exclude))
