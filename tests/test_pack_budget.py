"""The budget is a hard, truthful limit (SPEC §4): a pack's bytes are the bytes of its
lines and never exceed the budget, and every region the plan ranks is packed or listed as
omitted with why."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from pack_repos import TASKS
from packs import Doc, file_lines, lines_bytes, pack_of, plan_of


def _covered(entries: list[Doc], path: str, line: int) -> bool:
    return any(
        e["path"] == path and e.get("start_line", 0) <= line <= e.get("end_line", 0)
        for e in entries
    )


def _check_budget_truth(repo: Path, pack: Doc, plan: Doc, budget: int) -> None:
    items, omitted = pack["items"], pack["omitted"]
    assert pack["budget"]["bytes"] == budget
    assert pack["budget"]["used_bytes"] <= budget
    assert pack["budget"]["used_bytes"] == sum(i["bytes"] for i in items)
    for item in items:
        assert item["bytes"] == len(item["text"].encode("utf-8"))
        lines = file_lines(repo, item["path"])
        assert item["text"].encode() == b"".join(lines[item["start_line"] - 1 : item["end_line"]])
        assert item["truncated"] is (item["kind"] == "fragment")
    # excerpts of one file never overlap: overlapping regions merge
    spans: dict[str, list[tuple[int, int]]] = {}
    for item in items:
        spans.setdefault(item["path"], []).append((item["start_line"], item["end_line"]))
    for ranges in spans.values():
        ordered = sorted(ranges)
        assert all(a[1] < b[0] for a, b in itertools.pairwise(ordered)), ordered
    for entry in omitted:
        if entry["reason"] == "budget":
            assert "bytes_needed" in entry and "score" in entry, entry
            size = lines_bytes(repo, entry["path"], entry["start_line"], entry["end_line"])
            assert entry["bytes_needed"] == size, entry
    accounted = [
        o for o in omitted if o["reason"] in ("budget", "secret", "too_small", "duplicate")
    ]
    for cand in plan["candidates"]:
        for line in range(cand["start_line"], cand["end_line"] + 1):
            assert _covered(items, cand["path"], line) or _covered(accounted, cand["path"], line), (
                f"{cand['path']}:{line} ranked but neither packed nor listed as omitted"
            )


@pytest.mark.parametrize(
    "budget", [200, 500, 1000, 2000, 5000, 10000, 32000, 100000, 200000], ids=str
)
def test_budget_is_a_hard_truthful_limit_and_every_ranked_region_is_accounted_for(
    repos: dict[str, Path], cache_dir: Path, budget: int
) -> None:
    truncated = 0
    for name, tasks in TASKS.items():
        for task in tasks:
            pack = pack_of(repos[name], task, cache_dir, budget)
            plan = plan_of(repos[name], task, cache_dir)
            assert plan["candidates"], task
            _check_budget_truth(repos[name], pack, plan, budget)
            truncated += sum(i["truncated"] for i in pack["items"])
            if budget >= 100_000:  # room for everything: nothing left out for budget but
                # files below the confidence floor, which the pack says it stopped short of
                left = [o for o in pack["omitted"] if o["reason"] == "budget"]
                assert all("confidence" in o for o in left), task
                assert bool(left) == ("stopped_short" in pack["budget"]), task
    if budget <= 500:
        assert truncated, "a tight budget should cut at least one region into a fragment"


def test_budget_zero_gives_no_items_and_omits_everything(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    for name, tasks in TASKS.items():
        for task in tasks:
            pack = pack_of(repos[name], task, cache_dir, 0)
            plan = plan_of(repos[name], task, cache_dir)
            assert pack["items"] == []
            assert pack["budget"] == {"bytes": 0, "used_bytes": 0}
            _check_budget_truth(repos[name], pack, plan, 0)
            assert {c["path"] for c in plan["candidates"]} <= {o["path"] for o in pack["omitted"]}


def test_plan_sizes_are_the_bytes_of_their_lines_less_secret_lines(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    for name, tasks in TASKS.items():
        for task in tasks:
            plan = plan_of(repos[name], task, cache_dir)
            secret = {
                (o["path"], n)
                for o in plan["omitted"]
                if o["reason"] == "secret"
                for n in range(o["start_line"], o["end_line"] + 1)
            }
            for cand in plan["candidates"]:
                size = sum(
                    lines_bytes(repos[name], cand["path"], n, n)
                    for n in range(cand["start_line"], cand["end_line"] + 1)
                    if (cand["path"], n) not in secret
                )
                assert cand["bytes"] == size, cand
