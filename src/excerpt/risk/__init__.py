"""Risk concepts of paths and task texts (SPEC §7).

In: repository-relative POSIX paths, or task text. Out: concept names in vocabulary order
(``money flow``, ``auth/security``, ``secrets``, ``schema/migration``, ``infra/deploy``,
``ci/merge-gate``, ``dependencies``, ``privacy/pii``), and whether a path needs the gate's
attention or is secret material. The vocabulary is data (``concepts.json``, its decisions
documented there). Matching is by token, never by substring. Never touches the workspace:
a path is only a string.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import TypedDict

from excerpt.discover import is_sensitive_path
from excerpt.errors import UsageError
from excerpt.risk.match import terms_of
from excerpt.risk.vocabulary import PathParts, packaged_vocabulary

__all__ = [
    "PathRisk",
    "QueryRisk",
    "RiskReport",
    "classify_path",
    "concept_names",
    "concepts_from_query",
    "is_gate_risk_path",
    "is_secret_path",
    "risk_report",
]


class PathRisk(TypedDict):
    """``risk --json`` for one path."""

    concepts: list[str]
    gate_risk: bool
    secret: bool


class QueryRisk(TypedDict):
    """``risk --json`` for task text."""

    concepts: list[str]


class RiskReport(TypedDict, total=False):
    """``risk --json``: ``{"query": ...}`` or ``{"paths": {PATH: ...}}``."""

    query: QueryRisk
    paths: dict[str, PathRisk]


def concept_names() -> tuple[str, ...]:
    """Every concept of the vocabulary, in its order.

    Raises:
        EnvironmentFault: the packaged vocabulary is missing or malformed.
    """
    return tuple(c.name for c in packaged_vocabulary().concepts)


def _parts(path: str) -> PathParts | None:
    parts = [p for p in unicodedata.normalize("NFC", path).split("/") if p not in ("", ".")]
    if not parts:
        return None
    folded = tuple(p.casefold() for p in parts)
    return PathParts(text="/".join(parts), dirs=folded[:-1], basename=folded[-1])


def _sensitive(path: PathParts) -> bool:
    return is_sensitive_path(path.text)


def classify_path(path: str) -> tuple[str, ...]:
    """The risk concepts of a repository-relative POSIX path, in vocabulary order.

    Tokens of every component count (``app/payments/views.py`` is money flow), as do the
    basename globs, directory runs and, for secrets, the sensitive deny list; a concept's
    exclusions veto it (test files are never ``ci/merge-gate``).

    Raises:
        EnvironmentFault: the packaged vocabulary is missing or malformed.
    """
    parts = _parts(path)
    if parts is None:
        return ()
    vocab = packaged_vocabulary()
    hits = vocab.path_rules.concepts(terms_of(parts.text))
    return tuple(
        c.name
        for i, c in enumerate(vocab.concepts)
        if not c.excluded(parts)
        and (i in hits or c.structural(parts) or (c.sensitive and _sensitive(parts)))
    )


_STRIP = "\"'`()[]{}<>,;:!?*"
_DOTTED = re.compile(r"[\w-]+(?:\.[\w-]+)+")


def _path_like(word: str) -> PathParts | None:
    word = word.strip(_STRIP).rstrip(".")
    if "/" in word or (word.startswith(".") and len(word) > 1) or _DOTTED.fullmatch(word):
        return _parts(word)
    return None


def concepts_from_query(text: str) -> tuple[str, ...]:
    """The risk concepts of task text (an issue, a request), in vocabulary order.

    The text's words are identifier-split and matched against the query rules. A word that
    looks like a path (``package.json``, ``.env``, ``.github/workflows/ci.yml``) also meets
    the structural path rules — globs, directories, the deny list — but not path tokens, so
    ``self.session`` in a code snippet is not a login.

    Raises:
        EnvironmentFault: the packaged vocabulary is missing or malformed.
    """
    vocab = packaged_vocabulary()
    hits = set(vocab.query_rules.concepts(terms_of(text)))
    for parts in filter(None, map(_path_like, text.split())):
        for i, c in enumerate(vocab.concepts):
            structural = c.structural(parts) or (c.sensitive and _sensitive(parts))
            if structural and not c.excluded(parts):
                hits.add(i)
    return tuple(c.name for i, c in enumerate(vocab.concepts) if i in hits)


def is_gate_risk_path(path: str) -> bool:
    """True when a change to ``path`` needs the gate's attention: it carries a concept marked
    ``gate_risk`` (secrets, schema/migration, infra/deploy, ci/merge-gate, dependencies,
    auth/security).

    Raises:
        EnvironmentFault: the packaged vocabulary is missing or malformed.
    """
    risky = {c.name for c in packaged_vocabulary().concepts if c.gate_risk}
    return any(name in risky for name in classify_path(path))


def is_secret_path(path: str) -> bool:
    """True when ``path`` is secret material itself: on the sensitive deny list and not one
    of the secrets concept's exceptions (examples, public keys). Code that manages secrets
    (``secrets.py``) carries the ``secrets`` concept but is not secret.

    Raises:
        EnvironmentFault: the packaged vocabulary is missing or malformed.
    """
    parts = _parts(path)
    if parts is None:
        return False
    return any(
        c.sensitive and not c.excluded(parts) and _sensitive(parts)
        for c in packaged_vocabulary().concepts
    )


def risk_report(paths: Sequence[str] = (), query: str | None = None) -> RiskReport:
    """The ``risk --json`` document for paths, or for task text (exactly one of them).

    Raises:
        UsageError: both or neither were given.
        EnvironmentFault: the packaged vocabulary is missing or malformed.
    """
    if isinstance(paths, str):
        paths = (paths,)
    if query is not None and paths:
        raise UsageError("give paths or --query TEXT, not both")
    if query is not None:
        return {"query": {"concepts": list(concepts_from_query(query))}}
    if not paths:
        raise UsageError("give one or more paths, or --query TEXT")
    return {
        "paths": {
            path: {
                "concepts": list(classify_path(path)),
                "gate_risk": is_gate_risk_path(path),
                "secret": is_secret_path(path),
            }
            for path in paths
        }
    }
