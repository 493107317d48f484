"""excerpt: the exact lines a coding agent should read first, verifiable and within a budget.

Public API, one entry function per stage::

    report = excerpt.index_repository("path/to/repo")
    done = excerpt.build_pack(excerpt.PackRequest(repo="path/to/repo", task="fix the retry"))
    print(done.text)  # the Markdown a model receives, within the budget

Names are imported when first used, so ``import excerpt`` (and ``excerpt --version``) does
not pay for the parsers, the SDK or the vocabulary.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it
_WHERE = {
    "CacheBusy": "excerpt.errors",
    "CacheFault": "excerpt.errors",
    "EnvironmentFault": "excerpt.errors",
    "ExcerptError": "excerpt.errors",
    "GitFault": "excerpt.errors",
    "NotADirectoryFault": "excerpt.errors",
    "UsageError": "excerpt.errors",
    "Discovery": "excerpt.discover",
    "discover": "excerpt.discover",
    "is_sensitive_path": "excerpt.discover",
    "IndexReport": "excerpt.index.build",
    "index_repository": "excerpt.index.build",
    "Limits": "excerpt.core.settings",
    "PackRequest": "excerpt.pack",
    "build_pack": "excerpt.deliver",
    "build_plan": "excerpt.deliver",
    "get_excerpts": "excerpt.pack",
    "classify_path": "excerpt.risk",
    "concepts_from_query": "excerpt.risk",
    "is_gate_risk_path": "excerpt.risk",
    "is_secret_path": "excerpt.risk",
    "infer_harness": "excerpt.harness",
    "risk_report": "excerpt.risk",
}

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
    "PackRequest",
    "UsageError",
    "__version__",
    "build_pack",
    "build_plan",
    "classify_path",
    "concepts_from_query",
    "discover",
    "get_excerpts",
    "index_repository",
    "infer_harness",
    "is_gate_risk_path",
    "is_secret_path",
    "is_sensitive_path",
    "risk_report",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'excerpt' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


if TYPE_CHECKING:  # the names as the type checker sees them
    from excerpt.core.settings import Limits
    from excerpt.deliver import build_pack, build_plan
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
    from excerpt.harness import infer_harness
    from excerpt.index.build import IndexReport, index_repository
    from excerpt.pack import PackRequest, get_excerpts
    from excerpt.risk import (
        classify_path,
        concepts_from_query,
        is_gate_risk_path,
        is_secret_path,
        risk_report,
    )
