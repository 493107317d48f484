"""Compaction in flight: a large tool output replaced by its reversible compacted view.

In: the tool's name, input and output as the client reports them after the tool ran. Out:
the output in the same shape with its large text fields compacted (``excerpt.compact``:
errors, failing tests and tracebacks kept, every elision marked with the call that brings it
back, the original stored byte for byte), or None to leave it as it is. Never excerpt's own
tools' output and never a command that reads excerpt's retrievals (``excerpt expand``,
``excerpt get``): a retrieval asked for is delivered whole.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from excerpt.compact.api import MIN_SAVING, compact
from excerpt.compact.store import Store
from excerpt.core.installation import excerpt_command
from excerpt.core.settings import cache_root

__all__ = ["compact_tool_output", "is_own_retrieval"]

# Claude Code hands its PostToolUse hooks a Bash output cut to its first 30,000 bytes (the
# whole output goes to a file whose path the model is shown): an output of exactly that size
# is taken for a cut one, and its header says so
CLAUDE_CODE_HOOK_BYTES = 30_000
# the client names an MCP tool mcp__<server>__<tool>; excerpt's server is "excerpt"
_OWN_TOOL = re.compile(r"\Amcp__excerpt(?:_[^_]\w*)?__")
_OWN_COMMAND = re.compile(r"(?:^|[\s/;&|(])excerpt\s+(?:expand|get|compact|pack|plan)\b")


def is_own_retrieval(tool: str, tool_input: Any) -> bool:
    """Whether the output is excerpt's own: its MCP tools, or a shell command running one
    of its retrieval commands."""
    if _OWN_TOOL.match(tool):
        return True
    if tool == "Bash" and isinstance(tool_input, dict):
        return bool(_OWN_COMMAND.search(str(tool_input.get("command", ""))))
    return False


def compact_tool_output(tool: str, tool_input: Any, response: Any, *, min_bytes: int) -> Any | None:
    """``response`` with each text of at least ``min_bytes`` bytes compacted, when that
    saves at least ``MIN_SAVING`` of it; None when nothing changes."""
    if is_own_retrieval(tool, tool_input):
        return None
    store: Store | None = None

    def shrink(text: str) -> str | None:
        nonlocal store
        data = text.encode("utf-8", "surrogatepass")
        if len(data) < min_bytes:
            return None
        store = store or Store.in_cache(cache_root())
        done = compact(data, store=store)
        if done.unchanged or done.compacted_bytes > len(data) * (1 - MIN_SAVING):
            return None
        cut = tool == "Bash" and len(data) == CLAUDE_CODE_HOOK_BYTES
        return _header(done.id, done.kind, len(data), done.compacted_bytes, cut) + done.text

    if tool == "Bash" and isinstance(response, dict):
        return _replace_fields(response, ("stdout", "stderr"), shrink)
    if tool.startswith("mcp__"):
        return _replace_mcp(response, shrink)
    return None  # other built-in tools' outputs (Read, Grep…) are the model's own reads


def _header(ident: str, kind: str, before: int, after: int, cut: bool) -> str:
    exe = shlex.join(excerpt_command())
    whole = (
        f"returns these {before:,} bytes byte for byte; Claude Code gave its hooks only the"
        " output's first 30,000 bytes, and the whole output is in the file it names"
        if cut
        else "returns all of it byte for byte"
    )
    return (
        f"[excerpt compacted this {kind} output: {before:,} → {after:,} bytes; every error"
        f" line kept, each elision names the call that returns it; `{exe} expand {ident}`"
        f" {whole}]\n"
    )


def _replace_fields(doc: dict[str, Any], keys: tuple[str, ...], shrink: Any) -> Any | None:
    out = dict(doc)
    changed = False
    for key in keys:
        value = doc.get(key)
        if isinstance(value, str):
            new = shrink(value)
            if new is not None:
                out[key] = new
                changed = True
    return out if changed else None


def _replace_mcp(response: Any, shrink: Any) -> Any | None:
    """An MCP tool's output: a string, a list of content blocks, or a result object."""
    if isinstance(response, str):
        return shrink(response)
    if isinstance(response, list):
        out: list[Any] = []
        changed = False
        for block in response:
            if isinstance(block, dict) and block.get("type") == "text":
                new = _replace_fields(block, ("text",), shrink)
                if new is not None:
                    out.append(new)
                    changed = True
                    continue
            out.append(block)
        return out if changed else None
    if isinstance(response, dict) and isinstance(response.get("content"), list):
        content = _replace_mcp(response["content"], shrink)
        return None if content is None else {**response, "content": content}
    return None
