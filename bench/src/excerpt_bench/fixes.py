"""The fix commit of a benchmark task, read from its git directory: the child of the task's
base commit whose message is the task's text, and the test files it touched.

Read-only, through ``excerpt.tooling.run_git``. A task whose git directory does not hold
such a child (an issue text rather than a commit message) has no fix here, and is not
scored on it.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from excerpt.errors import GitFault
from excerpt.tooling import is_test_path, run_git

__all__ = ["FixCommits"]


def _normal(text: str) -> str:
    return " ".join(text.split())


class FixCommits:
    """Children of commits, per git directory, read once (``rev-list --all --parents``)."""

    def __init__(self) -> None:
        self._children: dict[Path, dict[str, list[str]]] = {}

    def _child_map(self, git_dir: Path) -> dict[str, list[str]]:
        if git_dir not in self._children:
            out = run_git(git_dir, "--git-dir", str(git_dir), "rev-list", "--all", "--parents")
            children: dict[str, list[str]] = defaultdict(list)
            for line in out.stdout.decode("ascii", "replace").splitlines():
                commit, *parents = line.split()
                for parent in parents:
                    children[parent].append(commit)
            self._children[git_dir] = children
        return self._children[git_dir]

    def fix_of(self, git_dir: Path, base: str, message: str) -> str | None:
        """The child of ``base`` whose message is ``message``: spacing and line ends aside,
        and trailers (``Co-authored-by: …``) a dataset may have left out."""
        want = _normal(message)
        try:
            children = sorted(self._child_map(git_dir).get(base, []))
            for child in children:
                raw = run_git(git_dir, "--git-dir", str(git_dir), "cat-file", "commit", child)
                _, _, body = raw.stdout.decode("utf-8", "replace").partition("\n\n")
                if want and _normal(body).startswith(want):
                    return child
        except GitFault:
            return None
        return None

    def tests_touched(self, git_dir: Path, base: str, message: str) -> tuple[str, ...] | None:
        """The test files (by the index's test-path rules) the fix of a task modified and
        that exist at ``base``; None when the task has no fix commit here."""
        fix = self.fix_of(git_dir, base, message)
        if fix is None:
            return None
        diff = run_git(
            git_dir, "--git-dir", str(git_dir), "diff-tree", "-r", "-z", "--no-commit-id",
            "--diff-filter=M", "--name-only", base, fix,
        )  # fmt: skip
        names = diff.stdout.decode("utf-8", "surrogateescape").split("\0")
        return tuple(sorted(n for n in names if n and is_test_path(n)))
