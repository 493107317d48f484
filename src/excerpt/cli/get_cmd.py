"""``excerpt get HANDLE…``: exact lines, or a refusal when the file changed."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from excerpt.cli.common import add_output, add_repo, command
from excerpt.cli.output import emit

__all__ = ["register"]


def register(sub: Any) -> None:
    p = command(
        sub,
        "get",
        help="retrieve excerpts by handle, refusing stale ones",
        examples=[
            (
                "excerpt get 'app/refund.py#L10-L42@3f2a9c0d11b7e845'",
                "the exact lines, or stale (exit 1) if the file changed since the pack",
            ),
            (
                "excerpt get --json -o lines.json 'app/refund.py#L1-L9@3f2a9c0d11b7e845'"
                " 'app/models.py#L5-L20@0c1d2e3f40516273'",
                "two handles at once, as JSON, written to lines.json",
            ),
        ],
    )
    add_repo(p)
    p.add_argument(
        "handles",
        nargs="+",
        metavar="HANDLE",
        help="PATH#L<start>-L<end>@<first 16 hex of the file's sha256>, from a pack or plan",
    )
    add_output(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.pipeline import get_excerpts
    from excerpt.render.packs import render_retrieved_md
    from excerpt.render.text import to_json

    results = [r.to_dict() for r in get_excerpts(args.repo, args.handles)]
    emit(args, to_json(results) if args.json else render_retrieved_md(results, limit=sys.maxsize))
    statuses = {r["status"] for r in results}
    if "refused" in statuses:
        return 2
    return 1 if statuses & {"stale", "missing"} else 0
