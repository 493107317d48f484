"""What each MCP client passes on to its model, and the budget that fits it.

A client decides what of a tool result reaches the model. Claude Code and Codex both
forward ``structuredContent`` instead of ``content`` when a result has both, so the
model-facing tools return their Markdown as ``content`` alone; and both cut or set aside a
result past a size of their own, so the default budget is the one each passes on whole.
The client is known from its ``clientInfo.name``: sent in ``initialize`` (Codex) or, on the
2026-07-28 protocol, in each request's ``_meta`` (Claude Code).
"""

from __future__ import annotations

from dataclasses import dataclass

from excerpt.core.limits import DEFAULT_BUDGET

__all__ = ["ClientProfile", "budget_note", "profile_for"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientProfile:
    label: str
    default_budget: int
    passes: int | None  # bytes of a tool result the client passes on whole, when known
    framing: int  # bytes the client adds around a result before it measures it
    knob: str  # how a user lets larger results through


# Codex 0.171 cuts a tool result in the middle past 1.2 x its truncation policy: 10,000
# bytes for a model it has no profile for (12,000 bytes), 10,000 tokens of 4 bytes for
# OpenAI's models (48,000 bytes); the count includes its "Wall time: … Output:" header.
_CODEX = ClientProfile(
    label="Codex",
    default_budget=11_000,
    passes=12_000,
    framing=48,
    knob="tool_output_token_limit in ~/.codex/config.toml",
)
# Claude Code 2.1 passes a result of up to 50,000 characters; past that it saves it to a file
# and passes a 2 KB preview, and past MAX_MCP_OUTPUT_TOKENS (default 25,000) only an error.
_CLAUDE = ClientProfile(
    label="Claude Code",
    default_budget=DEFAULT_BUDGET,
    passes=50_000,
    framing=0,
    knob="the MAX_MCP_OUTPUT_TOKENS environment variable of Claude Code",
)
_OTHER = ClientProfile(
    label="this client", default_budget=DEFAULT_BUDGET, passes=None, framing=0, knob=""
)
_PROFILES = {"claude-code": _CLAUDE, "codex-mcp-client": _CODEX}


def profile_for(client_name: str | None) -> ClientProfile:
    """The profile of a client by its ``clientInfo.name``; unknown clients get defaults."""
    return _PROFILES.get(client_name or "", _OTHER)


def budget_note(profile: ClientProfile, budget: int) -> str | None:
    """A warning for the result when the budget asked exceeds what the client passes on."""
    if profile.passes is None or budget + profile.framing <= profile.passes:
        return None
    return (
        f"Note: {profile.label} passes about {profile.passes:,} bytes of a tool result to the"
        f" model by default and this result may take up to {budget:,}: if it arrives cut,"
        f" raise {profile.knob} or ask for a smaller budget."
    )
