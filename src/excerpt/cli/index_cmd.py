"""``excerpt index``: build or refresh the index."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from excerpt.index.build import index_repository
from excerpt.render.progress import ProgressBar
from excerpt.render.text import render_index, to_json

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser("index", help="build or refresh the index of a repository")
    p.add_argument("--repo", default=".", help="repository directory (default: .)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--stats", action="store_true", help="also list omitted paths and reasons")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    bar = ProgressBar(sys.stderr, "indexing") if sys.stderr.isatty() and not args.json else None
    try:
        report = index_repository(args.repo, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        doc = report.to_dict()
        if args.stats:
            doc["omitted_paths"] = [{"path": p, "reason": r} for p, r in report.omitted_paths]
        sys.stdout.write(to_json(doc))
    else:
        omitted = list(report.omitted_paths) if args.stats else None
        sys.stdout.write(render_index(report, omitted))
    return 0
