"""``excerpt harness``: how the repository is set up and validated, inferred, never run."""

from __future__ import annotations

import argparse
from typing import Any

from excerpt.cli.common import add_output, add_repo, command
from excerpt.cli.output import emit

__all__ = ["register"]


def register(sub: Any) -> None:
    p = command(
        sub,
        "harness",
        help="inferred setup and validation commands with evidence (nothing is run)",
        examples=[
            ("excerpt harness", "how the current directory is installed, tested and linted"),
            (
                "excerpt harness --repo ~/src/shop --no-ci --json -o harness.json",
                "what the manifests alone say, as JSON in harness.json",
            ),
        ],
    )
    add_repo(p)
    p.add_argument("--no-ci", action="store_true", help="ignore CI workflow files (manifests only)")
    add_output(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.harness import infer_harness
    from excerpt.render.markdown import render_harness
    from excerpt.render.text import to_json

    doc = infer_harness(args.repo, use_ci=not args.no_ci).to_dict()
    emit(args, to_json(doc) if args.json else render_harness(doc))
    return 0
