"""What each MCP client passes on to its model, and the budget that fits it.

A client decides what of a tool result reaches the model. Claude Code and Codex both
forward ``structuredContent`` instead of ``content`` when a result has both, so the
model-facing tools return their Markdown as ``content`` alone; and both cut or set aside a
result past a size of their own, so the default budget is the one each passes on whole.
The client is known from its ``clientInfo.name``: sent in ``initialize`` (Codex, Gemini CLI,
opencode, VS Code) or, on the 2026-07-28 protocol, in each request's ``_meta`` (Claude Code);
a server registered for a client by ``excerpt setup`` also knows it by ``--client``, for a
client whose name it does not recognise.
"""

from __future__ import annotations

from dataclasses import dataclass

from excerpt.core.limits import DEFAULT_BUDGET

__all__ = ["SETUP_NAMES", "ClientProfile", "budget_note", "profile_for"]


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
# Gemini CLI 0.61 cuts an MCP result of one text part past 40,000 characters (keeping the first
# 20% and the last 80%, the whole saved to a file), and wraps it in <untrusted_context> tags.
_GEMINI = ClientProfile(
    label="Gemini CLI",
    default_budget=DEFAULT_BUDGET,
    passes=40_000,
    framing=64,
    knob="tools.truncateToolOutputThreshold in ~/.gemini/settings.json",
)
# opencode 1.18 keeps the first 2,000 lines or 51,200 bytes of a result, the rest saved to a file.
_OPENCODE = ClientProfile(
    label="opencode",
    default_budget=DEFAULT_BUDGET,
    passes=51_200,
    framing=0,
    knob="tool_output.max_bytes (and max_lines) in opencode.json",
)
# VS Code's agent writes a result past 8 KB (github.copilot.chat.agent.largeToolResultsToDisk.
# thresholdBytes, 8,192) to a file and shows the model only where it is.
_VSCODE = ClientProfile(
    label="VS Code",
    default_budget=8_000,
    passes=8_192,
    framing=0,
    knob="github.copilot.chat.agent.largeToolResultsToDisk.thresholdBytes in VS Code's settings",
)
_OTHER = ClientProfile(
    label="this client", default_budget=DEFAULT_BUDGET, passes=None, framing=0, knob=""
)
# by the name each sends as clientInfo.name
_PROFILES = {
    "claude-code": _CLAUDE, "codex-mcp-client": _CODEX, "gemini-cli-mcp-client": _GEMINI,
    "opencode": _OPENCODE, "Visual Studio Code": _VSCODE,
    "Visual Studio Code - Insiders": _VSCODE,
}  # fmt: skip
# by the name ``excerpt setup`` and ``excerpt mcp --client`` take
SETUP_NAMES = {
    "claude": _CLAUDE, "codex": _CODEX, "gemini": _GEMINI, "opencode": _OPENCODE,
    "vscode": _VSCODE, "cursor": _OTHER, "windsurf": _OTHER, "zed": _OTHER,
}  # fmt: skip


def profile_for(client_name: str | None, registered_for: str | None = None) -> ClientProfile:
    """The profile of a client by its ``clientInfo.name``; else by the client the server was
    registered for (``--client``); else defaults."""
    if client_name in _PROFILES:
        return _PROFILES[client_name]
    return SETUP_NAMES.get(registered_for or "", _OTHER)


def budget_note(profile: ClientProfile, budget: int) -> str | None:
    """A warning for the result when the budget asked exceeds what the client passes on."""
    if profile.passes is None or budget + profile.framing <= profile.passes:
        return None
    return (
        f"Note: {profile.label} passes about {profile.passes:,} bytes of a tool result to the"
        f" model by default and this result may take up to {budget:,}: if it arrives cut,"
        f" raise {profile.knob} or ask for a smaller budget."
    )
