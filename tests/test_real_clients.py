"""Claude Code and Codex call excerpt's MCP tools; what they forward to the model is checked.

The clients are the pinned npm releases that ``.ci/run`` installs under ``.ci/node/clients``;
the model is the stub of ``real_clients`` (no network: each run is in its own network
namespace with only loopback). One client run makes several tool calls in a row, so each
client runs twice here: against excerpt's default tools (context_pack in md and json,
context_plan, context_retrieve), and against a fake server with fixed results, the positive
control that shows the truncation markers are the right ones and what the client forwards for
each result shape. Locally the tests skip when the clients or namespaces are missing; under
``CI`` they fail instead.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from client_runs import BUDGET, DISTINCTIVE, HANDLE, RUN_TIMEOUT, ExcerptRun, require
from conftest import git_commit_all, write_tree
from real_clients import (
    CLAUDE_VERSION,
    CLIENTS,
    CODEX_VERSION,
    FAKE_STRUCTURED,
    FAKE_TEXT,
    TRUNCATION_MARKERS,
    Client,
    Run,
    ToolCall,
    excerpt_definition_bytes,
    fake_server_command,
    forwarded_tool_results,
    truncation_markers,
)
from trees import EXPECTED_FILE, SHOP, TASK

CLIENT_INFO = {
    "claude": ("claude-code", CLAUDE_VERSION),
    "codex": ("codex-mcp-client", CODEX_VERSION),
}
DEFAULT_BUDGET = {"claude": 32_000, "codex": 11_000}  # what each passes on whole
BIG = 200_000  # bytes of the fake big result: past both clients' limits


def cli_pack(repo: Path, cache: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "excerpt", "pack", "--repo", str(repo)),
            *("--format", "json", "--budget", str(BUDGET), TASK),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "EXCERPT_CACHE_DIR": str(cache)},
        timeout=120,
        check=True,
    )
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def embedded_json(text: str) -> Any:
    """The JSON document that ``text`` is, or the first one it holds."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[{\[]", text):
        try:
            return decoder.raw_decode(text, match.start())[0]
        except json.JSONDecodeError:
            continue
    raise AssertionError(f"no JSON document in the forwarded text: {text[:500]!r}")


@pytest.fixture(scope="module", params=CLIENTS)
def excerpt_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ExcerptRun]:
    """One run of a client that calls context_pack (md, json), context_plan and
    context_retrieve on the server as the README registers it (the core tools)."""
    client: Client = request.param
    require(client)
    root = tmp_path_factory.mktemp(f"real-{client}")
    repo = write_tree(root / "shop", SHOP)
    git_commit_all(repo)
    pack = cli_pack(repo, root / "cli-cache")  # its own cache: the client's run starts cold
    handle = pack["items"][0]["handle"]
    calls = [
        ToolCall("context_pack", {"task": TASK, "budget": BUDGET}),
        ToolCall("context_pack", {"task": TASK, "budget": BUDGET, "format": "json"}),
        ToolCall("context_plan", {"task": TASK, "budget": BUDGET}),
        ToolCall("context_retrieve", {"handles": [handle]}),
        # no budget: the client's own default, known from the clientInfo it sent
        ToolCall("context_pack", {"task": TASK, "format": "json"}),
    ]
    run = forwarded_tool_results(client, repo, root / "cache", calls, timeout=RUN_TIMEOUT)
    yield ExcerptRun(client, run, pack)


@pytest.fixture(scope="module", params=CLIENTS)
def fake_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Client, Run]]:
    """One run of a client against the fake server: each result shape, and a big result."""
    client: Client = request.param
    require(client)
    root = tmp_path_factory.mktemp(f"fake-{client}")
    repo = write_tree(root / "repo", {"README.md": "# fake\n"})
    git_commit_all(repo)
    calls = [
        ToolCall("both", {}),
        ToolCall("content_only", {}),
        ToolCall("big", {"bytes": BIG}),
    ]
    run = forwarded_tool_results(
        client,
        repo,
        root / "cache",
        calls,
        timeout=RUN_TIMEOUT,
        server_command=fake_server_command(),
    )
    yield client, run


# --------------------------------------------------------------------------- excerpt's tools


@pytest.mark.timeout(300)
def test_the_client_names_itself_in_the_mcp_handshake(excerpt_run: ExcerptRun) -> None:
    info = excerpt_run.run.client_info
    assert (info.get("name"), info.get("version")) == CLIENT_INFO[excerpt_run.client]


@pytest.mark.timeout(300)
def test_context_pack_reaches_the_model_verbatim_and_within_the_budget(
    excerpt_run: ExcerptRun,
) -> None:
    forwarded = excerpt_run.call(0)
    text = forwarded.text
    top = excerpt_run.pack["items"][0]
    assert top["path"] == EXPECTED_FILE
    assert "class RefundService:\n" in text
    assert DISTINCTIVE in text  # the source lines themselves, not a JSON-escaped copy
    assert top["text"] in text
    assert HANDLE.search(text), text[:1000]
    assert forwarded.truncation_markers() == []
    assert forwarded.size <= BUDGET, f"{forwarded.size} bytes forwarded"
    # the client's own framing ("Wall time: … Output:") included, the model reads no more
    assert len(forwarded.framed.encode()) <= BUDGET
    # what the model reads is the server's Markdown exactly, not a rendering of other data
    assert forwarded.server_result is not None
    content = forwarded.server_result.get("content") or []
    assert [c.get("type") for c in content] == ["text"]
    assert text == content[0]["text"]


@pytest.mark.timeout(300)
def test_context_pack_json_reaches_the_model_as_the_machine_pack(excerpt_run: ExcerptRun) -> None:
    forwarded = excerpt_run.call(1)
    doc = embedded_json(forwarded.text)
    assert isinstance(doc, dict)
    assert doc.get("schema") == "excerpt.pack/v1"
    assert doc["items"][0]["path"] == EXPECTED_FILE
    assert doc["items"][0]["handle"] == excerpt_run.pack["items"][0]["handle"]
    assert forwarded.truncation_markers() == []


@pytest.mark.timeout(300)
def test_the_default_budget_is_the_one_this_client_passes_on_whole(
    excerpt_run: ExcerptRun,
) -> None:
    doc = embedded_json(excerpt_run.call(4).text)
    assert doc["budget"]["bytes"] == DEFAULT_BUDGET[excerpt_run.client]


@pytest.mark.timeout(300)
def test_context_plan_reaches_the_model_within_the_budget(excerpt_run: ExcerptRun) -> None:
    forwarded = excerpt_run.call(2)
    assert EXPECTED_FILE in forwarded.text
    assert forwarded.truncation_markers() == []
    assert forwarded.size <= BUDGET, f"{forwarded.size} bytes forwarded"


@pytest.mark.timeout(300)
def test_context_retrieve_reaches_the_model_verbatim_and_within_the_budget(
    excerpt_run: ExcerptRun,
) -> None:
    forwarded = excerpt_run.call(3)
    assert excerpt_run.pack["items"][0]["text"] in forwarded.text
    assert forwarded.truncation_markers() == []
    assert forwarded.size <= BUDGET, f"{forwarded.size} bytes forwarded"


@pytest.mark.timeout(300)
def test_what_the_client_sends_of_excerpts_definitions_stays_within_6000_bytes(
    excerpt_run: ExcerptRun,
) -> None:
    """Being installed costs each model request what the client sends of the tool
    definitions: the core tools' stay within 6,000 bytes on every request, and some reached
    the model (the deferred search found each tool the stub called)."""
    sizes = [
        excerpt_definition_bytes(excerpt_run.client, r["body"])
        for r in excerpt_run.run.requests
        if isinstance(r.get("body"), dict)
    ]
    per_request = max(s["listed"] + s["loaded"] for s in sizes)
    assert 0 < per_request <= 6000, sizes


# --------------------------------------------------------------------------- the clients


@pytest.mark.timeout(300)
def test_the_client_forwards_structured_content_over_text_and_text_alone_as_is(
    fake_run: tuple[Client, Run],
) -> None:
    """Why the model-facing tools return content only: given both, the client forwards the
    structured content (as compact JSON) and drops the text."""
    _, run = fake_run
    both, content_only = run.forwarded[0], run.forwarded[1]
    assert json.loads(both.text) == FAKE_STRUCTURED
    assert FAKE_TEXT not in both.framed
    assert content_only.text == FAKE_TEXT


@pytest.mark.timeout(300)
def test_the_client_marks_a_result_past_its_limit_with_a_known_marker(
    fake_run: tuple[Client, Run],
) -> None:
    """The positive control of the marker assertions above."""
    _, run = fake_run
    big = run.forwarded[2]
    assert big.truncation_markers(), big.framed[:2000]
    assert big.size < BIG


@pytest.mark.parametrize("client", CLIENTS)
def test_the_truncation_markers_occur_in_the_installed_client(client: Client) -> None:
    require(client)
    found = truncation_markers(client)
    assert set(found) == set(TRUNCATION_MARKERS[client])
    assert all(found.values()), found
