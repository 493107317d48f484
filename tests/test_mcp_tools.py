"""The MCP tool list as a client sees it, against a recorded snapshot.

Names, descriptions, input schemas and annotations are what an agent acts on: a change to
any of them must be deliberate. Regenerate the snapshot with
``EXCERPT_UPDATE_SNAPSHOTS=1 pytest tests/test_mcp_tools.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from excerpt.core.limits import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET
from excerpt.core.memo import memo_stats
from excerpt.mcp import CORE_TOOLS, build_server, listed_definitions
from excerpt.mcp.clients import profile_for
from excerpt.pack.prepare import MAX_BUDGET as PACK_MAX_BUDGET
from excerpt.pack.prepare import PackRequest

SNAPSHOT = Path(__file__).parent / "snapshots" / "mcp_tools.json"


def listed(repo: Path, cache: Path) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with Client(build_server(repo, cache, tools="all")) as client:
            tools = (await client.list_tools()).tools
            return {
                "instructions": client.instructions,
                "tools": {t.name: t.model_dump(mode="json", exclude_none=True) for t in tools},
            }

    return anyio.run(go)


def test_tool_list_matches_the_recorded_snapshot(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("x = 1\n", encoding="utf-8")
    got = listed(repo, tmp_path / "cache")
    text = json.dumps(got, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if os.environ.get("EXCERPT_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert text == SNAPSHOT.read_text(encoding="utf-8")


def test_every_budget_in_the_tool_schemas_has_the_library_limits(tmp_path: Path) -> None:
    tools = listed(tmp_path, tmp_path / "cache")["tools"]
    budgets = {
        name: tool["input_schema"]["properties"]["budget"]
        for name, tool in tools.items()
        if "budget" in tool["input_schema"]["properties"]
    }
    assert set(budgets) == {
        "context_pack", "context_plan", "context_retrieve", "context_expand", "context_handoff",
    }  # fmt: skip
    for name, budget in budgets.items():
        assert (budget["minimum"], budget["maximum"]) == (MIN_BUDGET, MAX_BUDGET), name
    assert PACK_MAX_BUDGET == MAX_BUDGET


def test_the_default_listing_is_the_core_tools_within_6000_bytes(tmp_path: Path) -> None:
    core, every = listed_definitions("core", tmp_path), listed_definitions("all", tmp_path)
    assert [t["name"] for t in json.loads(core)["tools"]] == list(CORE_TOOLS)
    assert len(json.loads(every)["tools"]) == 11
    # what a client that does not defer tools sends on every model turn
    assert len(core.encode("utf-8")) <= 6000 < len(every.encode("utf-8"))
    for tool in json.loads(every)["tools"]:  # one sentence that says when to call it
        assert tool["description"].startswith("Call "), tool["name"]
        assert tool["description"].count(". ") == 0, tool["name"]


def test_a_core_server_refuses_the_unlisted_tools_and_the_gate_keeps_unlisted_bounds(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")

    async def go() -> list[tuple[bool, str]]:
        async with Client(build_server(tmp_path, tmp_path / "cache")) as client:
            out = []
            for name, args in (
                ("gate_check", {}),
                ("context_pack", {"task": "x" * 200_001}),
                ("context_retrieve", {"handles": ["a.py#L1-L1"] * 201}),
            ):
                result = await client.call_tool(name, args)
                text = "".join(getattr(c, "text", "") for c in result.content)
                out.append((result.is_error is True, text))
            return out

    (gate, gate_text), (long_task, task_text), (many, many_text) = anyio.run(go)
    assert gate and "gate_check" in gate_text
    assert long_task and "task" in task_text
    assert many and "handles" in many_text


def test_the_default_budget_is_the_same_for_library_and_clients() -> None:
    assert PackRequest(repo=".", task="t").budget == DEFAULT_BUDGET
    assert profile_for(None).default_budget == DEFAULT_BUDGET
    assert profile_for("claude-code").default_budget == DEFAULT_BUDGET


@pytest.mark.parametrize("args", [{}, {"paths": ["a.py"], "query": "refund"}])
def test_risk_classify_without_exactly_one_input_names_the_tool_s_own_fields(
    tmp_path: Path, args: dict[str, Any]
) -> None:
    async def go() -> tuple[bool, str]:
        async with Client(build_server(tmp_path, tmp_path / "cache", tools="all")) as client:
            result = await client.call_tool("risk_classify", args)
            return result.is_error is True, "".join(getattr(c, "text", "") for c in result.content)

    is_error, text = anyio.run(go)
    assert is_error and "`paths` or `query`" in text and "--query" not in text


def test_index_status_reports_the_figures_of_every_process_cache(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def refund(order):\n    return order\n", encoding="utf-8")
    pack = {"task": "refund the order", "budget": 2000}

    async def go() -> tuple[CallToolResult, CallToolResult]:
        async with Client(build_server(repo, tmp_path / "cache", tools="all")) as client:
            await client.call_tool("context_pack", pack)
            before = await client.call_tool("index_status", {})
            await client.call_tool("context_pack", pack)
            return before, await client.call_tool("index_status", {})

    before, after = anyio.run(go)
    assert before.structured_content is not None and after.structured_content is not None
    first, then = before.structured_content["caches"], after.structured_content["caches"]
    assert list(then) == [s.name for s in memo_stats()]
    assert set(then) >= {
        "compact_store_sizes", "file_tables", "indexed_files", "secret_lines", "token_counts"
    }  # fmt: skip
    for figures in then.values():
        assert figures.keys() == {"entries", "max_entries", "hits", "misses", "evictions"}
        assert 0 <= figures["entries"] <= figures["max_entries"]
    # the second pack read the index's file table and its indexed files from memory
    for name in ("file_tables", "indexed_files"):
        assert then[name]["hits"] > first[name]["hits"], name
    text = "".join(getattr(c, "text", "") for c in after.content)
    line = next(line for line in text.splitlines() if line.startswith("- caches: "))
    assert all(f"{name} {then[name]['entries']} of " in line for name in then)
