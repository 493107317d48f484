"""The hook arms: a session whose first model request carries the prompt hook's seed.

The seed (what ``excerpt hook UserPromptSubmit`` injects, at most ``max_tokens`` o200k
tokens) is charged first, in the request the prompt opens: it is no tool call, and pays no
tool definitions again. A ``pack`` seed shows its regions' source; a ``map`` seed shows none,
so the agent reads the regions it names with its client's own read tool, in map order
(Claude: ``Read`` with ``offset`` and ``limit``; Codex: ``sed -n``), before it explores.
Without the MCP server the exploration follows (``agents.explore``), the seed's files first;
with it, ``excerpt_arm``'s steps come between.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from excerpt_bench.session.excerpt_arm import SeedAnswer, shown_lines
from excerpt_bench.session.ledger import Evidence, Ledger
from excerpt_bench.session.workspace import Corpus

__all__ = ["HOOK_SEED", "charge_seed", "map_reads", "seed_files", "seed_summary"]

HOOK_SEED = "hook:UserPromptSubmit"


def charge_seed(seed: SeedAnswer, corpus: Corpus, ledger: Ledger) -> None:
    """Charge the seed (when there is one) as the first thing in front of the model.
    ``Stop`` propagates: a seed may show every gold line."""
    if seed.text:
        shown = shown_lines(corpus, seed.regions) if seed.shape == "pack" else []
        ledger.charge(HOOK_SEED, {}, seed.text, shown, turn=False)


def seed_files(seed: SeedAnswer) -> list[str]:
    """The files a seed served or pointed at, in its order."""
    return list(dict.fromkeys(r.path for r in seed.regions))


def map_reads(seed: SeedAnswer) -> list[tuple[str, int, int]]:
    """The reads a map asks for (none for a pack, whose source is in front of the model)."""
    if seed.shape != "map":
        return []
    return [(r.path, r.start_line, r.end_line) for r in seed.regions]


def seed_summary(
    seed: SeedAnswer, evidence: Evidence, count: Callable[[str], int]
) -> dict[str, Any]:
    """What a session's row says of its seed: shape, size, and the gold lines its regions
    hold (shown by a pack, pointed at by a map)."""
    lines = {(r.path, n) for r in seed.regions for n in range(r.start_line, r.end_line + 1)}
    gold = len(lines & evidence.lines)
    return {
        "shape": seed.shape,
        "tokens": count(seed.text) if seed.text else 0,
        "confidence": round(seed.confidence, 4),
        "regions": len(seed.regions),
        "gold_lines_in_regions": gold,
        "why": seed.why,
    }
