"""``excerpt handoff create|show|validate``: task state between agents (SPEC §5)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from excerpt.cli.common import add_output, add_repo, command, complete_as
from excerpt.cli.output import emit

__all__ = ["register"]

_AGENTS = ("claude", "codex")
_LIST_DESTS = ("constraints", "files_touched", "open_questions", "next_steps", "risks", "evidence")


def register(sub: Any) -> None:
    p = command(
        sub,
        "handoff",
        help="task state between agents, pinned to HEAD and checked for freshness",
        examples=[
            (
                "excerpt handoff create --from claude --to codex --goal 'fix the refund"
                " retry' --next 'run the webhook tests' -o handoff.json",
                "a handoff from flags, written to handoff.json",
            ),
            ("excerpt handoff validate handoff.json", "is it still true? (exit 1 if stale)"),
        ],
    )
    actions = p.add_subparsers(dest="action", required=True)
    _create(actions)
    _show(actions)
    _validate(actions)


def _create(actions: Any) -> None:
    p = command(
        actions,
        "create",
        help="build a handoff document from flags, a JSON file or a session transcript",
        description="Build an excerpt.handoff/v1 document, pinned to HEAD and a digest of the\n"
        "dirty tree. Content comes from --input (a JSON object with the document's keys, or\n"
        "an earlier handoff), then --from-session, then the field flags (--goal and --status\n"
        "replace; the list flags add). Nothing is written into the repository.\n"
        "EXCERPT_HANDOFF_CREATED_AT=YYYY-MM-DDTHH:MM:SSZ pins created_at.",
        examples=[
            (
                "excerpt handoff create --from codex --to claude --input state.json"
                " -o handoff.json",
                "from a JSON file (- reads stdin)",
            ),
            (
                "excerpt handoff create --from claude --to codex --goal 'finish the refund"
                " fix' --from-session ~/.claude/projects/-home-me-shop/SESSION.jsonl",
                "files touched and commands run taken from a Claude Code session",
            ),
        ],
    )
    add_repo(p)
    p.add_argument("--from", dest="sender", required=True, choices=_AGENTS,
                   help="the agent handing the task over")  # fmt: skip
    p.add_argument("--to", dest="receiver", required=True, choices=_AGENTS,
                   help="the agent taking it")  # fmt: skip
    complete_as(p.add_argument("--input", metavar="FILE", help="a JSON object (- is stdin)"),
                "file")  # fmt: skip
    complete_as(
        p.add_argument("--from-session", metavar="FILE",
                       help="a Claude Code or Codex session transcript (JSONL): its files"
                       " touched and commands run are added"),
        "file",
    )  # fmt: skip
    p.add_argument("--goal", help="what the task is for")
    p.add_argument("--status", help="where it stands")
    lists = (
        ("--constraint", "constraints", "a rule the work must keep"),
        ("--file", "files_touched", "a path the work changed"),
        ("--question", "open_questions", "an open question"),
        ("--next", "next_steps", "a next step"),
        ("--risk", "risks", "a risk"),
        ("--evidence", "evidence", "a handle the handoff rests on (from a pack)"),
    )
    for flag, dest, what in lists:
        p.add_argument(flag, dest=dest, action="append", default=[], metavar="TEXT",
                       help=f"{what}; repeatable")  # fmt: skip
    p.add_argument("--decision", nargs=2, action="append", default=[],
                   metavar=("DECISION", "WHY"), help="a decision and why; repeatable")  # fmt: skip
    p.add_argument("--command", dest="commands", nargs=3, action="append", default=[],
                   metavar=("COMMAND", "EXIT_CODE", "RESULT"),
                   help="a command run, its exit code (- if unknown) and result;"
                   " repeatable")  # fmt: skip
    add_output(p)
    p.set_defaults(handler=run_create)


def _show(actions: Any) -> None:
    p = command(
        actions,
        "show",
        help="render a handoff as Markdown for the receiving agent",
        examples=[
            ("excerpt handoff show handoff.json", "for the agent named in its to field"),
            ("excerpt handoff show handoff.json --to claude", "in Claude's conventions"),
        ],
    )
    complete_as(p.add_argument("file", metavar="FILE", help="a handoff document (- is stdin)"),
                "file")  # fmt: skip
    p.add_argument("--to", dest="receiver", choices=_AGENTS,
                   help="render for this agent instead of the document's to")  # fmt: skip
    p.add_argument("--json", action="store_true", help="errors as JSON")
    add_output(p)
    p.set_defaults(handler=run_show)


def _validate(actions: Any) -> None:
    p = command(
        actions,
        "validate",
        help="check a handoff's schema, then whether its evidence, HEAD and dirty tree hold",
        description="Check the schema, then freshness: every evidence handle re-read as\n"
        "excerpt get reads it, HEAD and the dirty tree compared. Exit 0: valid and fresh;\n"
        "1: invalid or stale (the report lists exactly what); 2: unreadable or not JSON.",
        examples=[
            ("excerpt handoff validate handoff.json", "what went stale, if anything"),
            ("excerpt handoff validate --json handoff.json", "the report as JSON"),
        ],
    )
    add_repo(p)
    complete_as(p.add_argument("file", metavar="FILE", help="a handoff document (- is stdin)"),
                "file")  # fmt: skip
    add_output(p)
    p.set_defaults(handler=run_validate)


def run_create(args: argparse.Namespace) -> int:
    from excerpt.discover.walk import resolve_root
    from excerpt.handoff import assemble, create_handoff, load_json, read_session
    from excerpt.render.text import to_json

    base = load_json(args.input) if args.input is not None else {}
    facts = read_session(args.from_session, resolve_root(args.repo)) if args.from_session else None
    flags: dict[str, Any] = {k: getattr(args, k) for k in _LIST_DESTS if getattr(args, k)}
    flags.update({k: getattr(args, k) for k in ("goal", "status") if getattr(args, k) is not None})
    flags["decisions"] = [{"decision": d, "why": w} for d, w in args.decision]
    flags["commands"] = [_command(c) for c in args.commands]
    content, notes = assemble(base, facts, flags)
    done = create_handoff(args.repo, content, sender=args.sender, receiver=args.receiver)
    for note in [*notes, *done.warnings]:
        sys.stderr.write(f"excerpt: {note}\n")
    emit(args, to_json(done.document))
    return 0


def _command(given: list[str]) -> dict[str, Any]:
    from excerpt.errors import UsageError

    text, code, result = given
    if code != "-" and not code.lstrip("-").isdigit():
        raise UsageError("--command: EXIT_CODE must be an integer, or - when unknown")
    return {"command": text, "exit_code": None if code == "-" else int(code), "result": result}


def run_show(args: argparse.Namespace) -> int:
    from excerpt.errors import UsageError
    from excerpt.handoff import check_document, load_json, render_handoff

    doc = load_json(args.file, what="handoff")
    problems = check_document(doc)
    if problems:
        raise UsageError("not a valid handoff: " + "; ".join(problems[:3]))
    emit(args, render_handoff(doc, args.receiver))
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from excerpt.handoff import load_json, render_report, validate_handoff
    from excerpt.render.text import to_json

    report = validate_handoff(args.repo, load_json(args.file, what="handoff"))
    emit(args, to_json(report) if args.json else render_report(report))
    return 0 if report["valid"] and report["fresh"] else 1
