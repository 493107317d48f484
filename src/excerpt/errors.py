"""The exception tree of excerpt.

Every error the library raises on purpose is an ``ExcerptError``; each class carries the
exit code the CLI turns it into, so exactly one place (``excerpt.cli.main``) prints
``Error: …`` and exits::

    ExcerptError                      (exit 1)  base; never raised itself
    ├── UsageError                    (exit 2)  bad arguments or malformed input
    └── EnvironmentFault              (exit 3)  the world is not as required
        ├── NotADirectoryFault                  --repo is missing or not a directory
        ├── GitFault                            git failed or refused (e.g. safe.directory)
        ├── CacheFault                          the cache cannot be opened or written
        └── CacheBusy                           another writer holds the index lock

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

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(ExcerptError):
    """The caller asked for something malformed (exit 2)."""

    exit_code = 2


class EnvironmentFault(ExcerptError):
    """The environment does not allow the operation (exit 3)."""

    exit_code = 3


class NotADirectoryFault(EnvironmentFault):
    """The repository path does not exist or is not a directory."""


class GitFault(EnvironmentFault):
    """git could not be run or refused the repository."""


class CacheFault(EnvironmentFault):
    """The cache directory or database cannot be used."""


class CacheBusy(CacheFault):
    """Another process is writing the index of this repository."""
