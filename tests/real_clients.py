"""Real MCP clients (Claude Code, Codex) calling excerpt's tools against a local model stub.

What it answers: exactly what tool result a real client forwards to the model after it calls
one of excerpt's MCP tools. The client is the pinned npm release (``.ci/run`` installs it
under ``.ci/node/clients``); the model is a stub in this file (standard library only) that
speaks the Anthropic Messages API (Claude Code) and the OpenAI Responses API (Codex), both
streamed as SSE. The stub answers request 1 with a tool call, request 2 with the next tool
call, and so on; every request that carries a tool result is recorded, and once the calls are
used up it answers with a plain final text so that the client exits.

Isolation: each run happens in new network, PID (and, when not root, user) namespaces
(``unshare -n -p -f --kill-child``): only a loopback interface exists, the stub listens on
127.0.0.1 inside it, and when the run ends every process started in it is killed with it.
Each client gets a fresh temporary HOME and configuration directory, never the user's.

The excerpt server is registered through a tee shim (``python real_clients.py mcp-tee``)
that logs every JSON-RPC line in both directions: that is where the client's ``clientInfo``
and the server's raw ``tools/call`` results are read.

A fake MCP server (``python real_clients.py fake-mcp``) with fixed results shows what a
client forwards for each result shape (text and structured content, text only) and past its
size limit, independent of excerpt.

Command lines, all internal: ``netns-run WORKDIR`` (inside the namespaces: the stub and the
client), ``mcp-tee LOG -- CMD...`` and ``fake-mcp``. ``scripts/client_roundtrip.py`` is the
user-facing wrapper.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import json
import mmap
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal, cast

ROOT = Path(__file__).resolve().parents[1]
PREFIX = ROOT / ".ci/node/clients"
CLAUDE_VERSION = "2.1.332"
CODEX_VERSION = "0.171.0"
INSTALL = (
    "npm install --no-audit --no-fund --silent --prefix .ci/node/clients "
    f"@anthropic-ai/claude-code@{CLAUDE_VERSION} @openai/codex@{CODEX_VERSION}"
)
Client = Literal["claude", "codex"]
CLIENTS: tuple[Client, ...] = ("claude", "codex")
# A model of Codex's bundled catalog, so that its real metadata applies (the tool-output
# truncation policy among it: 10,000 tokens), not the fallback metadata of an unknown slug.
# gpt-5.5 is the catalog's one model whose tool_mode is not "code_mode_only": it calls MCP
# tools as functions. The others reach them only from JavaScript run by the `exec` tool.
CODEX_MODEL = "gpt-5.5"
# Codex features that reach the network (plugin sync, apps, model discovery) or add tools
CODEX_FEATURES_OFF = (
    "plugins",
    "remote_plugin",
    "apps",
    "api_key_model_discovery",
    "image_generation",
    "browser_use",
    "computer_use",
    "in_app_updates",
    "tool_suggest",
    "skill_mcp_dependency_install",
)
SERVER = "excerpt"  # the name the server is registered under in both clients
DEFAULT_PROMPT = "Use the excerpt tools as asked."
DEFAULT_TIMEOUT = 120.0  # seconds per client run
FINAL_TEXT = "done"

# Codex frames an MCP tool result for the model as "Wall time: 0.1234 seconds\nOutput:\n..."
# (a string when the result is forwarded as JSON; for text content, a list of input_text
# items whose first is "Wall time: 0.1234 seconds\nOutput:").
CODEX_FRAMING = re.compile(r"(Script completed\n)?Wall time:? [0-9.]+ seconds\nOutput:")
# What each client puts in a forwarded result when it cut or spilled it, as found in the
# installed packages (truncation_markers() checks that each still occurs there) and seen:
# Claude Code 2.1.332 keeps an MCP result of up to 50,000 characters; above, it saves it to a
# file and forwards a 2 KB preview in <persisted-output> ("Output too large (…). Full output
# saved to: …"), and above MAX_MCP_OUTPUT_TOKENS (25,000 tokens) only an error naming the
# file ("Error: result (N characters …) exceeds maximum allowed tokens. Output has been saved
# to …"); "[OUTPUT TRUNCATED - exceeded N token limit]" is its in-place truncation.
# Codex 0.171.0 (gpt-5.5's policy: 10,000 tokens) keeps about 47,900 bytes; above, it keeps
# the first and last 24,000 and puts "…N tokens truncated…" between them.
TRUNCATION_MARKERS: dict[Client, tuple[str, ...]] = {
    "claude": (
        "<persisted-output>",
        "Output too large (",
        "exceeds maximum allowed tokens",
        "[OUTPUT TRUNCATED - exceeded ",
    ),
    "codex": (
        "tokens truncated\u2026",
        "chars truncated\u2026",
        "Warning: truncated output",
    ),
}


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ToolCall:
    """One MCP tool call that the stub model asks the client to make."""

    tool: str
    arguments: dict[str, Any]
    builtin: bool = False  # the client's own tool (Read, Bash; exec_command), named as is


@dataclass
class Forwarded:
    """A tool result as a client forwarded it to the model."""

    client: str
    call_id: str  # the id of the stub's tool call
    tool: str
    arguments: dict[str, Any]
    text: str  # the result text, the client's framing removed where its prefix is known
    raw: Any  # the forwarded item in full (Claude: the tool_result block; Codex: the output item)
    framing: str  # the framing removed from ``text`` ("" for Claude Code)
    framed: str  # framing + text: what the model reads
    request: dict[str, Any]  # the model request that carried it
    server_result: dict[str, Any] | None  # what excerpt sent over MCP for this call
    client_info: dict[str, Any]  # the client's clientInfo (see client_info())

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))

    def truncation_markers(self) -> list[str]:
        markers = TRUNCATION_MARKERS.get(cast(Client, self.client), ())
        return [m for m in markers if m in self.framed]


@dataclass
class Run:
    """One client run: the forwarded results in call order, and everything recorded."""

    client: str
    version: str
    forwarded: list[Forwarded]
    client_info: dict[str, Any]
    requests: list[dict[str, Any]]  # every HTTP request the stub received
    mcp_log: list[dict[str, Any]]  # every JSON-RPC line between client and server
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    workdir: str
    timed_out: bool = False
    errors: list[str] = field(default_factory=list)
    setup: list[dict[str, Any]] = field(default_factory=list)  # each setup command's outcome
    runs: list[dict[str, Any]] = field(default_factory=list)  # each prompt's client run


class ClientRunError(RuntimeError):
    """The client did not forward the expected results (the message says why, with logs)."""


# --------------------------------------------------------------------------- availability


def client_binary(client: str) -> Path | None:
    """The pinned client's executable under ``.ci/node/clients`` (never one on PATH: its
    version and configuration would be anyone's)."""
    local = PREFIX / "node_modules/.bin" / client
    return local if local.exists() else None


def client_version(binary: Path) -> str:
    """``--version`` of the client, run offline like everything else."""
    proc = subprocess.run(
        [*netns_prefix(), str(binary), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return proc.stdout.strip()


def netns_prefix() -> list[str]:
    """``unshare`` arguments for new network + PID namespaces (a user namespace if not root)."""
    user = [] if os.geteuid() == 0 else ["-r"]
    return ["unshare", *user, "-n", "-p", "-f", "--kill-child"]


def unavailable(
    client: str, *, install: str = INSTALL, prefix: Sequence[str] | None = None
) -> str | None:
    """Why ``client`` cannot run here (None when it can): node, the pinned client (``install``
    says how to get it) and the namespaces of ``prefix`` (default: ``netns_prefix()``)."""
    if shutil.which("node") is None:
        return "node is not installed"
    if client_binary(client) is None:
        return f"{client} is not installed; install with: {install}"
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed: no network namespace for the client"
    try:
        proc = subprocess.run(
            [*(prefix or netns_prefix()), "true"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"network namespaces are not available: {exc}"
    if proc.returncode != 0:
        return f"network namespaces are not available: {proc.stderr.strip()}"
    return None


# --------------------------------------------------------------------------- public API


def forwarded_tool_result(
    client: Client,
    repo: Path,
    cache: Path,
    tool: str,
    arguments: dict[str, Any],
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> Forwarded:
    """What ``client`` forwards to the model after calling excerpt's ``tool`` once."""
    run = forwarded_tool_results(client, repo, cache, [ToolCall(tool, arguments)], timeout=timeout)
    return run.forwarded[0]


def forwarded_tool_results(
    client: Client,
    repo: Path,
    cache: Path,
    calls: Sequence[ToolCall],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    workdir: Path | None = None,
    server_command: Sequence[str] | None = None,
    extra_env: dict[str, str] | None = None,
    codex_model: str = CODEX_MODEL,
    codex_sandbox: str = "read-only",
    prompts: Sequence[str] = (),
    setup: Sequence[Sequence[str]] = (),
    registered: bool = False,
    client_args: Sequence[str] = (),
) -> Run:
    """Run ``client`` once; the stub model makes it call ``calls`` in order.

    ``server_command`` replaces excerpt's server command (default: this Python with
    ``-m excerpt mcp --repo REPO``); ``extra_env`` is added to the client's environment
    (e.g. ``RUST_LOG`` for Codex); ``workdir`` keeps every record there; ``codex_model``
    picks Codex's model (a "code_mode_only" one, e.g. gpt-6.2-sol, makes the stub call the
    tools from JavaScript through ``exec``: see CODE_MODE_JS). ``prompts`` are sent one
    client run each, in one session (the later ones continue it: ``claude --continue``,
    ``codex exec resume --last``); ``setup`` commands run first inside the namespace with the
    client's HOME and PATH (``excerpt setup …``); with ``registered`` the server is the one
    those commands registered, not this harness's; ``client_args`` go on every client run.
    Raises ClientRunError when a result is missing.
    """
    binary = client_binary(client)
    if binary is None:
        raise ClientRunError(f"{client} is not installed; install with: {INSTALL}")
    version = client_version(binary)
    keep = workdir is not None
    work = workdir or Path(tempfile.mkdtemp(prefix=f"excerpt-{client}-"))
    work.mkdir(parents=True, exist_ok=True)
    command = list(server_command or [sys.executable, "-m", "excerpt", "mcp", "--repo", str(repo)])
    spec = {
        "client": client,
        "binary": str(binary),
        "repo": str(Path(repo).resolve()),
        "cache": str(Path(cache).resolve()),
        "calls": [asdict(c) for c in calls],
        "timeout": timeout,
        "server_command": command,
        "python": sys.executable,
        "extra_env": dict(extra_env or {}),
        "codex_model": codex_model,
        "codex_sandbox": codex_sandbox,
        "prompts": list(prompts) or [DEFAULT_PROMPT],
        "setup": [list(a) for a in setup],
        "registered": registered,
        "client_args": list(client_args),
    }
    doc, seconds, outer = run_namespaced(
        Path(__file__), work, spec, timeout, netns_prefix(), client
    )
    run = _read_run(client, version, work, doc, seconds)
    missing = len(calls) - len(run.forwarded)
    if missing:
        raise ClientRunError(
            f"{client} forwarded {len(run.forwarded)} of {len(calls)} tool results "
            f"(rc={run.returncode}, timed_out={run.timed_out}, workdir={work}).\n"
            f"errors: {run.errors}\nstdout:\n{run.stdout[-4000:]}\nstderr:\n{run.stderr[-4000:]}"
            f"\nwrapper:\n{outer[-2000:]}"
        )
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return run


def run_namespaced(script: Path, work: Path, spec: dict[str, Any], timeout: float,
                   prefix: Sequence[str], client: str
                   ) -> tuple[dict[str, Any], float, str]:  # fmt: skip
    """Write ``spec`` into ``work``, run ``script netns-run WORK`` inside the namespaces of
    ``prefix``, and read the ``result.json`` it leaves: the result, the seconds it took and
    what the wrapper printed.

    Raises:
        ClientRunError: the run left no result (what it printed is in the message).
    """
    (work / "spec.json").write_text(json.dumps(spec, indent=2), encoding="utf-8")
    argv = [*prefix, sys.executable, str(script.resolve()), "netns-run", str(work)]
    started = time.monotonic()
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout + 60, check=False
        )
        outer = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        outer = f"the namespace wrapper hung past {timeout + 60:.0f} s: {exc}"
    seconds = time.monotonic() - started
    result_path = work / "result.json"
    if not result_path.exists():
        raise ClientRunError(f"{client}: no result from the namespace run ({work}):\n{outer}")
    return json.loads(result_path.read_text(encoding="utf-8")), seconds, outer


def _read_run(client: str, version: str, work: Path, doc: dict[str, Any], seconds: float) -> Run:
    requests = read_jsonl(work / "requests.jsonl")
    mcp_log = read_jsonl(work / "mcp.jsonl")
    info = client_info(mcp_log)
    results = server_results(mcp_log)
    by_call = {call_id: result for call_id, result in results if call_id is not None}
    forwarded: list[Forwarded] = []
    for rec in doc["forwarded"]:
        call_index = rec["index"]
        if by_call:  # Claude Code names the model's tool_use id in the call's _meta
            server_result = by_call.get(rec["call_id"])
        else:
            server_result = results[call_index][1] if call_index < len(results) else None
        forwarded.append(
            Forwarded(
                client=client,
                call_id=rec["call_id"],
                tool=rec["tool"],
                arguments=rec["arguments"],
                text=rec["text"],
                raw=rec["raw"],
                framing=rec["framing"],
                framed=rec["framed"],
                request=requests[rec["request"]]["body"],
                server_result=server_result,
                client_info=info,
            )
        )
    return Run(
        client=client,
        version=version,
        forwarded=forwarded,
        client_info=info,
        requests=requests,
        mcp_log=mcp_log,
        returncode=doc["returncode"],
        stdout=doc["stdout"],
        stderr=doc["stderr"],
        seconds=seconds,
        workdir=str(work),
        timed_out=doc["timed_out"],
        errors=doc["errors"],
        setup=doc.get("setup", []),
        runs=doc.get("runs", []),
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            out.append(json.loads(line))
    return out


def client_info(mcp_log: list[dict[str, Any]]) -> dict[str, Any]:
    """The clientInfo of the client's first request: ``initialize`` params (MCP up to
    2025-11-25) or the ``io.modelcontextprotocol/clientInfo`` request metadata (2026-07-28,
    which has no ``initialize``)."""
    for rec in mcp_log:
        msg = rec.get("msg")
        if rec.get("dir") != "c2s" or not isinstance(msg, dict) or "method" not in msg:
            continue
        params = msg.get("params") or {}
        if msg["method"] == "initialize" and "clientInfo" in params:
            return cast(dict[str, Any], params["clientInfo"])
        meta = params.get("_meta") or {}
        if "io.modelcontextprotocol/clientInfo" in meta:
            return cast(dict[str, Any], meta["io.modelcontextprotocol/clientInfo"])
    return {}


def server_results(mcp_log: list[dict[str, Any]]) -> list[tuple[str | None, dict[str, Any]]]:
    """The server's final ``tools/call`` results, in the order the client made the calls,
    each with the model's tool-call id when the client sends it (Claude Code's
    ``_meta["claudecode/toolUseId"]``).

    Under MCP 2026-07-28 a call can take several rounds: the server answers
    ``resultType: "input_required"`` (it asks for the client's roots, say) and the client
    sends the call again with ``inputResponses`` and ``requestState``; such a retry
    continues the call before it, and its result is the call's result.
    """
    chains: list[list[Any]] = []
    ids: list[str | None] = []
    for rec in mcp_log:
        msg = rec.get("msg")
        if (
            rec.get("dir") != "c2s"
            or not isinstance(msg, dict)
            or msg.get("method") != "tools/call"
        ):
            continue
        params = msg.get("params") or {}
        if chains and ("requestState" in params or "inputResponses" in params):
            chains[-1].append(msg.get("id"))
        else:
            chains.append([msg.get("id")])
            tool_use_id = (params.get("_meta") or {}).get("claudecode/toolUseId")
            ids.append(None if tool_use_id is None else str(tool_use_id))
    by_id = {
        rec["msg"].get("id"): rec["msg"].get("result", rec["msg"].get("error"))
        for rec in mcp_log
        if rec.get("dir") == "s2c" and isinstance(rec.get("msg"), dict) and "id" in rec["msg"]
    }
    return [
        (call_id, by_id[chain[-1]])
        for call_id, chain in zip(ids, chains, strict=True)
        if chain[-1] in by_id
    ]


# --------------------------------------------------------------------------- the model stub


class Script:
    """The stub model's behaviour: one tool call per main-loop request, then final text."""

    def __init__(self, client: str, calls: list[ToolCall], log: Path, max_requests: int) -> None:
        self.client = client
        self.calls = calls
        self.log = log
        self.max_requests = max_requests
        self.lock = threading.RLock()
        self.count = 0  # HTTP requests received
        self.issued: dict[str, int] = {}  # tool-call id → index into calls
        self.forwarded: dict[int, dict[str, Any]] = {}  # call index → what came back
        self.searched: set[str] = set()  # Claude: deferred tools already loaded by ToolSearch
        self.errors: list[str] = []

    def record(self, method: str, path: str, headers: dict[str, str], body: Any) -> int:
        with self.lock:
            index = self.count
            self.count += 1
            with self.log.open("a", encoding="utf-8") as fh:
                rec = {"index": index, "method": method, "path": path, "headers": headers}
                fh.write(json.dumps({**rec, "body": body}) + "\n")
            return index

    def collect(self, request_index: int, body: dict[str, Any]) -> None:
        """Record the forwarded results of calls this stub issued that ``body`` carries."""
        for call_id, raw, framing, text in _results_in(self.client, body):
            index = self.issued.get(call_id)
            if index is not None and index not in self.forwarded:
                call = self.calls[index]
                self.forwarded[index] = {
                    "index": index,
                    "call_id": call_id,
                    "tool": call.tool,
                    "arguments": call.arguments,
                    "raw": raw,
                    "framing": framing,
                    "framed": framing + text,
                    "text": text,
                    "request": request_index,
                }

    def pending(self, request_index: int) -> int | None:
        """The index of the next call to make, or None: answer with the final text."""
        done = len(self.issued)
        if done >= len(self.calls) or self.count > self.max_requests:
            return None
        if done and (done - 1) not in self.forwarded:
            self.errors.append(f"request {request_index}: call {done - 1} has no result")
            return None
        return done

    def issue(self, index: int) -> str:
        call_id = f"toolu_call_{index + 1:02d}"
        self.issued[call_id] = index
        return call_id


def _text_of(content: Any) -> str:
    """Claude tool_result content (a string or content blocks) as one string."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            parts.append(json.dumps(block))
    return "\n".join(parts)


def split_codex_output(output: Any) -> tuple[str, str]:
    """(framing, text) of a Codex tool output: a string ``Wall time: … Output:\n<text>``, or
    input_text items whose first is the framing (``Wall time: …\nOutput:`` for a function
    call; ``Script completed\nWall time …\nOutput:\n`` for code mode's ``exec``)."""
    if isinstance(output, dict):
        output = output.get("content", json.dumps(output))
    if isinstance(output, list):
        texts = [str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in output]
        if texts and CODEX_FRAMING.fullmatch(texts[0].removesuffix("\n")):
            sep = "" if texts[0].endswith("\n") else "\n"
            return texts[0] + sep, "\n".join(texts[1:])
        return "", "\n".join(texts)
    text = str(output)
    match = CODEX_FRAMING.match(text)
    if match and text[match.end() : match.end() + 1] == "\n":
        return text[: match.end() + 1], text[match.end() + 1 :]
    return "", text


def _results_in(client: str, body: dict[str, Any]) -> Iterator[tuple[str, Any, str, str]]:
    """(call id, raw item, framing, text) of every tool result in a model request."""
    if client == "claude":
        for message in body.get("messages", []):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    text = _text_of(block.get("content"))
                    yield str(block.get("tool_use_id")), block, "", text
    else:
        for item in body.get("input", []):
            if isinstance(item, dict) and item.get("type") in (
                "function_call_output",
                "custom_tool_call_output",
            ):
                framing, text = split_codex_output(item.get("output"))
                yield str(item.get("call_id")), item, framing, text


def estimate_tokens(value: Any) -> int:
    """About 4 UTF-8 bytes a token, over the text of ``value`` (JSON for anything else)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return max(1, len(text.encode("utf-8")) // 4)


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
    )


def _anthropic_events(
    model: str, call: tuple[str, str, dict[str, Any]] | None
) -> list[tuple[str, dict[str, Any]]]:
    """A streamed Messages API answer: a tool_use ``(id, name, input)``, or the final text."""
    usage = {"input_tokens": 10, "output_tokens": 1}
    message: dict[str, Any] = {
        "id": "msg_stub",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message})
    ]
    if call is not None:
        call_id, name, arguments = call
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": FINAL_TEXT}
        stop = "end_turn"
    events += [
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def _anthropic_message(model: str) -> dict[str, Any]:
    return {
        "id": "msg_stub",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": FINAL_TEXT}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }


def _responses_events(
    model: str, call: tuple[str, dict[str, Any], dict[str, Any]] | None
) -> list[tuple[str, dict[str, Any]]]:
    """A streamed Responses API answer: a function call, or the final text."""
    item: dict[str, Any]
    if call is not None and call[1].get("type") == "tool_search":
        call_id, _, arguments = call
        item = {
            "type": "tool_search_call",
            "id": f"ts_{call_id}",
            "call_id": call_id,
            "execution": "client",
            "arguments": arguments,
            "status": "completed",
        }
    elif call is not None and call[1].get("type") == "exec":
        call_id, _, arguments = call
        item = {
            "type": "custom_tool_call",
            "id": f"ctc_{call_id}",
            "call_id": call_id,
            "name": "exec",
            "input": arguments["input"],
            "status": "completed",
        }
    elif call is not None:
        call_id, tool, arguments = call
        item = {
            "type": "function_call",
            "id": f"fc_{call_id}",
            "call_id": call_id,
            "name": tool["name"],
            "arguments": json.dumps(arguments),
            "status": "completed",
        }
        if tool.get("namespace"):
            item["namespace"] = tool["namespace"]
    else:
        item = {
            "type": "message",
            "id": "msg_stub",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}],
        }
    response = {
        "id": "resp_stub",
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "model": model,
        "output": [],
    }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    done = {**response, "status": "completed", "output": [item], "usage": usage}
    added = {**item, "status": "in_progress"}
    if item["type"] == "message":
        added["content"] = []
    return [
        ("response.created", {"type": "response.created", "response": response}),
        ("response.in_progress", {"type": "response.in_progress", "response": response}),
        (
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": added},
        ),
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
        ("response.completed", {"type": "response.completed", "response": done}),
    ]


def _codex_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """excerpt tool name → {"name", "namespace"} as Codex offers it in a Responses request:
    in ``tools``, or in the output of an earlier ``tool_search``."""
    out: dict[str, dict[str, Any]] = {}

    def visit(tools: list[Any], namespace: str | None) -> None:
        for tool in tools:
            if not isinstance(tool, dict):
                continue
            name = str(tool.get("name", ""))
            if tool.get("type") == "namespace":
                visit(tool.get("tools", []), name)
                continue
            if namespace in (f"mcp__{SERVER}", f"mcp__{SERVER}__"):
                out.setdefault(name, {"name": name, "namespace": namespace})
            elif namespace is None and name.startswith(f"mcp__{SERVER}__"):
                out.setdefault(name[len(f"mcp__{SERVER}__") :], {"name": name, "namespace": None})

    visit(body.get("tools", []), None)
    for item in body.get("input", []):  # tools loaded by an earlier tool_search
        if isinstance(item, dict) and item.get("type") == "tool_search_output":
            visit(item.get("tools", []), None)
    return out


def _claude_next(
    script: Script, index: int, body: dict[str, Any]
) -> tuple[str, str, dict[str, Any]] | None:
    """The next tool_use for Claude Code: the call itself, or first a ToolSearch for it.

    Claude Code defers MCP tools: they are listed by name in the system text and their
    schemas load through ToolSearch (``select:NAME``), as a real model does it.
    """
    offered = {str(t.get("name")) for t in body.get("tools", []) if isinstance(t, dict)}
    prefix = f"mcp__{SERVER}__"
    if not any(n.startswith(prefix) for n in offered) and "ToolSearch" not in offered:
        return None  # not the main loop (a side request: no excerpt tool, no tool search)
    script.collect(index, body)
    pending = script.pending(index)
    if pending is None:
        return None
    call = script.calls[pending]
    if call.builtin:
        return script.issue(pending), call.tool, call.arguments
    name = prefix + call.tool
    if name not in offered and "ToolSearch" in offered and name not in script.searched:
        names = sorted({prefix + c.tool for c in script.calls[pending:]} - offered)
        script.searched.update(names)
        search_id = f"toolu_search_{len(script.searched):02d}"
        return search_id, "ToolSearch", {"query": "select:" + ",".join(names)}
    return script.issue(pending), name, script.calls[pending].arguments


# What the stub runs in Codex's code mode: the MCP call, then the whole value it returns
CODE_MODE_JS = (
    'const r = await tools.{tool}({args});\ntext(typeof r === "string" ? r : JSON.stringify(r));\n'
)


def _codex_code_mode(body: dict[str, Any]) -> bool:
    """Whether Codex offers its tools only through the JavaScript ``exec`` tool."""
    items = [i for i in body.get("input", []) if isinstance(i, dict)]
    groups = [body.get("tools", [])] + [
        i.get("tools", []) for i in items if i.get("type") == "additional_tools"
    ]
    stack = [t for g in groups for t in g if isinstance(t, dict)]
    while stack:
        tool = stack.pop()
        if tool.get("type") == "namespace":
            stack += [t for t in tool.get("tools", []) if isinstance(t, dict)]
        elif tool.get("name") == "exec" and tool.get("type") == "custom":
            return True
    return False


def _codex_next(
    script: Script, index: int, body: dict[str, Any]
) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
    """The next output item for Codex: the function call, or first a tool_search for it.

    Codex defers MCP tools for models that support tool search (as gpt-5.5 does): they are
    named in the instructions and come back from a client-executed ``tool_search``.
    """
    tools = _codex_tools(body)
    offered = {str(t.get("type")) for t in body.get("tools", []) if isinstance(t, dict)}
    if not tools and "tool_search" not in offered and _codex_code_mode(body):
        script.collect(index, body)
        pending = script.pending(index)
        if pending is None:
            return None
        call = script.calls[pending]
        js = CODE_MODE_JS.format(
            tool=f"mcp__{SERVER}__{call.tool}", args=json.dumps(call.arguments)
        )
        return script.issue(pending), {"type": "exec"}, {"input": js}
    if not tools and "tool_search" not in offered:
        return None  # not the main loop (a side request: no excerpt tool, no tool search)
    script.collect(index, body)
    pending = script.pending(index)
    if pending is None:
        return None
    call = script.calls[pending]
    if call.builtin:
        return script.issue(pending), {"name": call.tool}, call.arguments
    tool = tools.get(call.tool)
    if tool is None:
        if "tool_search" in offered and call.tool not in script.searched:
            script.searched.add(call.tool)
            search_id = f"call_search_{len(script.searched):02d}"
            return search_id, {"type": "tool_search"}, {"query": f"{SERVER} {call.tool}"}
        script.errors.append(f"request {index}: no tool {call.tool!r} offered")
        return None
    return script.issue(pending), tool, call.arguments


def make_handler(script: Script) -> type[BaseHTTPRequestHandler]:  # noqa: C901 (its class)
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length) if length else b""
            if self.headers.get("Content-Encoding") == "gzip":
                data = gzip.decompress(data)
            if not data:
                return None
            try:
                return json.loads(data)
            except (json.JSONDecodeError, UnicodeDecodeError):
                return {"undecoded": data[:2000].decode("latin-1")}

        def _send(self, status: int, payload: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("request-id", "req_stub")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def _json(self, doc: Any, status: int = 200) -> None:
            self._send(status, json.dumps(doc).encode(), "application/json")

        def do_HEAD(self) -> None:
            script.record("HEAD", self.path, dict(self.headers), None)
            self._send(200, b"", "text/plain")

        def do_GET(self) -> None:
            script.record("GET", self.path, dict(self.headers), None)
            if self.path.rstrip("/").endswith("/models") or "/models?" in self.path:
                self._json({"data": [], "models": [], "has_more": False, "object": "list"})
            else:
                self._json({})

        def do_POST(self) -> None:
            body = self._body()
            index = script.record("POST", self.path, dict(self.headers), body)
            path = self.path.split("?", 1)[0]
            doc = body if isinstance(body, dict) else {}
            model = str(doc.get("model", "stub-model"))
            if path.endswith("/messages/count_tokens"):
                # Claude Code counts a large MCP result before deciding to cut it: answer
                # with an estimate (4 bytes a token), not a constant that would never cut
                self._json({"input_tokens": estimate_tokens(doc.get("messages"))})
            elif path.endswith("/messages"):
                self._messages(index, doc, model)
            elif path.endswith("/responses"):
                self._responses(index, doc, model)
            else:
                self._json({})

        def _messages(self, index: int, body: dict[str, Any], model: str) -> None:
            if not body.get("stream"):
                self._json(_anthropic_message(model))
                return
            with script.lock:
                call = _claude_next(script, index, body)
            self._send(200, _sse(_anthropic_events(model, call)), "text/event-stream")

        def _responses(self, index: int, body: dict[str, Any], model: str) -> None:
            with script.lock:
                call = _codex_next(script, index, body)
            self._send(200, _sse(_responses_events(model, call)), "text/event-stream")

    return Handler


# --------------------------------------------------------------------------- inside the netns


def loopback_up() -> None:
    """``ip link set lo up`` without iproute2: SIOCGIFFLAGS / SIOCSIFFLAGS on ``lo``."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        ifreq = struct.pack("16sh14x", b"lo", 0)
        flags = struct.unpack("16sh14x", fcntl.ioctl(sock, siocgifflags, ifreq))[1]
        fcntl.ioctl(sock, siocsifflags, struct.pack("16sh14x", b"lo", flags | iff_up))


def _netns_run(work: Path) -> int:
    spec = json.loads((work / "spec.json").read_text(encoding="utf-8"))
    client: str = spec["client"]
    calls = [ToolCall(c["tool"], c["arguments"], c.get("builtin", False)) for c in spec["calls"]]
    interfaces = sorted(name for _, name in socket.if_nameindex())
    if interfaces != ["lo"]:  # never run a client with a way out
        raise SystemExit(f"not an isolated network namespace: interfaces {interfaces}")
    loopback_up()
    turns = len(spec.get("prompts") or [DEFAULT_PROMPT])
    script = Script(client, calls, work / "requests.jsonl", max_requests=len(calls) + 8 * turns)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(script))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    home = work / "home"
    home.mkdir(exist_ok=True)
    mcp_command = [
        spec["python"],
        str(Path(__file__).resolve()),
        "mcp-tee",
        str(work / "mcp.jsonl"),
        "--",
        *spec["server_command"],
    ]
    mcp_env = {"EXCERPT_CACHE_DIR": spec["cache"], "HOME": str(home)}
    if client == "claude":
        argv, env = _claude_setup(spec, work, home, port, mcp_command, mcp_env, calls)
    else:
        argv, env = _codex_setup(spec, work, home, port, mcp_command, mcp_env)
    env.update(spec.get("extra_env", {}))
    (work / "argv.json").write_text(json.dumps({"argv": argv, "env": env}, indent=2), "utf-8")
    setup = [_setup_command(a, env, spec) for a in spec.get("setup", [])]
    runs: list[dict[str, Any]] = []
    timed_out = False
    for number, prompt in enumerate(spec.get("prompts") or [DEFAULT_PROMPT]):
        run_argv = _prompt_argv(client, argv, prompt, number)
        run = _client_run(run_argv, env, spec)
        runs.append({"argv": run_argv, **run})
        timed_out = timed_out or run["timed_out"]
    last = runs[-1]
    if os.getpid() == 1:  # every process the runs left (servers, background work) ends here
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
    server.shutdown()
    result = {
        "port": port,
        "returncode": last["returncode"],
        "timed_out": timed_out,
        "stdout": last["stdout"],
        "stderr": last["stderr"],
        "setup": setup,
        "runs": runs,
        "forwarded": [script.forwarded[i] for i in sorted(script.forwarded)],
        "errors": script.errors,
        "requests": script.count,
    }
    (work / "result.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


def _setup_command(argv: list[str], env: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
    """A setup command run with the client's environment, the client's directory on PATH."""
    path = f"{Path(spec['binary']).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(
        argv, cwd=spec["repo"], env={**env, "PATH": path, "EXCERPT_CACHE_DIR": spec["cache"]},
        capture_output=True, text=True, timeout=spec["timeout"], check=False,
    )  # fmt: skip
    return {"argv": argv, "returncode": proc.returncode, "stdout": proc.stdout,
            "stderr": proc.stderr}  # fmt: skip


def _prompt_argv(client: str, argv: list[str], prompt: str, number: int) -> list[str]:
    """The client's command line for the ``number``-th prompt of the session."""
    at = argv.index(DEFAULT_PROMPT)
    if number == 0:
        return [*argv[:at], prompt, *argv[at + 1 :]]
    if client == "claude":
        return [*argv[:at], prompt, *argv[at + 1 :], "--continue"]
    # codex exec [OPTIONS] PROMPT → codex exec resume --last [OPTIONS] PROMPT
    options = [a for a in argv[2:at] if a not in ("--ephemeral", "--color", "never")]
    return [argv[0], "exec", "resume", "--last", *options, prompt]


def _client_run(argv: list[str], env: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
    timed_out = False
    with subprocess.Popen(
        argv,
        cwd=spec["repo"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=spec["timeout"])
        except subprocess.TimeoutExpired:  # the client hangs, or a child holds its pipes
            timed_out = proc.poll() is None
            _kill_all(proc.pid)
            stdout, stderr = proc.communicate(timeout=30)
    with contextlib.suppress(ProcessLookupError):  # its servers, never the namespace's PID 1
        os.killpg(proc.pid, signal.SIGKILL)
    return {"returncode": proc.returncode, "timed_out": timed_out, "stdout": stdout,
            "stderr": stderr}  # fmt: skip


def _kill_all(pgid: int) -> None:
    """Kill the client's process group and, as PID 1 of the run's own PID namespace, every
    other process in it (MCP servers the client started in sessions of their own)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    if os.getpid() == 1:  # only inside the namespace: there kill(-1) reaches nothing else
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)


def _base_env(home: Path) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TERM", "SYSTEMROOT", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_STATE_HOME=str(home / ".local/state"),
        NO_COLOR="1",
    )
    return env


def _claude_setup(
    spec: dict[str, Any],
    work: Path,
    home: Path,
    port: int,
    mcp_command: list[str],
    mcp_env: dict[str, str],
    calls: list[ToolCall],
) -> tuple[list[str], dict[str, str]]:
    config = work / "claude-mcp.json"
    server = {"type": "stdio", "command": mcp_command[0], "args": mcp_command[1:], "env": mcp_env}
    config.write_text(json.dumps({"mcpServers": {SERVER: server}}, indent=2), encoding="utf-8")
    allowed = sorted({c.tool if c.builtin else f"mcp__{SERVER}__{c.tool}" for c in calls})
    argv = [spec["binary"], "-p", DEFAULT_PROMPT, "--output-format", "json"]
    if not spec.get("registered"):  # else the server excerpt setup registered
        argv += ["--mcp-config", str(config), "--strict-mcp-config"]
    argv += ["--allowedTools", ",".join(allowed) or "Bash"]
    if len(spec.get("prompts") or ()) <= 1:  # one prompt: nothing to continue
        argv.append("--no-session-persistence")
    argv += spec.get("client_args", [])
    env = _base_env(home)
    env.update(
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
        ANTHROPIC_API_KEY="sk-ant-stub-not-a-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        MCP_CONNECTION_NONBLOCKING="0",
        MCP_TIMEOUT=str(int(spec["timeout"] * 1000)),
        MCP_TOOL_TIMEOUT=str(int(spec["timeout"] * 1000)),
    )
    return argv, env


def _toml(value: Any) -> str:
    return json.dumps(value)  # JSON strings, numbers, booleans and arrays are valid TOML


def _codex_setup(
    spec: dict[str, Any],
    work: Path,
    home: Path,
    port: int,
    mcp_command: list[str],
    mcp_env: dict[str, str],
) -> tuple[list[str], dict[str, str]]:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    env_table = ", ".join(f"{k} = {_toml(v)}" for k, v in mcp_env.items())
    lines = [
        f"model = {_toml(spec.get('codex_model', CODEX_MODEL))}",
        'model_provider = "stub"',
        'approval_policy = "never"',
        f"sandbox_mode = {_toml(spec.get('codex_sandbox', 'read-only'))}",
        "check_for_update_on_startup = false",
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[features]",
        *(f"{name} = false" for name in CODEX_FEATURES_OFF),
        "",
        "[model_providers.stub]",
        'name = "stub"',
        f'base_url = "http://127.0.0.1:{port}/v1"',
        'wire_api = "responses"',
        'env_key = "STUB_API_KEY"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "",
    ]
    if not spec.get("registered"):  # else the server excerpt setup registers
        lines += [
            f"[mcp_servers.{SERVER}]",
            f"command = {_toml(mcp_command[0])}",
            f"args = {_toml(mcp_command[1:])}",
            f"env = {{ {env_table} }}",
            "required = true",
            f"startup_timeout_sec = {max(1, round(spec['timeout']))}",
            f"tool_timeout_sec = {max(1, round(spec['timeout']))}",
            "",
        ]
    (codex_home / "config.toml").write_text("\n".join(lines), encoding="utf-8")
    argv = [spec["binary"], "exec", "--strict-config", "--skip-git-repo-check"]
    if len(spec.get("prompts") or ()) <= 1:  # one prompt: no session to resume
        argv.append("--ephemeral")
    argv += ["--color", "never", "--json", *spec.get("client_args", []), DEFAULT_PROMPT]
    env = _base_env(home)
    env.update(CODEX_HOME=str(codex_home), STUB_API_KEY="stub-not-a-key")
    return argv, env


# --------------------------------------------------------------------------- MCP tee shim


def _mcp_tee(log: Path, command: list[str]) -> int:
    """Run ``command`` as the MCP server, logging every JSON-RPC line in both directions."""
    lock = threading.Lock()

    def write(direction: str, line: bytes) -> None:
        text = line.decode("utf-8", "replace").strip()
        if not text:
            return
        try:
            msg: Any = json.loads(text)
        except json.JSONDecodeError:
            msg = text
        with lock, log.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"t": time.time(), "dir": direction, "msg": msg}) + "\n")

    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as child:
        assert child.stdin is not None and child.stdout is not None
        child_in, child_out = child.stdin, child.stdout

        def pump_in() -> None:
            try:
                for line in sys.stdin.buffer:
                    write("c2s", line)
                    child_in.write(line)
                    child_in.flush()
            except (BrokenPipeError, OSError):
                pass
            finally:
                with contextlib.suppress(OSError):
                    child_in.close()

        threading.Thread(target=pump_in, daemon=True).start()
        out = sys.stdout.buffer
        for line in child_out:
            write("s2c", line)
            try:
                out.write(line)
                out.flush()
            except (BrokenPipeError, OSError):
                break
        return child.wait()


# --------------------------------------------------------------------------- a fake MCP server

# Tools of the fake server (``python real_clients.py fake-mcp``): fixed results that show
# what a client forwards for each result shape, independent of excerpt's own server.
FAKE_TEXT = "fake-content-text: the Markdown a model should read."
FAKE_STRUCTURED = {"fake": "structured", "n": 1}
FAKE_BIG_LINE = "big-result line {:06d}: " + "x" * 80 + "\n"


def fake_result(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The CallToolResult of a fake tool: ``both`` (text + structuredContent),
    ``content_only``, ``structured_only`` (structuredContent + empty content) and
    ``big`` (``arguments["bytes"]`` bytes of text, default 300,000)."""
    if tool == "both":
        return {
            "content": [{"type": "text", "text": FAKE_TEXT}],
            "structuredContent": FAKE_STRUCTURED,
        }
    if tool == "content_only":
        return {"content": [{"type": "text", "text": FAKE_TEXT}]}
    if tool == "structured_only":
        return {"content": [], "structuredContent": FAKE_STRUCTURED}
    if tool == "big":
        size = int(arguments.get("bytes", 300_000))
        lines = [FAKE_BIG_LINE.format(i) for i in range(size // len(FAKE_BIG_LINE.format(0)) + 1)]
        return {"content": [{"type": "text", "text": "".join(lines)[:size]}]}
    return {"content": [{"type": "text", "text": f"unknown tool {tool}"}], "isError": True}


FAKE_TOOLS = [
    {
        "name": name,
        "description": f"Fake tool {name} for client tests.",
        "inputSchema": {"type": "object", "properties": {"bytes": {"type": "integer"}}},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    }
    for name in ("both", "content_only", "structured_only", "big")
]


def _fake_mcp() -> int:
    """A minimal stdio MCP server (JSON lines, protocol 2025-06-18) with FAKE_TOOLS."""
    out = sys.stdout

    def send(msg: dict[str, Any]) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue  # notifications and responses
        method, params = msg["method"], msg.get("params") or {}
        result: dict[str, Any] | None = None
        if method == "initialize":
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "fake", "version": "0.0.1"},
            }
        elif method == "tools/list":
            result = {"tools": FAKE_TOOLS}
        elif method == "tools/call":
            result = fake_result(str(params.get("name")), params.get("arguments") or {})
        elif method == "ping":
            result = {}
        if result is None:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            send({"jsonrpc": "2.0", "id": msg["id"], "error": error})
        else:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
    return 0


def excerpt_definition_bytes(client: str, body: dict[str, Any]) -> dict[str, int]:
    """What of one model request is excerpt's tool definitions, in UTF-8 bytes of its JSON:
    ``listed``, the definitions in the request's ``tools`` (sent with every request), and
    ``loaded``, those a tool search brought into the conversation (sent once, then held in
    the history). Both clients defer MCP tools: before a search, only names (Claude Code)
    or the server's instructions (Codex) are in the system text, which this does not count."""
    prefix = f"mcp__{SERVER}"

    def size(items: list[Any]) -> int:
        return sum(len(json.dumps(t, ensure_ascii=False).encode()) for t in items)

    tools = [t for t in body.get("tools", []) if isinstance(t, dict)]
    listed = [t for t in tools if str(t.get("name", "")).startswith(prefix)]
    loaded: list[Any] = []
    for item in body.get("input", []) if client == "codex" else []:
        if isinstance(item, dict) and item.get("type") == "tool_search_output":
            loaded += [t for t in item.get("tools", []) if str(t.get("name", "")) == prefix]
    return {"listed": size(listed), "loaded": size(loaded)}


def fake_server_command() -> list[str]:
    """The command of the fake MCP server, for ``forwarded_tool_results(server_command=)``."""
    return [sys.executable, str(Path(__file__).resolve()), "fake-mcp"]


# --------------------------------------------------------------------------- truncation markers


def truncation_markers(client: Client) -> dict[str, bool]:
    """Whether each marker in TRUNCATION_MARKERS occurs in the installed client's code."""
    binary = client_binary(client)
    if binary is None:
        return {}
    real = binary.resolve()
    if client == "codex":
        # bin/codex.js of @openai/codex starts the platform package's native binary
        vendored = sorted(real.parents[2].glob("codex-*/vendor/*/bin/codex"))
        real = vendored[0] if vendored else real
    with real.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return {m: data.find(m.encode()) >= 0 for m in TRUNCATION_MARKERS[client]}


def main(argv: list[str]) -> int:
    if argv[:1] == ["netns-run"] and len(argv) == 2:
        return _netns_run(Path(argv[1]))
    if argv == ["fake-mcp"]:
        return _fake_mcp()
    if argv[:1] == ["mcp-tee"] and len(argv) > 3 and argv[2] == "--":
        return _mcp_tee(Path(argv[1]), argv[3:])
    usage = "usage: real_clients.py netns-run WORKDIR | mcp-tee LOG -- CMD... | fake-mcp"
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
