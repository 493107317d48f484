"""The schema of a settings file (``excerpt.toml``, ``[tool.excerpt]``): untrusted input,
validated strictly. Imported only when a repository has settings (pydantic is slow to load).
"""

from __future__ import annotations

from typing import Annotated, Any

import pydantic

from excerpt.core.globs import glob_problem
from excerpt.core.limits import MAX_BUDGET, MIN_BUDGET

__all__ = ["FileSettings", "Glob"]


def _check_glob(pattern: str) -> str:
    problem = glob_problem(pattern)
    if problem:
        raise ValueError(problem)
    return pattern


Glob = Annotated[str, pydantic.AfterValidator(_check_glob)]


class FileSettings(pydantic.BaseModel):
    """One settings file's keys, as written; a key it does not know is an error."""

    model_config = pydantic.ConfigDict(extra="forbid", strict=True, frozen=True)

    budget: int | None = pydantic.Field(default=None, ge=MIN_BUDGET, le=MAX_BUDGET)
    include: list[Glob] | None = None
    exclude: list[Glob] | None = None
    # the gate's policy (``excerpt.gate.policy`` validates it, from the base commit only)
    gate: dict[str, Any] | None = None
