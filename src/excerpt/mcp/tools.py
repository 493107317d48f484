"""The MCP tools: one small adapter per tool, each calling the library as the CLI does.

A tool's name is its function's name, its description its docstring, its input schema its
annotated parameters (``Session``, ``Roots`` and ``Client`` are injected, never sent).
Adding a tool: write the function here and add it to ``TOOLS``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from excerpt.core.limits import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET
from excerpt.core.memo import MemoStats, memo_stats
from excerpt.deliver import build_pack, build_plan, render_retrieved
from excerpt.gate import GateRequest, render_text, run_gate
from excerpt.harness import infer_harness
from excerpt.mcp.calls import text_only, tool_call
from excerpt.mcp.clients import budget_note
from excerpt.mcp.fields import HandleText, PathText
from excerpt.mcp.session import Client, Roots, ServedRepo, Session
from excerpt.mcp.tools_compact import context_compact, context_expand
from excerpt.mcp.tools_handoff import context_handoff, context_handoff_validate
from excerpt.pack import PackRequest
from excerpt.pipeline import get_excerpts
from excerpt.render.markdown import render_harness, render_risk
from excerpt.render.text import compact_json, render_index
from excerpt.risk import risk_report

__all__ = [
    "TOOLS",
    "context_pack",
    "context_plan",
    "context_retrieve",
    "gate_check",
    "harness_infer",
    "index_status",
    "risk_classify",
]

T = TypeVar("T")
MAX_TASK = 200_000
_BUDGET = (
    "Hard limit in UTF-8 bytes on the whole result (default: what this client passes on "
    f"whole, at most {DEFAULT_BUDGET})."
)
Task = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_TASK,
        description="The task in plain words: an issue, a request, an error or a CI log "
        "(stack traces and file:line references pin their lines).",
    ),
]
Budget = Annotated[int | None, Field(ge=MIN_BUDGET, le=MAX_BUDGET, description=_BUDGET)]
ChangedPaths = Annotated[
    list[PathText] | None,
    Field(
        max_length=1000,
        description="Repository-relative paths changed so far; ranked first.",
    ),
]
Format = Annotated[
    Literal["md", "json"],
    Field(
        description="md (default) for the model; json: the full excerpt.pack/v1 document "
        "for programs (larger than the budget)."
    ),
]
Handles = Annotated[
    list[HandleText],
    Field(
        min_length=1,
        max_length=200,
        description="Handles from a pack (PATH#L<start>-L<end>@<16 hex>) to re-read.",
    ),
]
StopShort = Annotated[
    bool,
    Field(
        description="Stop short of the budget when what is left is not worth its tokens, "
        "and say so (default: fill the budget)."
    ),
]
Exclude = Annotated[
    list[HandleText] | None,
    Field(
        max_length=10_000,
        description="Handles already held from an earlier pack: their unchanged lines are "
        "listed as held, not sent again, and the budget goes to the next regions. Leave out "
        "after the client compacted its context.",
    ),
]
UseCi = Annotated[
    bool,
    Field(description="Also read CI workflow files (corroborating evidence; default true)."),
]
Paths = Annotated[
    list[PathText] | None,
    Field(
        max_length=1000,
        description="Repository-relative paths to classify (give these or query).",
    ),
]
Query = Annotated[
    str | None,
    Field(
        max_length=MAX_TASK,
        description="Task text (an issue or request) to classify instead of paths.",
    ),
]
Base = Annotated[
    str | None,
    Field(
        max_length=1000,
        description="The commit the staged change is checked against (default HEAD); its "
        "policy applies.",
    ),
]
Range = Annotated[
    str | None,
    Field(
        max_length=2000,
        description="A commit range to check instead of the staged change: A..B, or A...B "
        "from their merge base (what CI would check).",
    ),
]
MinConvergence = Annotated[
    float | None,
    Field(
        ge=0.0,
        le=1.0,
        description="Share of changed source files that must have a test (default: the "
        "base policy's, else 0.5).",
    ),
]
Validate = Annotated[
    list[Annotated[str, Field(max_length=1000)]] | None,
    Field(
        max_length=100,
        description="Validation commands this change asks to be checked with; each must be "
        "in the base commit's policy. Nothing is run.",
    ),
]
GateFormat = Annotated[
    Literal["md", "json"],
    Field(
        description="md (default): the verdict and each check's summary with its first "
        "details, for the model. json: the full excerpt.gate/v1 report, for programs."
    ),
]


async def context_plan(
    task: Task,
    session: Session,
    roots: Roots,
    client: Client,
    budget: Budget = None,
    changed_paths: ChangedPaths = None,
    format: Format = "md",
) -> CallToolResult:
    """Call when a pack's budget is in doubt: the files and line ranges a pack would
    serve for the task, ranked with reasons and sizes, without source text."""
    root, first = session.root(roots), session.first_index()
    request = _request(root, task, budget or client.default_budget, changed_paths, session)
    notes = [_first_note(first).strip()] if first else []

    def plan() -> CallToolResult:
        done = build_plan(request(), notes=notes)
        return _machine(done.plan.to_dict()) if format == "json" else text_only(done.text)

    return await tool_call(plan)


async def context_pack(
    task: Task,
    session: Session,
    roots: Roots,
    client: Client,
    budget: Budget = None,
    changed_paths: ChangedPaths = None,
    format: Format = "md",
    stop_short: StopShort = False,
    exclude: Exclude = None,
) -> CallToolResult:
    """Call at the start of a task, before searching or reading files: the exact source
    lines to read first, within a hard byte budget, each with a handle for
    context_retrieve, and what was left out with the next regions' handles."""
    root, first = session.root(roots), session.first_index()
    size = budget or client.default_budget
    notes = [n for n in (_first_note(first).strip(), budget_note(client, size)) if n]
    request = _request(root, task, size, changed_paths, session, not stop_short, exclude)

    def pack() -> CallToolResult:
        done = build_pack(
            request(),
            retrieve="`context_retrieve` and a handle",
            notes=notes,
            limit=size - client.framing,
        )
        return _machine(done.pack.to_dict()) if format == "json" else text_only(done.text)

    return await tool_call(pack)


async def context_retrieve(
    handles: Handles, session: Session, roots: Roots, client: Client, budget: Budget = None
) -> CallToolResult:
    """Call with handles from a pack (or any line range of a file one names) to read
    those lines; a handle whose file changed comes back stale, never as old text."""
    root = session.root(roots)
    size = (budget or client.default_budget) - client.framing

    def retrieve() -> CallToolResult:
        results = [r.to_dict() for r in get_excerpts(root, handles, cache_dir=session.cache_dir)]
        return text_only(render_retrieved(results, size))

    return await tool_call(retrieve)


async def index_status(session: Session, roots: Roots) -> CallToolResult:
    """Call to see what the index holds (files, symbols, edges, languages, what was left
    out) and how this server's caches serve; never needed before other tools, which refresh
    it themselves."""
    root, first = session.root(roots), session.first_index()

    def status() -> CallToolResult:
        report = session.index_report(root)
        freshness, caches = session.freshness(), memo_stats()
        doc = {
            **report.to_dict(), "first_index": first, "freshness": freshness,
            "caches": {c.name: c.to_dict() for c in caches},
        }  # fmt: skip
        text = render_index(report).rstrip("\n") + f"\n- freshness: {freshness}\n"
        return _result(_first_note(first) + text + _caches_line(caches), doc)

    return await tool_call(status)


async def harness_infer(session: Session, roots: Roots, use_ci: UseCi = True) -> CallToolResult:
    """Call to learn how to install, test, typecheck, lint and build this repository:
    each command with its directory, file:line evidence and confidence, none of it run."""
    root = session.root(roots)

    def harness() -> CallToolResult:
        doc = infer_harness(root, use_ci=use_ci).to_dict()
        return _result(render_harness(doc), doc)

    return await tool_call(harness)


async def risk_classify(paths: Paths = None, query: Query = None) -> CallToolResult:
    """Call before changing risky code: the risk concepts (money, auth, secrets, schema,
    infra, CI, dependencies, privacy) of paths or a task text, by token; no file is read."""

    if (query is None) == (not paths):  # the library's message names the CLI's flags
        raise ToolError("give `paths` or `query` (one of the two)")

    def risk() -> CallToolResult:
        doc = dict(risk_report(paths=tuple(paths or ()), query=query))
        return _result(render_risk(doc), doc)

    return await tool_call(risk)


async def gate_check(
    session: Session,
    roots: Roots,
    base: Base = None,
    range: Range = None,
    min_convergence: MinConvergence = None,
    validate: Validate = None,
    format: GateFormat = "md",
) -> CallToolResult:
    """Call before proposing a staged change: secret safety, schema, version, validation,
    ownership and convergence checks, each PASS, WARN or FAIL under the base commit's policy."""
    root = session.root(roots)

    def gate() -> CallToolResult:  # built inside tool_call: a refusal is a tool error
        report = run_gate(
            GateRequest(
                repo=root, base=base, range=range, min_convergence=min_convergence,
                validate=tuple(validate or ()), cache_dir=session.cache_dir,
            )
        )  # fmt: skip
        return _machine(report.to_dict()) if format == "json" else text_only(render_text(report))

    return await tool_call(gate)


# The tools, in the order ``tools/list`` gives them.
TOOLS: tuple[Callable[..., Awaitable[CallToolResult]], ...] = (
    context_plan,
    context_pack,
    context_retrieve,
    index_status,
    harness_infer,
    risk_classify,
    gate_check,
    context_handoff,
    context_handoff_validate,
    context_compact,
    context_expand,
)


def _request(
    root: Path,
    task: str,
    budget: int,
    changed: list[str] | None,
    session: ServedRepo,
    fill: bool = True,
    held: list[str] | None = None,
) -> Callable[[], PackRequest]:
    """A deferred request: building it validates, and that must happen inside ``tool_call`` so a
    refusal (an empty task) becomes a tool error with its reason. The index is brought up to
    date by the session (no refresh when its watcher saw no change)."""

    def build() -> PackRequest:
        request = PackRequest(
            repo=root, task=task, budget=budget, changed=tuple(changed or ()),
            cache_dir=session.cache_dir, fill=fill, held=tuple(held or ()),
        )  # fmt: skip
        return dataclasses.replace(request, index=session.index_report(root))

    return build


def _result(text: str, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def _machine(doc: Mapping[str, Any]) -> CallToolResult:
    """The machine form: the document as structured content and, for clients that show
    only text, as compact JSON text too (a client forwards one of the two, never both)."""
    return _result(compact_json(doc), dict(doc))


def _caches_line(caches: Sequence[MemoStats]) -> str:
    """What the process's caches hold and how often they answered, on one line."""
    figures = "; ".join(
        f"{c.name} {c.entries} of {c.max_entries} (hits {c.hits}, misses {c.misses},"
        f" evictions {c.evictions})"
        for c in caches
    )
    return f"- caches: {figures}\n" if caches else ""


def _first_note(first: bool) -> str:
    return "Indexed this repository for the first time.\n\n" if first else ""
