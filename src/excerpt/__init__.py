"""excerpt: the exact lines a coding agent should read first, verifiable and within a budget.

Public API, one entry function per stage::

    report = excerpt.index_repository("path/to/repo")
    done = excerpt.build_pack(excerpt.PackRequest(repo="path/to/repo", task="fix the retry"))
    print(done.text)  # the Markdown a model receives, within the budget

The names, by stage (``__all__`` is exactly these, sorted; a test keeps them equal):

- discover: ``discover``, ``Discovery``, ``is_sensitive_path``, ``Limits``
- index: ``index_repository``, ``IndexReport``
- plan and pack: ``build_plan``, ``DeliveredPlan``, ``Plan``, ``build_pack``, ``Delivered``,
  ``Pack``, ``PackRequest``
- retrieve: ``get_excerpts``, ``Retrieved``
- risk: ``risk_report``, ``RiskReport``, ``classify_path``, ``concepts_from_query``,
  ``is_gate_risk_path``, ``is_secret_path``
- harness: ``infer_harness``, ``Harness``
- errors (the tree is drawn in ``excerpt.errors``): ``ExcerptError``, ``UsageError``,
  ``EnvironmentFault``, ``NotADirectoryFault``, ``GitFault``, ``CacheFault``, ``CacheBusy``
- ``__version__``

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
    "Pack": "excerpt.pack",
    "PackRequest": "excerpt.pack",
    "Plan": "excerpt.pack",
    "Retrieved": "excerpt.pack",
    "Delivered": "excerpt.deliver",
    "DeliveredPlan": "excerpt.deliver",
    "build_pack": "excerpt.deliver",
    "build_plan": "excerpt.deliver",
    "get_excerpts": "excerpt.pipeline",
    "RiskReport": "excerpt.risk",
    "classify_path": "excerpt.risk",
    "concepts_from_query": "excerpt.risk",
    "is_gate_risk_path": "excerpt.risk",
    "is_secret_path": "excerpt.risk",
    "Harness": "excerpt.harness",
    "infer_harness": "excerpt.harness",
    "risk_report": "excerpt.risk",
}

__all__ = [
    "CacheBusy",
    "CacheFault",
    "Delivered",
    "DeliveredPlan",
    "Discovery",
    "EnvironmentFault",
    "ExcerptError",
    "GitFault",
    "Harness",
    "IndexReport",
    "Limits",
    "NotADirectoryFault",
    "Pack",
    "PackRequest",
    "Plan",
    "Retrieved",
    "RiskReport",
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
    from excerpt.deliver import Delivered, DeliveredPlan, build_pack, build_plan
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
    from excerpt.harness import Harness, infer_harness
    from excerpt.index.build import IndexReport, index_repository
    from excerpt.pack import Pack, PackRequest, Plan, Retrieved
    from excerpt.pipeline import get_excerpts
    from excerpt.risk import (
        RiskReport,
        classify_path,
        concepts_from_query,
        is_gate_risk_path,
        is_secret_path,
        risk_report,
    )
