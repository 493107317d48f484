"""The arms of a session benchmark and one task's sessions, one per arm, on one tree.

A baseline arm explores with its client's own tools alone; an excerpt arm starts from
``context_pack`` at its client's default budget (``excerpt_arm``), then goes on with the
same tools, and pays the tool definitions excerpt adds to every model request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from excerpt.evals.session.agents import ClaudeTools, CodexTools, Tools, explore
from excerpt.evals.session.excerpt_arm import Packs, run_excerpt_arm
from excerpt.evals.session.ledger import Evidence, Ledger, SessionResult, Stop
from excerpt.evals.session.terms import search_plan
from excerpt.evals.session.workspace import Corpus
from excerpt.mcp.clients import profile_for

__all__ = ["ARMS", "Arm", "arm_named", "run_sessions"]

ClientName = Literal["claude", "codex"]
_PROFILE = {"claude": "claude-code", "codex": "codex-mcp-client"}
_TOOL_PREFIX = {"claude": "mcp__excerpt__", "codex": "excerpt."}


@dataclass(frozen=True, slots=True, kw_only=True)
class Arm:
    name: str
    client: ClientName
    excerpt: bool
    fill: bool = True


ARMS: tuple[Arm, ...] = (
    Arm(name="claude-baseline", client="claude", excerpt=False),
    Arm(name="codex-baseline", client="codex", excerpt=False),
    Arm(name="claude-excerpt", client="claude", excerpt=True),
    Arm(name="codex-excerpt", client="codex", excerpt=True),
    Arm(name="claude-excerpt-short", client="claude", excerpt=True, fill=False),
    Arm(name="codex-excerpt-short", client="codex", excerpt=True, fill=False),
)


def arm_named(name: str) -> Arm:
    for arm in ARMS:
        if arm.name == name:
            return arm
    raise KeyError(name)


def run_sessions(
    task: str,
    corpus: Corpus,
    evidence: Evidence,
    packs: Packs,
    *,
    arms: Sequence[Arm] = ARMS,
    cap: int,
    overhead: Mapping[str, int],
    count: Callable[[str], int],
) -> dict[str, SessionResult]:
    """Each arm's session of ``task``; ``overhead`` is the tokens excerpt's tool definitions
    take in each client's model request."""
    plan = search_plan(task)
    out: dict[str, SessionResult] = {}
    for arm in arms:
        ledger = Ledger(
            arm=arm.name, evidence=evidence, cap=cap, count=count,
            overhead=overhead[arm.client] if arm.excerpt else 0,
        )  # fmt: skip
        tools: Tools = (ClaudeTools if arm.client == "claude" else CodexTools)(corpus, ledger)
        try:
            priority: list[str] = []
            if arm.excerpt:
                priority = run_excerpt_arm(
                    packs, profile_for(_PROFILE[arm.client]), corpus, ledger, task=task,
                    fill=arm.fill, tool_prefix=_TOOL_PREFIX[arm.client],
                )  # fmt: skip
            explore(plan, tools, priority)
        except Stop:
            pass
        out[arm.name] = ledger.result()
    return out
