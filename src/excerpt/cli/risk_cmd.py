"""``excerpt risk PATH…`` / ``excerpt risk --query TEXT``: risk concepts (SPEC §7).

Paths are only strings: nothing is read, so ``--repo`` is accepted for uniformity and unused.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from excerpt.cli.common import add_repo, read_task
from excerpt.render.markdown import render_risk
from excerpt.render.text import to_json
from excerpt.risk import risk_report

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser("risk", help="risk concepts of paths or of task text")
    add_repo(p)
    p.add_argument("paths", nargs="*", metavar="PATH", help="repository-relative paths")
    p.add_argument("--query", metavar="TEXT", help="task text instead of paths (- for stdin)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    query = None
    if args.query is not None:
        query = read_task(argparse.Namespace(task=args.query, task_file=None))
    doc = risk_report(paths=tuple(args.paths), query=query)
    sys.stdout.write(to_json(doc) if args.json else render_risk(dict(doc)))
    return 0
