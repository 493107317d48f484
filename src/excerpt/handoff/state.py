"""The repository state a handoff is pinned to: ``HEAD`` and the dirty tree.

The dirty tree is every path whose work-tree bytes differ from ``HEAD`` (``modified``,
``deleted``, ``untracked`` and not ignored) and every path whose staged blob differs from
``HEAD`` (``staged``), each with a digest of what it holds now: the git blob id of the
work-tree bytes (hashed here, through the guarded reader: git runs no clean filter on them),
the staged blob id, or ``deleted``. ``dirty_digest`` is ``sha256:`` of their JSON (sorted
keys, no spaces, non-ASCII escaped). Only git objects and the guarded reader are read;
nothing is written, and git never refreshes ``.git/index`` (``excerpt.core.git``).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from excerpt.core import git
from excerpt.core.hashing import sha256_hex
from excerpt.core.settings import Limits
from excerpt.discover.reader import Omission, read_file
from excerpt.handoff.model import MAX_ITEMS
from excerpt.index.process import git_blob_id

__all__ = ["RepoState", "repo_state"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RepoState:
    head: str | None  # None: not a git work tree, or no commit yet
    dirty_files: tuple[dict[str, str], ...] | None  # None: not a git work tree

    @property
    def dirty_digest(self) -> str | None:
        if self.dirty_files is None:
            return None
        # ASCII escapes: a file name that is not UTF-8 (a lone surrogate here) has a digest
        return "sha256:" + sha256_hex(
            json.dumps(list(self.dirty_files), sort_keys=True, separators=(",", ":")).encode()
        )

    def to_dict(self) -> dict[str, Any]:
        """The document's pins; past ``MAX_ITEMS`` dirty files only their digest is kept
        (``dirty_files`` null), so a change is still seen but not named path by path."""
        listed = self.dirty_files is not None and len(self.dirty_files) <= MAX_ITEMS
        return {
            "head": self.head,
            "dirty_digest": self.dirty_digest,
            "dirty_files": list(self.dirty_files or ()) if listed else None,
        }


def repo_state(root: Path) -> RepoState:
    """``HEAD`` and the dirty files of the git work tree holding ``root`` (resolved); paths
    are relative to the top of that work tree.

    Raises:
        GitFault: git failed or refuses the repository.
    """
    found = git.work_tree_top(root)
    if found is None:
        return RepoState(head=None, dirty_files=None)
    root = found.resolve()  # a subdirectory is pinned by its whole work tree
    head = git.resolve_commit(root, "HEAD")
    blobs = git.head_blobs(root) or {}
    tracked, untracked = git.ls_files(root)
    dirty: list[dict[str, str]] = []
    for path in sorted(set(tracked) | set(blobs)):
        now = _work_tree_blob(root, path)
        if now.startswith("unread:") or (now == "deleted" and path not in blobs):
            continue  # not read (its changes go unseen), or a submodule / staged-only path
        if now != blobs.get(path):
            state = "deleted" if now == "deleted" else "modified"
            dirty.append({"path": path, "state": state, "digest": now})
    dirty += [
        {"path": p, "state": "untracked", "digest": _work_tree_blob(root, p)} for p in untracked
    ]
    if head is not None:
        for change in git.diff_raw(root, head):
            dirty.append({"path": change.path, "state": "staged", "digest": change.new_blob})
    dirty.sort(key=lambda d: (d["path"], d["state"]))
    return RepoState(head=head, dirty_files=tuple(dirty))


def _work_tree_blob(root: Path, path: str) -> str:
    """The git blob id of the work-tree entry at ``path``; ``deleted`` when there is none;
    ``unread:<reason>`` when the guarded reader will not read it (its changes go unseen)."""
    full = root / path
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        return "deleted"
    except OSError:
        return "unread:unreadable"
    if stat.S_ISLNK(info.st_mode):  # git stores a link as its target's name
        return git_blob_id(os.fsencode(os.readlink(full)))
    if stat.S_ISDIR(info.st_mode):
        return "deleted"  # a submodule or a file replaced by a directory
    content = read_file(root, path, Limits())
    if isinstance(content, Omission):
        return f"unread:{content.reason}"
    return git_blob_id(content.data)
