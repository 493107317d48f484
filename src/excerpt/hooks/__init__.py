"""Hooks: excerpt in front of the model without waiting to be called.

In: a client's hook event (Claude Code, Codex) as JSON on stdin. Out: the client's answer —
a seed of exact source for a task prompt, a large tool output replaced by its reversible
compacted view, the handles still fresh after a compaction — or nothing. Reads the
repository and its index; writes only the cache (the session's seeds, the compaction store,
a background index). Never breaks its client: any failure is exit 0 and nothing injected.
``install`` and ``check`` put the hooks in a client's settings and probe them.
"""
