"""``excerpt bench session``'s run: each task's tree exported and indexed as ``bench
localize`` does it, then one session per arm (``arms.run_sessions``).

``--record DIR`` keeps what the sessions read: every searchable file's bytes, once by
content (``DIR/blobs/``), each task's file list, and every pack, retrieval and seed the
excerpt and hook arms were answered (``DIR/tasks/<id>.json.gz``); each file is written whole
or not at all, not synced (a recording lost to a power cut is only made again). ``--replay
DIR`` runs the sessions from that alone, with no git directory, tree or index: the same rows,
in seconds, for any change to the agents, the accounting or the report. A changed pack is a
live run's work (or ``bench localize --replay``'s).
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from excerpt.errors import UsageError
from excerpt.tooling import (
    DEFAULT_SEED_TOKENS,
    SERIAL,
    ClientProfile,
    Scheduler,
    Shape,
    TokenCounter,
    fan_out,
    index_repository,
    language_of,
    replace_atomic,
    resolve_root,
    sha256_hex,
)
from excerpt_bench import bench
from excerpt_bench.fanout import Group, batches, group_tasks
from excerpt_bench.session.arms import ARMS, Arm, run_sessions
from excerpt_bench.session.excerpt_arm import (
    LivePacks,
    PackAnswer,
    Packs,
    RetrieveAnswer,
    SeedAnswer,
)
from excerpt_bench.session.ledger import Evidence, SessionResult
from excerpt_bench.session.workspace import Corpus

__all__ = ["SessionRun", "run_session_bench"]

TOKENIZER = "o200k"


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionRun:
    """What every task of a run shares. ``overhead``: tokens of excerpt's tool definitions
    in each client's model request; ``seed_tokens``: the hook's cap on its seed."""

    cap: int
    overhead: dict[str, int]
    arms: tuple[Arm, ...] = ARMS
    seed_tokens: int = DEFAULT_SEED_TOKENS
    record: Path | None = None
    replay: Path | None = None


def _key(kind: str, profile: ClientProfile | None, **args: Any) -> str:
    if profile is None:  # an answer no client shapes (the hook's seed)
        return json.dumps([kind, args], sort_keys=True)
    return json.dumps([kind, profile.label, profile.default_budget, profile.framing, args],
                      sort_keys=True)  # fmt: skip


@dataclass(slots=True)
class _RecordingPacks:
    inner: Packs
    answers: dict[str, dict[str, Any]]

    def pack(self, profile: ClientProfile, *, fill: bool, exclude: tuple[str, ...]) -> PackAnswer:
        key = _key("pack", profile, fill=fill, exclude=list(exclude))
        if key not in self.answers:
            self.answers[key] = self.inner.pack(profile, fill=fill, exclude=exclude).to_dict()
        return PackAnswer.from_dict(self.answers[key])

    def retrieve(self, profile: ClientProfile, handles: tuple[str, ...]) -> RetrieveAnswer:
        key = _key("retrieve", profile, handles=list(handles))
        if key not in self.answers:
            self.answers[key] = self.inner.retrieve(profile, handles).to_dict()
        return RetrieveAnswer.from_dict(self.answers[key])

    def seed(self, client: str, *, shape: Shape, max_tokens: int) -> SeedAnswer:
        key = _key("seed", None, client=client, shape=shape, max_tokens=max_tokens)
        if key not in self.answers:
            answer = self.inner.seed(client, shape=shape, max_tokens=max_tokens)
            self.answers[key] = answer.to_dict()
        return SeedAnswer.from_dict(self.answers[key])


@dataclass(slots=True)
class _ReplayPacks:
    instance_id: str
    answers: dict[str, dict[str, Any]]

    def _answer(self, key: str) -> dict[str, Any]:
        if key not in self.answers:
            raise UsageError(
                f"--replay: {self.instance_id} has no recorded answer for a call it now makes"
                " (a changed excerpt arm needs a live run)"
            )
        return self.answers[key]

    def pack(self, profile: ClientProfile, *, fill: bool, exclude: tuple[str, ...]) -> PackAnswer:
        return PackAnswer.from_dict(
            self._answer(_key("pack", profile, fill=fill, exclude=list(exclude)))
        )

    def retrieve(self, profile: ClientProfile, handles: tuple[str, ...]) -> RetrieveAnswer:
        return RetrieveAnswer.from_dict(
            self._answer(_key("retrieve", profile, handles=list(handles)))
        )

    def seed(self, client: str, *, shape: Shape, max_tokens: int) -> SeedAnswer:
        return SeedAnswer.from_dict(
            self._answer(_key("seed", None, client=client, shape=shape, max_tokens=max_tokens))
        )


def _language(paths: Sequence[str]) -> str:
    """The task's language: the most common of its gold files' (ties by name)."""
    counts: dict[str, int] = {}
    for path in paths:
        lang = language_of(path) or "other"
        counts[lang] = counts.get(lang, 0) + 1
    return min(counts, key=lambda k: (-counts[k], k)) if counts else "other"


def _row(
    task: bench.BenchTask, corpus: Corpus, packs: Packs, run: SessionRun, count: TokenCounter
) -> dict[str, Any]:
    evidence = Evidence.of(task.gold_changed_lines, corpus.paths)
    sessions = run_sessions(
        task.problem_statement, corpus, evidence, packs, arms=run.arms, cap=run.cap,
        overhead=run.overhead, count=count, seed_tokens=run.seed_tokens,
    )  # fmt: skip
    return {
        "instance_id": task.instance_id,
        "repo": task.repo,
        "language": _language([p for p in task.gold_files if p in corpus]),
        "sessions": {
            name: {
                "task": task.instance_id, "tree_sha256": corpus.digest, "tokenizer": TOKENIZER,
                "cap": s.cap, "evidence": s.evidence, **_session_dict(s),
            }
            for name, s in sessions.items()
        },
    }  # fmt: skip


def _session_dict(s: SessionResult) -> dict[str, Any]:
    seed = {} if s.seed is None else {"seed": s.seed}
    return {
        "tokens_to_first_gold": s.tokens_to_first_gold,
        "tokens_to_all_gold": s.tokens_to_all_gold,
        "tokens_to_first_gold_censored": s.censored(s.tokens_to_first_gold),
        "tokens_to_all_gold_censored": s.censored(s.tokens_to_all_gold),
        "reached_all": s.reached_all,
        "gold_shown": s.gold_shown,
        "recall_at_cap": round(s.recall, 6),
        "irrelevant_bytes": s.irrelevant_bytes,
        "tool_calls": s.tool_calls,
        "charged": s.charged,
        "overhead_tokens_per_turn": s.overhead_tokens_per_turn,
        "calls": [c.to_dict() for c in s.calls],
        **seed,
    }


def _live(
    task: bench.BenchTask,
    git_dirs: dict[str, Path],
    home: Path,
    run: SessionRun,
    count: TokenCounter,
    *,
    workdir: Path | None = None,
    index_jobs: int | None = None,
) -> dict[str, Any]:
    root = resolve_root(workdir or bench._workdir(task, git_dirs, home))
    history = bench._history_source(task, git_dirs)
    cache = home / "cache"
    index_repository(root, cache_dir=cache, history=history, jobs=index_jobs)
    corpus = Corpus.from_dir(root)
    live = LivePacks(
        root=root, task=task.problem_statement, cache_dir=cache,
        history=None if history == "repository" else history,
    )  # fmt: skip
    if run.record is None:
        return _row(task, corpus, live, run, count)
    packs = _RecordingPacks(inner=live, answers={})
    row = _row(task, corpus, packs, run, count)
    _write_recording(run.record, task, corpus, packs.answers)
    return row


def _task_file(directory: Path, instance_id: str) -> Path:
    return directory / "tasks" / f"{sha256_hex(instance_id.encode('utf-8'))[:24]}.json.gz"


def _write_recording(
    directory: Path, task: bench.BenchTask, corpus: Corpus, answers: dict[str, Any]
) -> None:
    manifest = {}
    for path, data in corpus.blobs().items():
        digest = sha256_hex(data)
        manifest[path] = digest
        blob = directory / "blobs" / digest[:2] / f"{digest}.gz"
        if not blob.exists():
            blob.parent.mkdir(parents=True, exist_ok=True)
            replace_atomic(blob, gzip.compress(data, mtime=0), sync=False)
    doc = {
        "instance_id": task.instance_id,
        "task_sha256": sha256_hex(task.problem_statement.encode("utf-8", "surrogatepass")),
        "files": manifest,
        "answers": answers,
    }
    target = _task_file(directory, task.instance_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    body = gzip.compress(json.dumps(doc, sort_keys=True).encode(), mtime=0)
    replace_atomic(target, body, sync=False)


def _replayed(task: bench.BenchTask, run: SessionRun, count: TokenCounter) -> dict[str, Any]:
    assert run.replay is not None
    directory = run.replay
    try:
        doc = json.loads(gzip.decompress(_task_file(directory, task.instance_id).read_bytes()))
    except FileNotFoundError:
        raise UsageError(
            f"--replay: {directory} holds no recording of {task.instance_id}"
        ) from None
    except (OSError, ValueError, EOFError) as exc:
        raise UsageError(
            f"--replay: the recording of {task.instance_id} is unreadable ({type(exc).__name__})"
        ) from None
    digest = sha256_hex(task.problem_statement.encode("utf-8", "surrogatepass"))
    if doc.get("task_sha256") != digest:
        raise UsageError(f"--replay: {task.instance_id} was recorded with another task text")
    files = {}
    for path, sha in doc["files"].items():
        blob = directory / "blobs" / sha[:2] / f"{sha}.gz"
        try:
            files[path] = gzip.decompress(blob.read_bytes())
        except (OSError, EOFError) as exc:
            raise UsageError(
                f"--replay: blob {sha[:12]} is missing or damaged ({type(exc).__name__})"
            ) from None
    packs = _ReplayPacks(instance_id=task.instance_id, answers=doc["answers"])
    return _row(task, Corpus(files), packs, run, count)


def _run_job(
    groups: Sequence[Group], git_dirs: dict[str, Path], run: SessionRun, scratch: Path | None
) -> list[tuple[int, dict[str, Any]]]:
    """In a worker: each group's tree exported once into this worker's own directory."""
    from excerpt_bench.fanout import _worker_home

    home = _worker_home(scratch)
    count = TokenCounter()
    out = []
    for group in groups:
        workdir = bench._workdir(group.tasks[0], git_dirs, home)
        for position, task in zip(group.positions, group.tasks, strict=True):
            row = _live(task, git_dirs, home, run, count, workdir=workdir, index_jobs=1)
            out.append((position, row))
    return out


def run_session_bench(
    tasks: Sequence[bench.BenchTask],
    git_dirs: dict[str, Path],
    out: Path,
    run: SessionRun,
    *,
    scheduler: Scheduler = SERIAL,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Every task's sessions, in dataset order.

    Raises:
        UsageError: a repository without a git directory, a recording that does not hold a
            task, or a fanned-out run asked to record or replay.
        EnvironmentFault: the scheduler cannot be reached, or a worker died.
    """
    if scheduler.fans_out and (run.record is not None or run.replay is not None):
        raise UsageError("--scheduler runs live tasks: it takes neither --record nor --replay")
    for task in tasks:
        if run.replay is None and not task.repo_dir and task.repo not in git_dirs:
            raise UsageError(f"no --git-dir given for repository {task.repo}")
    out.mkdir(parents=True, exist_ok=True)
    rows = list(_rows(tasks, git_dirs, out, run, scheduler, progress))
    return rows


def _rows(
    tasks: Sequence[bench.BenchTask],
    git_dirs: dict[str, Path],
    out: Path,
    run: SessionRun,
    scheduler: Scheduler,
    progress: Callable[[int, int], None] | None,
) -> Iterator[dict[str, Any]]:
    if scheduler.fans_out:
        finished = 0

        def done(_index: int, rows: list[tuple[int, dict[str, Any]]]) -> None:
            nonlocal finished
            finished += len(rows)
            if progress is not None:
                progress(finished, len(tasks))

        scratch = out / "workers" if scheduler.kind == "local" else None
        job = functools.partial(_run_job, git_dirs=git_dirs, run=run, scratch=scratch)
        results = fan_out(job, batches(group_tasks(tasks)), scheduler, done=done)
        by_position = dict(pair for rows in results for pair in rows)
        yield from (by_position[i] for i in range(len(tasks)))
        return
    count = TokenCounter()
    (out / "cache").mkdir(parents=True, exist_ok=True)
    for number, task in enumerate(tasks, start=1):
        if run.replay is not None:
            yield _replayed(task, run, count)
        else:
            yield _live(task, git_dirs, out, run, count)
        if progress is not None:
            progress(number, len(tasks))
