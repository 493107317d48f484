"""The MCP handoff tools: context_handoff creates, context_handoff_validate checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from conftest import tree_snapshot
from excerpt.core.hashing import sha256_hex
from excerpt.handoff import CLOCK_ENV
from excerpt.mcp import build_server


def calls(repo: Path, cache: Path, *steps: tuple[str, Any]) -> list[CallToolResult]:
    """Call the tools in order; a step's arguments may be a function of the results so far."""

    async def go() -> list[CallToolResult]:
        results: list[CallToolResult] = []
        async with Client(build_server(repo, cache)) as client:
            for name, args in steps:
                given = args(results) if callable(args) else args
                results.append(await client.call_tool(name, given))
        return results

    return anyio.run(go)


def text(result: CallToolResult) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


@pytest.fixture
def repo(make_repo: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CLOCK_ENV, "2026-01-02T03:04:05Z")
    root: Path = make_repo({"app/refunds.py": "def refund():\n    return 1\n", "AGENTS.md": "x\n"})
    return root


def args_for(repo: Path) -> dict[str, Any]:
    digest = sha256_hex((repo / "app/refunds.py").read_bytes())[:16]
    return {
        "goal": "refunds keep every cent",
        "from_agent": "codex",
        "to_agent": "claude",
        "decisions": [{"decision": "round", "why": "int() truncates"}],
        "commands": [{"command": "pytest -q", "exit_code": 1, "result": "1 failed"}],
        "evidence": [f"app/refunds.py#L1-L2@{digest}"],
    }


def test_context_handoff_returns_the_document_and_its_markdown_and_validate_finds_it_fresh(
    repo: Path, tmp_path: Path
) -> None:
    before = tree_snapshot(repo)
    created, checked = calls(
        repo, tmp_path / "cache",
        ("context_handoff", args_for(repo)),
        ("context_handoff_validate", lambda r: {"document": r[0].structured_content["document"]}),
    )  # fmt: skip
    assert not created.is_error, text(created)
    structured = created.structured_content
    assert structured is not None
    doc = structured["document"]
    assert (doc["schema"], doc["from"], doc["to"]) == ("excerpt.handoff/v1", "codex", "claude")
    assert doc["decisions"] == [{"decision": "round", "why": "int() truncates"}]
    assert structured["markdown"] == text(created) and "<goal>" in text(created)
    assert not checked.is_error and checked.structured_content is not None
    assert checked.structured_content["fresh"] is True
    assert text(checked).startswith("FRESH")
    assert tree_snapshot(repo) == before


def test_context_handoff_validate_lists_the_stale_handle_after_an_edit(
    repo: Path, tmp_path: Path
) -> None:
    (created,) = calls(repo, tmp_path / "cache", ("context_handoff", args_for(repo)))
    assert created.structured_content is not None
    doc = created.structured_content["document"]
    (repo / "app/refunds.py").write_text("def refund():\n    return 2\n", encoding="utf-8")
    (checked,) = calls(repo, tmp_path / "cache", ("context_handoff_validate", {"document": doc}))
    report = checked.structured_content
    assert report is not None and report["fresh"] is False
    assert [(s["kind"], s.get("handle")) for s in report["stale"]] == [
        ("evidence", doc["evidence"][0]), ("dirty_tree", None),
    ]  # fmt: skip
    assert "stale" in text(checked)


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        pytest.param("context_handoff", {"goal": "g", "from_agent": "codex", "to_agent": "claude",
                     "evidence": ["../x#L1-L1@0123456789abcdef"]}, "refused", id="traversal"),
        pytest.param("context_handoff", {"goal": "g", "from_agent": "codex", "to_agent": "claude",
                     "commands": [{"command": "x"}]}, "missing key", id="command-fields"),
        pytest.param("context_handoff", {"goal": "g", "from_agent": "gemini", "to_agent": "claude"},
                     "invalid arguments", id="unknown-agent"),
    ],
)  # fmt: skip
def test_bad_arguments_are_a_one_line_tool_error(
    repo: Path, tmp_path: Path, name: str, args: dict[str, Any], message: str
) -> None:
    (result,) = calls(repo, tmp_path / "cache", (name, args))
    assert result.is_error and message in text(result) and "\n" not in text(result).strip()


def test_a_document_that_is_not_a_handoff_is_reported_invalid(repo: Path, tmp_path: Path) -> None:
    (result,) = calls(repo, tmp_path / "cache", ("context_handoff_validate", {"document": {}}))
    assert result.structured_content is not None
    assert result.structured_content["valid"] is False
    assert text(result).startswith("INVALID")
