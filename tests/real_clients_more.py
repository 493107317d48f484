"""Gemini CLI and opencode calling excerpt's context_pack, as ``excerpt setup`` registered it,
against a local model stub.

What it answers: the tool result one of these clients hands its model after calling
excerpt's ``context_pack`` through the entry ``excerpt setup gemini|opencode`` wrote. The
clients are the pinned npm releases (``.ci/run`` installs them under ``.ci/node/clients``);
the model is a stub in this file (standard library only) that speaks the Gemini API
(``:streamGenerateContent``, SSE) for Gemini CLI and OpenAI chat completions (SSE) for
opencode's ``@ai-sdk/openai-compatible`` provider. Its first answer to a request that offers
excerpt's tools is a call of ``context_pack``; the request that carries that call's result is
recorded, and it and every other request get plain text, so the client exits.

Isolation as in ``real_clients``: the run happens in new network, PID and mount namespaces
(``unshare``): only loopback exists, the stub listens on 127.0.0.1, and every process the
run started dies with the namespace's PID 1. The client's HOME (and Gemini's
``GEMINI_CLI_HOME``, opencode's XDG directories) is the caller's temporary one.

The entry setup wrote stays as it is; to read the client's ``clientInfo``, the run binds a
tee (``real_clients.py mcp-tee``, which logs every JSON-RPC line) over the ``excerpt``
script the entry names, inside its own mount namespace only.

Command line, internal: ``netns-run WORKDIR`` (inside the namespaces: the stub and the
client).
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from excerpt.core.jsonc import set_at
from real_clients import (
    client_binary,
    client_info,
    loopback_up,
    netns_prefix,
    read_jsonl,
    run_namespaced,
)
from real_clients import unavailable as clients_unavailable

GEMINI_VERSION = "0.61.0"
OPENCODE_VERSION = "1.18.33"
INSTALL = (
    "npm install --no-audit --no-fund --silent --prefix .ci/node/clients "
    f"@google/gemini-cli@{GEMINI_VERSION} opencode-ai@{OPENCODE_VERSION}"
)
MoreClient = Literal["gemini", "opencode"]
CLIENTS: tuple[MoreClient, ...] = ("gemini", "opencode")
VERSIONS: dict[MoreClient, str] = {"gemini": GEMINI_VERSION, "opencode": OPENCODE_VERSION}
# how each names an MCP tool to its model: mcp_<server>_<tool>, <server>_<tool>
TOOL_PREFIX: dict[MoreClient, str] = {"gemini": "mcp_excerpt_", "opencode": "excerpt_"}
GEMINI_MODEL = "gemini-2.5-flash"  # named, so that no routing classifier asks the stub first
OPENCODE_MODEL = "stub-model"
FINAL_TEXT = "done"
TOOL = "context_pack"
OPENAI_CALL_ID = "call_excerpt_01"  # the id of the stub's one tool call in chat completions
# What each hands its model of a tool result, as found in the installed code (research-48):
# Gemini CLI 0.61 cuts an MCP result of one text part past 40,000 characters to its first
# 20% and last 80% under "Output too large. Showing first …", and wraps every MCP result in
# <untrusted_context> tags; opencode 1.18 keeps the first 2,000 lines or 51,200 bytes, then
# "…N bytes truncated…" and "The tool call succeeded but the output was truncated. …".
LIMITS: dict[MoreClient, tuple[int, Literal["characters", "bytes"]]] = {
    "gemini": (40_000, "characters"),
    "opencode": (51_200, "bytes"),
}
TRUNCATION_MARKERS: dict[MoreClient, tuple[str, ...]] = {
    "gemini": ("Output too large. Showing first",),
    "opencode": ("The tool call succeeded but the output was truncated", "truncated..."),
}
UNTRUSTED = ("<untrusted_context>\n", "\n</untrusted_context>")  # Gemini's wrapper


@dataclass
class ClientRun:
    """One client run: what the model was offered and what it got back, and everything
    recorded on the way."""

    client: str
    offered: list[str]  # tool names of the first request that offered excerpt's tools
    result: str | None  # the tool result as the model received it (None: never came back)
    result_raw: Any  # the request's item that carried it, whole
    requests: list[dict[str, Any]]  # every HTTP request the stub received
    mcp_log: list[dict[str, Any]]  # every JSON-RPC line between client and server
    config: str  # the client's file as the run read it: setup's entry and the stub's keys
    returncode: int | None
    timed_out: bool
    stdout: str
    stderr: str
    seconds: float
    errors: list[str] = field(default_factory=list)

    @property
    def client_info(self) -> dict[str, Any]:
        return client_info(self.mcp_log)


# --------------------------------------------------------------------------- availability


def excerpt_script() -> Path:
    """The ``excerpt`` script of this interpreter's environment (the one setup registers)."""
    return Path(sys.executable).parent / "excerpt"


def unavailable(client: str) -> str | None:
    """Why ``client`` cannot run here (None when it can): also the excerpt script that setup
    registers, and a mount namespace for the tee."""
    if not excerpt_script().is_file():
        return f"no excerpt script beside {sys.executable}: install excerpt (pip install -e .)"
    return clients_unavailable(client, install=INSTALL, prefix=_namespaces())


def truncation_markers(client: MoreClient) -> dict[str, bool]:
    """Whether each of TRUNCATION_MARKERS occurs in the installed client's code (Gemini's
    bundled JavaScript, opencode's compiled binary)."""
    binary = client_binary(client)
    if binary is None:
        return {}
    real = binary.resolve()
    files = sorted(real.parent.glob("*.js")) if client == "gemini" else [real]
    found = dict.fromkeys(TRUNCATION_MARKERS[client], False)
    for path in files:
        with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            for marker in found:
                found[marker] = found[marker] or data.find(marker.encode()) >= 0
    return found


def _namespaces() -> list[str]:
    """``real_clients``' network + PID namespaces, and a mount namespace of their own for the
    tee bound over the excerpt script (``unshare -m`` makes its mounts private)."""
    return [*netns_prefix(), "-m"]


# --------------------------------------------------------------------------- setup


def client_env(client: MoreClient, home: Path, cache: Path) -> dict[str, str]:
    """The environment of ``excerpt setup`` and of the client: a fresh HOME, nothing else
    of this machine's user state."""
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    binary = client_binary(client)
    if binary is not None:
        env["PATH"] = f"{binary.parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_STATE_HOME=str(home / ".local/state"),
        EXCERPT_CACHE_DIR=str(cache),
        NO_COLOR="1",
        TERM="dumb",
    )
    if client == "gemini":
        env["GEMINI_CLI_HOME"] = str(home)
    return env


def config_path(client: MoreClient, home: Path) -> Path:
    """The client's user file, where ``excerpt setup`` writes (``excerpt.mcp.configs``)."""
    if client == "gemini":
        return home / ".gemini" / "settings.json"
    return home / ".config" / "opencode" / "opencode.json"


def register(
    client: MoreClient, repo: Path, home: Path, cache: Path
) -> subprocess.CompletedProcess[str]:
    """``excerpt setup CLIENT --repo REPO`` as a user runs it, offline, with ``home``."""
    return subprocess.run(
        [*netns_prefix(), str(excerpt_script()), "setup", client, "--repo", str(repo)],
        cwd=repo, env=client_env(client, home, cache), capture_output=True, text=True,
        timeout=240, check=False,
    )  # fmt: skip


def stub_settings(client: MoreClient, port: int) -> list[tuple[list[str], Any]]:
    """What the client's file needs, beside excerpt's entry, to talk to the stub on ``port``:
    (key path, value) pairs."""
    if client == "gemini":
        # only GOOGLE_GEMINI_BASE_URL would select the "gateway" auth type, which headless
        # 0.61 refuses; the API-key type honours the base URL too
        return [(["security", "auth", "selectedType"], "gemini-api-key")]
    model = {
        "name": "Stub",
        "tool_call": True,
        "limit": {"context": 128_000, "output": 4_096},
    }
    provider = {
        "npm": "@ai-sdk/openai-compatible",  # bundled: chat completions, nothing downloaded
        "name": "Stub",
        "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "stub-not-a-key"},
        "models": {OPENCODE_MODEL: model},
    }
    return [
        (["provider", "stub"], provider),
        (["model"], f"stub/{OPENCODE_MODEL}"),
        (["small_model"], f"stub/{OPENCODE_MODEL}"),
        (["autoupdate"], False),
    ]


def add_stub_settings(client: MoreClient, path: Path, port: int) -> str:
    """Merge ``stub_settings`` into the client's file in place; its new text."""
    text = path.read_text(encoding="utf-8")
    for key, value in stub_settings(client, port):
        text = set_at(text, key, value)
    path.write_text(text, encoding="utf-8")
    return text


def client_argv(client: MoreClient, binary: str, prompt: str) -> list[str]:
    """The client run headless on ``prompt`` (the task itself, as a user would type it: a
    prompt a hook seeds)."""
    if client == "gemini":
        return [binary, "-p", prompt, "-m", GEMINI_MODEL, "--skip-trust", "--approval-mode",
                "yolo"]  # fmt: skip
    return [binary, "run", prompt]


def stub_env(client: MoreClient, port: int) -> dict[str, str]:
    if client == "gemini":
        return {"GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}",
                "GEMINI_API_KEY": "stub-not-a-key"}  # fmt: skip
    return {"OPENCODE_DISABLE_MODELS_FETCH": "1"}


# --------------------------------------------------------------------------- public API


def run_client(
    client: MoreClient,
    repo: Path,
    home: Path,
    cache: Path,
    task: str,
    *,
    work: Path,
    timeout: float,
) -> ClientRun:
    """Run ``client`` once in ``repo`` with the file setup wrote under ``home``; the stub
    makes it call context_pack with ``task``. Every record is kept in ``work``."""
    binary = client_binary(client)
    if binary is None:
        raise RuntimeError(f"{client} is not installed; install with: {INSTALL}")
    work.mkdir(parents=True, exist_ok=True)
    spec = {
        "client": client,
        "binary": str(binary),
        "repo": str(repo.resolve()),
        "home": str(home.resolve()),
        "cache": str(cache.resolve()),
        "task": task,
        "timeout": timeout,
        "excerpt": str(excerpt_script()),
        "python": sys.executable,
        "tee": str(Path(__file__).resolve().with_name("real_clients.py")),
    }
    doc, seconds, _ = run_namespaced(Path(__file__), work, spec, timeout, _namespaces(), client)
    return ClientRun(
        client=client,
        offered=doc["offered"],
        result=doc["result"],
        result_raw=doc["result_raw"],
        requests=read_jsonl(work / "requests.jsonl"),
        mcp_log=read_jsonl(work / "mcp.jsonl"),
        config=doc["config"],
        returncode=doc["returncode"],
        timed_out=doc["timed_out"],
        stdout=doc["stdout"],
        stderr=doc["stderr"],
        seconds=seconds,
        errors=doc["errors"],
    )


# --------------------------------------------------------------------------- the model stub


class Stub:
    """The model: one context_pack call when excerpt's tools are first offered, then text."""

    def __init__(self, client: MoreClient, task: str, log: Path) -> None:
        self.client = client
        self.task = task
        self.log = log
        self.lock = threading.Lock()
        self.count = 0
        self.offered: list[str] | None = None
        self.called = False
        self.result: str | None = None
        self.result_raw: Any = None
        self.errors: list[str] = []

    @property
    def tool_name(self) -> str:
        return TOOL_PREFIX[self.client] + TOOL

    def record(self, path: str, body: Any) -> None:
        with self.log.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"index": self.count, "path": path, "body": body}) + "\n")
        self.count += 1

    def answer(self, tools: list[str], result: tuple[str, Any] | None) -> bool:
        """Whether to call the tool now; records a result that came back."""
        if result is not None and self.called and self.result is None:
            self.result, self.result_raw = result
        if not any(t.startswith(TOOL_PREFIX[self.client]) for t in tools):
            return False  # a side request (opencode's title): no excerpt tool in it
        if self.offered is None:
            self.offered = tools
        if self.called:
            return False
        if self.tool_name not in tools:
            self.errors.append(f"{self.tool_name} is not among the offered tools {tools}")
            return False
        self.called = True
        return True


def _gemini_tools(body: dict[str, Any]) -> list[str]:
    return [
        str(d.get("name"))
        for t in body.get("tools") or []
        for d in (t.get("functionDeclarations") or [] if isinstance(t, dict) else [])
        if isinstance(d, dict)
    ]


def _gemini_result(body: dict[str, Any], name: str) -> tuple[str, Any] | None:
    """The functionResponse of ``name`` in the request: its ``output`` text, and the part."""
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict) and response.get("name") == name:
                inner = response.get("response") or {}
                output = inner.get("output") if isinstance(inner, dict) else None
                return (output if isinstance(output, str) else json.dumps(inner)), part
    return None


def _gemini_answer(call: tuple[str, dict[str, Any]] | None) -> dict[str, Any]:
    part: dict[str, Any] = {"text": FINAL_TEXT}
    if call is not None:
        part = {"functionCall": {"name": call[0], "args": call[1]}}
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                          "totalTokenCount": 15},
        "modelVersion": GEMINI_MODEL,
    }  # fmt: skip


def _openai_tools(body: dict[str, Any]) -> list[str]:
    return [
        str((t.get("function") or {}).get("name"))
        for t in body.get("tools") or []
        if isinstance(t, dict)
    ]


def _openai_result(body: dict[str, Any], call_id: str) -> tuple[str, Any] | None:
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "tool":
            if message.get("tool_call_id") != call_id:
                continue
            content = message.get("content")
            if isinstance(content, list):  # parts: their text, joined as opencode joins them
                content = "\n".join(str(p.get("text", "")) for p in content)
            return str(content), message
    return None


def _openai_chunks(model: str, call: tuple[str, dict[str, Any]] | None) -> list[dict[str, Any]]:
    base = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 0,
            "model": model}  # fmt: skip
    delta: dict[str, Any] = {"role": "assistant", "content": FINAL_TEXT}
    finish = "stop"
    if call is not None:
        function = {"name": call[0], "arguments": json.dumps(call[1])}
        tool_call = {"index": 0, "id": OPENAI_CALL_ID, "type": "function", "function": function}
        delta, finish = {"role": "assistant", "tool_calls": [tool_call]}, "tool_calls"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
    ]


def make_handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, payload: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            with stub.lock:
                stub.record(self.path, None)
            doc = {"object": "list", "data": [{"id": OPENCODE_MODEL, "object": "model"}]}
            self._send(json.dumps(doc).encode(), "application/json")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except (json.JSONDecodeError, UnicodeDecodeError):
                body = {}
            doc = body if isinstance(body, dict) else {}
            with stub.lock:
                stub.record(self.path, body)
                if "enerateContent" in self.path:
                    self._gemini(doc)
                elif self.path.split("?", 1)[0].endswith("/chat/completions"):
                    self._openai(doc)
                else:
                    self._send(b"{}", "application/json")

        def _gemini(self, body: dict[str, Any]) -> None:
            call = None
            result = _gemini_result(body, stub.tool_name)
            if stub.answer(_gemini_tools(body), result):
                call = (stub.tool_name, {"task": stub.task})
            answer = _gemini_answer(call)
            if ":streamGenerateContent" in self.path:  # SSE without [DONE]
                self._send(f"data: {json.dumps(answer)}\n\n".encode(), "text/event-stream")
            else:
                self._send(json.dumps(answer).encode(), "application/json")

        def _openai(self, body: dict[str, Any]) -> None:
            call = None
            result = _openai_result(body, OPENAI_CALL_ID)
            if stub.answer(_openai_tools(body), result):
                call = (stub.tool_name, {"task": stub.task})
            chunks = _openai_chunks(str(body.get("model", OPENCODE_MODEL)), call)
            events = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            self._send(events.encode(), "text/event-stream")

    return Handler


# --------------------------------------------------------------------------- inside the netns


def _bind_tee(spec: dict[str, Any], work: Path) -> str | None:
    """Bind a tee that logs the JSON-RPC lines over the excerpt script setup named (this
    mount namespace only); why it could not be done, or None."""
    real, tee = work / "excerpt-script", work / "excerpt-tee"
    shutil.copy2(spec["excerpt"], real)  # the script itself, run by the tee
    tee.write_text(
        "#!/bin/sh\n"
        f"exec {shlex.join([spec['python'], spec['tee'], 'mcp-tee', str(work / 'mcp.jsonl')])}"
        f' -- {shlex.quote(str(real))} "$@"\n',
        encoding="utf-8",
    )
    tee.chmod(0o755)
    proc = subprocess.run(
        ["mount", "--bind", str(tee), spec["excerpt"]],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    return None if proc.returncode == 0 else f"no tee: mount --bind: {proc.stderr.strip()}"


def _client_run(argv: list[str], env: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
    timed_out = False
    with subprocess.Popen(
        argv, cwd=spec["repo"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    ) as proc:  # fmt: skip
        try:
            stdout, stderr = proc.communicate(timeout=spec["timeout"])
        except subprocess.TimeoutExpired:  # the client hangs, or a child holds its pipes
            timed_out = proc.poll() is None
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            if os.getpid() == 1:  # this PID namespace's own processes only
                with contextlib.suppress(ProcessLookupError):
                    os.kill(-1, signal.SIGKILL)
            stdout, stderr = proc.communicate(timeout=30)
    with contextlib.suppress(ProcessLookupError):  # its servers, never the namespace's PID 1
        os.killpg(proc.pid, signal.SIGKILL)
    return {"returncode": proc.returncode, "timed_out": timed_out, "stdout": stdout,
            "stderr": stderr}  # fmt: skip


def _netns_run(work: Path) -> int:
    spec = json.loads((work / "spec.json").read_text(encoding="utf-8"))
    client: MoreClient = spec["client"]
    interfaces = sorted(name for _, name in socket.if_nameindex())
    if interfaces != ["lo"]:  # never run a client with a way out
        raise SystemExit(f"not an isolated network namespace: interfaces {interfaces}")
    loopback_up()
    stub = Stub(client, spec["task"], work / "requests.jsonl")
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(stub))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = int(server.server_address[1])
    home, cache = Path(spec["home"]), Path(spec["cache"])
    config = add_stub_settings(client, config_path(client, home), port)
    errors = [e for e in [_bind_tee(spec, work)] if e is not None]
    env = {**client_env(client, home, cache), **stub_env(client, port)}
    run = _client_run(client_argv(client, spec["binary"], spec["task"]), env, spec)
    if os.getpid() == 1:  # every process the run left (its servers) ends here
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
    server.shutdown()
    result = {
        **run,
        "port": port,
        "config": config,
        "offered": stub.offered or [],
        "result": stub.result,
        "result_raw": stub.result_raw,
        "errors": errors + stub.errors,
    }
    (work / "result.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["netns-run"] and len(argv) == 2:
        return _netns_run(Path(argv[1]))
    print("usage: real_clients_more.py netns-run WORKDIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
