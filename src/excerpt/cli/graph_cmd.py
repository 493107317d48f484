"""``excerpt graph export``: the file graph with its integrity digest."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from excerpt.cli.common import add_repo
from excerpt.errors import UsageError
from excerpt.pack import export_graph
from excerpt.render.text import to_json

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser("graph", help="the dependency graph")
    actions = p.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="write the graph as JSON with a sha256 digest")
    add_repo(export)
    export.add_argument("--output", "-o", type=Path, help="write to this file (default stdout)")
    export.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    text = to_json(export_graph(args.repo))
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror}") from None
    sys.stderr.write(f"graph written to {args.output}\n")
    return 0
