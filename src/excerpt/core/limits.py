"""The budget's limits, shared by every surface that takes a budget. Pure values: the
settings, the settings file's schema, the library and the MCP input schemas import them."""

from __future__ import annotations

__all__ = ["DEFAULT_BUDGET", "MAX_BUDGET", "MIN_BUDGET"]

# The budget's limits, in UTF-8 bytes of the rendered result, for every surface (CLI flag,
# settings file, library, MCP input schema); the other modules import them from here.
DEFAULT_BUDGET = 32_000  # what Claude Code passes on whole (excerpt.mcp.clients)
MIN_BUDGET = 300  # the smallest result that still says what was left out and why
MAX_BUDGET = 10_000_000  # a bound against absurd values, not a fit: = pack.prepare.MAX_BUDGET
