"""Corpora shipped with the package: fixtures, cases and thresholds, validated on load."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from excerpt.errors import UsageError
from excerpt.risk import concept_names

__all__ = [
    "ContextCase",
    "ContextCorpus",
    "HarnessCase",
    "HarnessCorpus",
    "HarnessExpected",
    "RetrievalCase",
    "RetrievalCorpus",
    "RiskCase",
    "RiskCorpus",
    "load_corpus",
    "materialise",
]

_STRICT = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class RetrievalCase(BaseModel):
    model_config = _STRICT
    id: str
    repo_fixtures: list[str] = Field(alias="repoFixtures", min_length=1)
    task: str = Field(min_length=1)
    expected_primary: list[str] = Field(alias="expectedPrimary")
    expected_any_of: list[str] = Field(alias="expectedAnyOf", default_factory=list)
    tags: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)


class RetrievalCorpus(BaseModel):
    model_config = _STRICT
    suite: str
    k: int = Field(ge=1)
    budget: int = Field(ge=0)
    thresholds: dict[str, float]
    cases: list[RetrievalCase]


class ContextCase(BaseModel):
    model_config = _STRICT
    id: str
    category: str
    repo_fixtures: list[str] = Field(alias="repoFixtures", min_length=1)
    task: str = Field(min_length=1)
    changed: list[str] = Field(default_factory=list)
    expected_files: list[str] = Field(alias="expectedFiles", min_length=1)
    expected_lines: dict[str, list[list[int]]] = Field(alias="expectedLines")


class ContextCorpus(BaseModel):
    model_config = _STRICT
    suite: str
    budget: int = Field(ge=0)
    thresholds: dict[str, float]
    cases: list[ContextCase]


class HarnessExpected(BaseModel):
    """One command a case expects: exact string, group, kind and directory; ``evidence`` names
    files (without line) that must be among the command's cited evidence."""

    model_config = _STRICT
    group: Literal["setup", "validate"]
    kind: Literal["install", "test", "typecheck", "lint", "build"]
    command: str = Field(min_length=1)
    directory: str = Field(default=".", min_length=1)
    evidence: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _group_matches_kind(self) -> Self:
        if (self.group == "setup") != (self.kind == "install"):
            raise ValueError("install commands are setup, every other kind is validate")
        return self


class HarnessCase(BaseModel):
    """Expected (and, in ``unexpected``, excluded) commands for one fixture; ``execute`` runs
    the expected commands in a temporary copy."""

    model_config = _STRICT
    id: str
    repo_fixtures: list[str] = Field(alias="repoFixtures", min_length=1)
    expected: list[HarnessExpected] = Field(min_length=1)
    unexpected: list[HarnessExpected] = Field(default_factory=list)
    execute: bool = False


class HarnessCorpus(BaseModel):
    model_config = _STRICT
    suite: str
    thresholds: dict[str, float]
    cases: list[HarnessCase]


class RiskCase(BaseModel):
    """A path or a task text, and the exact set of risk concepts a reviewer expects."""

    model_config = _STRICT
    id: str
    path: str | None = Field(default=None, min_length=1)
    query: str | None = Field(default=None, min_length=1)
    expected: list[str]
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _path_or_query(self) -> Self:
        if (self.path is None) == (self.query is None):
            raise ValueError("a risk case has a path or a query, exactly one")
        return self

    @field_validator("expected")
    @classmethod
    def _known_concepts(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(concept_names()))
        if unknown:
            raise ValueError(f"unknown risk concepts: {', '.join(unknown)}")
        return value


class RiskCorpus(BaseModel):
    model_config = _STRICT
    suite: str
    description: str = ""
    thresholds: dict[str, float]
    cases: list[RiskCase] = Field(min_length=1)


def _data(name: str) -> Any:
    text = resources.files("excerpt.evals").joinpath("data", name).read_text("utf-8")
    return json.loads(text)


def load_corpus(name: str, model: type[BaseModel]) -> Any:
    """A corpus file from the package, validated.

    Raises:
        UsageError: the corpus is missing or malformed (names the field, not the value).
    """
    try:
        return model.model_validate(_data(name))
    except (OSError, ValueError) as exc:
        if isinstance(exc, ValidationError):
            where = sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()})[:5]
            raise UsageError(f"corpus {name} is malformed at {', '.join(where)}") from None
        raise UsageError(f"corpus {name} cannot be read: {type(exc).__name__}") from None


def materialise(fixtures: Sequence[str], into: Path | None = None) -> Path:
    """Write fixtures into a fresh directory: one at its root, several as subdirectories.

    Raises:
        UsageError: a fixture is missing or holds a path that would leave the directory.
    """
    root = Path(into or tempfile.mkdtemp(prefix="excerpt-eval-")) / "workspace"
    for name in fixtures:
        files = _data(f"fixtures/{name}.json")["files"]
        base = root if len(fixtures) == 1 else root / name
        for rel, text in sorted(files.items()):
            if rel.startswith("/") or ".." in rel.split("/"):
                raise UsageError(f"fixture {name} has a path outside its tree")
            path = base / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    os.utime(root)
    return root
