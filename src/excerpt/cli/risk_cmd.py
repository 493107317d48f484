"""``excerpt risk PATH…`` / ``excerpt risk --query TEXT``: risk concepts (SPEC §7).

Paths are only strings: nothing is read, so ``--repo`` is accepted for uniformity and unused.
"""

from __future__ import annotations

import argparse
from typing import Any

from excerpt.cli.common import add_output, add_repo, command, read_task
from excerpt.cli.output import emit

__all__ = ["register"]


def register(sub: Any) -> None:
    p = command(
        sub,
        "risk",
        help="risk concepts of paths or of task text",
        examples=[
            (
                "excerpt risk db/migrations/0042_refunds.sql .github/workflows/ci.yml",
                "the concepts, gate risk and secret flag of each path (nothing is read)",
            ),
            (
                "excerpt risk --query 'rotate the Stripe webhook secret' --json",
                "the concepts a task text touches, as JSON",
            ),
        ],
    )
    add_repo(p)
    p.add_argument("paths", nargs="*", metavar="PATH", help="repository-relative paths")
    p.add_argument("--query", metavar="TEXT", help="task text instead of paths (- for stdin)")
    add_output(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.render.markdown import render_risk
    from excerpt.render.text import to_json
    from excerpt.risk import risk_report

    query = None
    if args.query is not None:
        query = read_task(argparse.Namespace(task=args.query, task_file=None))
    doc = risk_report(paths=tuple(args.paths), query=query)
    emit(args, to_json(doc) if args.json else render_risk(dict(doc)))
    return 0
