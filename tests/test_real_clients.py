"""Claude Code and Codex call excerpt's MCP tools; what they forward to the model is checked.

The clients are the pinned npm releases that ``.ci/run`` installs under ``.ci/node/clients``;
the model is the stub of ``real_clients`` (no network: each run is in its own network
namespace with only loopback). One client run makes several tool calls in a row, so each
client runs three times: against excerpt's default tools (context_pack in md and json,
context_plan, context_retrieve), against ``--tools all`` (gate_check), and against a fake
server with fixed results, the positive control
that shows the truncation markers are the right ones and what the client forwards for each
result shape. Locally the tests skip when the clients or namespaces are missing; under
``CI`` they fail instead.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import git, git_commit_all, write_tree
from excerpt.evals.session.contracts import (
    PERSISTED_PATH,
    Row,
    claude_bash,
    claude_read,
    codex_exec,
    rg_rows,
)
from excerpt.evals.session.workspace import Corpus
from real_clients import (
    CLAUDE_VERSION,
    CLIENTS,
    CODEX_VERSION,
    FAKE_STRUCTURED,
    FAKE_TEXT,
    TRUNCATION_MARKERS,
    Client,
    Forwarded,
    Run,
    ToolCall,
    excerpt_definition_bytes,
    fake_server_command,
    forwarded_tool_results,
    truncation_markers,
    unavailable,
)
from test_mcp import EXPECTED_FILE, SHOP, TASK

RUN_TIMEOUT = 120.0  # seconds per client run; a hang guard, never a performance assertion
BUDGET = 4000
TOP_FILE = EXPECTED_FILE
DISTINCTIVE = '            raise ValueError("refund larger than the order")\n'
HANDLE = re.compile(r"[\w./-]+#L\d+-L\d+@[0-9a-f]{16}")
CLIENT_INFO = {
    "claude": ("claude-code", CLAUDE_VERSION),
    "codex": ("codex-mcp-client", CODEX_VERSION),
}
DEFAULT_BUDGET = {"claude": 32_000, "codex": 11_000}  # what each passes on whole
BIG = 200_000  # bytes of the fake big result: past both clients' limits


@dataclass
class ExcerptRun:
    client: Client
    run: Run
    pack: dict[str, Any]  # the CLI's JSON pack for TASK: the expected top item and handle

    def call(self, index: int) -> Forwarded:
        return self.run.forwarded[index]


def require(client: Client) -> None:
    """Skip (locally) or fail (under CI) when ``client`` cannot run here."""
    reason = unavailable(client)
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, and .ci/run installs the clients and runs as root")
    pytest.skip(reason)


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
    assert top["path"] == TOP_FILE
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
    assert doc["items"][0]["path"] == TOP_FILE
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
    assert TOP_FILE in forwarded.text
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
def test_what_the_client_sends_of_excerpts_definitions_stays_within_6000_bytes(
    excerpt_run: ExcerptRun, all_tools_run: ExcerptRun
) -> None:
    """Being installed costs each model request what the client sends of the tool
    definitions: the core tools' stay within 6,000 bytes on every request, the full list's
    are larger, and each tool the stub called was offered in full (the deferred search
    found it)."""
    for run, bound in ((excerpt_run, 6000), (all_tools_run, None)):
        sizes = [
            excerpt_definition_bytes(run.client, r["body"])
            for r in run.run.requests
            if isinstance(r.get("body"), dict)
        ]
        per_request = max(s["listed"] + s["loaded"] for s in sizes)
        assert per_request > 0, "no excerpt definition ever reached the model"
        if bound is not None:
            assert per_request <= bound, sizes
    assert all_tools_run.call(1).text.startswith("#")  # a pack after gate_check, as md


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
