"""``bench localize`` end to end: every task of a dataset ranked, packed and scored, on this
process (``excerpt_bench.bench``) or fanned out by repository and commit on a scheduler's
workers (``excerpt_bench.fanout``), with the same rows. The one module that meets both, so
neither imports the other's caller.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from excerpt.errors import UsageError
from excerpt.tooling import SERIAL, Scheduler, Weights
from excerpt_bench import bench
from excerpt_bench.bench import BenchTask, ProgressFn
from excerpt_bench.fanout import GroupRun, run_groups
from excerpt_bench.fixes import FixCommits
from excerpt_bench.primary import related_tests_hit
from excerpt_bench.recording import start_recording

__all__ = ["run_localize"]


def run_localize(
    tasks: Sequence[BenchTask],
    git_dirs: dict[str, Path],
    out: Path,
    budgets: Sequence[int],
    progress: ProgressFn | None = None,
    ablate: bool = False,
    *,
    record: Path | None = None,
    replay: Path | None = None,
    jobs: int = 1,
    weights: Weights | None = None,
    scheduler: Scheduler = SERIAL,
    lenient: bool = False,
) -> list[dict[str, Any]]:
    """Rank, pack and score every task; write ``predictions.jsonl`` as it goes.

    With ``record``, each task's index answers and file reads are kept there; with
    ``replay``, tasks are ranked and packed from such a recording alone (``jobs`` processes).
    ``weights`` replaces the shipped ranking and selection numbers; a ``lenient`` replay
    serves a file its recording never held as unreadable (each row's ``replay_unrecorded``
    lists them) instead of refusing. A ``scheduler`` that fans
    out runs the tasks by (repository, base commit) on its workers (``excerpt_bench.fanout``),
    with the same rows; it takes neither ``record`` nor ``replay``.

    Raises:
        UsageError: a repository without a git directory, or a recording that does not hold
            a task (or holds it for another task text), or a fanned-out run asked to record
            or replay.
        EnvironmentFault: a fanned-out run's scheduler cannot be reached, or a worker died.
    """
    if scheduler.fans_out and (record is not None or replay is not None):
        raise UsageError("--scheduler runs live tasks: it takes neither --record nor --replay")
    out.mkdir(parents=True, exist_ok=True)
    if record is not None:
        start_recording(record)
    rows: list[dict[str, Any]] = []
    fixes = FixCommits()
    if scheduler.fans_out:
        run = GroupRun(
            git_dirs=git_dirs, budgets=tuple(budgets), ablate=ablate, weights=weights,
            scratch=out / "workers" if scheduler.kind == "local" else None,
        )  # fmt: skip
        fanned: Iterable[dict[str, Any]] = run_groups(tasks, run, scheduler, progress)
        progress = None  # the workers' progress was shown as they finished
    else:
        fanned = bench.serial_rows(
            tasks, git_dirs, out, budgets, ablate, record, replay, jobs, weights, lenient
        )
    with (out / "predictions.jsonl").open("w", encoding="utf-8") as predictions:
        for done, (task, row) in enumerate(zip(tasks, fanned, strict=True), start=1):
            predictions.write(
                json.dumps({"instance_id": row["instance_id"], "files": row.pop("files")}) + "\n"
            )
            row["related_tests"] = related_tests_hit(fixes, git_dirs.get(task.repo), task, row)
            rows.append(row)
            if progress is not None:
                progress(done, len(tasks))
    return rows
