"""``excerpt plan`` and ``excerpt pack``: ranked regions, and the context pack itself."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from excerpt.cli.common import (
    add_filters,
    add_output,
    add_repo,
    command,
    complete_as,
    effective_settings,
    filters_of,
    progress_for,
    read_task,
)
from excerpt.cli.output import emit
from excerpt.core.limits import DEFAULT_BUDGET

if TYPE_CHECKING:
    from collections.abc import Mapping

    from excerpt.pack import PackRequest

__all__ = ["register"]


def _common(p: argparse.ArgumentParser) -> None:
    add_repo(p)
    p.add_argument("task", nargs="?", help="the task text, or - to read it from stdin")
    complete_as(
        p.add_argument("--task-file", metavar="F", help="read the task from a file"), "file"
    )
    p.add_argument(
        "--budget",
        type=int,
        metavar="BYTES",
        help="hard limit on the Markdown result, headers included; a plan's text takes at most"
        f" a quarter of it (default: {DEFAULT_BUDGET}, or budget from excerpt.toml or"
        " [tool.excerpt] in pyproject.toml)",
    )
    p.add_argument(
        "--changed",
        action="append",
        metavar="PATH",
        help="a path the change touches, ranked first; one path per flag, repeat it for more"
        " (--changed a.py --changed b.py)",
    )
    p.add_argument(
        "--changed-from-git",
        action="store_true",
        help="the paths git shows changed (working tree + staged)",
    )
    complete_as(
        p.add_argument("--graph", type=Path, metavar="FILE", help="a graph from `graph export`"),
        "file",
    )
    p.add_argument("--format", choices=("json", "md"), default="md", help="output format")
    p.add_argument(
        "--no-history",
        action="store_true",
        help="rank without the repository's past commits (and leave them unread)",
    )
    add_filters(p)
    add_output(p)


def register(sub: Any) -> None:
    plan = command(
        sub,
        "plan",
        help="ranked files and lines to read, without text",
        examples=[
            ('excerpt plan "fix the refund webhook retry"', "what to read first, and its size"),
            (
                "excerpt plan --task-file issue.md --changed app/refund.py --json",
                "a task from a file, with a path the change touches, as JSON",
            ),
        ],
    )
    _common(plan)
    plan.set_defaults(handler=run_plan)
    pack = command(
        sub,
        "pack",
        help="a context pack within a byte budget",
        examples=[
            (
                'excerpt pack "fix the refund webhook retry" --budget 16000',
                "exact source for a task, at most 16,000 bytes in all",
            ),
            (
                "excerpt pack --task-file issue.md --changed app/refund.py --changed app/models.py"
                " --exclude 'tests/**' -o pack.md",
                "a task from a file, two changed paths, tests left out, written to pack.md",
            ),
        ],
    )
    _common(pack)
    pack.add_argument(
        "--held",
        action="append",
        metavar="HANDLE",
        help="a handle from an earlier pack or a handoff that the agent still holds: while its"
        " file is unchanged its lines are not sent again (listed as already held) and the"
        " budget goes to the next regions; repeatable",
    )
    pack.add_argument(
        "--held-from",
        action="append",
        metavar="FILE",
        help="the handles of a JSON pack (its items and what it already held) or of a handoff"
        " (its evidence), held as --held holds them; - is stdin; repeatable",
    )
    pack.add_argument(
        "--stop-short",
        action="store_true",
        help="leave budget unused when every file left is unlikely to matter (below the"
        " confidence floor), and say so; by default a pack fills its budget",
    )
    pack.set_defaults(handler=run_pack)


def _request(args: argparse.Namespace) -> PackRequest:
    from excerpt.pack import PackRequest

    task = read_task(args)
    return PackRequest(
        repo=args.repo,
        task=task,
        budget=effective_settings(args).budget,
        changed=tuple(args.changed or ()),
        changed_from_git=args.changed_from_git,
        graph_file=args.graph,
        fill=not getattr(args, "stop_short", False),
        held=(
            *(getattr(args, "held", None) or ()),
            *(h for f in getattr(args, "held_from", None) or () for h in held_from(f)),
        ),
    )


def held_from(source: str) -> list[str]:
    """The handles a pack (``excerpt.pack/v1``: its items', then those it already held) or
    a handoff (``excerpt.handoff/v1``: its evidence) names.

    Raises:
        UsageError: the file is unreadable, not JSON, or neither document.
    """
    from excerpt.errors import UsageError
    from excerpt.handoff.document import load_json

    doc = load_json(source, what="--held-from file")
    kind = doc.get("schema") if isinstance(doc, dict) else None
    if kind == "excerpt.pack/v1":
        items = doc.get("items")
        handles = (
            [i.get("handle") for i in items if isinstance(i, dict)]
            if isinstance(items, list)
            else []
        )
        handles += doc.get("already_held") or []
    elif kind == "excerpt.handoff/v1":
        handles = doc.get("evidence") or []
    else:
        raise UsageError(
            "--held-from takes a JSON pack (excerpt.pack/v1) or a handoff (excerpt.handoff/v1)"
        )
    if not isinstance(handles, list) or not all(isinstance(h, str) for h in handles):
        raise UsageError(f"--held-from: the {kind} document's handles are not strings")
    return list(dict.fromkeys(handles))


def _finish(args: argparse.Namespace, doc: Mapping[str, Any], markdown: str) -> int:
    from excerpt.render.text import to_json

    emit(args, to_json(doc) if args.json or args.format == "json" else markdown)
    return 0


def run_plan(args: argparse.Namespace) -> int:
    from excerpt.deliver import build_plan
    from excerpt.index.history import history_disabled

    request = _request(args)
    bar = progress_for(args)
    try:
        with filters_of(args), history_disabled(args.no_history):
            done = build_plan(request, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    return _finish(args, done.plan.to_dict(), done.text)


def run_pack(args: argparse.Namespace) -> int:
    from excerpt.deliver import build_pack
    from excerpt.index.history import history_disabled

    request = _request(args)
    bar = progress_for(args)
    try:
        with filters_of(args), history_disabled(args.no_history):
            done = build_pack(request, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    return _finish(args, done.pack.to_dict(), done.text)
