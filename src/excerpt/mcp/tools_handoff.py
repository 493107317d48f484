"""The handoff tools: ``context_handoff`` (create) and ``context_handoff_validate`` (SPEC §5).

Adapters over ``excerpt.handoff``, as ``excerpt handoff create`` and ``validate`` are; the
document is returned, never written anywhere.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from excerpt.core.limits import MAX_BUDGET, MIN_BUDGET
from excerpt.handoff import create_handoff, render_handoff, render_report, validate_handoff
from excerpt.handoff.model import MAX_ITEMS, MAX_TEXT
from excerpt.mcp.calls import text_only, tool_call
from excerpt.mcp.fields import HandleText
from excerpt.mcp.session import Client, Roots, Session

__all__ = ["context_handoff", "context_handoff_validate"]

Text = Annotated[str, Field(max_length=MAX_TEXT)]


def _closed(fields: dict[str, Any]) -> dict[str, Any]:
    """An object of exactly ``fields``, described inline (no ``$ref``: every client and
    schema tool reads it); the library checks each entry as the CLI's input is checked."""
    return {"properties": fields, "required": sorted(fields), "additionalProperties": False}


_STRING = {"type": "string", "minLength": 1, "maxLength": MAX_TEXT}
Decision = Annotated[
    dict[str, Any],
    Field(json_schema_extra=_closed({
        "decision": {**_STRING, "description": "What was decided."},
        "why": {**_STRING, "description": "Why."},
    })),
]  # fmt: skip
Command = Annotated[
    dict[str, Any],
    Field(json_schema_extra=_closed({
        "command": {**_STRING, "description": "The command as run."},
        "exit_code": {"type": ["integer", "null"], "description": "Exit code; null: unknown."},
        "result": {"type": "string", "maxLength": MAX_TEXT, "description": "What it showed."},
    })),
]  # fmt: skip
Texts = list[Text] | None


Agent = Literal["claude", "codex"]
Goal = Annotated[str, Field(min_length=1, max_length=MAX_TEXT, description="What the task is for.")]
Status = Annotated[str, Field(max_length=MAX_TEXT, description="Where the task stands now.")]
Sender = Annotated[Agent, Field(description="The agent handing the task over: claude or codex.")]
Receiver = Annotated[Agent, Field(description="The agent taking it over: claude or codex.")]
Constraints = Annotated[
    Texts, Field(max_length=MAX_ITEMS, description="Rules the work must keep (a list of strings).")
]
FilesTouched = Annotated[
    Texts,
    Field(
        max_length=MAX_ITEMS,
        description="Repository-relative paths the work changed (a list of strings).",
    ),
]
OpenQuestions = Annotated[
    Texts, Field(max_length=MAX_ITEMS, description="Questions still open (a list of strings).")
]
NextSteps = Annotated[
    Texts, Field(max_length=MAX_ITEMS, description="What to do next, in order (a list of strings).")
]
Risks = Annotated[
    Texts, Field(max_length=MAX_ITEMS, description="What could go wrong (a list of strings).")
]
Decisions = Annotated[
    list[Decision] | None,
    Field(max_length=MAX_ITEMS, description="Decisions made, each {decision, why}."),
]
Commands = Annotated[
    list[Command] | None,
    Field(max_length=MAX_ITEMS, description="Commands run, each {command, exit_code, result}."),
]
Evidence = Annotated[
    list[HandleText] | None,
    Field(
        max_length=MAX_ITEMS,
        description="Handles from context_pack (PATH#L<start>-L<end>@<16 hex>) the handoff "
        "rests on; validation re-checks each.",
    ),
]
Document = Annotated[
    dict[str, Any],
    Field(description="An excerpt.handoff/v1 document, as context_handoff returned it."),
]


Budget = Annotated[
    int | None,
    Field(
        ge=MIN_BUDGET,
        le=MAX_BUDGET,
        description="Bytes the whole result may take (default: the client's); past it the "
        "Markdown gives way to the document alone, which the receiver needs.",
    ),
]


async def context_handoff(
    goal: Goal,
    from_agent: Sender,
    to_agent: Receiver,
    session: Session,
    roots: Roots,
    client: Client,
    status: Status = "",
    constraints: Constraints = None,
    decisions: Decisions = None,
    files_touched: FilesTouched = None,
    commands: Commands = None,
    open_questions: OpenQuestions = None,
    next_steps: NextSteps = None,
    risks: Risks = None,
    evidence: Evidence = None,
    budget: Budget = None,
) -> CallToolResult:
    """Call to hand the task to another agent: an excerpt.handoff/v1 document pinned to
    HEAD and the dirty tree, and its Markdown; nothing is written, so save the document
    where the receiver, who checks it with context_handoff_validate, will find it."""
    root = session.root(roots)
    limit = (budget or client.default_budget) - client.framing
    given = {
        "goal": goal, "status": status, "constraints": constraints or [],
        "decisions": decisions or [], "files_touched": files_touched or [],
        "commands": commands or [], "open_questions": open_questions or [],
        "next_steps": next_steps or [], "risks": risks or [], "evidence": evidence or [],
    }  # fmt: skip

    def create() -> CallToolResult:
        done = create_handoff(root, given, sender=from_agent, receiver=to_agent,
                              cache_dir=session.cache_dir)  # fmt: skip
        text = render_handoff(done.document)
        notes = "".join(f"Note: {w}.\n" for w in done.warnings)
        block = DOCUMENT_HEADING + _json_block(done.document)
        full = notes + text + block
        if _size(full) <= limit:
            return text_only(full)
        # the document is what the receiver needs; its Markdown is `excerpt handoff show`'s
        alone = notes + _WITHOUT_MARKDOWN.format(size=_size(text)) + block
        if _size(alone) <= limit:
            return text_only(alone)
        raise ToolError(
            f"the handoff document takes {_size(block):,} bytes, over this result's"
            f" {limit:,}: ask with a larger budget, or write it with `excerpt handoff create"
            " ... -o FILE`"
        )

    return await tool_call(create)


async def context_handoff_validate(
    document: Document, session: Session, roots: Roots
) -> CallToolResult:
    """Call before relying on a handoff you received: checks its schema, re-reads every
    evidence handle and compares HEAD and the dirty tree, listing exactly what went stale."""
    root = session.root(roots)

    def validate() -> CallToolResult:
        report = validate_handoff(root, document, cache_dir=session.cache_dir)
        return text_only(render_report(report))

    return await tool_call(validate)


# What follows the Markdown in context_handoff's result: the document itself, for the agent
# to save where the receiver finds it (a fenced block a model copies whole).
DOCUMENT_HEADING = "\n## Document (excerpt.handoff/v1): save it as JSON for the receiver\n\n"


_WITHOUT_MARKDOWN = (
    "# Handoff\n\nIts Markdown ({size:,} bytes) does not fit this result's budget with the"
    " document: the document alone follows; `excerpt handoff show FILE` renders it.\n"
)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _json_block(document: dict[str, Any]) -> str:
    body = json.dumps(document, ensure_ascii=False, sort_keys=False, indent=1)
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
    return f"{fence}json\n{body}\n{fence}\n"
