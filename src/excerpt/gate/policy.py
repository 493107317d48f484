"""The gate's policy: the ``[gate]`` table of ``excerpt.toml`` (or ``[tool.excerpt.gate]`` of
``pyproject.toml``), read from the base commit only, so a change cannot loosen its own gate.

Untrusted input, validated strictly (a key the schema does not know is an error)::

    [gate]
    min_convergence = 0.5            # share of changed source files with a test, 0..1
    validation = ["pytest -q"]       # the commands a run may be asked to validate with

    [gate.severity]                  # what a failing check reports: fail (default), warn, off
    ownership = "warn"               # secrets cannot be turned off, only allowed by path

    [gate.secrets]
    allow_paths = ["tests/fixtures/**"]   # findings there are reported, as WARN

    [gate.schema]
    require = ["rollback"]           # any of rollback, marker, tests
    marker = "excerpt: schema-reviewed"

    [gate.version]
    changelog = ["docs/releases/*.md"]    # more changelog globs beside the usual names
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import pydantic

from excerpt.core.settings import glob_problem
from excerpt.errors import UsageError

__all__ = [
    "CHECK_IDS",
    "DEFAULT_MIN_CONVERGENCE",
    "GatePolicy",
    "Policy",
    "PolicySource",
    "parse_policy",
]

CHECK_IDS = ("secrets", "schema", "version", "validation", "ownership", "convergence")
DEFAULT_MIN_CONVERGENCE = 0.5
Severity = Literal["fail", "warn", "off"]
Control = Literal["rollback", "marker", "tests"]


def _check_glob(pattern: str) -> str:
    problem = glob_problem(pattern)
    if problem:
        raise ValueError(problem)
    return pattern


_Glob = pydantic.constr(max_length=500)


class _Strict(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", strict=True, frozen=True)


class _Severity(_Strict):
    secrets: Literal["fail", "warn"] = "fail"
    schema_: Severity = pydantic.Field(default="fail", alias="schema")
    version: Severity = "fail"
    validation: Severity = "fail"
    ownership: Severity = "fail"
    convergence: Severity = "fail"


class _Secrets(_Strict):
    allow_paths: list[_Glob] = pydantic.Field(default_factory=list, max_length=200)  # type: ignore[valid-type]

    @pydantic.field_validator("allow_paths")
    @classmethod
    def _globs(cls, value: list[str]) -> list[str]:
        return [_check_glob(v) for v in value]


class _Schema(_Strict):
    require: list[Control] = pydantic.Field(
        default_factory=lambda: list[Control](["rollback"]), max_length=3
    )
    marker: str = pydantic.Field(default="excerpt: schema-reviewed", min_length=3, max_length=200)


class _Version(_Strict):
    changelog: list[_Glob] = pydantic.Field(default_factory=list, max_length=200)  # type: ignore[valid-type]

    @pydantic.field_validator("changelog")
    @classmethod
    def _globs(cls, value: list[str]) -> list[str]:
        return [_check_glob(v) for v in value]


class GatePolicy(_Strict):
    """The ``[gate]`` table, as written."""

    min_convergence: float = pydantic.Field(default=DEFAULT_MIN_CONVERGENCE, ge=0.0, le=1.0)
    validation: list[pydantic.constr(min_length=1, max_length=1000)] = pydantic.Field(  # type: ignore[valid-type]
        default_factory=list, max_length=100
    )
    severity: _Severity = pydantic.Field(default_factory=_Severity)
    secrets: _Secrets = pydantic.Field(default_factory=_Secrets)
    schema_: _Schema = pydantic.Field(default_factory=_Schema, alias="schema")
    version: _Version = pydantic.Field(default_factory=_Version)


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicySource:
    """Where the policy came from: a file at a commit, or the defaults."""

    file: str | None  # "excerpt.toml", "pyproject.toml", or None for the defaults
    commit: str | None

    def describe(self) -> str:
        if self.file is None:
            where = f"at {self.commit[:12]}" if self.commit else "(no base commit)"
            return f"defaults (no [gate] policy {where})"
        table = "[gate]" if self.file == "excerpt.toml" else "[tool.excerpt.gate]"
        return f"{self.file} {table} at {(self.commit or '')[:12]}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """The effective policy and its source."""

    rules: GatePolicy = field(default_factory=GatePolicy)
    source: PolicySource = field(default_factory=lambda: PolicySource(file=None, commit=None))

    def severity(self, check: str) -> str:
        attr = "schema_" if check == "schema" else check
        return str(getattr(self.rules.severity, attr))

    def to_dict(self) -> dict[str, Any]:
        doc = self.rules.model_dump(by_alias=True)
        return {
            "source": {"file": self.source.file, "commit": self.source.commit},
            "described": self.source.describe(),
            **doc,
        }


def parse_policy(*, excerpt_toml: str | None, pyproject: str | None, commit: str | None) -> Policy:
    """The policy the base commit's two files give (None: absent there): ``excerpt.toml``'s
    ``[gate]`` if it has one, else ``pyproject.toml``'s ``[tool.excerpt.gate]``, else the
    defaults.

    Raises:
        UsageError: a policy that is not valid TOML or breaks the schema, naming the file.
    """
    import tomllib

    for name, text in (("excerpt.toml", excerpt_toml), ("pyproject.toml", pyproject)):
        if text is None:
            continue
        try:
            doc = tomllib.loads(text)
        except (ValueError, RecursionError) as exc:
            if name == "pyproject.toml" and "excerpt" not in text:
                continue  # the project's file, with nothing of ours in it
            raise UsageError(f"{name} at {(commit or '')[:12]} is not valid TOML: {exc}") from None
        table = doc.get("gate") if name == "excerpt.toml" else _tool_gate(doc)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise UsageError(f"{name} at {(commit or '')[:12]}: the gate policy must be a table")
        try:
            rules = GatePolicy.model_validate(table)
        except pydantic.ValidationError as exc:
            raise UsageError(_message(exc, name, commit)) from None
        return Policy(rules=rules, source=PolicySource(file=name, commit=commit))
    return Policy(source=PolicySource(file=None, commit=commit))


def _tool_gate(doc: dict[str, Any]) -> Any:
    tool = doc.get("tool")
    excerpt = tool.get("excerpt") if isinstance(tool, dict) else None
    return excerpt.get("gate") if isinstance(excerpt, dict) else None


def _message(exc: pydantic.ValidationError, name: str, commit: str | None) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        key = ".".join(str(p) for p in error["loc"])[:60]
        if error["type"] == "extra_forbidden":
            problems.append(f"unknown key gate.{key}")
        else:
            problems.append(f"gate.{key}: {str(error['msg']).removeprefix('Value error, ')}")
    return f"{name} at {(commit or '')[:12]}: " + "; ".join(problems)
