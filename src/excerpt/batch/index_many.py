"""``excerpt index --many REPOS.txt``: many repositories indexed, each as ``excerpt index
--repo`` indexes it, one job a repository on a scheduler.

A repository that cannot be indexed (missing, unreadable, git refusing it, its cache busy) is
reported with its error, and the others are indexed all the same.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from excerpt.batch.scheduler import Scheduler, fan_out
from excerpt.core.capped import read_capped
from excerpt.errors import EnvironmentFault, ExcerptError, UsageError

__all__ = ["IndexJob", "index_many", "index_one", "read_repo_list"]

_MAX_LIST_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexJob:
    """How each repository is indexed: this run's ``--include``/``--exclude`` and
    ``--no-history``, and how many parser processes (None: every core)."""

    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    no_history: bool = False
    jobs: int | None = None


def read_repo_list(path: Path) -> list[str]:
    """The repositories ``path`` (``-``: stdin) lists, one a line, in order and each once;
    blank lines and lines starting with ``#`` are skipped, surrounding spaces dropped.

    Raises:
        UsageError: the file cannot be read, is not UTF-8, or lists no repository.
    """
    data = read_capped(str(path), _MAX_LIST_BYTES, reading=f"--many {path}", what="repository list")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"--many {path}: not UTF-8 text") from None
    lines = (line.strip() for line in text.splitlines())
    repos = list(dict.fromkeys(line for line in lines if line and not line.startswith("#")))
    if not repos:
        raise UsageError(f"--many {path} lists no repository")
    return repos


def index_one(repo: str, job: IndexJob) -> dict[str, Any]:
    """In a worker: index ``repo`` (a path as listed, relative to the lead's directory when
    it was given relative) into the cache; its report, or its error."""
    from excerpt.discover.filters import overriding_filters
    from excerpt.index.build import index_repository
    from excerpt.index.history import history_disabled

    try:
        with (
            overriding_filters(include=job.include, exclude=job.exclude),
            history_disabled(job.no_history),
        ):
            report = index_repository(repo, jobs=job.jobs)
    except ExcerptError as exc:
        return _failed(exc.message, exc.code, exc.exit_code)
    except OSError as exc:  # one repository's trouble, reported beside the others
        return _failed(f"{exc.strerror or exc}", EnvironmentFault.code, EnvironmentFault.exit_code)
    return {"ok": True, **report.to_dict()}


def _failed(message: str, code: str, exit_code: int) -> dict[str, Any]:
    return {"ok": False, "error": message, "code": code, "exit": exit_code}


def index_many(
    repos: Sequence[str],
    scheduler: Scheduler,
    job: IndexJob,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Each of ``repos`` indexed on ``scheduler``: ``{"repo": AS_LISTED, "ok": True, ...the
    index report...}`` or ``{"repo", "ok": False, "error", "code", "exit"}``, in list order.
    A fanned-out run parses with one process a worker (the workers are the cores).

    Raises:
        UsageError: an address scheduler without the ``excerpt[dask]`` extra.
        EnvironmentFault: the scheduler cannot be reached, or a worker died.
    """
    if scheduler.fans_out:
        job = replace(job, jobs=1)
    # workers elsewhere (or started elsewhere) get absolute paths
    paths = [os.path.abspath(os.path.expanduser(r)) for r in repos]
    finished = 0

    def done(_index: int, _result: dict[str, Any]) -> None:
        nonlocal finished
        finished += 1
        if progress is not None:
            progress(finished, len(paths))

    results = fan_out(functools.partial(index_one, job=job), paths, scheduler, done=done)
    return [{"repo": repo, **result} for repo, result in zip(repos, results, strict=True)]
