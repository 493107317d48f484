"""``excerpt index``: build or refresh the index."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from excerpt.cli.common import add_filters, add_output, add_repo, command, filters_of
from excerpt.cli.output import emit

__all__ = ["register"]


def register(sub: Any) -> None:
    p = command(
        sub,
        "index",
        help="build or refresh the index of a repository",
        examples=[
            ("excerpt index --stats", "index the current directory; list every omitted path"),
            (
                "excerpt index --repo ~/src/shop --exclude 'vendor/**' --json -o index.json",
                "vendored code left out, the figures as JSON in index.json",
            ),
        ],
    )
    add_repo(p)
    p.add_argument("--stats", action="store_true", help="also list omitted paths and reasons")
    p.add_argument(
        "--no-history", action="store_true", help="leave the repository's past commits unread"
    )
    add_filters(p)
    add_output(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.index.build import index_repository
    from excerpt.index.history import history_disabled
    from excerpt.render.progress import ProgressBar
    from excerpt.render.text import render_index, to_json

    bar = ProgressBar(sys.stderr, "indexing") if sys.stderr.isatty() and not args.json else None
    try:
        with filters_of(args), history_disabled(args.no_history):
            report = index_repository(args.repo, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        doc = report.to_dict()
        if args.stats:
            doc["omitted_paths"] = [{"path": p, "reason": r} for p, r in report.omitted_paths]
        emit(args, to_json(doc))
    else:
        omitted = list(report.omitted_paths) if args.stats else None
        emit(args, render_index(report, omitted))
    return 0
