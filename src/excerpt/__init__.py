"""excerpt: the exact lines a coding agent should read first, verifiable and within a budget.

Public API, one entry function per stage::

    report = excerpt.index_repository("path/to/repo")
"""

from excerpt.core.settings import Limits
from excerpt.discover import Discovery, discover, is_sensitive_path
from excerpt.errors import (
    CacheBusy,
    CacheFault,
    EnvironmentFault,
    ExcerptError,
    GitFault,
    NotADirectoryFault,
    UsageError,
)
from excerpt.index.build import IndexReport, index_repository
from excerpt.risk import classify_path, concepts_from_query, is_gate_risk_path, is_secret_path

__all__ = [
    "CacheBusy",
    "CacheFault",
    "Discovery",
    "EnvironmentFault",
    "ExcerptError",
    "GitFault",
    "IndexReport",
    "Limits",
    "NotADirectoryFault",
    "UsageError",
    "__version__",
    "classify_path",
    "concepts_from_query",
    "discover",
    "index_repository",
    "is_gate_risk_path",
    "is_secret_path",
    "is_sensitive_path",
]

__version__ = "0.1.0"
