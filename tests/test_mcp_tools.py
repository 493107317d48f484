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

from excerpt.core.settings import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET
from excerpt.mcp import build_server
from excerpt.mcp.clients import profile_for
from excerpt.pack.prepare import MAX_BUDGET as PACK_MAX_BUDGET
from excerpt.pack.prepare import PackRequest

SNAPSHOT = Path(__file__).parent / "snapshots" / "mcp_tools.json"


def listed(repo: Path, cache: Path) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with Client(build_server(repo, cache)) as client:
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
        name: tool["input_schema"]["properties"]["budget"]["anyOf"][0]
        for name, tool in tools.items()
        if "budget" in tool["input_schema"]["properties"]
    }
    assert set(budgets) == {
        "context_pack", "context_plan", "context_retrieve", "context_expand", "context_handoff",
    }  # fmt: skip
    for name, budget in budgets.items():
        assert (budget["minimum"], budget["maximum"]) == (MIN_BUDGET, MAX_BUDGET), name
    assert PACK_MAX_BUDGET == MAX_BUDGET


def test_the_default_budget_is_the_same_for_library_and_clients() -> None:
    assert PackRequest(repo=".", task="t").budget == DEFAULT_BUDGET
    assert profile_for(None).default_budget == DEFAULT_BUDGET
    assert profile_for("claude-code").default_budget == DEFAULT_BUDGET


@pytest.mark.parametrize("args", [{}, {"paths": ["a.py"], "query": "refund"}])
def test_risk_classify_without_exactly_one_input_names_the_tool_s_own_fields(
    tmp_path: Path, args: dict[str, Any]
) -> None:
    async def go() -> tuple[bool, str]:
        async with Client(build_server(tmp_path, tmp_path / "cache")) as client:
            result = await client.call_tool("risk_classify", args)
            return result.is_error is True, "".join(getattr(c, "text", "") for c in result.content)

    is_error, text = anyio.run(go)
    assert is_error and "`paths` or `query`" in text and "--query" not in text
