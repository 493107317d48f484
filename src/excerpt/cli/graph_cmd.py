"""``excerpt graph export``: the file graph with its integrity digest."""

from __future__ import annotations

import argparse
from typing import Any

from excerpt.cli.common import add_output, add_repo, command
from excerpt.cli.output import emit

__all__ = ["register"]


def register(sub: Any) -> None:
    p = command(
        sub,
        "graph",
        help="the dependency graph",
        examples=[
            ("excerpt graph export -o graph.json", "the file graph with its sha256 digest"),
            (
                'excerpt pack "fix the refund retry" --graph graph.json',
                "a pack that ranks with that graph (integrity checked, freshness unverified)",
            ),
        ],
    )
    actions = p.add_subparsers(dest="action", required=True)
    export = command(
        actions,
        "export",
        help="write the graph as JSON with a sha256 digest",
        examples=[
            ("excerpt graph export > graph.json", "the graph of the current directory"),
            (
                "excerpt graph export --repo ~/src/shop -o /tmp/shop-graph.json",
                "another repository's graph, written atomically to a file",
            ),
        ],
    )
    add_repo(export)
    add_output(export)
    export.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.pipeline import export_graph
    from excerpt.render.text import to_json

    emit(args, to_json(export_graph(args.repo)))
    return 0
