"""The scripted explorers: what a careful engineer does with only a client's own tools and
the task text. Claude-Code-like: ripgrep through ``Bash`` (files, then lines with context)
and ``Read``; Codex-like: ``rg -n`` and ``sed -n 'A,Bp'`` through ``exec_command``. Both
follow one plan:

1. read the places the task names (a path, a traceback frame, ``file:line``);
2. search its identifiers and quoted strings, then read around the hits of the best files;
3. search its keywords, and read on down the ranking, around hits first, then whole files.

Files rank by the searches they match, each weighing more the fewer files it matched (what
the agent learns from the counts it is shown), tests, docs and non-source files a third
unless the task is about them, and ``priority`` files (what an excerpt pack served) first.
``first`` regions (what a hook's map names) are read before anything else, in order.
The session ends when every gold line has been shown or at the cap (``Ledger``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from excerpt_bench.session import contracts as c
from excerpt_bench.session.ledger import Ledger
from excerpt_bench.session.terms import SearchPlan, Term
from excerpt_bench.session.workspace import Corpus

__all__ = ["ClaudeTools", "CodexTools", "Explorer", "Tools", "explore"]

# a search matching at most this many files has its lines shown too (Claude's second rg)
NARROW = 10
WINDOW_BEFORE = 40  # lines read above a hit, and below it
WINDOW_AFTER = 60
CLUSTER = 30  # hits this close share one window
WHOLE_FILE = 300  # a file this short is read whole
FIRST_READS = 4  # files read after the identifier searches, before the keyword searches
CONTEXT = 2  # the lines search's -C
_RG_SPECIAL = re.compile(r"([\\.^$|?*+()\[\]{}])")
_DEMOTED_PART = re.compile(r"^(tests?|testing|docs?|examples?|benchmarks?|fixtures?|spec)$")
_SOURCE = re.compile(
    r"\.(py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|kt|scala|rb|php|c|h|cc|cpp|hpp|cs|swift|lua|sh)$"
)


def rg_pattern(text: str) -> str:
    """``text`` as a ripgrep regular expression that matches it literally."""
    return _RG_SPECIAL.sub(r"\\\1", text)


class Tools(Protocol):
    """A client's built-in tools over a corpus, each call charged to the ledger."""

    corpus: Corpus

    def search(self, term: Term) -> dict[str, list[int]]:
        """Files the search matched; their hit lines where the output showed them."""
        ...

    def hits_in(self, path: str, terms: Sequence[Term]) -> list[int]:
        """Hit lines of ``terms`` in one file."""
        ...

    def read(self, path: str, start: int, end: int | None) -> None:
        """Lines ``start..end`` of a file (``end`` None: the tool's default length)."""
        ...


@dataclass(slots=True)
class ClaudeTools:
    """Claude Code 2.1.332: ripgrep through ``Bash`` (it has no Grep tool), and ``Read``."""

    corpus: Corpus
    ledger: Ledger

    def search(self, term: Term) -> dict[str, list[int]]:
        hits = self.corpus.search(term.text, ignore_case=term.ignore_case)
        paths = sorted(hits)
        flags = "-i " if term.ignore_case else ""
        pattern = _shell_quote(rg_pattern(term.text))
        # a listing names files and shows none of their lines (line 0: the path alone)
        text, listed = c.claude_bash([(p, Row(p, 0, "")) for p in paths])
        self.ledger.charge("Bash", {"command": f"rg -l --sort path {flags}{pattern}"}, text, [])
        visible = [p for p, _, _ in listed]  # the preview's, past the output limit
        found: dict[str, list[int]] = {p: [] for p in visible}
        if 1 <= len(paths) <= NARROW:
            rows = _rows(self.corpus, {p: hits[p] for p in visible}, CONTEXT)
            body = c.rg_rows(rows, context=True)
            text, shown = c.claude_bash(body)
            command = f"rg -n -C {CONTEXT} --sort path {flags}{pattern}"
            self.ledger.charge("Bash", {"command": command}, text, shown)
            matches = {(r.path, r.line) for _, r in body if r.match and r.path}
            for path, line, _ in shown:
                if (path, line) in matches:
                    found[path].append(line)
        return found

    def hits_in(self, path: str, terms: Sequence[Term]) -> list[int]:
        ignore = any(t.ignore_case for t in terms)
        lines = self.corpus.search_any([t.text for t in terms], ignore_case=ignore, path=path)
        pattern = _shell_quote("|".join(rg_pattern(t.text) for t in terms))
        command = f"rg -n {'-i ' if ignore else ''}{pattern} {_shell_quote(path)}"
        rows = [Row(path, n, self.corpus.lines(path)[n - 1]) for n in lines]
        text, shown = c.claude_bash(c.rg_rows(rows, with_path=False))
        self.ledger.charge("Bash", {"command": command}, text, shown)
        return [n for _, n, _ in shown]

    def read(self, path: str, start: int, end: int | None) -> None:
        """Lines ``start..end`` (``end`` None: the whole file), page after page where Read
        gives a part (its partial view's next page, or pages of CLAUDE_READ_LIMIT lines
        after a size error)."""
        lines = self.corpus.lines(path)
        newline = self.corpus.ends_with_newline(path)
        stop = len(lines) if end is None else min(len(lines), end)
        first, limit = start, None if end is None else stop - start + 1
        while first <= stop:
            args: dict[str, object] = {"file_path": path}
            if not (first == 1 and limit is None):
                args.update(offset=first, limit=limit or len(lines) - first + 1)
            text, shown, going_on = c.claude_read(
                path, lines, first, limit, final_newline=newline, count=self.ledger.count
            )
            self.ledger.charge("Read", args, text, shown)
            if going_on is None:  # the page came whole: the next one, up to ``stop``
                if limit is None:
                    return
                first += limit
            elif going_on == first:  # over the size limit, nothing shown: smaller pages
                if limit == 1:
                    return  # one line over the limit: nothing left to ask for
                limit = c.CLAUDE_READ_LIMIT if limit is None else max(1, limit // 2)
            else:  # a partial view: its next page, of the same length
                limit, first = going_on - first, going_on
            limit = min(limit, stop - first + 1)


Row = c.Row


@dataclass(slots=True)
class CodexTools:
    """Codex 0.171.0: ``rg -n`` and ``sed -n 'A,Bp'`` through ``exec_command``."""

    corpus: Corpus
    ledger: Ledger

    def search(self, term: Term) -> dict[str, list[int]]:
        hits = self.corpus.search(term.text, ignore_case=term.ignore_case)
        flags = "-n -i" if term.ignore_case else "-n"
        command = f"rg {flags} {_shell_quote(rg_pattern(term.text))}"
        body = c.rg_rows(_rows(self.corpus, hits, 0))
        text, shown = c.codex_exec(body, 0 if hits else 1)
        self.ledger.charge("exec_command", {"cmd": command}, text, shown)
        found: dict[str, list[int]] = {}
        for path, line, _ in shown:
            found.setdefault(path, []).append(line)
        return found

    def hits_in(self, path: str, terms: Sequence[Term]) -> list[int]:
        ignore = any(t.ignore_case for t in terms)
        lines = self.corpus.search_any([t.text for t in terms], ignore_case=ignore, path=path)
        pattern = "|".join(rg_pattern(t.text) for t in terms)
        flags = "-n -i" if ignore else "-n"
        command = f"rg {flags} {_shell_quote(pattern)} {_shell_quote(path)}"
        text_lines = self.corpus.lines(path)
        rows = [Row(path, n, text_lines[n - 1]) for n in lines]
        text, shown = c.codex_exec(c.rg_rows(rows, with_path=False), 0 if lines else 1)
        self.ledger.charge("exec_command", {"cmd": command}, text, shown)
        return [n for _, n, _ in shown]

    def read(self, path: str, start: int, end: int | None) -> None:
        lines = self.corpus.lines(path)
        end = min(len(lines), end if end is not None else start + WHOLE_FILE - 1)
        command = f"sed -n '{start},{end}p' {_shell_quote(path)}"
        body = [(lines[n - 1], Row(path, n, lines[n - 1])) for n in range(start, end + 1)]
        text, shown = c.codex_exec(body)
        self.ledger.charge("exec_command", {"cmd": command}, text, shown)


def _shell_quote(text: str) -> str:
    if re.fullmatch(r"[\w./:=@%+-]+", text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


def _rows(corpus: Corpus, hits: dict[str, list[int]], context: int) -> list[c.Row]:
    """ripgrep's lines for ``hits``: each match, with ``context`` lines around it."""
    rows: list[c.Row] = []
    for path in sorted(hits):
        lines = corpus.lines(path)
        matched = set(hits[path])
        wanted: set[int] = set()
        for n in matched:
            wanted.update(range(max(1, n - context), min(len(lines), n + context) + 1))
        rows += [c.Row(path, n, lines[n - 1], n in matched) for n in sorted(wanted)]
    return rows


@dataclass(slots=True)
class Explorer:
    """One session's exploration state: what each file matched and what was read."""

    plan: SearchPlan
    tools: Tools
    priority: tuple[str, ...] = ()
    first: tuple[tuple[str, int, int], ...] = ()  # (path, start, end), read before the plan
    matched: dict[str, dict[Term, list[int]]] = field(default_factory=dict)
    counts: dict[Term, int] = field(default_factory=dict)
    read_ranges: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def run(self) -> None:
        """Explore until the tools' ledger stops the session (``Stop`` propagates)."""
        corpus = self.tools.corpus
        for where, start, end in self.first:
            if where in corpus and start <= len(corpus.lines(where)):
                self._read(where, start, end)
        for place in self.plan.places:
            path = corpus.resolve(place.path)
            if path is not None:
                line = place.line or 1
                self._read(
                    path, max(1, line - WINDOW_BEFORE), None if line == 1 else line + WINDOW_AFTER
                )
        for path in self.priority:
            self._read_around(path)
        early = [t for t in self.plan.terms if t.kind != "keyword"]
        late = [t for t in self.plan.terms if t.kind == "keyword"]
        for term in early:
            self._search(term)
        for path in self.ranking()[:FIRST_READS]:
            self._read_around(path)
        for term in late:
            self._search(term)
        ranking = self.ranking()
        for path in ranking:
            self._read_around(path)
        for path in ranking:
            self._read_whole(path)

    def _search(self, term: Term) -> None:
        found = self.tools.search(term)
        self.counts[term] = len(found)
        for path, lines in found.items():
            self.matched.setdefault(path, {})[term] = lines

    def ranking(self) -> list[str]:
        def score(path: str) -> float:
            total = 0.0
            for term in self.matched.get(path, {}):
                weight = {"identifier": 3.0, "string": 4.0}.get(term.kind, 1.0)
                total += weight / math.log2(2 + self.counts.get(term, 1))
            if not self.plan.about_tests and _demoted(path):
                total /= 3
            return total

        scored = [(score(p), p) for p in self.matched]
        return [p for s, p in sorted(scored, key=lambda sp: (-sp[0], sp[1])) if s > 0]

    def _read_around(self, path: str) -> None:
        corpus = self.tools.corpus
        if path not in corpus:
            return
        total = len(corpus.lines(path))
        if total <= WHOLE_FILE:
            self._read_whole(path)
            return
        terms = list(self.matched.get(path, {}))
        lines = sorted({n for t in terms for n in self.matched[path][t]})
        if terms and not lines:
            lines = self.tools.hits_in(path, terms)
        for start, end in _windows(lines, total):
            self._read(path, start, end)

    def _read_whole(self, path: str) -> None:
        corpus = self.tools.corpus
        if path not in corpus:
            return
        if isinstance(self.tools, ClaudeTools):  # Read takes a whole file at once
            self._read(path, 1, None)
            return
        total = len(corpus.lines(path))
        for start in range(1, total + 1, WHOLE_FILE):
            self._read(path, start, min(total, start + WHOLE_FILE - 1))

    def _read(self, path: str, start: int, end: int | None) -> None:
        """Read a range unless every line of it was read before."""
        total = len(self.tools.corpus.lines(path))
        if total == 0:
            return
        if end is None:  # Claude: the whole file from ``start``; Codex: its window
            last = total if isinstance(self.tools, ClaudeTools) else start + WHOLE_FILE - 1
        last = min(total, last if end is None else end)
        done = self.read_ranges.setdefault(path, [])
        if any(a <= start and last <= b for a, b in done):
            return
        self.tools.read(path, start, end)
        done.append((start, last))


def _windows(lines: Sequence[int], total: int) -> list[tuple[int, int]]:
    """Windows around clusters of hit lines, merged where they touch."""
    out: list[tuple[int, int]] = []
    for n in sorted(lines):
        start, end = max(1, n - WINDOW_BEFORE), min(total, n + WINDOW_AFTER)
        if out and start <= out[-1][1] + CLUSTER:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _demoted(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    if any(_DEMOTED_PART.match(p) for p in parts[:-1]):
        return True
    if name.startswith("test_") or re.search(r"[._-](test|spec)s?\.\w+$", name):
        return True
    return _SOURCE.search(name) is None


def explore(
    plan: SearchPlan,
    tools: Tools,
    priority: Sequence[str] = (),
    first: Sequence[tuple[str, int, int]] = (),
) -> None:
    """Run the plan until the session stops (``Stop`` propagates to the caller)."""
    Explorer(plan=plan, tools=tools, priority=tuple(priority), first=tuple(first)).run()
