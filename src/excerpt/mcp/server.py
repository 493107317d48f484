"""Tools, argument gate and roots for ``excerpt mcp`` (SPEC §2.1), on the official SDK."""

from __future__ import annotations

import inspect
import logging
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import unquote, urlparse

import anyio
from mcp.server import MCPServer
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, ListRoots, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.types import CallToolResult, ListRootsResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from excerpt import __version__
from excerpt.core.settings import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET, repo_cache_dir
from excerpt.deliver import build_pack, build_plan, render_retrieved
from excerpt.errors import ExcerptError
from excerpt.harness import infer_harness
from excerpt.index.build import index_repository, resolve_root
from excerpt.mcp.clients import ClientProfile, budget_note, profile_for
from excerpt.pack import PackRequest, get_excerpts
from excerpt.render.markdown import render_harness, render_risk
from excerpt.render.text import compact_json, render_index
from excerpt.risk import risk_report

__all__ = ["build_server", "check_server", "serve"]

log = logging.getLogger("excerpt.mcp")
T = TypeVar("T")

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_MAX_TASK = 200_000
_BUDGET = (
    "Hard limit, in UTF-8 bytes, on the whole result the model receives: excerpts, headers, "
    "handles and the left-out summary (default: what this client passes on whole, "
    f"{profile_for('codex-mcp-client').default_budget} for Codex, {DEFAULT_BUDGET} for Claude "
    "Code and others). context_plan suggests one."
)
Task = Annotated[
    str,
    Field(
        min_length=1,
        max_length=_MAX_TASK,
        description="The task in plain words: an issue, a request, an error message or a CI "
        "log. Stack traces and file:line references pin those lines.",
    ),
]
Budget = Annotated[int | None, Field(ge=MIN_BUDGET, le=MAX_BUDGET, description=_BUDGET)]
ChangedPaths = Annotated[
    list[Annotated[str, Field(max_length=4096)]] | None,
    Field(
        max_length=1000,
        description="Paths changed so far, relative to the repository; ranked first.",
    ),
]
Format = Annotated[
    Literal["md", "json"],
    Field(
        description="md (default): Markdown for the model, the excerpts' source once, within "
        "the budget. json: the machine form, the full excerpt.pack/v1 pack (every omission, "
        "full hashes) as JSON; larger than the budget, for programs rather than models."
    ),
]
Handles = Annotated[
    list[Annotated[str, Field(max_length=8192)]],
    Field(
        min_length=1,
        max_length=200,
        description="Handles from a pack (PATH#L<start>-L<end>@<16 hex>) to re-read.",
    ),
]


class _Session:
    """The server's repository and cache; the effective root is checked against roots.

    A repository that cannot be served (``--repo`` missing, not a directory, unreadable)
    does not stop the server: every call answers with the problem, which a client shows,
    where an exiting server shows only "connection closed".
    """

    def __init__(self, repo: Path | None, cache_dir: Path | None, problem: str = "") -> None:
        self._repo = repo
        self.cache_dir = cache_dir
        self.problem = problem

    @property
    def repo(self) -> Path:
        if self._repo is None:
            raise ToolError(
                f"excerpt cannot serve this repository: {self.problem}. Fix the --repo"
                " argument where this MCP server is registered, then restart it."
            )
        return self._repo

    def root(self, roots: ListRootsResult | None) -> Path:
        """The repository, refused when the client's roots do not hold it.

        No roots capability, or an empty list (a client that has not scoped the session),
        leaves the repository as given by ``--repo``.
        """
        if roots is None or not roots.roots:
            return self.repo
        for item in roots.roots:
            path = _root_path(str(item.uri))
            if path is not None and (self.repo == path or self.repo.is_relative_to(path)):
                return self.repo
        raise ToolError("the repository is outside the roots this client allows")

    def first_index(self) -> bool:
        try:
            return not (repo_cache_dir(self.repo, self.cache_dir) / "index.sqlite3").exists()
        except OSError:  # an unreadable cache directory: the call itself will say so
            return False


def _client_roots(ctx: Context) -> ListRoots | None:
    """Ask for the client's roots when it declared the capability (the SDK carries the
    request over whichever protocol version was negotiated)."""
    caps = ctx.client_capabilities
    return ListRoots() if caps is not None and caps.roots is not None else None


Roots = Annotated[ListRootsResult | None, Resolve(_client_roots)]


def _client_profile(ctx: Context) -> ClientProfile:
    params = ctx.session.client_params
    return profile_for(params.client_info.name if params is not None else None)


Client = Annotated[ClientProfile, Resolve(_client_profile)]


def _root_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    try:
        return Path(unquote(parsed.path)).resolve()
    except (OSError, RuntimeError):
        return None


async def _call(fn: Callable[[], T]) -> T:
    """Run a blocking library call off the event loop; library errors become tool errors."""
    try:
        return await anyio.to_thread.run_sync(fn)
    except ExcerptError as exc:
        raise ToolError(exc.message) from None


def _result(text: str, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def _text(text: str) -> CallToolResult:
    """A model-facing result: Markdown as the only content. No structured content, which
    Claude Code and Codex would forward in its place."""
    return CallToolResult(content=[TextContent(type="text", text=text)])


def _machine(doc: dict[str, Any]) -> CallToolResult:
    """The machine form: the document as structured content and, for clients that show
    only text, as compact JSON text too (a client forwards one of the two, never both)."""
    return _result(compact_json(doc), doc)


def _first_note(first: bool) -> str:
    return "Indexed this repository for the first time.\n\n" if first else ""


def _tools(session: _Session) -> list[Callable[..., Any]]:
    async def context_plan(
        task: Task,
        roots: Roots,
        client: Client,
        budget: Budget = None,
        changed_paths: ChangedPaths = None,
        format: Format = "md",
    ) -> CallToolResult:
        """Rank the files and line ranges to read for a task, with reasons and byte sizes but
        no source text. Cheap (its text takes at most a quarter of the budget): call it first
        to see where the task lives and what budget a pack needs, then call context_pack."""
        root, first = session.root(roots), session.first_index()
        request = _request(root, task, budget or client.default_budget, changed_paths, session)
        notes = [_first_note(first).strip()] if first else []
        done = await _call(lambda: build_plan(request(), notes=notes))
        if format == "json":
            return _machine(done.plan.to_dict())
        return _text(done.text)

    async def context_pack(
        task: Task,
        roots: Roots,
        client: Client,
        budget: Budget = None,
        changed_paths: ChangedPaths = None,
        format: Format = "md",
    ) -> CallToolResult:
        """Return the exact lines to read first for a task; the whole result stays within a
        hard byte budget. Each excerpt comes with its path, line range, a handle (for
        context_retrieve) and short reason codes explained once; what was left out is counted
        by reason, with the next regions' handles. Excerpts are byte-exact source; secrets and
        sensitive files are never included."""
        root, first = session.root(roots), session.first_index()
        size = budget or client.default_budget
        notes = [n for n in (_first_note(first).strip(), budget_note(client, size)) if n]
        request = _request(root, task, size, changed_paths, session)
        done = await _call(
            lambda: build_pack(
                request(),
                retrieve="`context_retrieve` and a handle",
                notes=notes,
                limit=size - client.framing,
            )
        )
        if format == "json":
            return _machine(done.pack.to_dict())
        return _text(done.text)

    async def context_retrieve(
        handles: Handles, roots: Roots, client: Client, budget: Budget = None
    ) -> CallToolResult:
        """Re-read excerpts by handle; any line range of a file a handle names may be asked
        for. A handle whose file changed comes back stale (with where the same lines moved,
        when known), never as old text; paths outside the repository or sensitive ones are
        refused. Fresh text is returned whole within the budget, or named with its size."""
        root = session.root(roots)
        results = [
            r.to_dict()
            for r in await _call(lambda: get_excerpts(root, handles, cache_dir=session.cache_dir))
        ]
        size = (budget or client.default_budget) - client.framing
        return _text(render_retrieved(results, size))

    async def index_status(roots: Roots) -> CallToolResult:
        """Refresh the repository's index (incrementally) and report what it holds: files,
        symbols, graph edges, languages and what was left out. Never needed before other
        tools, which refresh it themselves."""
        root, first = session.root(roots), session.first_index()
        report = await _call(lambda: index_repository(root, cache_dir=session.cache_dir))
        doc = {**report.to_dict(), "first_index": first}
        return _result(_first_note(first) + render_index(report), doc)

    async def harness_infer(
        roots: Roots,
        use_ci: Annotated[
            bool,
            Field(
                description="Also read CI workflow files (corroborating evidence; default true)."
            ),
        ] = True,
    ) -> CallToolResult:
        """Infer, without running anything, how this repository is set up (install) and
        validated (test, typecheck, lint, build): each command with the directory to run it
        from, its file:line evidence and a confidence. Read the evidence before running a
        command; nothing here has been executed."""
        root = session.root(roots)
        doc = (await _call(lambda: infer_harness(root, use_ci=use_ci))).to_dict()
        return _result(render_harness(doc), doc)

    async def risk_classify(
        paths: Annotated[
            list[Annotated[str, Field(max_length=4096)]] | None,
            Field(
                max_length=1000,
                description="Repository-relative paths to classify (give these or query).",
            ),
        ] = None,
        query: Annotated[
            str | None,
            Field(
                max_length=_MAX_TASK,
                description="Task text (an issue or request) to classify instead of paths.",
            ),
        ] = None,
    ) -> CallToolResult:
        """Name the risk concepts (money flow, auth/security, secrets, schema/migration,
        infra/deploy, ci/merge-gate, dependencies, privacy/pii) of paths or of a task text,
        with whether each path needs gate attention or is secret material. Matching is by
        token, never substring; no file is read."""
        doc = await _call(lambda: dict(risk_report(paths=tuple(paths or ()), query=query)))
        return _result(render_risk(doc), doc)

    return [
        context_plan,
        context_pack,
        context_retrieve,
        index_status,
        harness_infer,
        risk_classify,
    ]


def _request(
    root: Path, task: str, budget: int, changed: list[str] | None, session: _Session
) -> Callable[[], PackRequest]:
    """A deferred request: building it validates, and that must happen inside ``_call`` so a
    refusal (an empty task) becomes a tool error with its reason."""
    return lambda: PackRequest(
        repo=root, task=task, budget=budget, changed=tuple(changed or ()),
        cache_dir=session.cache_dir,
    )  # fmt: skip


class _ArgumentGate:
    """Refuse malformed tool arguments before the SDK sees them: unknown keys, wrong types,
    oversized values. The error names the fields only, never the values sent."""

    def __init__(self, models: dict[str, type[BaseModel]]) -> None:
        self.models = models

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        params = ctx.params if isinstance(ctx.params, dict) else {}
        model = self.models.get(str(params.get("name"))) if ctx.method == "tools/call" else None
        if model is None:
            return await call_next(ctx)
        arguments = params.get("arguments") or {}
        try:
            model.model_validate(arguments)
        except ValidationError as exc:
            fields = sorted(
                {".".join(str(p) for p in e["loc"]) or "arguments" for e in exc.errors()}
            )
            kinds = sorted({str(e["type"]) for e in exc.errors()})
            message = f"invalid arguments: {', '.join(fields)} ({', '.join(kinds)})"
            return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
        return await call_next(ctx)


def _strict(model: type[BaseModel]) -> type[BaseModel]:
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, strict=True)
    return type(f"Strict{model.__name__}", (model,), {"model_config": config})


def build_server(repo: str | Path, cache_dir: Path | None = None) -> MCPServer:
    """The MCP server for one repository. A repository that cannot be served still gives a
    server, whose every tool call answers with the problem."""
    try:
        session = _Session(resolve_root(repo), cache_dir)
    except ExcerptError as exc:
        session = _Session(None, cache_dir, problem=exc.message)
    tools: list[Tool] = []
    for fn in _tools(session):
        tool = Tool.from_function(
            fn,
            description=inspect.cleandoc(fn.__doc__ or ""),
            annotations=READ_ONLY,
            structured_output=False,
        )
        tool.parameters["additionalProperties"] = False
        tools.append(tool)
    gate = _ArgumentGate({t.name: _strict(t.fn_metadata.arg_model) for t in tools})
    instructions = (
        "excerpt finds the exact lines to read first for a task in this repository. Call "
        "context_plan to see ranked files and a suggested budget, context_pack to get the "
        "excerpts, and context_retrieve with a handle to re-read lines later (stale text is "
        "refused)."
    )
    if session.problem:
        instructions = f"excerpt cannot serve this repository: {session.problem}. " + instructions
    return MCPServer(
        name="excerpt",
        version=__version__,
        instructions=instructions,
        tools=tools,
        middleware=[gate],
        log_level="WARNING",
    )


def check_server(repo: str | Path, cache_dir: Path | None = None) -> dict[str, Any]:
    """Start the server as a client would (in process) and report whether it serves: its
    tools, and the repository indexed through ``index_status``, or the problem."""
    from mcp import Client  # the client half of the SDK is needed only here

    async def go() -> dict[str, Any]:
        async with Client(build_server(repo, cache_dir)) as client:
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            status = await client.call_tool("index_status", {})
            text = "".join(c.text for c in status.content if isinstance(c, TextContent))
            report: dict[str, Any] = {"ok": status.is_error is not True, "tools": tools}
            if status.is_error:  # the SDK's "Error executing tool …: " prefix is not ours
                report["problem"] = re.sub(r"^Error executing tool \w+: ", "", text.strip())
            else:
                report["index"] = status.structured_content
            return report

    return anyio.run(go)


def serve(repo: str | Path, cache_dir: Path | None = None) -> None:
    """Serve over stdio until the client closes the connection."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True)
    try:
        resolve_root(repo)
    except ExcerptError as exc:  # a client shows a server's stderr in its logs
        log.error("cannot serve the repository (every tool call will say so): %s", exc.message)
    build_server(repo, cache_dir).run("stdio")
