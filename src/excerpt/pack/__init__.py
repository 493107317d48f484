"""Context packs and plans from a prepared ranking, and retrieval of handles.

In: a ``Prepared`` ranking (``excerpt.pipeline`` prepares one for a request). Out: a ``Pack``
of exact, hashed excerpts with reasons and an honest list of what was left out; a ``Plan``
without text; ``Retrieved`` excerpts for handles, refused when stale. Reads the workspace
only through the guarded reader; writes only handles to the cache.

Selection (``excerpt.pack.build``) is reached through the packing API, ``excerpt.deliver``;
this package offers the records, the request, and the features a region's chance of holding
a changed line is fitted on.
"""

from __future__ import annotations

from excerpt.pack.build import REGION_FEATURES, region_chance, region_features
from excerpt.pack.model import Item, Omitted, Pack, Plan, pack_schema
from excerpt.pack.prepare import PackRequest, Prepared, prepare_ranked
from excerpt.pack.retrieve import Retrieved, retrieve

__all__ = [
    "REGION_FEATURES",
    "Item",
    "Omitted",
    "Pack",
    "PackRequest",
    "Plan",
    "Prepared",
    "Retrieved",
    "pack_schema",
    "prepare_ranked",
    "region_chance",
    "region_features",
    "retrieve",
]
