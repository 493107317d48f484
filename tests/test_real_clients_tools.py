"""Claude Code and Codex against ``excerpt mcp --tools all``, and their own tools.

One client run per client (see ``test_real_clients`` for the stub and the namespaces):
gate_check and context_pack from the full tool list, then the client's built-in search and
read tools, whose results must equal what ``excerpt bench session``'s contracts charge.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from client_runs import BUDGET, RUN_TIMEOUT, ExcerptRun, require
from conftest import git, git_commit_all, write_tree
from excerpt_bench.session.contracts import (
    PERSISTED_PATH,
    Row,
    claude_bash,
    claude_read,
    codex_exec,
    rg_rows,
)
from excerpt_bench.session.workspace import Corpus
from real_clients import CLIENTS, Client, Forwarded, Run, ToolCall, forwarded_tool_results
from trees import SHOP, TASK


@pytest.fixture(scope="module", params=CLIENTS)
def all_tools_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ExcerptRun]:
    """One run of a client against ``excerpt mcp --tools all``: gate_check on a staged
    secret, then context_pack, then the client's own search and read tools (BUILTIN), whose
    results ``bench session``'s contracts must reproduce. Codex runs its commands without
    its sandbox, which cannot start in the test's network namespace: they only read."""
    client: Client = request.param
    require(client)
    root = tmp_path_factory.mktemp(f"real-all-{client}")
    repo = write_tree(root / "shop", {**SHOP, **CONTRACT_FILES})
    git_commit_all(repo)
    write_tree(repo, {"deploy/.env": "TOKEN=1\n"})  # staged for gate_check
    git(repo, "add", "deploy/.env")
    server = [sys.executable, "-m", "excerpt", "mcp", "--tools", "all", "--repo", str(repo)]
    calls = [ToolCall("gate_check", {}), ToolCall("context_pack", {"task": TASK, "budget": BUDGET})]
    calls += [ToolCall(tool, args(repo), builtin=True) for tool, args in BUILTIN[client]]
    run = forwarded_tool_results(
        client, repo, root / "cache", calls, timeout=RUN_TIMEOUT, server_command=server,
        codex_sandbox="danger-full-access",
    )  # fmt: skip
    yield ExcerptRun(client, run, {"repo": str(repo)})


# Files for the built-in tools' limits: a result past Codex's 10,000 tokens and Claude's
# 30,000 Bash characters, a file past Read's 25,000 tokens, one without a final newline.
CONTRACT_FILES = {
    "data/amounts.txt": "".join(f"amount_{i} = refund({i})\n" for i in range(2200)),
    "data/ledger.py": "".join(
        f"ENTRY_{i} = {i}  # ledger entry, amount and refund\n" for i in range(2600)
    ),
    "app/noeol.py": "A = 1\nB = 2",
}
BUILTIN: dict[str, list[tuple[str, Callable[[Path], dict[str, Any]]]]] = {
    "claude": [
        ("Read", lambda r: {"file_path": str(r / "app/refunds.py")}),
        ("Read", lambda r: {"file_path": str(r / "app/refunds.py"), "offset": 6, "limit": 3}),
        ("Read", lambda r: {"file_path": str(r / "app/noeol.py")}),
        ("Read", lambda r: {"file_path": str(r / "data/ledger.py")}),
        ("Bash", lambda r: {"command": "rg -l --sort path refund", "description": "Find"}),
        (
            "Bash",
            lambda r: {
                "command": "rg -n -C 2 --sort path 'refund\\(' app tests",
                "description": "Find",
            },
        ),
        (
            "Bash",
            lambda r: {"command": "rg -n 'amount_1[0-9]' data/amounts.txt", "description": "Find"},
        ),
        (
            "Bash",
            lambda r: {"command": "rg -n --sort path 'refund\\(' data", "description": "Find"},
        ),
        ("Bash", lambda r: {"command": "rg -l nothing-matches-this", "description": "Find"}),
    ],
    "codex": [
        ("exec_command", lambda r: {"cmd": "rg -n --sort path refund app"}),
        ("exec_command", lambda r: {"cmd": "sed -n '6,8p' app/refunds.py"}),
        ("exec_command", lambda r: {"cmd": "rg -n --sort path 'refund\\(' data"}),
        ("exec_command", lambda r: {"cmd": "rg -n nothing-matches-this app"}),
    ],
}


@pytest.mark.timeout(300)
def test_gate_check_reaches_the_model_as_the_verdict_text(all_tools_run: ExcerptRun) -> None:
    forwarded = all_tools_run.call(0)
    assert forwarded.text.startswith("excerpt gate: FAIL — staged change against HEAD")
    assert "FAIL  Secret safety" in forwarded.text and "deploy/.env" in forwarded.text
    assert forwarded.truncation_markers() == []
    assert forwarded.server_result is not None
    content = forwarded.server_result.get("content") or []
    assert [c.get("type") for c in content] == ["text"]
    assert forwarded.text == content[0]["text"]


@pytest.mark.timeout(300)
def test_a_pack_after_gate_check_reaches_the_model_from_the_full_tool_list(
    all_tools_run: ExcerptRun,
) -> None:
    assert all_tools_run.call(1).text.startswith("# Context pack")
    assert all_tools_run.call(1).truncation_markers() == []


@pytest.mark.timeout(300)
def test_the_session_contracts_reproduce_the_clients_own_tool_results(
    all_tools_run: ExcerptRun,
) -> None:
    """``excerpt bench session`` charges its scripted agents what these tools return: each
    result, as the client forwarded it, equals the contract's text (Codex's random chunk id
    and measured wall time set to the contract's fixed ones; Claude's saved-output path to
    the contract's)."""
    repo = Path(all_tools_run.pack["repo"])
    corpus = Corpus.from_dir(repo)
    got = [f for f in all_tools_run.run.forwarded[2:]]
    assert len(got) == len(BUILTIN[all_tools_run.client])
    for forwarded in got:
        text = forwarded.framed
        if all_tools_run.client == "codex":
            text = re.sub(r"^Chunk ID: \w+\nWall time: [\d.]+ seconds", CODEX_HEAD, text)
            want = expected_codex(corpus, forwarded.arguments["cmd"])
        else:
            text = re.sub(r"saved to: \S+", f"saved to: {PERSISTED_PATH}", text)
            text += "".join("\n" + note for note in partial_notes(all_tools_run.run, forwarded))
            want = expected_claude(corpus, repo, forwarded.tool, forwarded.arguments, text)
        assert text == want, (forwarded.tool, forwarded.arguments)


def partial_notes(run: Run, forwarded: Forwarded) -> list[str]:
    """Claude Code's note on a partial Read of the file ``forwarded`` read: text it puts in a
    later message of the conversation, merged with other text of that turn (the model reads
    both)."""
    path = forwarded.arguments.get("file_path")
    if forwarded.tool != "Read" or not path:
        return []
    head = f"[Truncated: PARTIAL view \u2014 {path}: "
    for request in run.requests:
        body = request.get("body")
        for message in body.get("messages", []) if isinstance(body, dict) else []:
            blocks = message.get("content")
            for block in blocks if isinstance(blocks, list) else []:
                text = block.get("text", "") if isinstance(block, dict) else ""
                found = re.search(re.escape(head) + r".*?further in the file\.\]", text, re.S)
                if found:  # merged into another text block of the same turn
                    return [found.group(0)]
    return []


CODEX_HEAD = "Chunk ID: 000000\nWall time: 0.0000 seconds"


def _matches(corpus: Corpus, pattern: str, paths: Sequence[str]) -> list[Row]:
    regex = re.compile(pattern)
    return [
        Row(p, n, line)
        for p in sorted(corpus.paths)
        if any(p == q or p.startswith(q + "/") for q in paths)
        for n, line in enumerate(corpus.lines(p), start=1)
        if regex.search(line)
    ]


def _with_context(corpus: Corpus, rows: list[Row], context: int) -> list[Row]:
    out: list[Row] = []
    for path in sorted({r.path for r in rows}):
        hit = {r.line for r in rows if r.path == path}
        lines = corpus.lines(path)
        wanted = sorted(
            {m for n in hit for m in range(max(1, n - context), min(len(lines), n + context) + 1)}
        )
        out += [Row(path, n, lines[n - 1], n in hit) for n in wanted]  # fmt: skip
    return out


def expected_claude(corpus: Corpus, repo: Path, tool: str, args: dict[str, Any], got: str) -> str:
    if tool == "Read":
        path = Path(args["file_path"]).relative_to(repo).as_posix()
        # the client counts tokens with the provider (here the stub, 4 bytes a token): the
        # count it was given is in its partial view's note
        counted = re.search(r"\((\d+) tokens, cap 25000\)", got)
        text, _, _ = claude_read(
            args["file_path"], corpus.lines(path), args.get("offset", 1), args.get("limit"),
            final_newline=corpus.ends_with_newline(path),
            count=lambda t: int(counted.group(1)) if counted else 0,
        )  # fmt: skip
        return text
    command = args["command"]
    if command == "rg -l --sort path refund":
        paths = [p for p in sorted(corpus.paths) if any(
            "refund" in line for line in corpus.lines(p))]  # fmt: skip
        return claude_bash([(p, None) for p in paths])[0]
    if command.startswith("rg -n -C 2"):
        rows = _with_context(corpus, _matches(corpus, r"refund\(", ["app", "tests"]), 2)
        return claude_bash(rg_rows(rows, context=True))[0]
    if command.startswith("rg -n 'amount_1"):
        rows = _matches(corpus, r"amount_1[0-9]", ["data/amounts.txt"])
        return claude_bash(rg_rows(rows, with_path=False))[0]
    if command.startswith("rg -n --sort path"):
        return claude_bash(rg_rows(_matches(corpus, r"refund\(", ["data"])))[0]
    assert command == "rg -l nothing-matches-this", command
    return claude_bash([])[0]


def expected_codex(corpus: Corpus, command: str) -> str:
    if command.startswith("sed"):
        lines = corpus.lines("app/refunds.py")
        return codex_exec([(lines[n - 1], None) for n in range(6, 9)])[0]
    if command == "rg -n --sort path refund app":
        return codex_exec(rg_rows(_matches(corpus, "refund", ["app"])))[0]
    if command.startswith("rg -n --sort path"):
        return codex_exec(rg_rows(_matches(corpus, r"refund\(", ["data"])))[0]
    return codex_exec([], exit_code=1)[0]
