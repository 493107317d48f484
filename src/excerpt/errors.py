"""The exception tree of excerpt.

Every error the library raises on purpose is an ``ExcerptError``; each class carries the
exit code the CLI turns it into and a stable ``code`` name, so exactly one place
(``excerpt.cli.main``) prints ``Error: …`` and exits::

    class                             exit  code
    ExcerptError                      1     error                 base; never raised itself
    ├── UsageError                    2     usage_error           bad arguments or input
    └── EnvironmentFault              3     environment_error     the world is not as required
        ├── NotADirectoryFault        3     repo_unavailable      --repo missing, not a
        │                                                         directory, or unreadable
        ├── GitFault                  3     git_failed            git failed or refused
        │                                                         (e.g. safe.directory)
        ├── CacheFault                3     cache_unusable        the cache cannot be created,
        │                                                         opened or written
        └── CacheBusy                 3     cache_busy            another writer holds the lock

The CLI reports an operating-system error that no library call turned into a fault (an
unwritable output file, say) as ``environment_error`` (exit 3), and adds two codes of its
own: ``interrupted`` (exit 130) and ``internal_error`` (exit 70: a bug, please report it).
Under ``--json`` (or ``--format json``) an error is printed as ``{"error": MESSAGE, "code":
CODE, "exit": N}`` on stdout and the same line on stderr (SPEC §11). Codes are never renamed.

Messages are one line and never contain repository file contents.
"""

from __future__ import annotations

__all__ = [
    "CacheBusy",
    "CacheFault",
    "EnvironmentFault",
    "ExcerptError",
    "GitFault",
    "NotADirectoryFault",
    "UsageError",
]


class ExcerptError(Exception):
    """Base of every error excerpt raises deliberately."""

    exit_code: int = 1
    code: str = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(ExcerptError):
    """The caller asked for something malformed (exit 2)."""

    exit_code = 2
    code = "usage_error"


class EnvironmentFault(ExcerptError):
    """The environment does not allow the operation (exit 3)."""

    exit_code = 3
    code = "environment_error"


class NotADirectoryFault(EnvironmentFault):
    """The repository path does not exist, is not a directory, or cannot be listed."""

    code = "repo_unavailable"


class GitFault(EnvironmentFault):
    """git could not be run or refused the repository."""

    code = "git_failed"


class CacheFault(EnvironmentFault):
    """The cache directory or database cannot be used."""

    code = "cache_unusable"


class CacheBusy(CacheFault):
    """Another process is writing the index of this repository."""

    code = "cache_busy"
