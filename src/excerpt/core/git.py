"""The only place excerpt runs git, always read-only and with repository hooks disarmed.

A repository's own ``.git/config`` can name programs (pager, fsmonitor, external diff,
textconv, hooks); every call here overrides them, sets ``GIT_OPTIONAL_LOCKS=0`` so git never
refreshes ``.git/index``, and starts from a clean environment so a caller's ``GIT_DIR`` cannot
redirect it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from excerpt.errors import GitFault, UsageError

__all__ = [
    "SAFE_CONFIG",
    "RawChange",
    "blob_at",
    "diff_raw",
    "empty_tree",
    "git_dir",
    "git_env",
    "head_blobs",
    "head_of",
    "ls_files",
    "ls_files_checked",
    "merge_base",
    "read_blobs",
    "refusal",
    "resolve_commit",
    "run_git",
    "staged_paths",
    "tree_paths",
    "work_tree_top",
]

SAFE_CONFIG: tuple[str, ...] = (
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.pager=cat",
    "-c", "core.untrackedCache=false",
    "-c", "core.quotePath=false",
    "-c", "diff.external=",
    "-c", "protocol.allow=never",
    "-c", "core.attributesFile=/dev/null",
)  # fmt: skip
# Options for every diff excerpt asks of git: no external diff, no textconv filter, and
# renames split into a deletion and an addition (so a renamed file is read in full).
_DIFF_SAFE = ("--no-ext-diff", "--no-textconv", "--no-renames", "--no-color")

_TIMEOUT_S = 120.0
# git's warning for a directory it could not list (LC_ALL=C, core.quotePath=false).
_UNOPENED = re.compile(r"^warning: could not open directory '(.*/)': ", re.MULTILINE)
_UNOPENED_PREFIX = "warning: could not open directory '"


def git_dir(top: Path) -> Path:
    """The git directory of the work tree at ``top`` (absolute).

    Raises:
        GitFault: git failed.
    """
    proc = run_git(top, "rev-parse", "--absolute-git-dir")
    return Path(proc.stdout.decode("utf-8", "surrogateescape").strip())


def git_env() -> dict[str, str]:
    """A minimal environment for git: no inherited ``GIT_*`` redirection, no prompts."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        GIT_OPTIONAL_LOCKS="0",
        GIT_TERMINAL_PROMPT="0",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_PAGER="cat",
        PAGER="cat",
        LC_ALL="C",
    )
    return env


def run_git(
    cwd: Path,
    *args: str,
    check: bool = True,
    input: bytes | None = None,
    index_file: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git`` read-only in ``cwd`` (reading ``index_file`` as its index, when given).

    Raises:
        GitFault: git is missing or cannot be started in ``cwd``, timed out, or (with
            ``check``) exited non-zero; a ``safe.directory`` refusal keeps git's hint.
    """
    argv = ["git", "--no-pager", *SAFE_CONFIG, *args]
    if any("\0" in a for a in args):  # no process takes one: bad input, not a git fault
        raise UsageError("a git argument holds a NUL character")
    try:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=git_env()
            if index_file is None
            else {**git_env(), "GIT_INDEX_FILE": str(index_file)},
            input=input if input is not None else b"",
            capture_output=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitFault(f"git {args[0]} timed out after {_TIMEOUT_S:.0f}s") from exc
    except OSError as exc:
        if isinstance(exc, FileNotFoundError) and exc.filename == "git":
            raise GitFault("git is not installed or not on PATH") from exc
        raise GitFault(f"cannot run git in {cwd}: {exc.strerror or exc}") from exc
    if check and proc.returncode != 0:
        raise GitFault(refusal(proc.stderr) or _first_line(proc.stderr) or f"git {args[0]} failed")
    return proc


def _first_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[0].strip() if lines else ""


def refusal(stderr: bytes) -> str | None:
    """One line for git's refusal of a repository it does not trust (``safe.directory``,
    CVE-2022-24765), git's own hint included; None when ``stderr`` is not that refusal.

    git prints the reason, then on a line of its own the command that lifts the check
    (``git config --global --add safe.directory DIR``); both are kept, so the user can act.
    """
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines()]
    reason = next((line for line in lines if "dubious ownership" in line), None)
    if reason is None:
        return None
    hint = next((line for line in lines if line.startswith("git config ")), None)
    reason = reason.removeprefix("fatal: ")
    return f"git refuses the repository: {reason}" + (
        f"; if you trust it, run: {hint}" if hint else ""
    )


def work_tree_top(directory: Path) -> Path | None:
    """The top of the git work tree holding ``directory``, or None outside git.

    Raises:
        GitFault: git refuses the repository (e.g. ``safe.directory`` ownership check).
    """
    if shutil.which("git") is None:  # no git: discovery falls back to .gitignore rules
        return None
    proc = run_git(directory, "rev-parse", "--show-toplevel", check=False)
    if proc.returncode == 0:
        top = proc.stdout.decode("utf-8", "surrogateescape").strip()
        if top and _ignored_by_enclosing(directory, Path(top)):
            return None  # an ignored directory inside a repository is not git's to list
        return Path(top) if top else None
    refused = refusal(proc.stderr)
    if refused is not None:
        raise GitFault(refused)
    return None


def head_of(directory: Path) -> tuple[Path, Path, str | None] | None:
    """``(work tree top, git directory, HEAD's commit or None before the first commit)`` of
    the repository holding ``directory``, in one call of git; None where ``work_tree_top``
    gives None.

    Raises:
        GitFault: git refuses the repository.
    """
    if shutil.which("git") is None:
        return None
    proc = run_git(
        directory, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--verify", "-q",
        "--end-of-options", "HEAD^{commit}", check=False,
    )  # fmt: skip
    lines = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
    if proc.returncode not in (0, 1) or len(lines) != (4 if proc.returncode == 0 else 3):
        # not in git, a refusal, or a path holding a line break: asked one at a time
        top = work_tree_top(directory)
        if top is None:
            return None
        return top, git_dir(top), resolve_commit(top, "HEAD")
    top = Path(lines[0])
    if not lines[0] or _ignored_by_enclosing(directory, top):
        return None
    return top, Path(lines[1]), (lines[2] or None) if proc.returncode == 0 else None


def _ignored_by_enclosing(directory: Path, top: Path) -> bool:
    """Whether ``directory`` lies in a part of the repository at ``top`` that git ignores."""
    resolved = directory.resolve()
    if resolved == top.resolve():
        return False
    try:
        rel = resolved.relative_to(top.resolve()).as_posix()
    except ValueError:  # git names a top that does not hold it (a mount seen two ways)
        return False
    proc = run_git(top, "check-ignore", "-q", "--", rel, check=False)
    return proc.returncode == 0


def ls_files(directory: Path) -> tuple[list[str], list[str]]:
    """``(tracked, untracked)`` paths under ``directory``, as git lists them.

    Untracked excludes what ``.gitignore`` and friends exclude. Paths are relative to
    ``directory``, decoded with surrogateescape so any byte survives.

    Raises:
        GitFault: git failed.
    """
    tracked, untracked, _unopened = ls_files_checked(directory)
    return tracked, untracked


def ls_files_checked(directory: Path) -> tuple[list[str], list[str], list[str]]:
    """``(tracked, untracked, unopened)``: as ``ls_files``, plus the directories git could not
    open while looking for untracked files (``dir/``, relative to the top of the work tree,
    as git names them): their untracked files are unknown.

    Raises:
        GitFault: git failed.
    """
    tracked, _ = _ls(directory, "--cached")
    untracked, stderr = _ls(directory, "--others", "--exclude-standard")
    text = stderr.decode("utf-8", "surrogateescape")
    unopened = {m.group(1) for m in _UNOPENED.finditer(text)}
    for line in text.splitlines():  # git cuts a warning at 4,096 bytes: a path that long
        if line.startswith(_UNOPENED_PREFIX) and not _UNOPENED.match(line):  # lost its end
            unopened.add(line[len(_UNOPENED_PREFIX) :].rpartition("/")[0] + "/")
    return tracked, untracked, sorted(unopened)


def _ls(directory: Path, *selection: str) -> tuple[list[str], bytes]:
    proc = run_git(directory, "ls-files", "-z", *selection, "--", ".")
    names = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted({name for name in names if name}), proc.stderr


def head_blobs(directory: Path) -> dict[str, str] | None:
    """``{path: blob id}`` of ``HEAD`` under ``directory`` (relative paths); None when there is
    no commit yet. Reads objects only: no work-tree file is read and no filter runs.

    Raises:
        GitFault: git failed for another reason.
    """
    if run_git(directory, "rev-parse", "--verify", "-q", "HEAD", check=False).returncode != 0:
        return None
    proc = run_git(directory, "ls-tree", "-r", "-z", "HEAD", "--", ".")
    out: dict[str, str] = {}
    for entry in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = entry.partition("\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == "blob":
            out[path] = fields[2]
    return out


def staged_paths(directory: Path) -> list[str]:
    """Paths whose staged content differs from ``HEAD`` (index against tree: no work-tree
    reads, so no clean filter runs), relative to ``directory``.

    Raises:
        GitFault: git failed.
    """
    proc = run_git(
        directory, "diff-index", "--cached", "--name-only", "-z", "--relative",
        "--no-renames", "--no-ext-diff", "--no-textconv", "HEAD", "--", ".",
    )  # fmt: skip
    return sorted({p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p})


@dataclass(frozen=True, slots=True, kw_only=True)
class RawChange:
    """One entry of ``git diff --raw``: a path's modes and blob ids before and after.

    ``status`` is git's letter (``A`` added, ``D`` deleted, ``M`` modified, ``T`` type
    changed); renames and copies are never reported as such (``--no-renames``). A missing
    side has mode ``000000`` and an all-zero id.
    """

    path: str
    status: str
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str


def resolve_commit(top: Path, ref: str) -> str | None:
    """The commit id ``ref`` names in the repository at ``top``; None when it names none.

    Raises:
        UsageError: ``ref`` starts with ``-`` (it would be read as an option).
        GitFault: git failed for another reason.
    """
    if not ref or ref.startswith("-"):
        raise UsageError(f"not a revision: {ref!r}")
    proc = run_git(top, "rev-parse", "--verify", "-q", "--end-of-options", f"{ref}^{{commit}}",
                   check=False)  # fmt: skip
    if proc.returncode != 0:
        refused = refusal(proc.stderr)
        if refused is not None:
            raise GitFault(refused)
        return None
    return proc.stdout.decode("ascii", "replace").strip() or None


def empty_tree(top: Path) -> str:
    """The id of the empty tree in the repository's object format (nothing is written).

    Raises:
        GitFault: git failed.
    """
    proc = run_git(top, "hash-object", "-t", "tree", "--stdin", input=b"")
    return proc.stdout.decode("ascii").strip()


def diff_raw(
    top: Path, base: str, head: str | None = None, *, index_file: Path | None = None
) -> list[RawChange]:
    """What changed from the tree of ``base`` to git's index (``head`` None: the staged
    change; ``index_file`` when git is committing through another index, as in a hook run by
    ``git commit -a``) or to the tree of ``head``, every path relative to ``top``.

    Only objects are read: the index's blobs, never a work-tree file, so no clean filter
    runs and a file edited but not staged does not count.

    Raises:
        GitFault: git failed.
    """
    if head is None:
        argv = ["diff-index", "--cached", "--raw", "-z", "--full-index", *_DIFF_SAFE, base]
    else:
        argv = ["diff-tree", "-r", "--raw", "-z", "--full-index", *_DIFF_SAFE, base, head]
    proc = run_git(top, *argv, "--", index_file=index_file)
    fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    out: list[RawChange] = []
    i = 0
    while i + 1 < len(fields):
        meta, path = fields[i], fields[i + 1]
        i += 2
        parts = meta.lstrip(":").split()
        if len(parts) != 5:
            continue
        out.append(
            RawChange(
                path=path, status=parts[4][:1], old_mode=parts[0], new_mode=parts[1],
                old_blob=parts[2], new_blob=parts[3],
            )
        )  # fmt: skip
    return sorted(out, key=lambda c: c.path)


def read_blobs(top: Path, ids: Iterable[str], limit: int) -> dict[str, bytes | int]:
    """The bytes of each blob in ``ids`` (``git cat-file --batch``, one process), or, for a
    blob larger than ``limit`` bytes, its size alone (it is not read).

    Raises:
        GitFault: git failed or a blob is missing.
    """
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    request = "".join(f"{i}\n" for i in wanted).encode("ascii")
    sizes = run_git(top, "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)",
                    input=request)  # fmt: skip
    out: dict[str, bytes | int] = {}
    small: list[str] = []
    for line in sizes.stdout.decode("ascii", "replace").splitlines():
        fields = line.split()
        if len(fields) != 3 or fields[1] != "blob":
            raise GitFault(f"git cannot read object {fields[0] if fields else '?'}")
        size = int(fields[2])
        if size > limit:
            out[fields[0]] = size
        else:
            small.append(fields[0])
    if small:
        proc = run_git(top, "cat-file", "--batch", input="".join(f"{i}\n" for i in small).encode())
        data, pos = proc.stdout, 0
        for blob in small:
            end = data.index(b"\n", pos)
            header = data[pos:end].split()
            size = int(header[2])
            out[blob] = data[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1
    return out


def blob_at(top: Path, commit: str, path: str, limit: int = 4 * 1024 * 1024) -> bytes | None:
    """The bytes of ``path`` (relative to the top of the work tree) in ``commit``; None when
    it is not a file there or is larger than ``limit``.

    Raises:
        GitFault: git failed.
    """
    proc = run_git(top, "ls-tree", "-z", "--full-tree", commit, "--", path)
    entry = proc.stdout.decode("utf-8", "surrogateescape").split("\0")[0]
    meta, _, name = entry.partition("\t")
    fields = meta.split()
    if name != path or len(fields) != 3 or fields[1] != "blob":
        return None
    got = read_blobs(top, [fields[2]], limit).get(fields[2])
    return got if isinstance(got, bytes) else None


def merge_base(top: Path, a: str, b: str) -> str | None:
    """The best common ancestor of commits ``a`` and ``b``; None when they share none.

    Raises:
        GitFault: git failed.
    """
    proc = run_git(top, "merge-base", "--end-of-options", a, b, check=False)
    if proc.returncode not in (0, 1):
        raise GitFault(refusal(proc.stderr) or _first_line(proc.stderr) or "git merge-base failed")
    return proc.stdout.decode("ascii", "replace").strip() or None


def tree_paths(top: Path, commit: str | None, *, index_file: Path | None = None) -> set[str]:
    """Every file path (relative to ``top``) of ``commit``'s tree, or of git's index when
    ``commit`` is None (what a commit made now would hold): objects only, no work-tree read.

    Raises:
        GitFault: git failed.
    """
    if commit is None:
        proc = run_git(top, "ls-files", "-z", "--cached", "--full-name", index_file=index_file)
    else:
        proc = run_git(top, "ls-tree", "-r", "-z", "--name-only", "--full-tree", commit)
    return {p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p}
