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
from typing import Any

from excerpt.errors import UsageError
from excerpt.gate.rules import GateRules

__all__ = ["Policy", "PolicySource", "parse_policy"]


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

    rules: GateRules = field(default_factory=GateRules)
    source: PolicySource = field(default_factory=lambda: PolicySource(file=None, commit=None))

    def severity(self, check: str) -> str:
        return self.rules.severity.get(check, "fail")

    def to_dict(self) -> dict[str, Any]:
        doc = self.rules.to_dict()
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
        from excerpt.gate.policy_schema import validated

        try:
            rules = validated(table)
        except ValueError as exc:  # pydantic's ValidationError
            raise UsageError(_message(exc, name, commit)) from None
        return Policy(rules=rules, source=PolicySource(file=name, commit=commit))
    return Policy(source=PolicySource(file=None, commit=commit))


def _tool_gate(doc: dict[str, Any]) -> Any:
    tool = doc.get("tool")
    excerpt = tool.get("excerpt") if isinstance(tool, dict) else None
    return excerpt.get("gate") if isinstance(excerpt, dict) else None


def _message(exc: ValueError, name: str, commit: str | None) -> str:
    import pydantic

    problems = []
    errors = exc.errors(include_url=False) if isinstance(exc, pydantic.ValidationError) else []
    for error in errors:
        key = ".".join(str(p) for p in error["loc"])[:60]
        if error["type"] == "extra_forbidden":
            problems.append(f"unknown key gate.{key}")
        else:
            problems.append(f"gate.{key}: {str(error['msg']).removeprefix('Value error, ')}")
    return f"{name} at {(commit or '')[:12]}: " + "; ".join(problems)
