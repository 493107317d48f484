"""``excerpt get HANDLE…``: exact lines, or a refusal when the file changed."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from excerpt.cli.common import add_repo
from excerpt.pack import get_excerpts
from excerpt.render.packs import render_retrieved_md
from excerpt.render.text import to_json

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser("get", help="retrieve excerpts by handle, refusing stale ones")
    add_repo(p)
    p.add_argument("handles", nargs="+", metavar="HANDLE")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    results = [r.to_dict() for r in get_excerpts(args.repo, args.handles)]
    sys.stdout.write(
        to_json(results) if args.json else render_retrieved_md(results, limit=sys.maxsize)
    )
    statuses = {r["status"] for r in results}
    if "refused" in statuses:
        return 2
    return 1 if statuses & {"stale", "missing"} else 0
