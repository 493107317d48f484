"""Handoff: task state carried from one agent to another, pinned to the repository (SPEC §5).

In: the content (goal, status, decisions, commands, evidence handles, …) from flags, a JSON
file or a session transcript, and the repository. Out: an ``excerpt.handoff/v1`` document
(JSON Schema in ``schema/handoff.v1.json``), its Markdown for the receiving agent, and a
validation report (schema, then freshness of every handle, ``HEAD`` and the dirty tree).
Never writes into the repository: a document goes wherever its caller puts it.
"""

from __future__ import annotations

from excerpt.handoff.document import CLOCK_ENV, Created, assemble, create_handoff, load_json
from excerpt.handoff.model import AGENTS, SCHEMA_ID, check_document
from excerpt.handoff.render import render_handoff, render_report
from excerpt.handoff.session import SessionFacts, read_session
from excerpt.handoff.validate import validate_handoff

__all__ = [
    "AGENTS",
    "CLOCK_ENV",
    "SCHEMA_ID",
    "Created",
    "SessionFacts",
    "assemble",
    "check_document",
    "create_handoff",
    "load_json",
    "read_session",
    "render_handoff",
    "render_report",
    "validate_handoff",
]
