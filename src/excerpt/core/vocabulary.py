"""The closed vocabularies of the wire formats, each defined once as a ``Literal``.

Where a JSON Schema ships with the package (``excerpt.pack/v1``), its ``enum`` lists the same
members in the same order; a test keeps the two equal. ``members(T)`` gives a vocabulary's
values at run time, for checks and tests.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "EdgeKind",
    "GraphIntegrity",
    "GraphSource",
    "ItemKind",
    "OmissionReason",
    "Signal",
    "WarningCode",
    "members",
]

# An excerpt's shape: a whole symbol, a window around matches, a whole file, or a fragment
# of a region cut to fit.
ItemKind = Literal["symbol", "window", "file", "fragment"]

# Why a candidate or a path is not in a pack (SPEC §3.1).
OmissionReason = Literal[
    "budget",
    "sensitive",
    "secret",
    "binary",
    "too_large",
    "not_utf8",
    "not_regular_file",
    "symlink_outside_root",
    "generated",
    "discovery_limit",
    "duplicate",
    "too_small",
    "unreadable",
    "parse_timeout",
    "too_deep",
    "worker_crashed",
    "excluded",
]

# The ranking signal a reason names (SPEC §3.2).
Signal = Literal[
    "lexical",
    "path",
    "stack_frame",
    "defines",
    "changed",
    "graph",
    "history",
    "demoted",
    "match",
    "fallback",
    "risk",
]

# A pack warning about what an excerpt's text holds.
WarningCode = Literal["bidi-control", "zero-width", "ansi-escape"]

# Where a pack's graph came from, and whether a supplied one was checked.
GraphSource = Literal["index", "file"]
GraphIntegrity = Literal["valid", "not_checked"]

# A dependency-graph edge of the index: ``src`` imports ``dst``, or ``src`` tests ``dst``.
EdgeKind = Literal["imports", "tests"]


def members(vocabulary: object) -> tuple[str, ...]:
    """The values of a vocabulary, in their defined order."""
    return tuple(str(v) for v in get_args(vocabulary))
