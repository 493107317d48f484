"""Gemini CLI and opencode, registered by ``excerpt setup``, call context_pack; what their
model receives is checked.

Each client is the pinned npm release that ``.ci/run`` installs under ``.ci/node/clients``;
``excerpt setup gemini|opencode`` writes its entry into the client's own file in a fresh HOME,
the test adds only what the client needs to reach the model stub of ``real_clients_more``,
and the client runs headless in a network namespace with only loopback. The repository is
the shop and forty modules of partial-refund rules, so that the pack fills most of its
default budget and the client's limit is tested near it, not with a 2 KB result. Locally
the tests skip when a client or the namespaces are missing; under ``CI`` they fail.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from client_runs import DISTINCTIVE, RUN_TIMEOUT, require
from conftest import git_commit_all, write_tree
from excerpt.core.jsonc import loads
from excerpt.mcp import CORE_TOOLS
from real_clients import server_results
from real_clients_more import (
    CLIENTS,
    LIMITS,
    TOOL_PREFIX,
    TRUNCATION_MARKERS,
    UNTRUSTED,
    VERSIONS,
    ClientRun,
    MoreClient,
    config_path,
    excerpt_script,
    register,
    run_client,
    truncation_markers,
    unavailable,
)
from trees import SHOP, TASK

pytestmark = pytest.mark.timeout(300)

CLIENT_INFO = {"gemini": "gemini-cli-mcp-client", "opencode": "opencode"}
SERVERS_KEY = {"gemini": ("mcpServers",), "opencode": ("mcp",)}
DEFAULT_BUDGET = {"gemini": 32_000, "opencode": 32_000}  # excerpt.mcp.clients' profiles


def _partial_rules(n: int) -> str:
    defs = [
        f"def partial_refund_amount_{n:02d}_{k}(order, amount):\n"
        f"    # rule {n}.{k}: a partial refund's amount, never above the order's total\n"
        "    if amount > order.total:\n        return order.total\n"
        f"    return amount - {k}\n\n\n"
        for k in range(8)
    ]
    head = f'"""Partial refund rule {n}: how much of an order it gives back."""\n\n'
    return head + "".join(defs)


# about 67 KB of source about partial refunds: more than the default budget holds
REPO = {**SHOP, **{f"app/rules/partial_{n:02d}.py": _partial_rules(n) for n in range(40)}}


@dataclass
class SetupRun:
    client: MoreClient
    repo: Path
    setup: subprocess.CompletedProcess[str]
    written: str  # the client's file as ``excerpt setup`` wrote it
    run: ClientRun

    def entry(self, text: str) -> Any:
        value = loads(text)
        for key in SERVERS_KEY[self.client]:
            value = value[key]
        return value["excerpt"]

    def server_text(self) -> str:
        """The text of excerpt's context_pack result, as the server sent it."""
        results = server_results(self.run.mcp_log)
        assert len(results) == 1, self.run.mcp_log
        content = results[0][1]["content"]
        assert [c["type"] for c in content] == ["text"]
        return str(content[0]["text"])

    def received(self) -> str:
        assert self.run.result is not None, (self.run.errors, self.run.stderr[-3000:])
        return self.run.result


@pytest.fixture(scope="module", params=CLIENTS)
def setup_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SetupRun]:
    """``excerpt setup CLIENT --repo REPO`` in a fresh HOME, then one headless client run in
    which the stub model calls context_pack with TASK."""
    client: MoreClient = request.param
    require(client, unavailable)
    root = tmp_path_factory.mktemp(f"more-{client}")
    repo = write_tree(root / "shop", REPO)
    git_commit_all(repo)
    home, cache = root / "home", root / "cache"
    home.mkdir()
    setup = register(client, repo, home, cache)
    path = config_path(client, home)
    if setup.returncode != 0 or not path.exists():
        pytest.fail(f"excerpt setup {client}: exit {setup.returncode}, {path} written: "
                    f"{path.exists()}\n{setup.stdout}\n{setup.stderr}")  # fmt: skip
    written = path.read_text(encoding="utf-8")
    run = run_client(client, repo, home, cache, TASK, work=root / "run", timeout=RUN_TIMEOUT)
    yield SetupRun(client=client, repo=repo, setup=setup, written=written, run=run)


def test_setup_writes_the_clients_own_file(setup_run: SetupRun) -> None:
    entry = setup_run.entry(setup_run.written)
    command = [entry["command"], *entry.get("args", [])]
    if setup_run.client == "opencode":
        assert (entry["type"], entry["enabled"]) == ("local", True)
        command = entry["command"]
    assert command == [
        *(str(excerpt_script()), "mcp", "--repo", str(setup_run.repo.resolve())),
        *("--client", setup_run.client),
    ]
    assert "excerpt" in setup_run.setup.stdout


def test_the_stub_settings_leave_excerpts_entry_as_setup_wrote_it(setup_run: SetupRun) -> None:
    assert setup_run.run.config.startswith("{")
    assert setup_run.entry(setup_run.run.config) == setup_run.entry(setup_run.written)


def test_the_run_ends_by_itself_after_the_final_answer(setup_run: SetupRun) -> None:
    run = setup_run.run
    assert (run.returncode, run.timed_out, run.errors) == (0, False, []), run.stderr[-3000:]
    assert "done" in run.stdout


def test_the_client_offers_excerpts_three_core_tools(setup_run: SetupRun) -> None:
    prefix = TOOL_PREFIX[setup_run.client]
    offered = sorted(t for t in setup_run.run.offered if t.startswith(prefix))
    assert offered == sorted(prefix + t for t in CORE_TOOLS)


def test_the_client_names_itself_in_the_mcp_handshake(setup_run: SetupRun) -> None:
    info = setup_run.run.client_info
    assert (info.get("name"), info.get("version")) == (
        CLIENT_INFO[setup_run.client],
        VERSIONS[setup_run.client],
    )


def test_context_pack_reaches_the_model_whole_within_the_clients_limit(
    setup_run: SetupRun,
) -> None:
    received = setup_run.received()
    limit, unit = LIMITS[setup_run.client]
    size = len(received) if unit == "characters" else len(received.encode())
    assert size <= limit, f"{size:,} {unit} received"
    assert [m for m in TRUNCATION_MARKERS[setup_run.client] if m in received] == []
    assert DISTINCTIVE in received  # the source line itself, not a JSON-escaped copy
    # what the model reads is the server's Markdown exactly (Gemini wraps it as untrusted)
    expected = setup_run.server_text()
    if setup_run.client == "gemini":
        expected = UNTRUSTED[0] + expected + UNTRUSTED[1]
    assert received == expected


def test_context_pack_fills_but_keeps_to_the_clients_default_budget(
    setup_run: SetupRun,
) -> None:
    budget = DEFAULT_BUDGET[setup_run.client]
    pack = setup_run.server_text()
    assert f" of {budget:,} bytes;" in pack.splitlines()[1]
    # the repository holds more than the budget: the limit above is tested near it
    assert budget // 2 < len(pack.encode()) <= budget
    wrapper = len("".join(UNTRUSTED)) if setup_run.client == "gemini" else 0
    assert len(setup_run.received().encode()) <= budget + wrapper


@pytest.mark.parametrize("client", CLIENTS)
def test_the_truncation_markers_occur_in_the_installed_client(client: MoreClient) -> None:
    """The positive control of the marker assertion above."""
    require(client, unavailable)
    found = truncation_markers(client)
    assert found == dict.fromkeys(TRUNCATION_MARKERS[client], True)


def test_gemini_s_hook_seeds_the_first_request_and_opencode_gets_no_hooks(
    setup_run: SetupRun,
) -> None:
    """Gemini CLI runs excerpt's BeforeAgent hook (installed by setup beside the server): its
    first model request carries the seed, with the distinctive line. opencode has no shell
    hooks, so setup writes none into its file."""
    written = loads(setup_run.written)
    first = next(r for r in setup_run.run.requests if isinstance(r.get("body"), dict))
    sent = json.dumps(first["body"], ensure_ascii=False)
    if setup_run.client == "gemini":
        assert set(written["hooks"]) == {"BeforeAgent", "SessionStart"}
        assert "excerpt prepared this" in sent and "<hook_context>" in sent
        assert json.dumps(DISTINCTIVE.strip(), ensure_ascii=False)[1:-1] in sent
    else:
        assert "hooks" not in written and "excerpt prepared this" not in sent
