"""Context packs and plans from a prepared ranking, and retrieval of handles.

In: a ``Prepared`` ranking (``excerpt.pipeline`` prepares one for a request). Out: a ``Pack``
of exact, hashed excerpts with reasons and an honest list of what was left out; a ``Plan``
without text; ``Retrieved`` excerpts for handles, refused when stale. Reads the workspace
only through the guarded reader; writes only handles to the cache.
"""

from __future__ import annotations

from excerpt.pack.build import plan_of, remember, select
from excerpt.pack.model import Item, Omitted, Pack, Plan, pack_schema
from excerpt.pack.prepare import PackRequest, Prepared, prepare_ranked
from excerpt.pack.retrieve import Retrieved, retrieve

__all__ = [
    "Item",
    "Omitted",
    "Pack",
    "PackRequest",
    "Plan",
    "Prepared",
    "Retrieved",
    "pack_schema",
    "plan_of",
    "prepare_ranked",
    "remember",
    "retrieve",
    "select",
]
