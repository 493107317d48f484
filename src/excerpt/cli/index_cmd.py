"""``excerpt index``: build or refresh the index (of one repository, or of a list)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from excerpt.batch import SCHEDULER_HELP
from excerpt.cli.common import add_filters, add_output, add_repo, command, complete_as, filters_of
from excerpt.cli.output import emit
from excerpt.errors import UsageError

__all__ = ["register"]


def register(sub: Any) -> None:
    p = command(
        sub,
        "index",
        help="build or refresh the index of a repository",
        examples=[
            ("excerpt index --stats", "index the current directory; list every omitted path"),
            (
                "excerpt index --many repos.txt --scheduler local:4 --exclude 'vendor/**' --json"
                " -o index.json",
                "every repository repos.txt lists on 4 processes, vendored code left out; exit 1"
                " if one failed",
            ),
        ],
    )
    add_repo(p)
    p.set_defaults(repo=None)  # "." unless --many: given with --many, it is refused
    p.add_argument("--stats", action="store_true", help="also list omitted paths and reasons")
    p.add_argument(
        "--no-history", action="store_true", help="leave the repository's past commits unread"
    )
    complete_as(
        p.add_argument(
            "--many", type=Path, metavar="REPOS.txt",
            help="index every repository this file lists instead (one path a line, relative to"
            " the current directory; blank lines and # comments skipped; - is stdin): a line"
            " per repository and a total, or with --json a list; one that fails is reported"
            " and the others indexed, and the exit code is then 1",
        ),
        "file",
    )  # fmt: skip
    p.add_argument(
        "--scheduler", metavar="local:N|tcp://HOST:PORT",
        help="with --many: where the repositories are indexed, one job each (default: here,"
        " one after another): " + SCHEDULER_HELP + "; each worker parses on one core and"
        " writes the cache of its own machine",
    )  # fmt: skip
    add_filters(p)
    add_output(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.many is not None:
        return run_many(args)
    if args.scheduler is not None:
        raise UsageError("--scheduler fans out --many REPOS.txt; one repository runs here")
    from excerpt.index.build import index_repository
    from excerpt.index.history import history_disabled
    from excerpt.render.progress import ProgressBar
    from excerpt.render.text import render_index, to_json

    bar = ProgressBar(sys.stderr, "indexing") if sys.stderr.isatty() and not args.json else None
    try:
        with filters_of(args), history_disabled(args.no_history):
            report = index_repository(args.repo or ".", progress=bar)
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


def run_many(args: argparse.Namespace) -> int:
    """``--many``: exit 0 when every repository was indexed, 1 when one or more failed."""
    from excerpt.batch.index_many import IndexJob, index_many, read_repo_list
    from excerpt.batch.scheduler import parse_scheduler, require_dask
    from excerpt.render.progress import ProgressBar
    from excerpt.render.text import to_json

    if args.repo is not None:
        raise UsageError("give --repo DIR or --many REPOS.txt, not both")
    if args.stats:
        raise UsageError("--stats lists one repository's omitted paths: not with --many")
    scheduler = parse_scheduler(args.scheduler)
    require_dask(scheduler)
    with filters_of(args):  # the globs checked here, before any worker starts
        pass
    job = IndexJob(
        include=None if args.include is None else tuple(args.include),
        exclude=None if args.exclude is None else tuple(args.exclude),
        no_history=args.no_history,
    )
    repos = read_repo_list(args.many)
    shown = sys.stderr.isatty() and not args.json
    bar = ProgressBar(sys.stderr, "repositories") if shown else None
    started = time.perf_counter()
    try:
        results = index_many(repos, scheduler, job, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - started
    emit(args, to_json(results) if args.json else _render_many(results, wall))
    return 0 if all(r["ok"] for r in results) else 1


def _render_many(results: list[dict[str, Any]], wall: float) -> str:
    from excerpt.core.escape import escape_controls

    lines = []
    for r in results:
        repo = escape_controls(r["repo"])
        if r["ok"]:
            lines.append(f"{repo}: {r['files_indexed']} files indexed in {r['seconds']:.2f} s")
        else:
            lines.append(f"{repo}: failed ({r['code']}): {escape_controls(r['error'])}")
    indexed = [r for r in results if r["ok"]]
    failed = len(results) - len(indexed)
    files = sum(r["files_indexed"] for r in indexed)
    lines.append(
        f"Total: {len(indexed)} of {len(results)} repositories indexed, {files} files,"
        f" in {wall:.2f} s" + (f"; {failed} failed" if failed else "")
    )
    return "\n".join(lines) + "\n"
