"""Claude Code and Codex with excerpt's hooks installed by ``excerpt setup``, end to end.

Each client runs offline in its own network namespace against the loopback model stub of
``real_clients``, in a fresh HOME where ``excerpt setup`` installed the server and the hooks.
What is checked is what the model receives: the first request of a task prompt carries the
seed (source lines verbatim, handles that ``excerpt get`` serves, within its cap); a follow-up
prompt adds no second seed; a large Bash output reaches Claude Code's next request compacted
and ``excerpt expand`` gives its original bytes back; a hook that fails leaves the prompt and
the output untouched; and no request changes what an earlier one sent (the provider's cache
stays hot). Locally the tests skip without the clients; under ``CI`` they fail.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from client_runs import DISTINCTIVE, HANDLE, require
from conftest import git_commit_all, write_tree
from excerpt.core.tokens import o200k_count
from real_clients import Client, Run, ToolCall, forwarded_tool_results
from trees import SHOP, TASK

pytestmark = pytest.mark.timeout(600)

RUN_TIMEOUT = 150.0  # seconds per client run; a hang guard, never a performance assertion
FOLLOW_UP = "yes, go on"
ERROR_LINE = "ERROR worker 7 failed: ConnectionResetError in send_batch()"
# about 21 KB of a worker's log with one error in the middle: under Claude Code's 30,000
# characters (past those it spills a Bash result to a file), over the hook's 8,000 bytes
BIG_COMMAND = (
    'for i in $(seq 1 260); do echo "2026-12-04T10:00:00 INFO worker 7 processed batch $i'
    f" ok\"; done; echo '{ERROR_LINE}'; for i in $(seq 261 520); do echo \"2026-12-04T10:00:01"
    ' INFO worker 7 processed batch $i ok"; done'
)


def _excerpt(*args: str) -> list[str]:
    return [sys.executable, "-m", "excerpt", *args]


@pytest.fixture
def shop(tmp_path: Path) -> tuple[Path, Path]:
    repo = write_tree(tmp_path / "shop", SHOP)
    git_commit_all(repo)
    cache = tmp_path / "cache"
    subprocess.run(_excerpt("index", "--repo", str(repo)), check=True, capture_output=True,
                   env={"EXCERPT_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"})  # fmt: skip
    return repo, cache


def _session(
    client: Client, repo: Path, cache: Path, calls: list[ToolCall], prompts: list[str],
    *extra_setup: list[str], client_args: tuple[str, ...] = (),
) -> Run:  # fmt: skip
    setup = [_excerpt("setup", client, "--repo", str(repo), "--json"), *extra_setup]
    return forwarded_tool_results(
        client, repo, cache, calls, timeout=RUN_TIMEOUT, prompts=prompts, setup=setup,
        registered=True, client_args=client_args,
    )  # fmt: skip


def _main_requests(client: Client, run: Run) -> list[dict[str, Any]]:
    """The model requests of the agent's own loop (not the client's side requests: titles,
    summaries), in order."""
    out = []
    for rec in run.requests:
        body = rec.get("body")
        if not isinstance(body, dict):
            continue
        if client == "claude":
            names = {t.get("name") for t in body.get("tools", []) if isinstance(t, dict)}
            if body.get("stream") and "Bash" in names and body.get("messages"):
                out.append(body)
        elif isinstance(body.get("input"), list) and body.get("tools"):
            out.append(body)
    return out


def _seeds_in(text: str) -> int:
    return text.count("excerpt prepared this")


def _user_text(client: Client, body: dict[str, Any]) -> str:
    """Everything the request holds as the user's or the context's text (JSON)."""
    items = body.get("messages") if client == "claude" else body.get("input")
    return json.dumps(items, ensure_ascii=False)


def _normal(value: Any) -> Any:
    """A message as the provider caches it: the client's cache markers dropped, a text block
    and a plain string the same."""
    if isinstance(value, dict):
        if set(value) - {"cache_control"} == {"type", "text"} and value.get("type") == "text":
            return value["text"]
        return {k: _normal(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        if len(value) == 1 and isinstance(value[0], dict) and value[0].get("type") == "text":
            return _normal(value[0])
        return [_normal(v) for v in value]
    return value


def _assert_prefix_kept(client: Client, requests: list[dict[str, Any]]) -> None:
    """Provider-cache truth: every request starts with everything the previous one sent."""
    key = "messages" if client == "claude" else "input"
    for before, after in itertools.pairwise(requests):
        old, new = _normal(before[key]), _normal(after[key])
        assert new[: len(old)] == old, "a request changed what an earlier one sent"


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_task_prompt_is_seeded_once_and_a_follow_up_is_not(
    shop: tuple[Path, Path], client: Client
) -> None:
    require(client)
    repo, cache = shop
    # Codex runs a hook only once the user trusted it in its /hooks screen; the test run
    # stands in for that review with the flag made for it
    trust = ("--dangerously-bypass-hook-trust",) if client == "codex" else ()
    run = _session(client, repo, cache, [], [TASK, FOLLOW_UP], client_args=trust)
    assert all(s["returncode"] == 0 for s in run.setup), run.setup
    setup = json.loads(run.setup[0]["stdout"])
    assert setup["check"]["hooks"]["ok"], setup["check"]["hooks"]
    requests = _main_requests(client, run)
    assert len(requests) >= 2, run.stderr[-2000:]
    first = _user_text(client, requests[0])
    assert _seeds_in(first) == 1, first[:3000]
    assert json.dumps(DISTINCTIVE)[1:-1] in first  # source lines verbatim
    seed = first[first.index("excerpt prepared this") :]
    handles = sorted(set(HANDLE.findall(seed)))
    assert handles
    got = subprocess.run(_excerpt("get", "--repo", str(repo), "--json", *handles),
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert got.returncode == 0, got.stderr
    # what the user is told of the seed (Claude Code's systemMessage) never reaches the model
    assert "sent with this prompt" not in json.dumps(run.requests)
    last = _user_text(client, requests[-1])
    assert FOLLOW_UP in last and _seeds_in(last) == 1  # the follow-up brought no second seed
    _assert_prefix_kept(client, requests)


def test_the_seed_in_claude_codes_first_request_fits_its_cap(shop: tuple[Path, Path]) -> None:
    require("claude")
    repo, cache = shop
    run = _session("claude", repo, cache, [], [TASK])
    first = _main_requests("claude", run)[0]
    texts = [
        block["text"] if isinstance(block, dict) else block
        for m in first["messages"]
        for block in (m["content"] if isinstance(m["content"], list) else [m["content"]])
        if isinstance(block, str) or block.get("type") == "text"
    ]
    seed = next(t for t in texts if "excerpt prepared this" in t)
    body = seed[seed.index("excerpt prepared this") :]
    assert o200k_count(body) <= 2000 + 40  # the cap, and the client's own wrapping words


def test_a_big_bash_output_reaches_claude_compacted_and_expands_back(
    shop: tuple[Path, Path],
) -> None:
    require("claude")
    repo, cache = shop
    bash = ToolCall("Bash", {"command": BIG_COMMAND, "description": "run the worker"}, True)
    run = _session("claude", repo, cache, [bash], [TASK])
    result = run.forwarded[0].text
    assert "excerpt compacted this" in result, result[:2000]
    assert ERROR_LINE in result
    original = subprocess.run(["bash", "-c", BIG_COMMAND], capture_output=True,
                              check=True).stdout  # fmt: skip
    assert len(result.encode()) < len(original) * 0.5
    ident = re.search(r"expand ([0-9a-f]{16})", result)
    assert ident is not None
    env = {"EXCERPT_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}
    back = subprocess.run(_excerpt("expand", ident.group(1)), capture_output=True, check=True,
                          env=env)  # fmt: skip
    # byte for byte what the model would have read: the output as Claude Code reports it to
    # its hooks (it drops a Bash output's final newline)
    assert back.stdout == original.rstrip(b"\n")
    _assert_prefix_kept("claude", _main_requests("claude", run))


def test_a_failing_hook_leaves_the_prompt_and_the_output_untouched(
    shop: tuple[Path, Path], tmp_path: Path
) -> None:
    require("claude")
    repo, cache = shop
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the hooks' cache should be\n", encoding="utf-8")
    # the installed hooks pointed at a cache they cannot use: every hook fails inside
    breaks = [sys.executable, "-c", (
        "import json, os, pathlib, sys; p = pathlib.Path(os.environ['CLAUDE_CONFIG_DIR'])"
        " / 'settings.json'; t = p.read_text(); "
        f"p.write_text(t.replace({str(cache)!r}, {str(blocked / 'cache')!r}))"
    )]  # fmt: skip
    bash = ToolCall("Bash", {"command": BIG_COMMAND, "description": "run the worker"}, True)
    run = _session("claude", repo, cache, [bash], [TASK], breaks)
    first = _user_text("claude", _main_requests("claude", run)[0])
    assert TASK in first
    assert "excerpt prepared" not in first and "excerpt:" not in first, first[-3000:]
    assert ERROR_LINE in run.forwarded[0].text and "excerpt compacted" not in run.forwarded[0].text
    assert "processed batch 520 ok" in run.forwarded[0].text  # the output whole
    assert "hook" not in run.stdout.lower() or "error" not in run.stdout.lower()
