"""The clients' hook answer formats (one module owns the wire shape).

Claude Code 2.1.332 and Codex 0.171.0 both read a JSON object on the hook's stdout with
``hookSpecificOutput.hookEventName`` and ``additionalContext`` (UserPromptSubmit,
SessionStart): the text is added to the model's context before its next turn. Claude Code's
PostToolUse also takes ``updatedToolOutput``, which replaces the tool's output before the
model first sees it; it must have the tool's own output shape (a Bash result is an object
with ``stdout``, ``stderr``, ``interrupted``, ``isImage``...), which ``inflight`` keeps.

Gemini CLI 0.61.0 reads the same shape from its hooks (only ``additionalContext`` reaches the
model; other stdout is shown to the user alone), under its own event names: excerpt's
UserPromptSubmit hook is installed as its ``BeforeAgent``.

Each client sets aside a context text past a size of its own, showing the model a preview
instead: Claude Code past 10,000 characters (its ``QDe`` threshold: the text is saved to a
file and a 2 KB preview sent), Codex past 2,500 tokens (its ``additionalContextLimit``
default: head and tail kept, the middle cut). ``CONTEXT_LIMITS`` keeps a seed under both,
with a margin for the client's own count.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CLIENT_EVENTS",
    "CONTEXT_LIMITS",
    "ContextLimit",
    "context_answer",
    "replaced_output",
    "seed_limits",
]


@dataclass(frozen=True, slots=True)
class ContextLimit:
    """The largest additional context a client passes to the model whole."""

    chars: int | None
    tokens: int | None


CONTEXT_LIMITS = {
    "claude": ContextLimit(chars=9_800, tokens=None),  # Claude Code 2.1.332: 10,000 chars
    "codex": ContextLimit(chars=None, tokens=2_400),  # Codex 0.171.0: 2,500 tokens
    # Gemini CLI 0.61.0 cuts no hook context that we found; Claude Code's bound, to be safe
    "gemini": ContextLimit(chars=9_800, tokens=None),
}
# a client's name for each of excerpt's events, where it differs
CLIENT_EVENTS = {"gemini": {"UserPromptSubmit": "BeforeAgent"}}


def seed_limits(client: str, seed_tokens: int) -> tuple[int, int | None]:
    """A seed's limits for ``client``: o200k tokens (``seed_tokens``, or the client's own
    limit when lower) and characters (where the client counts them)."""
    limit = CONTEXT_LIMITS[client]
    return min(seed_tokens, limit.tokens or seed_tokens), limit.chars


def context_answer(client: str, event: str, text: str, notice: str = "") -> str:
    """``text`` added to the model's context at ``event`` (both clients' shape); ``notice``
    one line shown to the user in Claude Code (its ``systemMessage``: the model does not
    receive it; Codex shows one as a warning, so it gets none)."""
    if not text:
        return ""
    named = CLIENT_EVENTS.get(client, {}).get(event, event)
    doc: dict[str, Any] = {
        "hookSpecificOutput": {"hookEventName": named, "additionalContext": text}
    }
    if notice and client == "claude":
        doc["systemMessage"] = notice
    return json.dumps(doc, ensure_ascii=False) + "\n"


def replaced_output(tool: str, updated: Any) -> str:
    """A PostToolUse answer replacing the output of ``tool`` with ``updated`` (Claude Code)."""
    doc = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": updated}}
    return json.dumps(doc, ensure_ascii=False) + "\n"
