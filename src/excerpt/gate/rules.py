"""The gate's rules as records: what a ``[gate]`` table holds, with the defaults where it is
silent. Pure values: the policy reads them, and the schema of a written table
(``excerpt.gate.policy_schema``) builds them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = [
    "CHECK_IDS",
    "DEFAULT_MIN_CONVERGENCE",
    "GateRules",
    "SchemaRules",
    "SecretsRules",
    "Severity",
    "VersionRules",
]

CHECK_IDS = ("secrets", "schema", "version", "validation", "ownership", "convergence")
DEFAULT_MIN_CONVERGENCE = 0.5
Severity = Literal["fail", "warn", "off"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SecretsRules:
    allow_paths: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaRules:
    require: tuple[str, ...] = ("rollback",)
    marker: str = "excerpt: schema-reviewed"


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionRules:
    changelog: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GateRules:
    """The ``[gate]`` table's values (the defaults where it is silent). The schema that
    checks a written table is ``excerpt.gate.policy_schema``: pydantic loads only when a
    repository has a policy."""

    min_convergence: float = DEFAULT_MIN_CONVERGENCE
    validation: tuple[str, ...] = ()
    severity: dict[str, str] = field(default_factory=lambda: dict.fromkeys(CHECK_IDS, "fail"))
    secrets: SecretsRules = field(default_factory=SecretsRules)
    schema_: SchemaRules = field(default_factory=SchemaRules)
    version: VersionRules = field(default_factory=VersionRules)

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["schema"] = doc.pop("schema_")
        lists = {"validation": None, "secrets": "allow_paths", "schema": "require",
                 "version": "changelog"}  # fmt: skip
        for key, sub in lists.items():
            if sub is None:
                doc[key] = list(doc[key])
            else:
                doc[key][sub] = list(doc[key][sub])
        return {k: doc[k] for k in ("min_convergence", "validation", "severity", "secrets",
                                    "schema", "version")}  # fmt: skip
