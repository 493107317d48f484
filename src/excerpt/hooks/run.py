"""One hook event answered: the seed, compaction in flight, the handles after a compaction.

In: the hook's options and the client's JSON. Out: the text to write on stdout in the
client's format ("" for nothing). Reads the repository and the index; writes only the
cache (the session's seeds, the compaction store, a background index). Errors propagate to
``excerpt.hooks.main``, which turns every one into "nothing injected" and a log line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from excerpt.core.settings import INDEX_DB, cache_root, repo_cache_dir
from excerpt.errors import ExcerptError
from excerpt.hooks.answer import context_answer, replaced_output, seed_limits
from excerpt.hooks.options import Decision, HookOptions, log
from excerpt.hooks.processes import index_in_background, indexing_now
from excerpt.hooks.prompt import classify_prompt, same_task
from excerpt.hooks.state import SeedRecord, session_state

# (the library's heavier parts load inside the event that needs them: a seed from a running
# server needs neither discovery nor the pipeline, a compaction needs only ``compact``)

if TYPE_CHECKING:
    from excerpt.hooks.seed import Seed, Shape

__all__ = ["answer_event", "late_answer", "served_root"]


MAX_PROMPT = 200_000  # characters of a prompt matched (the task's own limit)
_RESUME_HANDLES = 40  # fresh handles listed after a compaction, the latest first


def answer_event(opts: HookOptions, raw: bytes, decision: Decision | None = None) -> str:
    """The answer to one event (``""``: nothing to inject or replace); a seed is recorded
    in the session only once ``decision`` lets it be sent."""
    event = _event(raw)
    if opts.event == "UserPromptSubmit":
        return _seed(opts, event, decision or Decision())
    if opts.event == "SessionStart":
        return _after_compaction(opts, event)
    if opts.event == "PostToolUse":
        return _compact(opts, event)
    return ""  # PreCompact: nothing to add before the client compacts


def late_answer(opts: HookOptions, raw: bytes) -> str:
    """The one-line note sent instead of a seed that took longer than the timeout; a
    background refresh is started so the next prompt finds the index current."""
    root = served_root(opts, _event(raw))
    if root is None or not index_in_background(root):
        return ""
    return context_answer(
        opts.client,
        "UserPromptSubmit",
        f"excerpt: no context seed for this prompt (preparing it took over {opts.timeout:g} s"
        f" on {root.name}; with excerpt mcp running for it, seeds come from its warm index).",
    )


def _event(raw: bytes) -> dict[str, Any]:
    doc = json.loads(raw.decode("utf-8", "replace") or "{}")
    if not isinstance(doc, dict):
        raise ValueError("the hook input is not a JSON object")
    return doc


def served_root(opts: HookOptions, event: Mapping[str, Any]) -> Path | None:
    """The repository this event is on, when it is one this hook serves: ``--repo`` when
    the session's working directory lies inside it; without ``--repo``, the git work tree
    around the working directory."""
    cwd = event.get("cwd")
    here = _directory(cwd if isinstance(cwd, str) and cwd else ".")
    if here is None:
        return None
    if opts.repo is not None:
        root = _directory(opts.repo)
        return root if root is not None and (here == root or here.is_relative_to(root)) else None
    from excerpt.core import git

    try:
        top = git.work_tree_top(here)
    except ExcerptError:
        return None
    return None if top is None else _directory(str(top))


def _directory(path: str) -> Path | None:
    """``path`` resolved, when it is a directory this process can list."""
    try:
        resolved = Path(path).resolve(strict=True)
    except (OSError, RuntimeError, ValueError):
        return None
    if not resolved.is_dir() or not os.access(resolved, os.R_OK | os.X_OK):
        return None
    return resolved


def _session(event: Mapping[str, Any]) -> str:
    session = event.get("session_id") or event.get("sessionId") or ""
    return str(session)


def _seed(opts: HookOptions, event: Mapping[str, Any], decision: Decision) -> str:
    prompt = event.get("prompt")
    if not isinstance(prompt, str):
        return ""
    kind = classify_prompt(prompt[:MAX_PROMPT])
    if not kind.task:
        return ""
    root = served_root(opts, event)
    if root is None:
        return ""
    cache = cache_root()
    if not (repo_cache_dir(root, cache) / INDEX_DB).exists() or indexing_now(root):
        if not index_in_background(root):
            return ""  # the cache cannot be used: nothing to promise
        return context_answer(
            opts.client,
            "UserPromptSubmit",
            f"excerpt: {root.name} is being indexed (in the background); a later task prompt"
            " gets a context seed.",
        )
    with session_state(cache, opts.client, _session(event)) as state:
        last = state.last(str(root))
        if last is not None and same_task(kind.terms, frozenset(last.terms)):
            return ""  # the task already seeded: its regions are in the context
        from excerpt.hooks.seed import SeedAsk, build_seed  # the library: there is work
        from excerpt.hooks.warm import request_seed

        max_tokens, max_chars = seed_limits(opts.client, opts.seed_tokens)
        ask = SeedAsk(
            held=state.handles(str(root), shapes=("pack",)),
            pointed=state.handles(str(root), shapes=("map",)),
            max_tokens=max_tokens,
            max_chars=max_chars,
            shape=cast("Shape", opts.seed_shape),
        )
        # a running server of the repository answers from its warm index; else built here
        seed = request_seed(root, prompt[:MAX_PROMPT], ask, timeout=opts.timeout)
        if seed is None:
            seed = build_seed(root, prompt[:MAX_PROMPT], **ask.to_kwargs())
        if not seed.text:
            log(f"UserPromptSubmit: no seed ({seed.why})")
            return ""
        if not decision.commit():
            return ""  # too late: a note went instead
        state.add(SeedRecord(root=str(root), terms=tuple(sorted(kind.terms)),
                             handles=seed.handles, shape=seed.shape))  # fmt: skip
    return context_answer(opts.client, "UserPromptSubmit", seed.text, _notice(seed))


def _notice(seed: Seed) -> str:
    """What the user is told the model received with the prompt, in one line."""
    files = list(dict.fromkeys(h.split("#", 1)[0] for h in seed.handles))
    named = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    what = "regions" if seed.shape == "pack" else "a map of where to read"
    return f"excerpt: {what} of {named} sent with this prompt ({seed.tokens:,} tokens)"


def _after_compaction(opts: HookOptions, event: Mapping[str, Any]) -> str:
    """After the client compacted or resumed: the session's seeded handles still fresh."""
    if event.get("source") not in ("compact", "resume"):
        return ""
    root = served_root(opts, event)
    if root is None:
        return ""
    with session_state(cache_root(), opts.client, _session(event)) as state:
        handles = state.handles(str(root))
    if not handles:
        return ""
    from excerpt.pipeline import get_excerpts

    recent = list(handles)[-_RESUME_HANDLES:]
    fresh = [r.handle for r in get_excerpts(root, recent) if r.status == "fresh"]
    if not fresh:
        return ""
    lines = [
        "excerpt: regions served earlier in this session whose files are unchanged; re-read"
        " them exactly with `context_retrieve` or `excerpt get HANDLE` instead of searching"
        " again:",
        *(f"- `{h}`" for h in fresh),
    ]
    return context_answer(opts.client, "SessionStart", "\n".join(lines) + "\n")


def _compact(opts: HookOptions, event: Mapping[str, Any]) -> str:
    if opts.client != "claude":
        return ""  # Codex 0.171 has no hook output that replaces a tool's result
    tool = event.get("tool_name")
    if not isinstance(tool, str):
        return ""
    from excerpt.hooks.inflight import compact_tool_output

    updated = compact_tool_output(tool, event.get("tool_input"), event.get("tool_response"),
                                  min_bytes=opts.min_bytes)  # fmt: skip
    if updated is None:
        return ""
    return replaced_output(tool, updated)
