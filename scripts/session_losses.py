"""Where excerpt loses in a ``bench session`` run: the tasks where a baseline arm showed every
gold changed line in fewer tokens than an excerpt arm, classified by cause.

    python scripts/session_losses.py OUT/details.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

EXCERPT_TOOLS = ("context_pack", "context_retrieve")


def cause(session: dict[str, object]) -> str:
    calls = session["calls"]
    assert isinstance(calls, list)
    from_excerpt = sum(c["new_gold_lines"] for c in calls if str(c["tool"]).endswith(EXCERPT_TOOLS))
    evidence = session["evidence"]
    if from_excerpt == evidence:
        return "the packs showed every gold line, at more tokens than the baseline's search"
    if from_excerpt:
        return "the packs showed some gold lines; the rest cost the fallback search"
    return "the packs showed no gold line (gold file missed); the fallback search paid it all"


def main(path: str) -> int:
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
    for arm in ("claude-excerpt", "codex-excerpt"):
        causes: Counter[str] = Counter()
        for row in rows:
            s = row["sessions"]
            if arm not in s or s[arm]["evidence"] == 0:
                continue
            ours = s[arm]["tokens_to_all_gold_censored"]
            reached = [b for b in s if b.endswith("-baseline") and s[b]["reached_all"]]
            best = min((s[b]["tokens_to_all_gold_censored"] for b in reached), default=None)
            if best is not None and best < ours:  # a baseline reached every line, for less
                causes[cause(s[arm])] += 1
        total = sum(causes.values())
        print(f"{arm}: a baseline reached every gold line for less on {total} of {len(rows)}")
        for text, n in causes.most_common():
            print(f"  {n:4d}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
