"""``excerpt bench soak``: excerpt under sustained, concurrent use, as the hooks will run it.

On a temporary copy of a tree (never the user's), for N minutes: K ``excerpt mcp`` sessions
(as a client starts them) each call ``context_plan``, ``context_pack`` and
``context_retrieve`` in a loop; a stream of ``excerpt hook`` processes asks for seeds and
compacts large outputs as Claude Code sends them; and a writer edits, adds and removes a file
every second and rewrites 50 files at once every minute (a branch switch). Every excerpt
served (a pack's items, a retrieval's fresh text) is checked at once against the writer's
record of the file: text that matches no version of the file current while the call was in
flight is a stale serve. Halfway through, one session's server is killed (SIGKILL) in the
middle of a call and started again; at the end, with the tree quiet, each session's server
and a fresh one on an empty cache answer the same packs, which must be equal.

Per minute: calls, p50 and p95 latency, the resident memory and open descriptors of every
server, and the bytes of the cache and of the compaction store. Verdicts: ``latency_drift``
(the last minute's p95 over the second's) and ``rss_growth_mb`` (the largest growth of a
server's memory from the second minute to the last).
"""

from __future__ import annotations

from excerpt_bench.soak.run import SoakRun, render_soak, run_soak

__all__ = ["SoakRun", "render_soak", "run_soak"]
