"""The accounting of one scripted session: what each tool call put in front of the model,
in bytes and exact o200k tokens, which gold changed lines it showed, and when to stop.

A call is made only while the session's charged tokens are below the cap; its result then
counts whole. An arm that carries tool definitions into every model turn (an MCP server's
``tools/list`` and instructions) is charged them once per model request: the request that
asked for the first call and each request that carried a result. A hook's context (the seed
at the prompt) rides in a request already charged: it is charged its own tokens alone, and
is not a tool call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HOOK_PREFIX", "CallRecord", "Evidence", "Ledger", "SessionResult", "Shown", "Stop"]

HOOK_PREFIX = "hook:"  # a ``CallRecord.tool`` naming a hook's context, not a tool call

# (path, 1-based line, bytes of the tool output that line took)
Shown = Sequence[tuple[str, int, int]]


class Stop(Exception):
    """The session is over: every gold line was shown, or the cap was reached."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """The gold changed lines of a task that lie in the tree: the denominator."""

    lines: frozenset[tuple[str, int]]

    @classmethod
    def of(cls, changed: Mapping[str, Sequence[Sequence[int]]], present: Iterable[str]) -> Evidence:
        files = set(present)
        return cls(
            lines=frozenset(
                (path, n)
                for path, ranges in changed.items()
                if path in files
                for start, end in ranges
                for n in range(start, end + 1)
            )
        )

    @property
    def files(self) -> frozenset[str]:
        return frozenset(p for p, _ in self.lines)


@dataclass(frozen=True, slots=True, kw_only=True)
class CallRecord:
    tool: str
    arguments: dict[str, Any]
    bytes: int
    tokens: int
    gold_bytes: int  # bytes of the output that were lines of gold files
    new_gold_lines: int
    charged_after: int  # the session's charged tokens once this result is in front of the model

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool, "arguments": self.arguments, "bytes": self.bytes,
            "tokens": self.tokens, "gold_bytes": self.gold_bytes,
            "new_gold_lines": self.new_gold_lines, "charged_after": self.charged_after,
        }  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionResult:
    arm: str
    cap: int
    overhead_tokens_per_turn: int
    evidence: int
    calls: tuple[CallRecord, ...]
    tokens_to_first_gold: int | None
    tokens_to_all_gold: int | None
    gold_shown: int
    charged: int
    seed: dict[str, Any] | None = None  # a hook arm's seed: its shape, tokens, regions

    @property
    def tool_calls(self) -> int:
        """The model's tool calls (a hook's context is none)."""
        return sum(1 for c in self.calls if not c.tool.startswith(HOOK_PREFIX))

    @property
    def reached_all(self) -> bool:
        return self.tokens_to_all_gold is not None

    @property
    def recall(self) -> float:
        return self.gold_shown / self.evidence if self.evidence else 0.0

    @property
    def irrelevant_bytes(self) -> int:
        return sum(c.bytes - c.gold_bytes for c in self.calls)

    def censored(self, value: int | None) -> int:
        """A figure never reached counts as everything the session could spend."""
        return value if value is not None else max(self.charged, self.cap)


@dataclass(slots=True)
class Ledger:
    arm: str
    evidence: Evidence
    cap: int
    count: Callable[[str], int]
    overhead: int = 0  # tokens charged on every model request
    calls: list[CallRecord] = field(default_factory=list)
    shown: set[tuple[str, int]] = field(default_factory=set)
    charged: int = 0
    first_gold: int | None = None
    all_gold: int | None = None

    def __post_init__(self) -> None:
        self.charged = self.overhead  # the request that asks for the first call

    @property
    def done(self) -> bool:
        return self.all_gold is not None or self.charged >= self.cap

    def seen(self, path: str, line: int) -> bool:
        return (path, line) in self.shown

    def charge(
        self, tool: str, arguments: dict[str, Any], text: str, shown: Shown, *, turn: bool = True
    ) -> None:
        """One tool result in front of the model (``turn`` False: context added to the
        request already charged, which pays no tool definitions again).

        Raises:
            Stop: the session is over (before the call when it already was, or after it).
        """
        if self.done:
            raise Stop
        tokens = self.count(text)
        self.charged += tokens + (self.overhead if turn else 0)
        gold_files = self.evidence.files
        gold_bytes = sum(b for p, _, b in shown if p in gold_files)
        before = len(self.shown & self.evidence.lines)
        self.shown.update((p, n) for p, n, _ in shown)
        now = len(self.shown & self.evidence.lines)
        if now and self.first_gold is None:
            self.first_gold = self.charged
        if now == len(self.evidence.lines) and self.all_gold is None:
            self.all_gold = self.charged
        self.calls.append(
            CallRecord(
                tool=tool, arguments=arguments, bytes=len(text.encode("utf-8")), tokens=tokens,
                gold_bytes=min(gold_bytes, len(text.encode("utf-8"))),
                new_gold_lines=now - before, charged_after=self.charged,
            )
        )  # fmt: skip
        if self.done:
            raise Stop

    def result(self) -> SessionResult:
        return SessionResult(
            arm=self.arm, cap=self.cap, overhead_tokens_per_turn=self.overhead,
            evidence=len(self.evidence.lines), calls=tuple(self.calls),
            tokens_to_first_gold=self.first_gold, tokens_to_all_gold=self.all_gold,
            gold_shown=len(self.shown & self.evidence.lines), charged=self.charged,
        )  # fmt: skip
