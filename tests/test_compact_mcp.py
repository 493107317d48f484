"""The compaction tools over MCP: markers name the context_expand call that returns exactly
what they replaced; an evicted original is an error that says so."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import TextContent

from excerpt.mcp import build_server

LOG = "\n".join(
    [f"2026-01-02T10:00:{i % 60:02d}Z INFO GET /items/{i} 200" for i in range(200)]
    + ["ERROR: payment service refused the connection", "done"]
) + "\n"  # fmt: skip


def _calls(repo: Path, cache: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def go() -> list[Any]:
        async with Client(build_server(repo, cache, tools="all")) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(go)


def _text(result: Any) -> str:
    return "".join(c.text for c in result.content if isinstance(c, TextContent))


def test_context_compact_markers_name_the_context_expand_call_that_brings_lines_back(
    tmp_path: Path,
) -> None:
    (done,) = _calls(tmp_path, tmp_path / "cache", [("context_compact", {"payload": LOG})])
    text = _text(done)
    assert not done.is_error and "ERROR: payment service refused the connection" in text
    m = re.search(r'context_expand\(id="([0-9a-f]{16})", lines="(\d+)-(\d+)"\)', text)
    assert m is not None and "excerpt expand" not in text
    ident, a, b = m.group(1), int(m.group(2)), int(m.group(3))
    (part,) = _calls(
        tmp_path, tmp_path / "cache", [("context_expand", {"id": ident, "lines": f"{a}-{b}"})]
    )
    body = _text(part).split("\n", 1)[1]
    assert body == "".join(LOG.splitlines(keepends=True)[a - 1 : b])


def test_context_expand_of_an_evicted_original_is_an_error_saying_evicted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXCERPT_COMPACT_STORE_BYTES", str(len(LOG) + 1))
    cache = tmp_path / "cache"
    first, _ = _calls(
        tmp_path, cache,
        [("context_compact", {"payload": LOG}), ("context_compact", {"payload": LOG + "x\n"})],
    )  # fmt: skip
    ident = re.search(r"excerpt compact ([0-9a-f]{16})", _text(first))
    assert ident is not None
    (gone,) = _calls(tmp_path, cache, [("context_expand", {"id": ident.group(1)})])
    assert gone.is_error and "evicted" in _text(gone)
