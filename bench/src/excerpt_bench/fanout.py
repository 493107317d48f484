"""``bench localize --scheduler``: the run's tasks fanned out by (repository, base commit).

A group is the tasks that share a tree: a repository at one base commit (or one live
``repo_dir``). A worker exports the group's tree from the git directory into a directory of
its own, indexes it into a cache of its own, and ranks, packs and scores the group's tasks as
the serial run does (``bench._run_one``); the lead puts the rows back in dataset order. A job
is up to eight trees of one repository, run in turn, and a worker keeps its directory
between jobs, so a later commit of the same repository is refreshed, not indexed from
nothing. Every figure but a latency depends only on the task, its
tree and the code, so ``predictions.jsonl`` and ``report.json`` equal the serial run's, the
latencies aside.

Workers of ``local:N`` keep their directories under ``OUT/workers/``; workers of a remote
scheduler in Dask's own local directory of each worker, which Dask removes when the worker
stops. Remote workers must see each ``--git-dir`` at the same path as the lead.
"""

from __future__ import annotations

import functools
import itertools
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from excerpt.errors import UsageError
from excerpt.tooling import Scheduler, Weights, fan_out
from excerpt_bench import bench

__all__ = ["Group", "GroupRun", "batches", "group_tasks", "run_batch", "run_group", "run_groups"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Group:
    """Tasks of one tree, with their places in the dataset."""

    positions: tuple[int, ...]
    tasks: tuple[bench.BenchTask, ...]

    def __post_init__(self) -> None:
        if not self.tasks or len(self.tasks) != len(self.positions):
            raise ValueError("a group holds one or more tasks, each with its position")


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupRun:
    """What every group of a run shares. ``scratch`` is where a worker keeps its
    directory (None: the Dask worker's own local directory)."""

    git_dirs: dict[str, Path]
    budgets: tuple[int, ...]
    ablate: bool
    weights: Weights | None
    scratch: Path | None


def group_tasks(tasks: Sequence[bench.BenchTask]) -> list[Group]:
    """The tasks by tree, each group in dataset order, the groups by their first task."""
    places: dict[tuple[str, str], list[int]] = {}
    for position, task in enumerate(tasks):
        key = ("dir", task.repo_dir) if task.repo_dir else (task.repo, task.base_commit)
        places.setdefault(key, []).append(position)
    return [Group(positions=tuple(p), tasks=tuple(tasks[i] for i in p)) for p in places.values()]


def _worker_home(scratch: Path | None) -> Path:
    """This worker's own directory: its exported trees and its cache."""
    if scratch is None:
        from distributed import get_worker

        scratch = Path(get_worker().local_directory)
    # one per process and thread: a remote worker may run several jobs at once
    return scratch / f"worker-{os.getpid()}-{threading.get_native_id()}"


def run_group(group: Group, run: GroupRun) -> list[tuple[int, dict[str, Any]]]:
    """In a worker: export the group's tree once, then each task as the serial run runs it,
    the index built in this process alone (the worker is one core of the batch).

    Raises:
        GitFault: git cannot read the group's commit.
    """
    home = _worker_home(run.scratch)
    workdir = bench._workdir(group.tasks[0], run.git_dirs, home)
    rows = []
    for position, task in zip(group.positions, group.tasks, strict=True):
        row = bench._run_one(
            task, run.git_dirs, home, home / "cache", run.budgets, run.ablate,
            weights=run.weights, workdir=workdir, index_jobs=1,
        )  # fmt: skip
        rows.append((position, row))
    return rows


# at most this many trees of one repository a job: a worker then refreshes its index from
# one commit to the next instead of building it anew, and jobs stay small enough to spread
_TREES_A_JOB = 8


def batches(groups: Sequence[Group], size: int = _TREES_A_JOB) -> list[tuple[Group, ...]]:
    """The groups as jobs: each job the trees of one repository (in dataset order), split
    evenly into runs of at most ``size``; the jobs in the order of their first task."""
    by_repo: dict[str, list[Group]] = {}
    for group in groups:
        first = group.tasks[0]
        by_repo.setdefault(first.repo_dir or first.repo, []).append(group)
    out: list[tuple[Group, ...]] = []
    for same in by_repo.values():
        count = -(-len(same) // size)
        cuts = [round(i * len(same) / count) for i in range(count + 1)]
        out += [tuple(same[a:b]) for a, b in itertools.pairwise(cuts)]
    return sorted(out, key=lambda job: job[0].positions[0])


def run_batch(groups: Sequence[Group], run: GroupRun) -> list[tuple[int, dict[str, Any]]]:
    """In a worker: ``run_group`` for each of ``groups``, one after the other."""
    return [pair for group in groups for pair in run_group(group, run)]


def run_groups(
    tasks: Sequence[bench.BenchTask],
    run: GroupRun,
    scheduler: Scheduler,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Every task's row, in dataset order, its group run on ``scheduler``; ``progress``
    hears the tasks done as each group finishes.

    Raises:
        UsageError: a task whose repository has no git directory (before any group runs).
        EnvironmentFault: the scheduler cannot be reached, or a worker died.
    """
    for task in tasks:
        if not task.repo_dir and task.repo not in run.git_dirs:
            raise UsageError(f"no --git-dir given for repository {task.repo}")
    jobs = batches(group_tasks(tasks))
    finished = 0

    def done(_index: int, rows: list[tuple[int, dict[str, Any]]]) -> None:
        nonlocal finished
        finished += len(rows)
        if progress is not None:
            progress(finished, len(tasks))

    results = fan_out(functools.partial(run_batch, run=run), jobs, scheduler, done=done)
    rows: dict[int, dict[str, Any]] = dict(pair for group in results for pair in group)
    return [rows[i] for i in range(len(tasks))]
