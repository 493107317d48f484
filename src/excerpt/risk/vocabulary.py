"""The vocabulary file ``concepts.json``: checked against its schema, compiled to rules.

Rule tokens are folded exactly as text is (``kubernetes`` → ``kubernete``), so both sides
meet; a token that no word could ever yield is refused on load, as is any unknown key.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from excerpt.core.hashing import sha256_hex
from excerpt.errors import EnvironmentFault
from excerpt.index.tokens import fold
from excerpt.risk.match import Rule, RuleIndex

__all__ = ["Concept", "PathParts", "Vocabulary", "load_vocabulary", "packaged_vocabulary"]

# The SHA-256 of the packaged concepts.json as checked against the schema
# (tests/test_risk.py fails when the file changes and this does not): the file as shipped
# is compiled without loading the schema; any other text is checked first.
PACKAGED_SHA256 = "474457197bf815a267cdc83c8102e60f11cd9bceb58ce5ade4f5f2e247b7e954"

Doc = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class PathParts:
    """A repository-relative POSIX path: its text for tokens, case-folded components."""

    text: str
    dirs: tuple[str, ...]
    basename: str


def _globs(patterns: Sequence[str]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(fnmatch.translate(p.casefold()) for p in patterns))


def _has_run(dirs: tuple[str, ...], runs: tuple[tuple[str, ...], ...]) -> bool:
    return any(
        dirs[i : i + len(run)] == run for run in runs for i in range(len(dirs) - len(run) + 1)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Concept:
    """One concept's path rules that are not token rules."""

    name: str
    gate_risk: bool
    sensitive: bool
    basenames: re.Pattern[str] | None
    dirs: tuple[tuple[str, ...], ...]
    exclude_basenames: re.Pattern[str] | None
    exclude_dirs: tuple[tuple[str, ...], ...]

    def excluded(self, path: PathParts) -> bool:
        """True when an exclusion vetoes this concept for ``path``."""
        named = self.exclude_basenames is not None and self.exclude_basenames.match(path.basename)
        return bool(named) or _has_run(path.dirs, self.exclude_dirs)

    def structural(self, path: PathParts) -> bool:
        """True when a basename glob or a directory run matches (no tokens involved)."""
        named = self.basenames is not None and self.basenames.match(path.basename)
        return bool(named) or _has_run(path.dirs, self.dirs)


@dataclass(frozen=True, slots=True, kw_only=True)
class Vocabulary:
    """The compiled vocabulary: concepts in file order and their token rules by side."""

    concepts: tuple[Concept, ...]
    path_rules: RuleIndex
    query_rules: RuleIndex


def _tokens(words: list[str]) -> Rule:
    return tuple(fold(w) for w in words)


def _rules(*groups: Doc) -> tuple[list[Rule], list[Rule]]:
    rules: list[Rule] = [(fold(t),) for g in groups for t in g.get("tokens", ())]
    rules += [_tokens(s) for g in groups for s in g.get("sequences", ())]
    return rules, [_tokens(m) for g in groups for m in g.get("mask", ())]


def _runs(runs: list[list[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(c.casefold() for c in run) for run in runs)


def _concept(doc: Doc) -> Concept:
    path: Doc = doc.get("path", {})
    exclude: Doc = path.get("exclude", {})
    return Concept(
        name=doc["name"],
        gate_risk=doc["gate_risk"],
        sensitive=path.get("sensitive", False),
        basenames=_globs(path.get("basenames", ())),
        dirs=_runs(path.get("dirs", [])),
        exclude_basenames=_globs(exclude.get("basenames", ())),
        exclude_dirs=_runs(exclude.get("dirs", [])),
    )


def _compile(doc: Doc) -> Vocabulary:
    """The rules of a document that conforms to the schema."""
    concepts: list[Doc] = doc["concepts"]
    return Vocabulary(
        concepts=tuple(_concept(c) for c in concepts),
        path_rules=RuleIndex.build([_rules(c, c.get("path", {})) for c in concepts]),
        query_rules=RuleIndex.build([_rules(c, c.get("query", {})) for c in concepts]),
    )


def load_vocabulary(text: str) -> Vocabulary:
    """Check and compile a vocabulary document; the packaged file as shipped is known good.

    Raises:
        EnvironmentFault: the document is not JSON or breaks the schema (names the places).
    """
    if sha256_hex(text.encode("utf-8")) != PACKAGED_SHA256:
        from excerpt.risk.vocabulary_schema import check_vocabulary

        check_vocabulary(text)
    return _compile(json.loads(text))


def _read_vocabulary() -> str:
    try:
        return resources.files("excerpt.risk").joinpath("concepts.json").read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvironmentFault(f"risk vocabulary cannot be read: {type(exc).__name__}") from None


@lru_cache(maxsize=1)
def packaged_vocabulary() -> Vocabulary:
    """The packaged vocabulary, loaded once.

    Raises:
        EnvironmentFault: it is missing or malformed (a broken installation).
    """
    return load_vocabulary(_read_vocabulary())
