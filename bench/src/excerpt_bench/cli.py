"""``excerpt bench localize``: localization accuracy and line coverage beside BM25."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from excerpt.errors import UsageError
from excerpt.tooling import SCHEDULER_HELP, command, complete_as, emit, git_dirs

if TYPE_CHECKING:
    from excerpt.tooling import Scheduler

__all__ = ["register"]


def register(sub: Any) -> None:
    examples = [
        (
            "excerpt bench localize --dataset tasks.jsonl --git-dir django/django=~/git/django"
            " --out /tmp/loc --scheduler local:8",
            "file Acc@k, MRR and line coverage beside BM25, the tasks on 8 worker processes",
        ),
        (
            "excerpt bench localize --dataset tasks.jsonl --replay /tmp/rec --out /tmp/loc2"
            " --weights variant.toml",
            "a weights variant, ranked and packed in seconds from a --record /tmp/rec run",
        ),
    ]
    p = command(sub, "bench", help="benchmarks", examples=examples)
    actions = p.add_subparsers(dest="bench", required=True)
    loc = command(
        actions,
        "localize",
        help="file localization and line coverage vs BM25",
        examples=examples,
    )
    loc.add_argument("--dataset", type=Path, required=True, help="tasks, JSON lines")
    loc.add_argument(
        "--git-dir", action="append", default=[], metavar="OWNER/NAME=GITDIR",
        help="a local git directory per repository of the dataset (repeatable)",
    )  # fmt: skip
    loc.add_argument("--limit", type=int, help="only the first N tasks")
    loc.add_argument("--repos", help="only these repositories (comma-separated OWNER/NAME)")
    loc.add_argument("--budgets", default="4000,8000,16000,32000", help="pack budgets, bytes")
    loc.add_argument("--out", type=Path, required=True, help="output directory")
    loc.add_argument(
        "--ablations", action="store_true", help="also rank with each signal left out in turn"
    )
    loc.add_argument(
        "--record", type=Path, metavar="DIR",
        help="also keep, per task, every index answer and file read in DIR (for --replay)",
    )  # fmt: skip
    loc.add_argument(
        "--replay", type=Path, metavar="DIR",
        help="rank and pack from a --record DIR alone: no git directory, tree or index",
    )  # fmt: skip
    loc.add_argument(
        "--lenient", action="store_true",
        help="with --replay: a file the ranking now reaches that the recording never held is"
        " served as unreadable (counted in report.json's replay_unrecorded) instead of refused;"
        " for trying variants on an older recording, approximately",
    )  # fmt: skip
    loc.add_argument(
        "--jobs", type=int, metavar="N",
        help="with --replay: worker processes (default: the number of cores); a live run takes"
        " its workers from --scheduler instead",
    )  # fmt: skip
    loc.add_argument(
        "--scheduler", metavar="local:N|tcp://HOST:PORT",
        help="fan the live run out by (repository, base commit): " + SCHEDULER_HELP + "; the"
        " outputs equal a serial run's but for latencies. Each worker exports its trees and"
        " indexes them on its own (one core each); remote workers need each --git-dir at the"
        " same path. Not with --record or --replay (a replay fans out with --jobs)",
    )  # fmt: skip
    loc.add_argument(
        "--weights", type=Path, metavar="FILE",
        help="ranking and selection numbers to use instead of the shipped ones (TOML: any keys"
        " of excerpt/rank/weights.toml; the rest keep their values)",
    )  # fmt: skip
    loc.add_argument("--json", action="store_true", help="print report.json")
    loc.set_defaults(handler=run)
    perf = command(
        actions,
        "perf",
        help="cold index, refresh, warm pack and re-pack after an edit, beside the floors",
        examples=[
            (
                "excerpt bench perf --repo ~/src/django",
                "every figure measured in this run, on a temporary copy of the tree",
            ),
            (
                "excerpt bench perf --repo . --tasks issues.jsonl --runs 1"
                " --aider-python ~/aider-venv/bin/python --json",
                "packs of your own tasks, one run of each index, beside Aider's repo map"
                " (SPEC §11 JSON)",
            ),
        ],
    )
    complete_as(
        perf.add_argument("--repo", type=Path, metavar="DIR", help="the tree to measure (copied)"),
        "directory",
    )
    perf.add_argument(
        "--synthetic", type=int, metavar="N",
        help="measure a generated tree of N files instead (mixed languages, long-tailed sizes,"
        " imports; the same tree for the same N)",
    )  # fmt: skip
    perf.add_argument(
        "--tasks", type=Path, metavar="FILE",
        help="tasks, JSON lines with a problem_statement or task field (default: derived from"
        " the tree's own definitions)",
    )  # fmt: skip
    perf.add_argument("--count", type=int, default=12, help="tasks to pack")
    perf.add_argument("--budget", type=int, default=32000, help="pack budget, bytes")
    perf.add_argument("--runs", type=int, default=3, help="runs of each index and floor")
    complete_as(
        perf.add_argument(
            "--aider-python", type=Path, metavar="PATH",
            help="the Python of an environment with aider-chat installed: also time Aider's repo"
            " map, cold and warm, on the same copy and tasks",
        ),
        "file",
    )  # fmt: skip
    perf.add_argument(
        "--aider-map-tokens", type=int, default=1024, metavar="N",
        help="Aider's map_tokens (the default is RepoMap's own)",
    )  # fmt: skip
    perf.add_argument(
        "--aider-timeout", type=float, default=1800.0, metavar="S",
        help="seconds the whole Aider run may take",
    )  # fmt: skip
    perf.add_argument(
        "--surface", choices=("cli", "mcp", "hook"), default="cli",
        help="mcp: time the same packs through a real excerpt mcp process too (its figures"
        " under the same keys, in mcp); hook: time excerpt hook processes as a client runs"
        " them, the seed cold and warm and PostToolUse on a small and a 200 KB output, beside"
        " python -c pass and excerpt --version (in hook)",
    )  # fmt: skip
    perf.add_argument("--json", action="store_true", help="machine-readable output")
    perf.set_defaults(handler=run_perf_cmd)
    soak = command(
        actions,
        "soak",
        help="sessions, hooks and edits at once for minutes: errors, stale serves, drift",
        examples=[
            (
                "excerpt bench soak --repo ~/src/django --minutes 10 --sessions 4",
                "four MCP sessions, the hooks and an editor on a copy of the tree for ten"
                " minutes; every excerpt served checked against the files as they were",
            ),
            ("excerpt bench soak --synthetic 100000 --minutes 10 --json", "the same on a"
             " generated tree of 100,000 files, the per-minute figures as JSON"),
        ],
    )  # fmt: skip
    complete_as(
        soak.add_argument("--repo", type=Path, metavar="DIR", help="the tree to use (copied)"),
        "directory",
    )
    soak.add_argument(
        "--synthetic", type=int, metavar="N", help="a generated tree of N files instead"
    )
    soak.add_argument("--minutes", type=float, default=10.0, help="how long")
    soak.add_argument("--sessions", type=int, default=4, help="concurrent excerpt mcp sessions")
    soak.add_argument("--budget", type=int, default=8000, help="pack budget, bytes")
    soak.add_argument(
        "--no-kill", action="store_true",
        help="leave out killing a server mid-call halfway through (the kill at the end, for"
        " the comparison with a fresh server, stays)",
    )  # fmt: skip
    soak.add_argument(
        "--keep", type=Path, metavar="DIR",
        help="leave the copy, the cache and the servers' logs in DIR (a new directory)",
    )  # fmt: skip
    soak.add_argument("--json", action="store_true", help="machine-readable output")
    soak.set_defaults(handler=run_soak_cmd)
    from excerpt_bench import session_cmd

    session_cmd.register(actions)


def _perf_tasks(path: Path) -> tuple[str, ...]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read --tasks {path}: {type(exc).__name__}") from None
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            raise UsageError(f"--tasks line {n} is not JSON") from None
        text = doc.get("problem_statement") or doc.get("task") if isinstance(doc, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise UsageError(f"--tasks line {n} has no problem_statement or task")
        out.append(text)
    return tuple(out)


@contextlib.contextmanager
def _progress(args: argparse.Namespace) -> Iterator[Callable[[str], None]]:
    """A long run's step on one line of a terminal's stderr (none with --json), cleared at
    the end."""
    shown = sys.stderr.isatty() and not args.json

    def say(step: str) -> None:
        if shown:
            sys.stderr.write(f"\r\x1b[2K{step}")
            sys.stderr.flush()

    try:
        yield say
    finally:
        if shown:
            sys.stderr.write("\r\x1b[2K")


def run_perf_cmd(args: argparse.Namespace) -> int:
    from excerpt.tooling import to_json
    from excerpt_bench.perf import PerfRun, render_perf, run_perf

    if (args.repo is None) == (args.synthetic is None):
        raise UsageError("give --repo DIR or --synthetic N")
    tasks = () if args.tasks is None else _perf_tasks(args.tasks)
    run = PerfRun(repo=args.repo or Path("."), tasks=tasks, count=args.count,
                  budget=args.budget, runs=args.runs, synthetic=args.synthetic,
                  aider_python=args.aider_python, aider_map_tokens=args.aider_map_tokens,
                  aider_timeout=args.aider_timeout, surface=args.surface)  # fmt: skip
    with _progress(args) as say:
        doc = run_perf(run, progress=say)
    emit(args, to_json(doc) if args.json else render_perf(doc))
    return 0


def run_soak_cmd(args: argparse.Namespace) -> int:
    from excerpt.tooling import to_json
    from excerpt_bench.soak import SoakRun, render_soak, run_soak

    if (args.repo is None) == (args.synthetic is None):
        raise UsageError("give --repo DIR or --synthetic N")
    if args.synthetic is not None and not 1 <= args.synthetic <= 1_000_000:
        raise UsageError("--synthetic must be between 1 and 1,000,000 files")
    run = SoakRun(repo=args.repo, minutes=args.minutes, sessions=args.sessions,
                  budget=args.budget, synthetic=args.synthetic, kill=not args.no_kill,
                  keep=args.keep)  # fmt: skip
    with _progress(args) as say:
        doc = run_soak(run, progress=say)
    emit(args, to_json(doc) if args.json else render_soak(doc))
    return 0 if all(v is not False for v in doc["targets"].values()) else 1


def _scheduler(args: argparse.Namespace) -> Scheduler:
    """``--scheduler``, checked against the flags it cannot go with."""
    from excerpt.tooling import parse_scheduler, require_dask

    scheduler = parse_scheduler(args.scheduler)
    if scheduler.fans_out:
        if args.record is not None:
            raise UsageError("--record runs serially: leave out --scheduler to record")
        if args.replay is not None:
            raise UsageError("--replay fans out with --jobs N, not --scheduler")
        if args.jobs is not None:
            raise UsageError(
                "--jobs is for --replay; --scheduler local:N sets a live run's workers"
            )
        require_dask(scheduler)
    return scheduler


def run(args: argparse.Namespace) -> int:
    from excerpt.tooling import ProgressBar, load_weights, to_json
    from excerpt_bench.bench import load_tasks, render_report, summarise
    from excerpt_bench.localize import run_localize

    try:
        budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    except ValueError:
        raise UsageError("--budgets wants comma-separated byte counts") from None
    if not budgets or min(budgets) < 0:
        raise UsageError("--budgets wants one or more byte counts of 0 or more")
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be 0 or more")
    if args.record is not None and args.replay is not None:
        raise UsageError("--record and --replay cannot be used together")
    if args.lenient and args.replay is None:
        raise UsageError("--lenient is for --replay")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    scheduler = _scheduler(args)
    weights = None if args.weights is None else load_weights(args.weights)
    tasks = load_tasks(args.dataset)
    if args.repos:
        wanted = {r.strip() for r in args.repos.split(",")}
        tasks = [t for t in tasks if t.repo in wanted]
    tasks = tasks[: args.limit] if args.limit is not None else tasks
    bar = ProgressBar(sys.stderr, "tasks") if sys.stderr.isatty() and not args.json else None
    try:
        rows = run_localize(
            tasks, git_dirs(args.git_dir), args.out, budgets, progress=bar,
            ablate=args.ablations, record=args.record, replay=args.replay,
            jobs=args.jobs or os.cpu_count() or 1, weights=weights, scheduler=scheduler,
            lenient=args.lenient,
        )  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
    report = summarise(rows, budgets)
    (args.out / "report.json").write_text(to_json(report), encoding="utf-8")
    (args.out / "report.md").write_text(render_report(report, budgets), encoding="utf-8")
    with (args.out / "details.jsonl").open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True) + "\n")
    sys.stdout.write(to_json(report) if args.json else render_report(report, budgets))
    return 0
