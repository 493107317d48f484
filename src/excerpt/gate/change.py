"""The change the gate checks, read from git's objects: the staged change (git's index against
a base commit) or a commit range. Never a work-tree file: what is staged is what is checked.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from excerpt.core import git
from excerpt.core.secrets import decode_for_scan
from excerpt.errors import UsageError

__all__ = ["MAX_BLOB", "Change", "ChangedFile", "added_lines", "read_change"]

MAX_BLOB = 8 * 1024 * 1024  # larger blobs are named, not read
_NO_BLOB = frozenset({"0" * 40, "0" * 64})


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangedFile:
    """One path of the change, with what the gate needs of its two sides.

    ``kind`` is ``file``, ``symlink``, ``submodule`` or ``deleted`` (the new side); a
    symlink's ``new_text`` is its target. ``new_text`` is None for a binary blob or one over
    ``MAX_BLOB`` (then ``new_size`` says how large). ``added`` holds the 1-based numbers of
    the new side's lines the old side does not hold (by line text, counted: a line repeated
    once more than before counts once).
    """

    path: str
    status: str
    kind: str
    new_text: str | None = None
    old_text: str | None = None
    new_size: int = 0
    binary: bool = False
    added: frozenset[int] = frozenset()

    @property
    def exists(self) -> bool:
        return self.kind != "deleted"


def added_lines(new: str | None, old: str | None) -> frozenset[int]:
    """1-based numbers of the lines of ``new`` that ``old`` does not hold, counted."""
    if new is None:
        return frozenset()
    before = Counter(old.split("\n")) if old is not None else Counter()
    out = set()
    for number, line in enumerate(new.split("\n"), start=1):
        if before[line] > 0:
            before[line] -= 1
        else:
            out.add(number)
    return frozenset(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """What changed between ``base`` and ``head`` (``head`` None: the staged change)."""

    top: Path
    base: str
    base_ref: str
    head: str | None
    files: tuple[ChangedFile, ...] = field(default_factory=tuple)

    def by_path(self) -> dict[str, ChangedFile]:
        return {f.path: f for f in self.files}


def _kind(mode: str) -> str:
    if mode == "000000":
        return "deleted"
    if mode == "120000":
        return "symlink"
    if mode == "160000":
        return "submodule"
    return "file"


def read_change(
    top: Path, *, base: str | None, head: str | None, index_file: Path | None = None
) -> Change:
    """The change at ``top`` (the top of a work tree): staged against ``base`` (default
    ``HEAD``; the empty tree before the first commit) in git's index (or ``index_file``), or
    ``base..head`` when ``head`` is set.

    Raises:
        UsageError: ``base`` or ``head`` names no commit.
        GitFault: git failed.
    """
    ref = base or "HEAD"
    commit = git.resolve_commit(top, ref)
    if commit is None:
        if base is not None or head is not None:
            raise UsageError(f"{ref!r} names no commit in {top}")
        tree = git.empty_tree(top)  # no commit yet: everything staged is new
    else:
        tree = commit
    head_commit = None
    if head is not None:
        head_commit = git.resolve_commit(top, head)
        if head_commit is None:
            raise UsageError(f"{head!r} names no commit in {top}")
    raw = git.diff_raw(top, tree, head_commit, index_file=index_file)
    ids = [
        b
        for c in raw
        for b, mode in ((c.old_blob, c.old_mode), (c.new_blob, c.new_mode))
        if b not in _NO_BLOB and mode != "160000"
    ]
    blobs = git.read_blobs(top, ids, MAX_BLOB)
    files = tuple(_changed(c, blobs) for c in raw)
    return Change(top=top, base=commit or tree, base_ref=ref, head=head_commit, files=files)


def _changed(raw: git.RawChange, blobs: dict[str, bytes | int]) -> ChangedFile:
    kind = _kind(raw.new_mode)
    new = blobs.get(raw.new_blob) if kind in ("file", "symlink") else None
    old = blobs.get(raw.old_blob) if _kind(raw.old_mode) in ("file", "symlink") else None
    new_text, old_text = _text(new), _text(old)
    binary = isinstance(new, bytes) and new_text is None
    return ChangedFile(
        path=raw.path,
        status=raw.status,
        kind=kind,
        new_text=new_text,
        old_text=old_text,
        added=added_lines(new_text, old_text),
        new_size=new if isinstance(new, int) else len(new or b""),
        binary=binary,
    )


def _text(data: bytes | int | None) -> str | None:
    if not isinstance(data, bytes):
        return None
    return decode_for_scan(data)
