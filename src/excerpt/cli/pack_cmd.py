"""``excerpt plan`` and ``excerpt pack``: ranked regions, and the context pack itself."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from excerpt.cli.common import add_repo, progress_for, read_task
from excerpt.deliver import build_pack, build_plan
from excerpt.pack import PackRequest
from excerpt.render.text import to_json

__all__ = ["register"]


def _common(p: argparse.ArgumentParser) -> None:
    add_repo(p)
    p.add_argument("task", nargs="?", help="the task text, or - to read it from stdin")
    p.add_argument("--task-file", metavar="F", help="read the task from a file")
    p.add_argument(
        "--budget",
        type=int,
        default=32000,
        metavar="BYTES",
        help="hard limit on the Markdown result, headers included (default: 32000; a plan's"
        " text takes at most a quarter of it)",
    )
    p.add_argument("--changed", nargs="+", default=[], metavar="PATH", help="changed paths")
    p.add_argument("--changed-from-git", action="store_true", help="working tree + staged")
    p.add_argument("--graph", type=Path, metavar="FILE", help="a graph from `graph export`")
    p.add_argument("--format", choices=("json", "md"), default="md", help="output format")


def register(sub: Any) -> None:
    plan = sub.add_parser("plan", help="ranked files and lines to read, without text")
    _common(plan)
    plan.set_defaults(handler=run_plan)
    pack = sub.add_parser("pack", help="a context pack within a byte budget")
    _common(pack)
    pack.set_defaults(handler=run_pack)


def _request(args: argparse.Namespace) -> PackRequest:
    return PackRequest(
        repo=args.repo,
        task=read_task(args),
        budget=args.budget,
        changed=tuple(args.changed),
        changed_from_git=args.changed_from_git,
        graph_file=args.graph,
    )


def _finish(args: argparse.Namespace, doc: dict[str, Any], markdown: str) -> int:
    if args.json or args.format == "json":
        sys.stdout.write(to_json(doc))
    else:
        sys.stdout.write(markdown)
    return 0


def run_plan(args: argparse.Namespace) -> int:
    bar = progress_for(args)
    try:
        done = build_plan(_request(args), progress=bar)
    finally:
        if bar is not None:
            bar.close()
    return _finish(args, done.plan.to_dict(), done.text)


def run_pack(args: argparse.Namespace) -> int:
    bar = progress_for(args)
    try:
        done = build_pack(_request(args), progress=bar)
    finally:
        if bar is not None:
            bar.close()
    return _finish(args, done.pack.to_dict(), done.text)
