"""What harness inference returns: commands in two groups, each with evidence and confidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["GROUP_OF", "KINDS", "Command", "Harness", "Kind"]

Kind = Literal["install", "test", "typecheck", "lint", "build"]
KINDS: tuple[Kind, ...] = ("install", "test", "typecheck", "lint", "build")
GROUP_OF: dict[str, str] = {
    "install": "setup",
    "test": "validate",
    "typecheck": "validate",
    "lint": "validate",
    "build": "validate",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Command:
    """One inferred command, to be run from ``directory`` (repository-relative, ``.`` = root).

    ``evidence`` holds ``file:line`` places (repository-relative) that support it;
    ``confidence`` is in [0, 1]: how sure the inference is that this is how the project does it.
    """

    command: str
    kind: Kind
    directory: str = "."
    tool: str
    evidence: tuple[str, ...]
    confidence: float

    @property
    def group(self) -> str:
        return GROUP_OF[self.kind]

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "kind": self.kind,
            "directory": self.directory,
            "tool": self.tool,
            "evidence": list(self.evidence),
            "confidence": round(self.confidence, 2),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Harness:
    """Inferred setup and validate commands, in a stable order."""

    commands: tuple[Command, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def setup(self) -> tuple[Command, ...]:
        return tuple(c for c in self.commands if c.group == "setup")

    @property
    def validate(self) -> tuple[Command, ...]:
        return tuple(c for c in self.commands if c.group == "validate")

    def to_dict(self) -> dict[str, Any]:
        return {
            "setup": [c.to_dict() for c in self.setup],
            "validate": [c.to_dict() for c in self.validate],
            "notes": list(self.notes),
        }
