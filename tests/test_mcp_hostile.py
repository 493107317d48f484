"""``excerpt mcp`` under hostile input: generated tool arguments, malformed JSON-RPC frames
and calls that never finish (RELIABILITY B5.36, B5.38; classes T1, T5).

Generated arguments go to in-process servers through the SDK's client (legacy negotiation,
so that ``ping`` exists), opened once for the module: one server per tool, each with its
own cache, so that ``gate_check`` can run beside the others without queueing on one index
lock. Every tool's own ``inputSchema`` from ``tools/list`` drives
``hypothesis-jsonschema``, with strings cut to ``MAX_TEXT`` characters and arrays to
``MAX_ITEMS`` items so that a call stays cheap (long inputs are other tests' business).
``gate_check`` serves the committed fixture repository; the other tools the same files
outside git, where a call starts no git process. Frames go through the server's own stdio
transport (``excerpt.mcp.wire.serve_pipes``) on a pair of pipes, in process; the real
``excerpt mcp`` subprocess is started only for what needs the process: stdout hygiene, and
a call that outlives the deadline while stdin closes. After every example a cheap call
still succeeds and a ping answers within ``PING_BOUND`` seconds (the issue's bound: a ping
takes well under a millisecond here, so it asserts liveness, not speed).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

import excerpt.mcp.session as session_module
from conftest import write_tree
from excerpt.mcp import build_server
from excerpt.mcp.calls import DEADLINE_ENV, MAX_ABANDONED, deadline
from excerpt.mcp.wire import MAX_FRAME, serve_pipes
from trees import SHOP, TASK

PING_BOUND = 1.0  # seconds: the bound for a ping while the server works
HANG_GUARD = 60  # seconds: a hang guard, never a performance assertion
MAX_TEXT = 40
MAX_ITEMS = 4
TOOLS = (
    "context_plan",
    "context_pack",
    "context_retrieve",
    "index_status",
    "harness_infer",
    "risk_classify",
    "gate_check",
    "context_handoff",
    "context_handoff_validate",
    "context_compact",
    "context_expand",
)
# The tool that needs git serves the committed fixture; the others the same files outside
# git, where a call starts no git process (three per index refresh otherwise).
IN_GIT = {"gate_check"}
CHEAP = ("risk_classify", {"query": "refund the payment"})
JSON_RPC_CODES = {-32700, -32600, -32601, -32602, -32603}
INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "excerpt-tests", "version": "0"},
}


# --------------------------------------------------------------------------- fixtures


@dataclass
class Live:
    """SDK client sessions to in-process servers of the fixture, kept open across examples:
    one server per tool, each with its cache, so that the tools of one example run at once
    without queueing on one index lock; ``client`` is the first."""

    portal: BlockingPortal
    clients: dict[str, Client]
    schemas: dict[str, dict[str, Any]]
    served: int = 0

    @property
    def client(self) -> Client:
        return self.clients[TOOLS[0]]

    def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        async def go() -> CallToolResult:
            with anyio.fail_after(HANG_GUARD):
                return await self.client.call_tool(name, arguments)

        return self.portal.call(go)

    def ping(self) -> None:
        async def go() -> None:
            with anyio.fail_after(PING_BOUND):
                await self.client.session.send_ping()

        self.portal.call(go)

    def assert_still_serving(self, every: bool = False) -> None:
        """A cheap call succeeds and a ping answers within the bound; with ``every``, each
        server answers a ping and the next server in turn the cheap call."""
        self.served += 1
        turn = TOOLS[self.served % len(TOOLS)] if every else TOOLS[0]

        async def ping(client: Client) -> None:
            with anyio.fail_after(PING_BOUND):
                await client.session.send_ping()

        async def go() -> None:
            with anyio.fail_after(HANG_GUARD):
                result = await self.clients[turn].call_tool(*CHEAP)
            assert result.is_error is not True, result
            async with anyio.create_task_group() as tg:
                for client in self.clients.values() if every else [self.client]:
                    tg.start_soon(ping, client)

        self.portal.call(go)


@pytest.fixture(scope="module")
def live(committed_shop: tuple[Path, Path]) -> Iterator[Live]:
    repo, cache = committed_shop
    plain = write_tree(repo.parent / "shop-outside-git", SHOP)
    with start_blocking_portal() as portal, contextlib.ExitStack() as stack:
        clients = {
            name: stack.enter_context(
                portal.wrap_async_context_manager(
                    Client(
                        build_server(repo if name in IN_GIT else plain, cache / name, tools="all"),
                        mode="legacy",
                    )
                )
            )
            for name in TOOLS
        }

        async def listed() -> dict[str, dict[str, Any]]:
            listing = await clients[TOOLS[0]].list_tools()
            return {t.name: t.input_schema for t in listing.tools}

        async def warm() -> None:  # the first index of each cache, all at once
            async with anyio.create_task_group() as tg:
                for client in clients.values():
                    tg.start_soon(client.call_tool, "index_status", {})

        portal.call(warm)
        yield Live(portal, clients, portal.call(listed))


class Wire:
    """The server's stdio transport on two pipes, in process: frames in, lines out."""

    def __init__(self, repo: Path, cache: Path) -> None:
        to_server, self._to_server = os.pipe()
        self._from_server, from_server = os.pipe()
        self._stdin = os.fdopen(to_server, "rb")
        self._stdout = os.fdopen(from_server, "wb")
        self._writer = os.fdopen(self._to_server, "wb")
        self._portal_cm = start_blocking_portal()
        portal = self._portal_cm.__enter__()
        self.served: Future[None] = portal.start_task_soon(
            serve_pipes, build_server(repo, cache, tools="all"), self._stdin, self._stdout
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.arrived: dict[str, float] = {}  # when the last answer to an id was read
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next = 0

    def _read(self) -> None:
        with os.fdopen(self._from_server, "rb") as lines:
            for line in lines:
                self.lines.put(line)
        self.lines.put(None)

    def send(self, frame: bytes | dict[str, Any]) -> None:
        data = frame if isinstance(frame, bytes) else json.dumps(frame).encode() + b"\n"
        self._writer.write(data)
        self._writer.flush()

    def until(self, wanted: Iterable[Any], timeout: float = HANG_GUARD) -> list[dict[str, Any]]:
        """Every message read until one answers each id in ``wanted`` (JSON values)."""
        seen: list[dict[str, Any]] = []
        waiting = {_key(rid) for rid in wanted}
        while waiting:
            line = self.lines.get(timeout=timeout)
            assert line is not None, f"the server closed stdout before answering {waiting}"
            message = json.loads(line)
            assert message.get("jsonrpc") == "2.0", message
            seen.append(message)
            self.arrived[_key(message.get("id"))] = time.monotonic()
            waiting.discard(_key(message.get("id")))
        return seen

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        rid = self.new_id()
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            frame["params"] = params
        self.send(frame)
        return next(m for m in self.until({rid}) if m.get("id") == rid)

    def new_id(self) -> str:
        self._next += 1
        return f"zz-{self._next}"

    def handshake(self) -> None:
        assert "result" in self.request("initialize", INITIALIZE)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def ping(self) -> None:
        rid = self.new_id()
        self.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
        [answer] = [m for m in self.until({rid}, timeout=PING_BOUND) if m.get("id") == rid]
        assert answer["result"] == {}

    def assert_still_serving(self) -> None:
        name, arguments = CHEAP
        answer = self.request("tools/call", {"name": name, "arguments": arguments})
        assert answer["result"]["isError"] is False, answer
        self.ping()

    def close(self) -> None:
        self._writer.close()  # end of input: the server ends
        self.served.result(timeout=HANG_GUARD)
        self._portal_cm.__exit__(None, None, None)
        self._stdout.close()
        self._stdin.close()
        self._reader.join(timeout=HANG_GUARD)

    def __enter__(self) -> Wire:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _key(rid: Any) -> Any:
    return json.dumps(rid)


@pytest.fixture(scope="module")
def wire(committed_shop: tuple[Path, Path]) -> Iterator[Wire]:
    with Wire(*committed_shop) as server:
        server.handshake()
        yield server


class Gate(threading.Event):
    """Set to release the hung calls; ``entered`` is released once by each call that hangs."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Semaphore(0)


def _hang(monkeypatch: pytest.MonkeyPatch, spin: bool) -> Iterator[Gate]:
    event = Gate()

    def hang(*args: Any, **kwargs: Any) -> Any:
        event.entered.release()
        while spin and not event.is_set():
            sum(range(1000))
        event.wait()
        raise RuntimeError("released")

    monkeypatch.setattr(session_module.ServedRepo, "index_report", hang)
    yield event
    event.set()


@pytest.fixture
def spinning(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    """``index_status`` made to work until the test sets the event: its library call spins
    in Python, taking the interpreter as real work does."""
    yield from _hang(monkeypatch, spin=True)


@pytest.fixture
def blocked(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    """``index_status`` made to wait, idle, until the test sets the event."""
    yield from _hang(monkeypatch, spin=False)


class ErrorLog(logging.Handler):
    """Error records logged while serving (the SDK logs a crashed tool with its traceback)."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}")

    def __enter__(self) -> ErrorLog:
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger().removeHandler(self)


# --------------------------------------------------------------------------- generated arguments


def bounded(schema: Any) -> Any:
    """The schema with every string cut to ``MAX_TEXT`` characters and every array to
    ``MAX_ITEMS`` items (a minimum above the cut keeps its value)."""
    if isinstance(schema, list):
        return [bounded(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: bounded(v) for k, v in schema.items()}
    if out.get("type") == "string":
        out["maxLength"] = min(out.get("maxLength", MAX_TEXT), MAX_TEXT)
    if out.get("type") == "array":
        out["maxItems"] = max(
            min(out.get("maxItems", MAX_ITEMS), MAX_ITEMS), out.get("minItems", 0)
        )
    return out


def arguments_for(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments generated from a tool's closed object schema: each property from its own
    subschema by ``from_schema``, required ones always, optional ones sometimes.

    (hypothesis-jsonschema 0.23's strategy for a whole object schema calls a Hypothesis
    internal that Hypothesis 6.1xx no longer has, ``many.more``; for a closed object without
    patterns or dependencies this composition is what it generates.)"""
    assert schema.get("additionalProperties") is False
    properties = {k: _strategy(v) for k, v in schema["properties"].items()}
    required = set(schema.get("required", ()))
    return st.fixed_dictionaries(
        {k: v for k, v in properties.items() if k in required},
        optional={k: v for k, v in properties.items() if k not in required},
    )


def _strategy(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """``from_schema`` for one property, with objects composed here (see ``arguments_for``):
    a closed object as its properties, an open one as any small JSON object."""
    if "anyOf" in schema:
        return st.one_of([_strategy(s) for s in schema["anyOf"]])
    if schema.get("type") == "object":
        if schema.get("additionalProperties") is False:
            return arguments_for(schema)
        return st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=MAX_ITEMS)
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, dict) and items.get("type") == "object":
        return st.lists(_strategy(items), max_size=MAX_ITEMS)
    return from_schema(bounded(schema))


def assert_a_result_or_a_tool_error(name: str, result: CallToolResult) -> None:
    """A result, or an ``isError`` the tool meant: never a crash (the SDK's bare
    "Error executing tool NAME"), never a traceback."""
    assert isinstance(result, CallToolResult)
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert text.strip(), result
    assert "Traceback" not in text
    if result.is_error:
        assert text.strip() != f"Error executing tool {name}", "the tool crashed"
        assert "\n" not in text.strip(), text


def call_all(live: Live, arguments: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Call every tool with its arguments; protocol errors are kept, not raised. The tools
    outside git run one after another (at once they only contend for the interpreter)
    while ``gate_check``, which mostly waits for git, runs beside them."""
    results: dict[str, Any] = {}

    async def one(name: str) -> None:
        try:
            results[name] = await live.clients[name].call_tool(name, arguments[name])
        except MCPError as exc:
            results[name] = exc

    async def chain() -> None:
        for name in arguments:
            if name not in IN_GIT:
                await one(name)

    async def go() -> None:
        with anyio.fail_after(HANG_GUARD):
            async with anyio.create_task_group() as tg:
                for name in IN_GIT & set(arguments):
                    tg.start_soon(one, name)
                tg.start_soon(chain)

    live.portal.call(go)
    return results


@pytest.mark.slow  # 200 generated calls of every tool: run after the timed command
@pytest.mark.reliability("B5.36", cases=200 * len(TOOLS))
def test_every_tool_answers_arguments_generated_from_its_own_schema(live: Live) -> None:
    assert set(live.schemas) == set(TOOLS)
    every_tool = st.fixed_dictionaries({n: arguments_for(live.schemas[n]) for n in TOOLS})
    validators = {n: Draft202012Validator(live.schemas[n]) for n in TOOLS}

    @settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(arguments=every_tool)
    def check(arguments: dict[str, dict[str, Any]]) -> None:
        for name, args in arguments.items():
            validators[name].validate(args)  # the schema's own arguments, valid by it
        for name, result in call_all(live, arguments).items():
            assert not isinstance(result, MCPError), (name, arguments[name], result)
            assert_a_result_or_a_tool_error(name, result)
        live.assert_still_serving(every=True)

    with ErrorLog() as errors:
        check()
    assert errors.records == []


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=MAX_TEXT),
    lambda inner: (
        st.lists(inner, max_size=MAX_ITEMS)
        | st.dictionaries(st.text(max_size=8), inner, max_size=MAX_ITEMS)
    ),
    max_leaves=12,
)


@st.composite
def invalid_arguments(draw: st.DrawFn, schemas: dict[str, dict[str, Any]]) -> tuple[str, Any]:
    """A tool and arguments that may break its schema: any value for a known key, or an
    unknown key. (Arguments that are not an object are frames: the SDK client refuses to
    send them.)"""
    name = draw(st.sampled_from(TOOLS))
    known = sorted(schemas[name]["properties"])
    how = draw(st.sampled_from(["value", "extra"] if known else ["extra"]))
    arguments: dict[str, Any] = {}
    if how == "value":
        arguments[draw(st.sampled_from(known))] = draw(JSON_VALUES)
    else:
        key = draw(st.text(min_size=1, max_size=8).filter(lambda k: k not in known))
        arguments[key] = draw(JSON_VALUES)
    return name, arguments


@pytest.mark.reliability("B5.36", cases=200)
def test_random_invalid_argument_values_are_a_result_or_an_error_never_a_crash(
    live: Live,
) -> None:
    @settings(suppress_health_check=[HealthCheck.too_slow])
    @given(call=invalid_arguments(live.schemas))
    def check(call: tuple[str, Any]) -> None:
        name, arguments = call
        assert_a_result_or_a_tool_error(name, live.call(name, arguments))
        live.assert_still_serving()

    with ErrorLog() as errors:
        check()
    assert errors.records == []


# --------------------------------------------------------------------------- frames


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def call_frame(rid: Any, arguments: str) -> bytes:
    head = f'{{"jsonrpc":"2.0","id":{json.dumps(rid)},"method":"tools/call",'
    return (head + f'"params":{{"name":"risk_classify","arguments":{arguments}}}}}\n').encode()


# (frame, id of the answer, JSON-RPC error code or None for a result)
FRAMES = [
    pytest.param(call_frame(1, '{"query":"\\ud800"}'), 1, None, id="lone-surrogate-in-a-value"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":2,"method":"\\udfff","params":{}}\n',
        2,
        -32601,
        id="lone-surrogate-in-the-method",
    ),
    pytest.param(call_frame(3, '{"query":' + nested(200) + "}"), 3, -32602, id="nested-200"),
    pytest.param(call_frame(4, '{"query":' + nested(100_000) + "}"), 4, -32602, id="nested-100000"),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"tools/call","params":'
        + nested(100_000).encode()
        + b',"id":5}\n',
        5,
        -32602,
        id="id-after-100000-levels",
    ),
    pytest.param(b"this is not json {\n", None, -32700, id="unparsable"),
    pytest.param(b'{"jsonrpc":"2.0","id":6,"method":"ping"\n', None, -32700, id="truncated"),
    pytest.param(b'{"jsonrpc":"2.0","id":7,"method":"ping","x":NaN}\n', None, -32700, id="nan"),
    pytest.param(b"[1,2]\n", None, -32600, id="array"),
    pytest.param(b"[]\n", None, -32600, id="empty-array"),
    pytest.param(b"42\n", None, -32600, id="number"),
    pytest.param(b'"ping"\n', None, -32600, id="string"),
    pytest.param(b'{"jsonrpc":"2.0","id":8}\n', 8, -32600, id="missing-method"),
    pytest.param(b'{"jsonrpc":"1.0","id":9,"method":"ping"}\n', 9, -32600, id="jsonrpc-1.0"),
    pytest.param(b'{"id":10,"method":"ping"}\n', 10, -32600, id="no-jsonrpc"),
    pytest.param(b'{"jsonrpc":"2.0","id":11,"method":7}\n', 11, -32600, id="method-not-a-string"),
    pytest.param(b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n', None, -32600, id="id-object"),
    pytest.param(b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n', None, -32600, id="id-null"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":12,"method":"ping","params":5}\n', 12, -32600, id="params-5"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":13,"method":"ping","params":[1]}\n', 13, -32602, id="params-array"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":14,"method":"no/such"}\n', 14, -32601, id="unknown-method"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{}}\n', 15, -32602, id="no-name"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":16,"method":"ping","x":"\xff\xfe"}\n', 16, None, id="not-utf8"
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"risk_classify",'
        b'"arguments":{"paths":[' + b",".join([b"[]"] * 20_000) + b"]}}}\n",
        17,
        -32602,
        id="20000-arrays",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":18,"method":"ping","x":"' + b"Q" * (MAX_FRAME + 10) + b'"}\n',
        None,
        -32600,
        id="larger-than-a-frame",
    ),
]


@pytest.mark.reliability("T5", cases=1)
@pytest.mark.parametrize(("frame", "rid", "code"), FRAMES)
def test_each_malformed_frame_gets_its_json_rpc_answer_and_the_server_keeps_serving(
    wire: Wire, frame: bytes, rid: Any, code: int | None
) -> None:
    wire.send(frame)
    if rid is None:  # answered with id null
        [answer] = [m for m in wire.until({None}) if m.get("id") is None]
    else:
        [answer] = [m for m in wire.until({rid}) if m.get("id") == rid]
    if code is None:
        assert "result" in answer, answer
        assert answer["result"].get("isError") is not True, answer
    else:
        assert answer["error"]["code"] == code, answer
    wire.assert_still_serving()


def _lone_surrogates() -> st.SearchStrategy[str]:
    return st.text(st.characters(categories=["Cs"]) | st.characters(), max_size=6)


def _request_like() -> st.SearchStrategy[dict[str, Any]]:
    """A request with one part broken: jsonrpc, id, method or params missing or replaced
    (the tools it calls are cheap ones: the frame is what is tested)."""
    base = st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "id": st.integers(0, 10**6) | st.text(max_size=8),
            "method": st.sampled_from(["ping", "tools/list", "tools/call", "no/such"]),
            "params": st.fixed_dictionaries(
                {
                    "name": st.sampled_from(["risk_classify", "no_such_tool"]),
                    "arguments": st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3)
                    | JSON_VALUES,
                }
            ),
        }
    )

    @st.composite
    def broken(draw: st.DrawFn) -> dict[str, Any]:
        frame: dict[str, Any] = dict(draw(base))
        key = draw(st.sampled_from(["jsonrpc", "id", "method", "params", "none"]))
        if key != "none":
            if draw(st.booleans()):
                del frame[key]
            else:
                frame[key] = draw(JSON_VALUES | _lone_surrogates())
        return frame

    return broken()


FRAME_STRATEGY = st.one_of(
    st.binary(max_size=64).map(lambda b: b.replace(b"\n", b" ") + b"\n"),
    JSON_VALUES.map(lambda v: json.dumps(v).encode() + b"\n"),
    _request_like().map(lambda v: json.dumps(v).encode() + b"\n"),
    st.builds(
        lambda depth, rid, head: (
            call_frame(rid, '{"query":' + nested(depth) + "}")
            if head
            else (
                b'{"jsonrpc":"2.0","method":"ping","params":{"x":'
                + nested(depth).encode()
                + b'},"id":'
                + str(rid).encode()
                + b"}\n"
            )
        ),
        st.integers(90, 2_000),
        st.integers(0, 10**6),
        st.booleans(),
    ),
)


def expected_id(frame: bytes) -> tuple[bool, Any]:
    """Whether the frame is a request the server must answer, and its id."""
    try:
        doc = json.loads(frame.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return False, None
    if not isinstance(doc, dict) or not isinstance(doc.get("method"), str):
        return False, None
    rid = doc.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        return False, None
    if isinstance(rid, str):  # lone surrogates are read as U+FFFD
        rid = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in rid)
    return True, rid


@pytest.mark.reliability("T5", cases=200)
def test_generated_frames_are_answered_with_json_rpc_only_and_the_server_keeps_serving(
    wire: Wire,
) -> None:
    @settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(frame=FRAME_STRATEGY)
    def check(frame: bytes) -> None:
        is_request, rid = expected_id(frame)
        wire.send(frame)
        cheap, ping = wire.new_id(), wire.new_id()
        name, arguments = CHEAP
        call = {"name": name, "arguments": arguments}
        wire.send({"jsonrpc": "2.0", "id": cheap, "method": "tools/call", "params": call})
        sent = time.monotonic()
        wire.send({"jsonrpc": "2.0", "id": ping, "method": "ping"})
        seen = wire.until([ping, cheap, rid] if is_request else [ping, cheap])
        assert wire.arrived[_key(ping)] - sent <= PING_BOUND
        [served] = [m for m in seen if m.get("id") == cheap]
        assert served["result"]["isError"] is False, served
        for message in seen:
            if "error" in message:
                assert message["error"]["code"] in JSON_RPC_CODES, message
            else:
                assert "result" in message or "method" in message, message
        if is_request:
            [answer] = [m for m in seen if _key(m.get("id")) == _key(rid)]
            assert ("result" in answer) != ("error" in answer), answer

    with ErrorLog() as errors:
        check()
    assert errors.records == []


# --------------------------------------------------------------------------- deadline


def test_the_deadline_comes_from_the_environment_and_falls_back_on_nonsense(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(DEADLINE_ENV, "0.25")
    assert deadline() == 0.25
    for nonsense in ("", "soon", "0", "-3", "nan", "inf"):
        monkeypatch.setenv(DEADLINE_ENV, nonsense)
        assert deadline() == 120.0
    monkeypatch.delenv(DEADLINE_ENV)
    assert deadline() == 120.0


@pytest.mark.reliability("T1", cases=1)
def test_a_call_past_its_deadline_is_an_error_while_pings_keep_answering(
    live: Live, spinning: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DEADLINE_ENV, "0.5")
    outcome: Future[CallToolResult] = live.portal.start_task_soon(
        live.client.call_tool, "index_status", {}
    )  # the first client serves index_status too
    pings = 0
    while not outcome.done():
        live.ping()  # answered within PING_BOUND while the call spins
        pings += 1
    result = outcome.result()
    assert pings >= 1
    assert result.is_error is True
    [content] = result.content
    assert "index_status took longer than 0.5 s" in getattr(content, "text", "")
    assert DEADLINE_ENV in getattr(content, "text", "")
    live.assert_still_serving()


@pytest.mark.reliability("T1", cases=1)
def test_cancelled_calls_are_abandoned_and_too_many_of_them_refuse_new_calls(
    committed_shop: tuple[Path, Path], blocked: Gate
) -> None:
    with Wire(*committed_shop) as server:
        server.handshake()
        cancelled = []
        for _ in range(MAX_ABANDONED):
            rid = server.new_id()
            server.send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "method": "tools/call",
                    "params": {"name": "index_status", "arguments": {}},
                }
            )
            server.ping()  # the call is running: the server still answers
            # cancelled once its work runs (a call cancelled before it starts leaves no thread)
            assert blocked.entered.acquire(timeout=20)
            server.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": rid},
                }
            )
            cancelled.append(rid)
        # once the cancellations are handled, new calls are refused (bounded in time, not in
        # tries: on a loaded machine a hundred quick calls can all come first)
        until = time.monotonic() + 20.0
        while True:
            refused = server.request("tools/call", {"name": CHEAP[0], "arguments": CHEAP[1]})
            if refused["result"]["isError"] or time.monotonic() > until:
                break
            time.sleep(0.01)
        assert refused["result"]["isError"] is True
        assert "still running past their deadline" in refused["result"]["content"][0]["text"]
        blocked.set()  # the abandoned calls end; their results are dropped
        until = time.monotonic() + 20.0
        while True:
            answer = server.request("tools/call", {"name": CHEAP[0], "arguments": CHEAP[1]})
            if answer["result"]["isError"] is False or time.monotonic() > until:
                break
            time.sleep(0.01)
        assert answer["result"]["isError"] is False
        server.ping()
    # a cancelled request is never answered
    leftover = []
    while (line := server.lines.get(timeout=HANG_GUARD)) is not None:
        leftover.append(json.loads(line))
    assert not [m for m in leftover if m.get("id") in cancelled]


# --------------------------------------------------------------------------- over real stdio


@dataclass
class Process:
    proc: subprocess.Popen[bytes]
    lines: queue.Queue[bytes | None]
    stdout: list[bytes]

    def send(self, frame: bytes | dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        data = frame if isinstance(frame, bytes) else json.dumps(frame).encode() + b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def answer(self, rid: Any, timeout: float = HANG_GUARD) -> dict[str, Any]:
        while True:
            line = self.lines.get(timeout=timeout)
            assert line is not None, f"stdout closed before the answer to {rid!r}"
            message = json.loads(line)
            if message.get("id") == rid:
                return dict(message)

    def ping(self, rid: str) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
        assert self.answer(rid, timeout=PING_BOUND)["result"] == {}


_HANGING = (
    "import sys, threading\n"
    "import excerpt.mcp.session as session\n"
    "session.ServedRepo.index_report = lambda *args, **kwargs: threading.Event().wait()\n"
    "from excerpt.cli import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


@pytest.fixture
def process(committed_shop: tuple[Path, Path], tmp_path: Path) -> Iterator[Callable[..., Process]]:
    started: list[subprocess.Popen[bytes]] = []
    logs: list[Any] = []

    def start(
        *, hanging: bool = False, env: dict[str, str] | None = None, read: bool = True
    ) -> Process:
        repo, cache = committed_shop
        argv = ["-c", _HANGING] if hanging else ["-m", "excerpt"]
        logs.append((tmp_path / f"stderr-{len(started)}.txt").open("wb"))
        proc = subprocess.Popen(
            [sys.executable, *argv, "mcp", "--tools", "all", "--repo", str(repo)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=logs[-1],
            env={**os.environ, "EXCERPT_CACHE_DIR": str(cache), **(env or {})},
        )
        started.append(proc)
        lines: queue.Queue[bytes | None] = queue.Queue()
        stdout: list[bytes] = []

        def reader() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                stdout.append(line)
                lines.put(line)
            lines.put(None)

        if read:
            threading.Thread(target=reader, daemon=True).start()
        return Process(proc, lines, stdout)

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=HANG_GUARD)
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()
    for log in logs:
        log.close()


def stderr_texts(tmp_path: Path) -> str:
    return "".join(
        p.read_text(encoding="utf-8", errors="replace") for p in tmp_path.glob("stderr-*")
    )


@pytest.mark.reliability("B5.38", cases=len(FRAMES) + 3)
def test_over_stdio_every_request_is_answered_and_stdout_is_json_rpc_only(
    process: Callable[..., Process], tmp_path: Path
) -> None:
    server = process()
    server.send(
        {
            "jsonrpc": "2.0",
            "id": "early",
            "method": "tools/call",
            "params": {"name": CHEAP[0], "arguments": CHEAP[1]},
        }
    )
    early = server.answer("early")  # before initialize: answered (with an error)
    assert early["error"]["code"] in JSON_RPC_CODES
    server.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INITIALIZE})
    assert "result" in server.answer("init")
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for param in FRAMES:
        frame, rid, code = param.values
        assert isinstance(frame, bytes)
        server.send(frame)
        answer = server.answer(rid)
        assert (answer["error"]["code"] if code is not None else None) == code, (param.id, answer)
        server.ping(f"after-{param.id}")
    server.send(
        {
            "jsonrpc": "2.0",
            "id": "last",
            "method": "tools/call",
            "params": {"name": "context_pack", "arguments": {"task": TASK}},
        }
    )
    assert server.proc.stdin is not None
    server.proc.stdin.close()  # mid-call
    assert server.proc.wait(timeout=HANG_GUARD) == 0
    stdout = b"".join(server.stdout)
    assert b"Traceback" not in stdout
    for line in stdout.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert "Traceback" not in stderr_texts(tmp_path)


@pytest.mark.reliability("T1", cases=1)
def test_over_stdio_a_call_past_its_deadline_is_an_error_and_stdin_closing_ends_the_server(
    process: Callable[..., Process], tmp_path: Path
) -> None:
    server = process(hanging=True, env={DEADLINE_ENV: "0.5"})
    server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE})
    server.answer(1)
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {"name": "index_status", "arguments": {}}
    server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
    server.ping("while-hanging")
    answer = server.answer(2)
    assert answer["result"]["isError"] is True
    assert "took longer than 0.5 s" in answer["result"]["content"][0]["text"]
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": CHEAP[0], "arguments": CHEAP[1]},
        }
    )
    assert server.answer(3)["result"]["isError"] is False
    server.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call})
    server.ping("second-hang")
    assert server.proc.stdin is not None
    server.proc.stdin.close()  # while the call hangs: its thread must not hold the process
    assert server.proc.wait(timeout=HANG_GUARD) == 0
    assert "Traceback" not in stderr_texts(tmp_path)


@pytest.mark.reliability("T3", cases=1)
def test_over_stdio_a_client_closing_the_servers_stdout_ends_it_with_exit_0(
    process: Callable[..., Process], tmp_path: Path
) -> None:
    server = process(read=False)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE})
    assert server.proc.stdout is not None
    assert json.loads(server.proc.stdout.readline())["id"] == 1
    server.proc.stdout.close()  # the client stops reading: every answer now fails to write
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for n in range(3):
        server.send({"jsonrpc": "2.0", "id": f"ping-{n}", "method": "ping"})
    assert server.proc.wait(timeout=HANG_GUARD) == 0
    assert stderr_texts(tmp_path) == ""
