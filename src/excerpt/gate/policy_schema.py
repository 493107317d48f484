"""The schema of a written gate policy: untrusted input (a repository's file at its base
commit), validated strictly; imported only when a repository has a policy (pydantic is slow
to load)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pydantic

from excerpt.core.settings_file import Glob as SettingsGlob
from excerpt.gate.rules import (
    CHECK_IDS,
    DEFAULT_MIN_CONVERGENCE,
    GateRules,
    SchemaRules,
    SecretsRules,
    VersionRules,
)

__all__ = ["validated"]


Glob = Annotated[SettingsGlob, pydantic.StringConstraints(max_length=500)]
Command = Annotated[str, pydantic.StringConstraints(min_length=1, max_length=1000)]
Severity = Literal["fail", "warn", "off"]


class _Strict(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", strict=True, frozen=True)


class _Severity(_Strict):
    secrets: Literal["fail", "warn"] = "fail"  # never off: allow paths instead
    schema_: Severity = pydantic.Field(default="fail", alias="schema")
    version: Severity = "fail"
    validation: Severity = "fail"
    ownership: Severity = "fail"
    convergence: Severity = "fail"


class _Secrets(_Strict):
    allow_paths: list[Glob] = pydantic.Field(default_factory=list, max_length=200)


Control = Literal["rollback", "marker", "tests"]


def _rollback() -> list[Control]:
    return ["rollback"]


class _Schema(_Strict):
    require: list[Control] = pydantic.Field(default_factory=_rollback, max_length=3)
    marker: str = pydantic.Field(default="excerpt: schema-reviewed", min_length=3, max_length=200)


class _Version(_Strict):
    changelog: list[Glob] = pydantic.Field(default_factory=list, max_length=200)


class _Gate(_Strict):
    min_convergence: float = pydantic.Field(default=DEFAULT_MIN_CONVERGENCE, ge=0.0, le=1.0)
    validation: list[Command] = pydantic.Field(default_factory=list, max_length=100)
    severity: _Severity = pydantic.Field(default_factory=_Severity)
    secrets: _Secrets = pydantic.Field(default_factory=_Secrets)
    schema_: _Schema = pydantic.Field(default_factory=_Schema, alias="schema")
    version: _Version = pydantic.Field(default_factory=_Version)


def validated(table: dict[str, Any]) -> GateRules:
    """The rules a ``[gate]`` table gives.

    Raises:
        pydantic.ValidationError: a key is unknown or of the wrong type or range.
    """
    if isinstance(table.get("min_convergence"), int) and not isinstance(
        table["min_convergence"], bool
    ):  # TOML's 1 is an integer; strict mode would refuse it as a float
        table = {**table, "min_convergence": float(table["min_convergence"])}
    gate = _Gate.model_validate(table)
    severity = gate.severity.model_dump(by_alias=True)
    return GateRules(
        min_convergence=gate.min_convergence,
        validation=tuple(gate.validation),
        severity={k: severity[k] for k in CHECK_IDS},
        secrets=SecretsRules(allow_paths=tuple(gate.secrets.allow_paths)),
        schema_=SchemaRules(require=tuple(gate.schema_.require), marker=gate.schema_.marker),
        version=VersionRules(changelog=tuple(gate.version.changelog)),
    )
