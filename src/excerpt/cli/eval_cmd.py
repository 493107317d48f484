"""``excerpt eval``: the evaluation suites, and ``excerpt eval agent-runs FILE``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from excerpt.cli.common import add_output, command
from excerpt.cli.output import emit, write_user_file
from excerpt.core.limits import DEFAULT_BUDGET
from excerpt.errors import UsageError

__all__ = ["register"]


def register(sub: Any) -> None:
    p = command(
        sub,
        "eval",
        help="run the evaluation suites (exit 1 below a floor)",
        examples=[
            ("excerpt eval --all", "every suite but harness, as a table against its floors"),
            (
                "excerpt eval --savings ~/src/shop --budget 16000 --json -o savings.json",
                "token savings on a repository of your own, as JSON in savings.json",
            ),
        ],
    )
    p.add_argument("action", nargs="?", choices=["agent-runs"], help="agent-runs FILE")
    p.add_argument("file", nargs="?", type=Path, help="agent-run records (JSON lines)")
    p.add_argument("--accuracy", action="store_true", help="retrieval and risk corpora")
    p.add_argument("--context", action="store_true", help="six task categories, three ways")
    p.add_argument("--savings", metavar="REPO", help="token savings on a repository")
    p.add_argument(
        "--gate",
        action="store_true",
        help="staged change-sets and commit ranges on fixture repositories: verdicts and named "
        "checks vs expected",
    )
    p.add_argument(
        "--harness",
        action="store_true",
        help="inferred setup/validate commands vs expected; the shipped node, python and rust "
        "fixtures' commands also run in a temporary copy (slower: not part of --all)",
    )
    p.add_argument("--tasks", type=Path, help="with --savings: tasks as JSON lines")
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="with --savings: byte budget")
    p.add_argument("--all", action="store_true", help="all but harness (it runs toolchains)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--html", type=Path, metavar="FILE", help="write a self-contained report")
    add_output(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.action == "agent-runs":
        return _agent_runs(args)
    from excerpt.evals.runner import EvalReport, run_suites
    from excerpt.evals.savings import savings_for_repo

    names = ["accuracy", "risk", "savings", "context", "gate"] if args.all else []
    names += [
        n for n in ("accuracy", "context", "gate", "harness") if getattr(args, n) and n not in names
    ]
    if args.accuracy and "risk" not in names:  # SPEC §10: --accuracy includes the risk cases
        names.append("risk")
    if not names and not args.savings:
        raise UsageError("choose --accuracy, --context, --gate, --harness, --savings REPO or --all")
    report = run_suites(names)
    if args.savings:
        tasks = _tasks(args.tasks) if args.tasks else None
        extra = savings_for_repo(args.savings, tasks, args.budget)
        report = EvalReport((*[s for s in report.suites if s.name != "savings"], extra))
    return _finish(args, report.to_dict(details=args.json or bool(args.html)), report.ok)


def _finish(args: argparse.Namespace, doc: dict[str, Any], ok: bool) -> int:
    from excerpt.render.text import to_json

    if args.html:
        from excerpt.evals.html import render_html

        write_user_file(args.html, render_html(doc).encode("utf-8"))
    emit(args, to_json(doc) if args.json else _table(doc))
    return 0 if ok else 1


def _table(doc: dict[str, Any]) -> str:
    lines = [f"excerpt eval: {'pass' if doc['pass'] else 'FAIL'}", ""]
    lines += [
        "| suite | cases | passed | metric | value | floor |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, suite in doc["suites"].items():
        for metric, value in suite["metrics"].items():
            floor = suite["thresholds"].get(metric)
            shown = "" if floor is None else f"{floor:.3f}"
            counts = f"{suite['cases']} | {suite['passed']}"
            lines.append(f"| {name} | {counts} | {metric} | {value:.3f} | {shown} |")
        table = suite.get("tables", {}).get("categories")
        if table:
            lines += [
                "",
                "| category | lexical lines/files | +changed | +graph |",
                "| --- | --- | --- | --- |",
            ]
            for cat, arms in table.items():
                cells = [
                    f"{arms[a]['line_coverage']:.2f} / {arms[a]['file_recall']:.2f}"
                    for a in ("lexical", "+changed", "+graph")
                ]
                lines.append(f"| {cat} | " + " | ".join(cells) + " |")
            lines.append("")
        for case, reason in suite.get("tables", {}).get("skipped", {}).items():
            lines.append(f"{name}: {case} skipped ({reason})")
    return "\n".join(lines) + "\n"


def _tasks(path: Path) -> list[Any]:
    """The tasks of a JSON Lines file: ``task`` (or ``problem_statement``) and, optionally,
    ``expected`` (or ``gold_files``) paths.

    Raises:
        UsageError: the file cannot be read, or a line is not such an object (naming it).
    """
    from excerpt.evals.savings import SavingsTask

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read tasks from {path}: {type(exc).__name__}") from None
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            raise UsageError(f"{path}:{number}: not a JSON object") from None
        if not isinstance(doc, dict):
            raise UsageError(f"{path}:{number}: not a JSON object")
        task = doc.get("task") or doc.get("problem_statement")
        if not isinstance(task, str):
            raise UsageError(f"{path}:{number}: no task or problem_statement")
        expected = doc.get("expected") or doc.get("gold_files") or []
        if not isinstance(expected, list) or not all(isinstance(p, str) for p in expected):
            raise UsageError(f"{path}:{number}: expected must be a list of paths")
        out.append(SavingsTask(task, tuple(expected)))
    return out


def _agent_runs(args: argparse.Namespace) -> int:
    from excerpt.render.text import to_json

    if args.file is None:
        raise UsageError("eval agent-runs needs a FILE of records")
    from excerpt.evals.agent_records import load_records
    from excerpt.evals.agent_report import report

    doc = report(load_records(args.file)).to_dict()
    emit(args, to_json(doc) if args.json else _agent_text(doc))
    return 0


def _agent_text(doc: dict[str, Any]) -> str:
    complete = "complete" if doc["benchmarkEvidenceComplete"] else "incomplete"
    counts = f"{doc['records']} records, {doc['validPairs']} valid pairs"
    lines = [f"{counts}; benchmark evidence {complete}."]
    for bad in doc["invalidPairs"]:
        lines.append(f"- invalid pair {bad['pairId']}: {', '.join(bad['reasons'])}")
    if doc["missing"]:
        lines.append("Missing: " + "; ".join(doc["missing"]))
    return "\n".join(lines) + "\n"
