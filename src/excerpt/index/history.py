"""The repository's own past commits, for the history ranking signal.

In: a git directory and the head commit the index is built for. Out: the commits that are
ancestors of that head (merges left out; the newest ``max_commits`` of them), each with its
message's terms and the paths it changed, in the index database (migration 5).

Leak-free by construction: the stored commits are only ever ancestors of the head they were
built for. A new head that descends from the stored one adds what it has that the stored one
lacks; any other head also drops what the stored head has and it lacks (``rev-list`` both
ways), so after any sequence of heads, forwards or backwards, the store holds ancestors of the
last one and nothing else. Git is only read (objects, through ``excerpt.core.git``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from excerpt.core import git
from excerpt.core.secrets import without_secret_lines
from excerpt.errors import GitFault

__all__ = [
    "MAX_COMMITS",
    "MAX_FILES",
    "MESSAGE_WEIGHTS",
    "HistoryChange",
    "HistoryCommit",
    "HistoryReport",
    "HistorySource",
    "HistoryState",
    "PastCommit",
    "history_disabled",
    "history_enabled",
    "history_key",
    "is_current",
    "plan_history",
    "source_of_root",
]

logger = logging.getLogger(__name__)

# The newest commits kept: Django's 26,000 ancestors at a 2020 head take 3.5 s to read once
# and 0.02 s per head moved since; a deeper history costs index time for old evidence.
MAX_COMMITS = 50_000
# A commit changing more files is a mass edit (a reformat, a rename, a licence header): it
# says nothing of where one kind of change goes, and is held but never matched.
MAX_FILES = 100
_CHUNK = 5_000  # commits per git call (each call has its own timeout)
# BM25 weights of a message's subject and body: the subject says what the change is.
MESSAGE_WEIGHTS = (2.0, 1.0)
_FORMAT = "v2"  # what a stored commit's rows hold; another value rebuilds them

_ENABLED: ContextVar[bool] = ContextVar("excerpt_history_enabled", default=True)


@contextlib.contextmanager
def history_disabled(disabled: bool = True) -> Iterator[None]:
    """A block in which the history is neither read from git nor used for ranking
    (``--no-history``); with ``disabled`` False, a block like any other."""
    token = _ENABLED.set(not disabled and _ENABLED.get())
    try:
        yield
    finally:
        _ENABLED.reset(token)


def history_enabled() -> bool:
    """Whether history is in use here (not inside ``history_disabled``)."""
    return _ENABLED.get()


@dataclass(frozen=True, slots=True, kw_only=True)
class HistorySource:
    """Where an index's history comes from: the ancestors of ``head`` in ``git_dir``.

    ``prefix`` is the indexed root's place in the repository (``""`` at its top, else
    ``"dir/sub/"``): paths outside it are not the index's, paths inside lose it.
    """

    git_dir: Path
    head: str
    prefix: str = ""

    def __post_init__(self) -> None:
        if self.prefix and not self.prefix.endswith("/"):
            raise ValueError("a history prefix ends with '/'")


@dataclass(frozen=True, slots=True, kw_only=True)
class PastCommit:
    """A past commit matching a query: its id, commit time, BM25 score, the indexed files it
    changed, how many files it changed in all, and the query terms its message holds."""

    sha: str
    time: int
    score: float
    files: tuple[str, ...]
    changed: int
    matched: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryReport:
    """What the stored history holds after an update, and what the update did."""

    commits: int = 0  # commits held (ancestors of the head)
    skipped: int = 0  # of them, commits never matched: more than MAX_FILES files changed
    added: int = 0
    removed: int = 0
    truncated: bool = False  # older ancestors than the newest MAX_COMMITS are left out
    seconds: float = 0.0


def source_of_root(root: Path) -> HistorySource | None:
    """The history of the git repository holding ``root``, at its ``HEAD``; None outside
    git, before the first commit, or when git cannot tell (history is then silent).
    """
    try:
        found = git.head_of(root)
        if found is None:
            return None
        top, git_dir, head = found
        if head is None:
            return None
        rel = root.resolve().relative_to(top.resolve()).as_posix()
        return HistorySource(git_dir=git_dir, head=head, prefix="" if rel == "." else rel + "/")
    except (GitFault, ValueError) as exc:
        logger.warning("no history for %s: %s", root, exc)
        return None


@dataclass(frozen=True, slots=True)
class HistoryCommit:
    """A commit as stored: its message in two parts, the paths it changed (relative to the
    indexed root, deleted ones left out) and how many paths it changed in all."""

    sha: str
    time: int
    subject: str
    body: str
    paths: tuple[str, ...]  # every path changed but deleted ones
    changed: int  # every path changed, deletions included
    skipped: bool = False  # more than MAX_FILES changed: held, never matched


def _git(source: HistorySource, *args: str, stdin: bytes | None = None) -> bytes:
    return git.run_git(source.git_dir, "--git-dir", str(source.git_dir), *args, input=stdin).stdout


def _rev_list(source: HistorySource, *revs: str, limit: int | None = None) -> list[str]:
    """Commit ids, newest first, merges left out (``^rev`` excludes a commit's ancestors)."""
    count = () if limit is None else (f"--max-count={limit}",)
    out = _git(source, "rev-list", "--no-merges", *count, "--end-of-options", *revs)
    return out.decode("ascii").split()


def _read_commits(source: HistorySource, shas: Sequence[str]) -> list[HistoryCommit]:
    """Each commit's time, message and changed paths, in the order given."""
    out: list[HistoryCommit] = []
    for i in range(0, len(shas), _CHUNK):
        chunk = list(shas[i : i + _CHUNK])
        stdin = "".join(f"{s}\n" for s in chunk).encode("ascii")
        walk = ("log", "--no-walk=unsorted", "--stdin", "-z")
        messages = _messages(_git(source, *walk, "--format=%H%n%ct%n%B", stdin=stdin), chunk)
        paths = _paths(
            _git(source, *walk, "--format=%x1e%H", "--name-status", "--no-renames", stdin=stdin)
        )
        for sha in chunk:
            when, message = messages.get(sha, (0, ""))
            subject, _, body = without_secret_lines(message).strip().partition("\n")
            kept, changed = paths.get(sha, ((), 0))
            out.append(HistoryCommit(sha, when, subject, body, kept, changed))
    return out


def _messages(data: bytes, shas: Sequence[str]) -> dict[str, tuple[int, str]]:
    """``{sha: (commit time, message)}`` from ``log -z --format=%H%n%ct%n%B``.

    Records are NUL-separated; a message holding a NUL itself is joined back to its record,
    since each record must open with the next expected id.
    """
    out: dict[str, tuple[int, str]] = {}
    expected = iter(shas)
    want = next(expected, None)
    current: str | None = None
    for part in data.decode("utf-8", "replace").split("\0"):
        if want is not None and part.startswith(want + "\n"):
            current, want = want, next(expected, None)
            _, stamp, message = (part + "\n").split("\n", 2)
            out[current] = (int(stamp) if stamp.isdigit() else 0, message)
        elif current is not None and part:
            when, message = out[current]
            out[current] = (when, message + " " + part)
    return out


def _paths(data: bytes) -> dict[str, tuple[tuple[str, ...], int]]:
    """``{sha: (paths changed but not deleted, paths changed)}`` from ``log -z
    --format=%x1e%H --name-status``: a header, then (status, path) pairs, parsed by position
    (a path may hold any byte but NUL)."""
    out: dict[str, tuple[tuple[str, ...], int]] = {}
    tokens = data.decode("utf-8", "surrogateescape").split("\0")
    sha: str | None = None
    kept: list[str] = []
    changed = 0
    i = 0
    while i < len(tokens):
        token = tokens[i].lstrip("\n")
        if token.startswith("\x1e"):
            if sha is not None:
                out[sha] = (tuple(kept), changed)
            sha, kept, changed = token[1:].strip(), [], 0
            i += 1
        elif token and sha is not None and i + 1 < len(tokens):
            changed += 1
            if not token.startswith("D"):
                kept.append(tokens[i + 1])
            i += 2
        else:
            i += 1
    if sha is not None:
        out[sha] = (tuple(kept), changed)
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryState:
    """What the index holds: the key it was built under, its head, whether the cap cut it,
    and its commit ids."""

    key: str
    head: str
    truncated: bool
    shas: frozenset[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryChange:
    """What brings the stored history to a head's: commits to add, ids to drop, and the
    state to record (an empty ``head`` holds no history)."""

    add: tuple[HistoryCommit, ...]
    remove: frozenset[str]
    head: str
    key: str
    truncated: bool
    max_commits: int = MAX_COMMITS


def is_current(
    key: str,
    head: str,
    source: HistorySource,
    *,
    max_commits: int = MAX_COMMITS,
    max_files: int = MAX_FILES,
) -> bool:
    """Whether a history stored under ``key`` for ``head`` is ``source``'s: nothing to plan
    (asked before the stored commit ids are read, which a refresh then never needs)."""
    return key == history_key(source, max_commits, max_files) and head == source.head


def history_key(source: HistorySource, max_commits: int, max_files: int) -> str:
    """What stored rows depend on besides the head: another key rebuilds them."""
    return f"{_FORMAT}|{source.git_dir}|{source.prefix}|{max_commits}|{max_files}"


def plan_history(
    state: HistoryState,
    source: HistorySource | None,
    *,
    max_commits: int = MAX_COMMITS,
    max_files: int = MAX_FILES,
) -> HistoryChange | None:
    """The change that makes ``state`` the history of ``source`` (none for None); None when
    it already is. Git failing plans no history rather than a wrong one (logged)."""
    clear = HistoryChange(add=(), remove=state.shas, head="", key="", truncated=False)
    if source is None:
        return clear if state.head or state.shas else None
    key = history_key(source, max_commits, max_files)
    if is_current(state.key, state.head, source, max_commits=max_commits, max_files=max_files):
        return None
    try:
        add, remove, truncated = _difference(state, source, key, max_commits)
        commits = _read_commits(source, add)
    except GitFault as exc:
        logger.warning("history left out: git failed: %s", exc)
        return clear
    return HistoryChange(
        add=tuple(_prefixed(c, source.prefix, max_files) for c in commits),
        remove=frozenset(remove), head=source.head, key=key, truncated=truncated,
        max_commits=max_commits,
    )  # fmt: skip


def _difference(
    state: HistoryState, source: HistorySource, key: str, max_commits: int
) -> tuple[list[str], set[str], bool]:
    """``(commits to add, newest first; commits to drop; whether the cap cut the history)``.

    When the stored set is every ancestor of the stored head, the difference is taken both
    ways between the heads; otherwise (a first build, a capped history, another key) the
    newest ``max_commits`` ancestors are listed whole and compared.
    """
    stored = set(state.shas) if state.key == key else set()
    if state.key == key and state.head and not state.truncated:
        try:
            add = _rev_list(source, source.head, f"^{state.head}")
            remove = set(_rev_list(source, state.head, f"^{source.head}"))
            if len(stored) - len(remove & stored) + len(add) <= max_commits:
                return [s for s in add if s not in stored], remove & stored, False
        except GitFault:
            pass  # the stored head is gone (history rewritten): list the new one whole
        # past the cap, the newest are git's to say (``rev-list`` order), not commit times
    wanted = _rev_list(source, source.head, limit=max_commits + 1)
    truncated = len(wanted) > max_commits
    wanted = wanted[:max_commits]
    keep = set(wanted) & stored
    return [s for s in wanted if s not in keep], set(state.shas) - keep, truncated


def _prefixed(commit: HistoryCommit, prefix: str, max_files: int) -> HistoryCommit:
    """The commit with only the paths under ``prefix``, relative to it; none when it changed
    more than ``max_files`` files (it is held, never matched)."""
    if commit.changed > max_files:
        return HistoryCommit(commit.sha, commit.time, "", "", (), commit.changed, skipped=True)
    paths = tuple(
        sorted({p[len(prefix) :] for p in commit.paths if p.startswith(prefix) and _utf8(p)})
    )
    return HistoryCommit(
        commit.sha, commit.time, commit.subject, commit.body, paths, commit.changed
    )


def _utf8(path: str) -> bool:
    """Whether a path (decoded with surrogateescape) is text an index can hold."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
