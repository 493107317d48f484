"""The file graph as a portable JSON document with an integrity digest (SPEC §4).

``sha256`` covers the canonical form of every other field. A digest that matches proves the
document is intact, not that it describes the current tree: integrity is not freshness.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from excerpt.core.capped import read_capped
from excerpt.core.hashing import canonical_json, sha256_hex
from excerpt.errors import UsageError

__all__ = ["GRAPH_SCHEMA", "graph_document", "load_graph"]

GRAPH_SCHEMA = "excerpt.graph/v1"
_MAX_GRAPH_BYTES = 256 * 1024 * 1024


def graph_document(nodes: Iterable[str], edges: Iterable[tuple[str, str, str]]) -> dict[str, Any]:
    body = {
        "schema": GRAPH_SCHEMA,
        "nodes": sorted(set(nodes)),
        "edges": [{"src": s, "dst": d, "kind": k} for s, d, k in sorted(set(edges))],
    }
    return {**body, "sha256": sha256_hex(canonical_json(body))}


def _read_json(path: Path) -> Any:
    """The JSON document in ``path`` (a pipe such as ``<(excerpt graph export)`` works too),
    read up to the size cap.

    Raises:
        UsageError: missing, unreadable, too large or not JSON, naming the file and why.
    """
    name = "./-" if str(path) == "-" else str(path)  # a file named "-", not stdin
    data = read_capped(name, _MAX_GRAPH_BYTES, reading=f"graph file {path}", what="graph file")
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise UsageError(f"graph file {path} is not JSON: {exc.msg} at {where}") from None
    except (ValueError, RecursionError):  # not UTF-8; nested past the parser's depth
        raise UsageError(f"graph file {path} is not JSON: not UTF-8 or nested too deeply") from None


def load_graph(path: Path) -> tuple[list[tuple[str, str, str]], str]:
    """Edges and digest of a graph file, after checking its digest.

    Raises:
        UsageError: unreadable, not a graph document, or a digest mismatch (the message names
            the file and the reason).
    """
    doc = _read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("sha256"), str):
        raise UsageError(f"graph file {path} has no sha256 digest")
    body = {k: v for k, v in doc.items() if k != "sha256"}
    try:
        digest = sha256_hex(canonical_json(body))
    except UnicodeEncodeError:  # a lone surrogate (\ud800) no export ever writes
        raise UsageError(f"graph file {path} holds text that is not Unicode") from None
    if digest != doc["sha256"]:
        raise UsageError("graph file digest mismatch: refusing a modified graph")
    edges = body.get("edges")
    if not isinstance(edges, list):
        raise UsageError("graph file has no edge list")
    out: list[tuple[str, str, str]] = []
    for edge in edges:
        if not isinstance(edge, dict) or not all(
            isinstance(edge.get(k), str) for k in ("src", "dst", "kind")
        ):
            raise UsageError("graph file has a malformed edge")
        out.append((edge["src"], edge["dst"], edge["kind"]))
    return sorted(set(out)), str(doc["sha256"])
