"""Corpora shipped with the package: fixtures, cases and thresholds, validated on load."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from excerpt.errors import UsageError

__all__ = [
    "ContextCase",
    "ContextCorpus",
    "RetrievalCase",
    "RetrievalCorpus",
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
