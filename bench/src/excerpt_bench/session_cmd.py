"""``excerpt bench session``: what a session spends before the gold lines are in front of the
model, with excerpt (its MCP server, its prompt hook, or both) and with the clients' own tools
alone."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from excerpt.errors import UsageError
from excerpt.tooling import SCHEDULER_HELP, command, git_dirs

__all__ = ["register"]

DEFAULT_CAP = 150_000


def register(actions: Any) -> None:
    p = command(
        actions,
        "session",
        help="tokens until the gold lines are shown: excerpt's arms vs the clients' own tools",
        examples=[
            (
                "excerpt bench session --dataset tasks.jsonl --git-dir django/django=~/git/django"
                " --out /tmp/sess --record /tmp/sess-rec",
                "every arm on every task, and what the sessions read kept for --replay",
            ),
            (
                "excerpt bench session --dataset tasks.jsonl --replay /tmp/sess-rec --out /tmp/s2",
                "the same sessions again in seconds, from the recording alone",
            ),
        ],
    )
    p.add_argument("--dataset", type=Path, required=True, help="tasks, JSON lines")
    p.add_argument(
        "--git-dir", action="append", default=[], metavar="OWNER/NAME=GITDIR",
        help="a local git directory per repository of the dataset (repeatable)",
    )  # fmt: skip
    p.add_argument("--limit", type=int, help="only the first N tasks")
    p.add_argument("--repos", help="only these repositories (comma-separated OWNER/NAME)")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument(
        "--cap", type=int, default=DEFAULT_CAP, metavar="TOKENS",
        help="the session cap: o200k tokens an arm may be charged before it stops",
    )  # fmt: skip
    p.add_argument(
        "--arms", default="all",
        help="the arms to run, comma-separated: CLIENT-baseline, CLIENT-excerpt,"
        " CLIENT-excerpt-short (the MCP server), CLIENT-hooks, CLIENT-hooks-pack,"
        " CLIENT-hooks-map (the prompt hook's seed, its shape chosen or forced),"
        " CLIENT-hooks-mcp (both), CLIENT claude or codex",
    )  # fmt: skip
    p.add_argument(
        "--seed-tokens", type=int, default=2000, metavar="TOKENS",
        help="the hook arms' cap on the seed, o200k tokens (the hook's --seed-tokens)",
    )  # fmt: skip
    p.add_argument(
        "--tools", choices=("core", "all"), default="core",
        help="the excerpt MCP tool list whose definitions the excerpt arms pay each turn",
    )  # fmt: skip
    p.add_argument("--record", type=Path, metavar="DIR",
                   help="also keep what the sessions read in DIR (for --replay)")  # fmt: skip
    p.add_argument(
        "--replay", type=Path, metavar="DIR",
        help="run the sessions from a --record DIR alone: no git directory or tree",
    )  # fmt: skip
    p.add_argument(
        "--scheduler", metavar="local:N|tcp://HOST:PORT",
        help="fan the live run out by (repository, base commit): " + SCHEDULER_HELP
        + "; not with --record or --replay",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print report.json")
    p.set_defaults(handler=run)


def _arms(text: str) -> tuple[Any, ...]:
    from excerpt_bench.session.arms import ARMS, arm_named

    if text == "all":
        return ARMS
    names = [n.strip() for n in text.split(",") if n.strip()]
    try:
        chosen = {arm_named(n).name for n in names}
    except KeyError as exc:
        known = ", ".join(a.name for a in ARMS)
        raise UsageError(f"--arms: no arm named {exc.args[0]!r} (known: {known})") from None
    if not chosen:
        raise UsageError("--arms wants one or more arm names")
    return tuple(a for a in ARMS if a.name in chosen)


def run(args: argparse.Namespace) -> int:
    from excerpt.tooling import (
        ProgressBar,
        TokenCounter,
        listed_definitions,
        parse_scheduler,
        require_dask,
        to_json,
    )
    from excerpt_bench.bench import load_tasks
    from excerpt_bench.session.records import session_records
    from excerpt_bench.session.report import render_report, summarise
    from excerpt_bench.session.run import SessionRun, run_session_bench

    if args.cap < 1:
        raise UsageError("--cap must be 1 or more")
    if args.seed_tokens < 1:
        raise UsageError("--seed-tokens must be 1 or more")
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be 0 or more")
    if args.record is not None and args.replay is not None:
        raise UsageError("--record and --replay cannot be used together")
    scheduler = parse_scheduler(args.scheduler)
    if scheduler.fans_out:
        if args.record is not None or args.replay is not None:
            raise UsageError("--scheduler runs live tasks: leave out --record and --replay")
        require_dask(scheduler)
    arms = _arms(args.arms)
    tasks = load_tasks(args.dataset)
    if args.repos:
        wanted = {r.strip() for r in args.repos.split(",")}
        tasks = [t for t in tasks if t.repo in wanted]
    tasks = tasks[: args.limit] if args.limit is not None else tasks
    overhead = TokenCounter()(listed_definitions(args.tools))
    run_spec = SessionRun(cap=args.cap, overhead={"claude": overhead, "codex": overhead},
                          arms=arms, record=args.record, replay=args.replay,
                          seed_tokens=args.seed_tokens)  # fmt: skip
    bar = ProgressBar(sys.stderr, "tasks") if sys.stderr.isatty() and not args.json else None
    try:
        rows = run_session_bench(
            tasks, git_dirs(args.git_dir), args.out, run_spec, scheduler=scheduler, progress=bar
        )
    finally:
        if bar is not None:
            bar.close()
    report = summarise(rows, [a.name for a in arms], args.cap)
    report["tools"] = {"selection": args.tools, "overhead_tokens_per_turn": overhead}
    (args.out / "report.json").write_text(to_json(report), encoding="utf-8")
    (args.out / "report.md").write_text(render_report(report), encoding="utf-8")
    with (args.out / "details.jsonl").open("w", encoding="utf-8") as fh:
        for row in rows:  # every call of every session, with the gold lines it showed
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
    with (args.out / "sessions.jsonl").open("w", encoding="utf-8") as fh:
        for record in session_records(rows):
            fh.write(json.dumps(record.to_dict(), sort_keys=True, ensure_ascii=False) + "\n")
    sys.stdout.write(to_json(report) if args.json else render_report(report))
    return 0
