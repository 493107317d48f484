"""One gate run: read the change and the base policy, run every check, report."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from excerpt.core import git
from excerpt.core.durable import crash_point, fsync_directory
from excerpt.core.settings import cache_root, refuse_cache_inside
from excerpt.discover.walk import resolve_root
from excerpt.errors import EnvironmentFault, UsageError
from excerpt.gate.change import Change, read_change
from excerpt.gate.controls import check_schema, check_validation, check_version
from excerpt.gate.convergence import check_convergence, is_source_path
from excerpt.gate.ownership import CODEOWNERS_PATHS, check_ownership
from excerpt.gate.policy import Policy, parse_policy
from excerpt.gate.report import GateReport
from excerpt.gate.secret_safety import check_secrets

if TYPE_CHECKING:
    from excerpt.index.build import ProgressFn

__all__ = ["GateRequest", "explain_policy", "gate_salt", "run_gate"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GateRequest:
    """What to gate: the staged change against ``base`` (default ``HEAD``), or ``range``
    (``A..B``, or ``A...B`` from their merge base)."""

    repo: str | os.PathLike[str] = "."
    base: str | None = None
    range: str | None = None
    min_convergence: float | None = None
    validate: tuple[str, ...] = ()
    cache_dir: Path | None = None

    def __post_init__(self) -> None:
        if self.range is not None and self.base is not None:
            raise UsageError("give --base or --range, not both")
        if self.min_convergence is not None and not 0.0 <= self.min_convergence <= 1.0:
            raise UsageError("--min-convergence must be between 0 and 1")
        for flag, rev in (("--base", self.base), ("--range", self.range)):
            if rev is not None and (not rev.strip() or any(ord(c) < 32 for c in rev)):
                raise UsageError(f"{flag} must be a revision: not empty, no control characters")


def _top(repo: str | os.PathLike[str]) -> Path:
    root = resolve_root(repo)
    top = git.work_tree_top(root)
    if top is None:
        raise UsageError(f"the gate checks a git change, and {root} is not in a git work tree")
    return top


def _index_file(top: Path) -> Path | None:
    """The index ``git commit`` is committing through, when a hook runs us (git names it in
    ``GIT_INDEX_FILE``: ``git commit -a`` or ``git commit PATH`` stage into a temporary
    one); only a file inside the repository's git directory is taken."""
    named = os.environ.get("GIT_INDEX_FILE")
    if not named:
        return None
    path = (top / named).resolve()
    gitdir = git.git_dir(top).resolve()
    if not path.is_relative_to(gitdir) or not path.is_file():
        return None
    return path


def _read(request: GateRequest, top: Path) -> Change:
    if request.range is None:
        return read_change(top, base=request.base, head=None, index_file=_index_file(top))
    three = "..." in request.range
    a, _, b = request.range.partition("..." if three else "..")
    if not a or not b:
        raise UsageError(f"--range wants A..B or A...B, not {request.range!r}")
    b = b.removeprefix(".") if not three else b
    if three:
        ca, cb = git.resolve_commit(top, a), git.resolve_commit(top, b)
        if ca is None or cb is None:
            raise UsageError(f"{a if ca is None else b!r} names no commit in {top}")
        base = git.merge_base(top, ca, cb)
        if base is None:
            raise UsageError(f"{a} and {b} have no common ancestor")
        a = base
    return read_change(top, base=a, head=b)


def _policy(top: Path, commit: str | None) -> Policy:
    if commit is None or git.resolve_commit(top, commit) is None:
        return parse_policy(excerpt_toml=None, pyproject=None, commit=None)
    texts = [git.blob_at(top, commit, name) for name in ("excerpt.toml", "pyproject.toml")]
    decoded = [t.decode("utf-8", "replace") if t is not None else None for t in texts]
    return parse_policy(excerpt_toml=decoded[0], pyproject=decoded[1], commit=commit)


def _codeowners(top: Path, commit: str) -> tuple[str, str] | None:
    if git.resolve_commit(top, commit) is None:
        return None
    for path in CODEOWNERS_PATHS:
        data = git.blob_at(top, commit, path, limit=1024 * 1024)
        if data is not None:
            return path, data.decode("utf-8", "replace")
    return None


def _tested(
    top: Path, cache_dir: Path | None, progress: ProgressFn | None, tracked: set[str]
) -> tuple[set[str] | None, str | None]:
    """Files of the repository that a test is associated with, from its index: a test that
    is in ``tracked`` (the tree being checked), so an untracked test file does not count."""
    from excerpt.core.settings import repo_cache_dir
    from excerpt.index.build import index_repository
    from excerpt.index.store import IndexStore

    try:
        index_repository(top, cache_dir=cache_dir, progress=progress)
        with IndexStore.open(repo_cache_dir(top, cache_dir)) as store:
            edges = store.view().edges()
    except EnvironmentFault as exc:
        return None, exc.message
    return {dst for src, dst, kind in edges if kind == "tests" and src in tracked}, None


def gate_salt(top: Path, cache_dir: Path | None = None) -> bytes | None:
    """This installation's fingerprint salt (32 random bytes in the cache, made once, 0600);
    None when the cache cannot hold it (findings then carry no fingerprint).

    Raises:
        CacheFault: the cache lies inside the repository at ``top``.
    """
    try:
        root = cache_dir or cache_root()
    except EnvironmentFault:
        return None
    refuse_cache_inside(top, root)
    try:
        path = root / "gate-salt"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            data = _new_salt(path)
        if len(data) != 32:  # torn by a crash of an older writer: made again
            path.unlink()
            data = _new_salt(path)
    except (OSError, EnvironmentFault):
        return None
    return data if len(data) == 32 else None


def _new_salt(path: Path) -> bytes:
    """Make the salt whole before it has its name (written beside it, then hard-linked: a
    crash leaves no salt or all of it, and of two processes the first link wins)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(os.urandom(32))
            out.flush()
            os.fsync(out.fileno())
        crash_point("salt.after_temp_write")
        with contextlib.suppress(FileExistsError):  # another process made it first
            os.link(temp, path)
        crash_point("salt.after_link")
        fsync_directory(path.parent)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    return path.read_bytes()


def explain_policy(request: GateRequest) -> Policy:
    """The policy a gate run with ``request`` would apply, and where it comes from.

    Raises:
        UsageError, EnvironmentFault: as ``run_gate``.
    """
    top = _top(request.repo)
    change = _read(request, top)
    return _policy(top, change.base)


def run_gate(request: GateRequest, progress: ProgressFn | None = None) -> GateReport:
    """Every check of the change ``request`` names (``progress`` hears of the indexing the
    convergence check needs, on a repository's first gate).

    Raises:
        UsageError: not a git work tree, a revision that names no commit, a bad range, or a
            base policy that breaks its schema.
        EnvironmentFault: git cannot be run or refuses the repository.
    """
    top = _top(request.repo)
    refuse_cache_inside(top, request.cache_dir or cache_root())
    change = _read(request, top)
    policy = _policy(top, change.base)
    tested, unavailable = (None, None)
    if any(f.exists and is_source_path(f.path) for f in change.files):
        index_file = _index_file(top) if change.head is None else None
        tracked = git.tree_paths(top, change.head, index_file=index_file)
        tested, unavailable = _tested(top, request.cache_dir, progress, tracked)
    checks = (
        check_secrets(change, policy, gate_salt(top, request.cache_dir)),
        check_schema(change, policy),
        check_version(change, policy),
        check_validation(change, policy, request.validate),
        check_ownership(change, policy, _codeowners(top, change.base)),
        check_convergence(
            change, policy, tested=tested, threshold=request.min_convergence,
            unavailable=unavailable,
        ),
    )  # fmt: skip
    described = {
        "kind": "staged" if change.head is None else "range",
        "base_ref": change.base_ref,
        "base": change.base,
        "head": change.head,
        "files": len(change.files),
        **({"range": request.range} if request.range else {}),
    }
    return GateReport(change=described, policy=policy.to_dict(), checks=checks)
