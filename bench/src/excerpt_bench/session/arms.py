"""The arms of a session benchmark and one task's sessions, one per arm, on one tree.

A baseline arm explores with its client's own tools alone; an excerpt arm starts from
``context_pack`` at its client's default budget (``excerpt_arm``), then goes on with the
same tools, and pays the tool definitions excerpt adds to every model request. A hook arm
starts from the prompt hook's seed (``hooks_arm``; shape ``auto`` unless its name forces
``pack`` or ``map``) and pays no tool definitions: the MCP server is not registered, unless
the arm is ``*-hooks-mcp``, which has both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from excerpt.tooling import DEFAULT_SEED_TOKENS, Shape, profile_for
from excerpt_bench.session.agents import ClaudeTools, CodexTools, Tools, explore
from excerpt_bench.session.excerpt_arm import Packs, SeedAnswer, run_excerpt_arm
from excerpt_bench.session.hooks_arm import charge_seed, map_reads, seed_files, seed_summary
from excerpt_bench.session.ledger import Evidence, Ledger, SessionResult, Stop
from excerpt_bench.session.terms import search_plan
from excerpt_bench.session.workspace import Corpus

__all__ = ["ARMS", "Arm", "arm_named", "run_sessions"]

ClientName = Literal["claude", "codex"]
_PROFILE = {"claude": "claude-code", "codex": "codex-mcp-client"}
_TOOL_PREFIX = {"claude": "mcp__excerpt__", "codex": "excerpt."}


@dataclass(frozen=True, slots=True, kw_only=True)
class Arm:
    name: str
    client: ClientName
    excerpt: bool  # the MCP server is registered: its tool definitions ride every request
    fill: bool = True
    hook: Shape | None = None  # the prompt hook seeds the session, in this shape


ARMS: tuple[Arm, ...] = (
    Arm(name="claude-baseline", client="claude", excerpt=False),
    Arm(name="codex-baseline", client="codex", excerpt=False),
    Arm(name="claude-excerpt", client="claude", excerpt=True),
    Arm(name="codex-excerpt", client="codex", excerpt=True),
    Arm(name="claude-excerpt-short", client="claude", excerpt=True, fill=False),
    Arm(name="codex-excerpt-short", client="codex", excerpt=True, fill=False),
    Arm(name="claude-hooks", client="claude", excerpt=False, hook="auto"),
    Arm(name="codex-hooks", client="codex", excerpt=False, hook="auto"),
    Arm(name="claude-hooks-pack", client="claude", excerpt=False, hook="pack"),
    Arm(name="codex-hooks-pack", client="codex", excerpt=False, hook="pack"),
    Arm(name="claude-hooks-map", client="claude", excerpt=False, hook="map"),
    Arm(name="codex-hooks-map", client="codex", excerpt=False, hook="map"),
    Arm(name="claude-hooks-mcp", client="claude", excerpt=True, hook="auto"),
    Arm(name="codex-hooks-mcp", client="codex", excerpt=True, hook="auto"),
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
    seed_tokens: int = DEFAULT_SEED_TOKENS,
) -> dict[str, SessionResult]:
    """Each arm's session of ``task``; ``overhead`` is the tokens excerpt's tool definitions
    take in each client's model request, ``seed_tokens`` the hook's cap on its seed."""
    plan = search_plan(task)
    out: dict[str, SessionResult] = {}
    for arm in arms:
        ledger = Ledger(
            arm=arm.name, evidence=evidence, cap=cap, count=count,
            overhead=overhead[arm.client] if arm.excerpt else 0,
        )  # fmt: skip
        tools: Tools = (ClaudeTools if arm.client == "claude" else CodexTools)(corpus, ledger)
        seed: SeedAnswer | None = None
        if arm.hook is not None:
            seed = packs.seed(arm.client, shape=arm.hook, max_tokens=seed_tokens)
        try:
            priority: list[str] = []
            first: list[tuple[str, int, int]] = []
            if seed is not None:
                charge_seed(seed, corpus, ledger)
                priority = seed_files(seed)
                first = [] if arm.excerpt else map_reads(seed)
            if arm.excerpt:
                priority = run_excerpt_arm(
                    packs, profile_for(_PROFILE[arm.client]), corpus, ledger, task=task,
                    fill=arm.fill, tool_prefix=_TOOL_PREFIX[arm.client], seed=seed,
                )  # fmt: skip
            explore(plan, tools, priority, first)
        except Stop:
            pass
        result = ledger.result()
        if seed is not None:
            result = dataclasses.replace(result, seed=seed_summary(seed, evidence, count))
        out[arm.name] = result
    return out
