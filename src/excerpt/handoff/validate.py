"""Is a handoff still true? The schema first, then freshness against the repository now.

Freshness re-checks every evidence handle exactly as ``excerpt get`` does (``fresh``,
``stale`` with ``moved_to`` where the excerpt's exact text now is, ``missing``,
``refused``), compares ``HEAD``, and compares the dirty tree path by path, so the report
names exactly what went stale. Nothing is written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from excerpt.core.settings import INDEX_DB, repo_cache_dir
from excerpt.discover.walk import resolve_root
from excerpt.handoff.model import check_document
from excerpt.handoff.state import repo_state
from excerpt.index.store import IndexStore
from excerpt.pack.retrieve import retrieve

__all__ = ["validate_handoff"]


def validate_handoff(
    repo: str | os.PathLike[str], document: Any, *, cache_dir: Path | None = None
) -> dict[str, Any]:
    """The report ``{valid, fresh, errors, stale, evidence, head, dirty}`` (SPEC §11).

    ``valid``: the document passes the schema (``errors`` lists why not; freshness is then
    not checked and ``fresh`` is false). ``stale`` lists what no longer holds, each entry
    ``{kind: evidence|head|dirty_tree, …}``.

    Raises:
        NotADirectoryFault, GitFault: the repository cannot be read.
    """
    errors = check_document(document)
    if errors:
        return {"valid": False, "fresh": False, "errors": errors, "stale": [],
                "evidence": [], "head": None, "dirty": None}  # fmt: skip
    root = resolve_root(repo)
    evidence = _evidence(root, document, cache_dir)
    stale: list[dict[str, Any]] = [
        {"kind": "evidence", "handle": e["handle"], "status": e["status"],
         "moved_to": e["moved_to"], **({"error": e["error"]} if "error" in e else {})}
        for e in evidence if e["status"] != "fresh"
    ]  # fmt: skip
    now = repo_state(root)
    head = {"recorded": document["head"], "current": now.head}
    head["moved"] = head["recorded"] != head["current"]
    if head["moved"]:
        stale.append({"kind": "head", **head})
    listed = document["dirty_files"] is not None or document["dirty_digest"] is None
    changed = _dirty_changes(document["dirty_files"], now.dirty_files) if listed else []
    dirty = {"recorded": document["dirty_digest"], "current": now.dirty_digest,
             "changed": changed}  # fmt: skip
    stale += [{"kind": "dirty_tree", **c} for c in changed]
    if not changed and dirty["recorded"] != dirty["current"]:
        stale.append({"kind": "dirty_tree", "path": None, "was": dirty["recorded"],
                      "now": dirty["current"]})  # fmt: skip
    return {"valid": True, "fresh": not stale, "errors": [], "stale": stale,
            "evidence": evidence, "head": head, "dirty": dirty}  # fmt: skip


def _evidence(root: Path, document: dict[str, Any], cache_dir: Path | None) -> list[dict[str, Any]]:
    handles: list[str] = document["evidence"]
    known: dict[str, tuple[str, int, str]] = {}
    cache = repo_cache_dir(root, cache_dir)
    if handles and (cache / INDEX_DB).exists():
        with IndexStore.open(cache) as store:  # what packs handed out, for moved_to
            known = store.known_handles(handles)
    for handle, held in document["evidence_excerpts"].items():
        lines = _line_count(handle)
        known[handle] = (held["excerpt_sha256"], lines, held["first_line_sha256"])
    out = []
    for handle in handles:
        got = retrieve(root, handle, known).to_dict()
        got.pop("text")  # the receiver reads lines with excerpt get; a report carries none
        out.append(got)
    return out


def _line_count(handle: str) -> int:
    from excerpt.pack.handles import parse_handle

    parsed = parse_handle(handle)  # checked by the schema already
    return parsed.end_line - parsed.start_line + 1


def _dirty_changes(
    recorded: list[dict[str, str]] | None, current: tuple[dict[str, str], ...] | None
) -> list[dict[str, Any]]:
    """Each ``(path, state)`` whose digest differs, or that is dirty on one side only."""
    was = {(d["path"], d["state"]): d["digest"] for d in recorded or []}
    now = {(d["path"], d["state"]): d["digest"] for d in current or ()}
    return [
        {"path": path, "state": state, "was": was.get((path, state)), "now": now.get((path, state))}
        for path, state in sorted(set(was) | set(now))
        if was.get((path, state)) != now.get((path, state))
    ]
