"""The vocabulary file ``concepts.json``: validated once (pydantic, strict), compiled to rules.

Rule tokens are folded exactly as text is (``kubernetes`` → ``kubernete``), so both sides
meet; a token that no word could ever yield is refused on load, as is any unknown key.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from excerpt.errors import EnvironmentFault
from excerpt.index.tokens import fold, split_identifier
from excerpt.risk.match import Rule, RuleIndex

__all__ = ["Concept", "PathParts", "Vocabulary", "load_vocabulary", "packaged_vocabulary"]

_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)


def _one_token(value: str) -> str:
    if fold(value) not in split_identifier(value):
        raise ValueError(f"{value!r} is not a single token (see excerpt.index.tokens)")
    return fold(value)


Token = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+$"), AfterValidator(_one_token)]
Phrase = Annotated[list[Token], Field(min_length=2)]
MaskPhrase = Annotated[list[Token], Field(min_length=1)]
Component = Annotated[str, StringConstraints(pattern=r"^[^/\s]+$")]
DirRun = Annotated[list[Component], Field(min_length=1)]


class _Words(BaseModel):
    model_config = _STRICT
    tokens: list[Token] = []
    sequences: list[Phrase] = []
    mask: list[MaskPhrase] = []


class _Exclude(BaseModel):
    model_config = _STRICT
    basenames: list[Component] = []
    dirs: list[DirRun] = []


class _PathRules(_Words):
    basenames: list[Component] = []
    dirs: list[DirRun] = []
    sensitive: bool = False
    exclude: _Exclude = _Exclude()


class _Concept(_Words):
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    gate_risk: bool
    path: _PathRules = _PathRules()
    query: _Words = _Words()


class _Vocabulary(BaseModel):
    model_config = _STRICT
    version: Literal[1]
    description: str
    concepts: list[_Concept] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_names(self) -> _Vocabulary:
        names = [c.name for c in self.concepts]
        if len(set(names)) != len(names):
            raise ValueError("concept names must be unique")
        return self


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


def _rules(*groups: _Words) -> tuple[list[Rule], list[Rule]]:
    rules: list[Rule] = [(t,) for g in groups for t in g.tokens]
    rules += [tuple(s) for g in groups for s in g.sequences]
    return rules, [tuple(m) for g in groups for m in g.mask]


def _runs(runs: list[list[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(c.casefold() for c in run) for run in runs)


def _compile(model: _Vocabulary) -> Vocabulary:
    concepts = tuple(
        Concept(
            name=c.name,
            gate_risk=c.gate_risk,
            sensitive=c.path.sensitive,
            basenames=_globs(c.path.basenames),
            dirs=_runs(c.path.dirs),
            exclude_basenames=_globs(c.path.exclude.basenames),
            exclude_dirs=_runs(c.path.exclude.dirs),
        )
        for c in model.concepts
    )
    return Vocabulary(
        concepts=concepts,
        path_rules=RuleIndex.build([_rules(c, c.path) for c in model.concepts]),
        query_rules=RuleIndex.build([_rules(c, c.query) for c in model.concepts]),
    )


def load_vocabulary(text: str) -> Vocabulary:
    """Validate and compile a vocabulary document.

    Raises:
        EnvironmentFault: the document is not JSON or breaks the schema (names the places).
    """
    try:
        model = _Vocabulary.model_validate_json(text)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or 'document'}: {e['msg']}"
            for e in exc.errors()[:3]
        ]
        raise EnvironmentFault(f"risk vocabulary is malformed: {'; '.join(problems)}") from None
    return _compile(model)


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
