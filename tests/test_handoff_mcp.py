"""The MCP handoff tools: context_handoff creates, context_handoff_validate checks."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from conftest import tree_snapshot
from excerpt.core.hashing import sha256_hex
from excerpt.handoff import render_handoff, render_report, validate_handoff
from excerpt.mcp import build_server
from excerpt.mcp.tools_handoff import DOCUMENT_HEADING

# every test: handoffs stamped at one time (``repo`` is conftest's: these files, committed)
pytestmark = pytest.mark.usefixtures("handoff_clock")

FILES = {"app/refunds.py": "def refund():\n    return 1\n", "AGENTS.md": "x\n"}


def calls(repo: Path, cache: Path, *steps: tuple[str, Any]) -> list[CallToolResult]:
    """Call the tools in order; a step's arguments may be a function of the results so far."""

    async def go() -> list[CallToolResult]:
        results: list[CallToolResult] = []
        async with Client(build_server(repo, cache, tools="all")) as client:
            for name, args in steps:
                given = args(results) if callable(args) else args
                results.append(await client.call_tool(name, given))
        return results

    return anyio.run(go)


def text(result: CallToolResult) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def document(result: CallToolResult) -> dict[str, Any]:
    """The document a context_handoff result carries after its Markdown, as a model sees it:
    the fenced JSON block under the document heading."""
    after = text(result).split(DOCUMENT_HEADING, 1)[1]
    fence = re.match(r"(`{3,})json\n", after)
    assert fence is not None
    body = after[fence.end() :].rsplit("\n" + fence.group(1), 1)[0]
    doc: dict[str, Any] = json.loads(body)
    return doc


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
        ("context_handoff_validate", lambda r: {"document": document(r[0])}),
    )  # fmt: skip
    assert not created.is_error, text(created)
    # text alone, which clients forward as is (structured content would replace it)
    assert created.structured_content is None and checked.structured_content is None
    doc = document(created)
    assert (doc["schema"], doc["from"], doc["to"]) == ("excerpt.handoff/v1", "codex", "claude")
    assert doc["decisions"] == [{"decision": "round", "why": "int() truncates"}]
    assert text(created).startswith(render_handoff(doc)) and "<goal>" in text(created)
    assert not checked.is_error
    assert text(checked).startswith("FRESH")
    assert tree_snapshot(repo) == before


def test_context_handoff_validate_lists_the_stale_handle_after_an_edit(
    repo: Path, tmp_path: Path
) -> None:
    (created,) = calls(repo, tmp_path / "cache", ("context_handoff", args_for(repo)))
    doc = document(created)
    (repo / "app/refunds.py").write_text("def refund():\n    return 2\n", encoding="utf-8")
    (checked,) = calls(repo, tmp_path / "cache", ("context_handoff_validate", {"document": doc}))
    report = validate_handoff(repo, doc, cache_dir=tmp_path / "cache")
    assert report["fresh"] is False
    assert [(s["kind"], s.get("handle")) for s in report["stale"]] == [
        ("evidence", doc["evidence"][0]), ("dirty_tree", None),
    ]  # fmt: skip
    # the model reads the same report: the stale handle named in the text
    assert text(checked) == render_report(report)
    assert "stale" in text(checked) and doc["evidence"][0] in text(checked)


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
    assert not result.is_error and text(result).startswith("INVALID")


def test_the_result_stays_within_its_budget_the_markdown_giving_way_to_the_document(
    repo: Path, tmp_path: Path
) -> None:
    (full,) = calls(repo, tmp_path / "cache", ("context_handoff", args_for(repo)))
    doc = document(full)
    block = DOCUMENT_HEADING.encode() + json.dumps(doc, ensure_ascii=False, indent=1).encode()
    # room for the document, not for its Markdown too
    tight = len(block) + 400
    assert len(text(full).encode()) > tight
    (short,) = calls(
        repo, tmp_path / "cache", ("context_handoff", {**args_for(repo), "budget": tight})
    )
    assert not short.is_error and len(text(short).encode()) <= tight
    assert "does not fit this result's budget" in text(short) and "<goal>" not in text(short)
    same = {k: v for k, v in document(short).items() if k != "created_at"}
    assert same == {k: v for k, v in doc.items() if k != "created_at"}
    # no room for the document: an error saying how to get it, never a cut document
    (none,) = calls(
        repo, tmp_path / "cache", ("context_handoff", {**args_for(repo), "budget": 300})
    )
    assert none.is_error and "-o FILE" in text(none)
