"""The input classes of docs/reliability.md, one row each, with what excerpt does there.

A test names the class it covers with ``@pytest.mark.reliability("B1.4", cases=3)``: the row
id, and how many inputs of that class one run of the test tries (a hypothesis test: its
``max_examples`` under the ``ci`` profile; a parametrised test: 1 per instance, or more when
one instance tries several inputs). ``ids=("a", "b")`` limits a marker to the parametrised
instances with those ids, so one table can feed several rows. A row id not in ``ROWS``, or an
id no instance has, is a collection error: a typo cannot hide a class.

``need`` is the fewest cases the default run should try for the row; ``None`` where no count
is set. Counts given per rule or per tool are multiplied out (a test keeps them current).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BY_ID", "GROUPS", "ROWS", "Row", "entries_for", "marker_problems"]

RULE_CASES = 3 * 98  # a generated secret and two look-alikes per detector rule
TOOL_COUNT = 11  # MCP tools


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    id: str
    title: str
    expected: str
    need: int | None

    @property
    def group(self) -> str:
        return self.id.split(".")[0] if self.id.startswith("B") else "T"


GROUPS: dict[str, str] = {
    "B1": "Filesystem inputs (discover, index, get)",
    "B2": "Content encodings and shapes (parsers, symbols, excerpts)",
    "B3": "Secrets and sensitive paths (index, get, gate)",
    "B4": "Handles (`PATH#L<start>-L<end>@<16 hex>`)",
    "B5": "MCP server (stdio)",
    "B6": "Git and gate (never execute, never write)",
    "B7": "Crash and corruption",
    "B8": "Sustained use (sessions, hooks and edits for minutes)",
    "T": "Hostile tasks, pathological files, broken environments",
}


def _row(row_id: str, title: str, expected: str, need: int | None) -> Row:
    return Row(id=row_id, title=title, expected=expected, need=need)


ROWS: tuple[Row, ...] = (
    # -- B1 ----------------------------------------------------------------------------------
    _row("B1.1", "A file symlink pointing outside the repository (`/etc/passwd`, `~/.ssh`)",
         "Not indexed; omitted as `symlink_outside_root`; `get` refuses it", 2),
    _row("B1.2", "A directory symlink leading out, also as a middle component (`a` → `/`)",
         "Refused: each component is opened from its checked parent without following links",
         2),
    _row("B1.3", "A symlink inside the repository to a sensitive file (`docs/cfg` → `../.env`)",
         "Sensitive: the deny list applies to the link's target too", 1),
    _row("B1.4", "A symlink loop, a dangling symlink, a chain of `../` links",
         "Omitted with a reason; the walk ends", 3),
    _row("B1.5", "A file or directory swapped for a symlink between check and open",
         "What is read is the inode that was checked, else refused; 50 swaps by a concurrent "
         "process", 50),
    _row("B1.6", "A FIFO, a socket, a link to `/dev/zero`, a character device",
         "Never opened, never blocks; omitted as `not_regular_file`", 4),
    _row("B1.7", "A sparse multi-GiB file; a real file over the size cap",
         "Omitted as `too_large` from its size alone; nothing read past the cap", 2),
    _row("B1.8", "A file deleted, truncated or growing while indexed; a mode-000 file or "
         "directory", "Omitted with a reason; the index stays consistent; the next run picks "
         "the file up", 4),
    _row("B1.9", "10^5 files in 100 directories",
         "A cold index finishes; indexed + omitted = discovered; memory stays bounded", 1),
    _row("B1.10", "200 nested directories; a path near PATH_MAX; a 255-byte file name",
         "Indexed or omitted with a reason; no recursion error", 3),
    _row("B1.11", "File names with non-UTF-8 bytes, a newline, a leading `-`, spaces, `#L5` "
         "or `@`, NFC/NFD twins, `.ENV`", "Round-trip through handles and JSON; case variants "
         "of sensitive names are denied", 10),
    _row("B1.12", "Ignore-file edge cases: negation, nested files, a tracked ignored file, a "
         "force-added `.env`", "In git, git's own list decides; a force-added `.env` is still "
         "sensitive", 6),
    # -- B2 ----------------------------------------------------------------------------------
    _row("B2.13", "An empty file; only newlines; no final newline",
         "Line numbers are consistent; `L1-L1` works; the last line is kept", 3),
    _row("B2.14", "CRLF, a lone CR, mixed line ends",
         "Handles count lines as the served bytes do; `get` returns them exactly, `\\r` "
         "included", 3),
    _row("B2.15", "A BOM; UTF-16 LE and BE; latin-1; invalid UTF-8 mid-file",
         "Decoded the same way every time and recorded as the file's encoding; the secret "
         "scan never skips an undecodable file", 5),
    _row("B2.16", "NUL in the first 8 KiB, just past it, at the end of a large file",
         "Binary or text is decided from a fixed prefix, the same on every run", 3),
    _row("B2.17", "A 10 MB line; a 1 MB base64 blob; 10^6 short lines",
         "Indexing time stays bounded; long lines are cut in excerpts and marked", 3),
    _row("B2.18", "Any bytes into each language's symbol and import extractor",
         "No exception; spans in range and in order; the same output every time "
         "(200 per parser, 5 parsers at least)", 1000),
    _row("B2.19", "Any text (surrogates, bidi controls, NUL) into each extractor",
         "As B2.18", 1000),
    _row("B2.20", "Compaction round trip: json, log, diff and auto over hostile input",
         "`expand(compact(x)) == x` byte for byte",
         2000),
    _row("B2.21", "Log text with ANSI and OSC escapes (OSC 52), CR overwrites, repeated lines",
         "Control characters are escaped on a terminal and in JSON; folded counts are right",
         8),
    _row("B2.22", "Diffs: binary, no final newline, rename, mode-only, submodule, CRLF hunks, "
         "10^4 hunks", "Every changed line kept; the round trip is exact", 8),
    # -- B3 ----------------------------------------------------------------------------------
    _row("B3.23", "Each deny-list pattern, at the root and nested, in any letter case",
         "Never opened (an audit hook watches); listed by path as `sensitive`, with no size "
         "or hash", 70),
    _row("B3.24", "Deny-list exceptions: `.env.example`, `*.tfvars.example`, `id_rsa.pub`",
         "Readable, and still scanned for secrets", 5),
    _row("B3.25", "Canary secrets in ordinary source files (provider tokens, private keys, "
         "URLs with passwords)", "Never verbatim in a pack, `get`, an MCP result, a log, the "
         "cache bytes or its full-text terms (20 canaries on 6 surfaces)", 120),
    _row("B3.26", "Each detector rule: a generated secret and two look-alikes (`EXAMPLE`, "
         "`xxxx`, `${VAR}`, low entropy)", "The rule finds the secret and none of the "
         "look-alikes (3 per rule)", RULE_CASES),
    _row("B3.27", "Look-alike files: lockfile hashes, UUIDs, git SHAs, base64 images, "
         "minified JS, sample JWTs", "At most one failing false positive per 1,000 files",
         1000),
    _row("B3.28", "A secret in latin-1, in UTF-16, across CRLF, inside base64, behind JSON "
         "`\\u` escapes", "Found", 5),
    # -- B4 ----------------------------------------------------------------------------------
    _row("B4.29", "A fresh handle", "The exact bytes; `excerpt_sha256` matches", 1),
    _row("B4.30", "The file edited or deleted since", "`stale` (exit 1), with a `moved_to` "
         "hint only where the exact text is, or `missing`; old text is never served", 3),
    _row("B4.31", "The digest changed by one hex digit", "`stale`", 1),
    _row("B4.32", "A path leaving the repository or naming a secret: `..`, absolute, `C:\\`, "
         "UNC, `%2e%2e`, NUL, a link out, a prefix sibling", "Refused before anything is "
         "opened", 12),
    _row("B4.33", "A bad range: `L0`, end before start, past the end, 20 digits, negative, "
         "no `L`", "Refused as a usage error, with no large allocation", 8),
    _row("B4.34", "Another or a wider range of a verified file",
         "Served: the digest binds the whole file, not the range (by design)", 1),
    _row("B4.35", "Any text as a handle", "Always fresh, stale, missing or refused; never an "
         "exception or an open outside the repository", 500),
    # -- B5 ----------------------------------------------------------------------------------
    _row("B5.36", "Tool arguments generated from each tool's input schema, and invalid values",
         "Valid: a result; invalid: `isError` with a message; the next call still works "
         "(200 per tool)", 200 * TOOL_COUNT),
    _row("B5.37", "A 10 MB string, 10^4-item arrays, deep nesting, unknown keys",
         "Refused with `isError`; memory stays bounded (4 per tool)", 4 * TOOL_COUNT),
    _row("B5.38", "An unknown tool, a call before `initialize`, stdin closed mid-call, parser "
         "warnings", "Only JSON-RPC on stdout; a clean exit; no traceback", 4),
    _row("B5.39", "Tool annotations", "Every tool states all four hints: read-only, not "
         "destructive, idempotent, closed world (1 per tool)", TOOL_COUNT),
    _row("B5.40", "Prompt injection in repository text: instructions, hidden comments, bidi "
         "and zero-width characters, fake frames, a file name that reads as an order",
         "Returned byte for byte inside data fields only; never in descriptions or reasons; "
         "flagged in warnings; escaped on a terminal", 6),
    _row("B5.41", "Client roots narrower or wider than the repository",
         "Served only inside the declared roots; refused elsewhere", 3),
    # -- B6 ----------------------------------------------------------------------------------
    _row("B6.42", "Hostile `.git/config`, attributes and hooks (fsmonitor, pager, external "
         "diff, textconv, filters, hooks)", "No repository program runs during index, pack, "
         "get, plan, gate or harness (1 per command)", 6),
    _row("B6.43", "A write audit of every command and tool: bytes, modes and times, `.git` "
         "included", "Nothing under the repository changes (1 per command)", 15),
    _row("B6.44", "Partial staging: a secret only in the index, or only in the work tree",
         "FAIL and PASS: the gate reads staged blobs, never work-tree files", 2),
    _row("B6.45", "The change edits the policy to switch the secret check off",
         "The base commit's policy applies: still FAIL", 1),
    _row("B6.46", "Staged: a binary, a symlink to a key outside, a submodule, a deleted or "
         "renamed `.env`, a 3 MB line, a newline in a name", "binary: WARN not scanned; "
         "outside secret target: FAIL; deletion: PASS; a rename keeps its sensitivity", 7),
    _row("B6.47", "A repository owned by another user",
         "Environment error (exit 3) with git's hint; excerpt never adds `safe.directory`", 1),
    _row("B6.48", "Fixture repositories built at test time",
         "Fixed author and committer dates and branch name (the `conftest` git helpers)",
         None),
    # -- B7 ----------------------------------------------------------------------------------
    _row("B7.49", "SIGKILL at a random moment of a cold index",
         "The next run completes; integrity ok; results equal a fresh index, never a mix", 30),
    _row("B7.50", "A crash at each labelled crash point", "As B7.49, for every label", 10),
    _row("B7.51", "ENOSPC or EIO at the k-th write, fsync or rename",
         "The previous state stays whole; the error is reported; no partial file shows",
         None),
    _row("B7.52", "A corrupt cache: truncated, flipped bytes, WAL deleted while hot, unknown "
         "version, a symlink", "Detected, moved aside and rebuilt, or exit 3; never wrong "
         "results (5 kinds, 5 seeds each)", 25),
    _row("B7.53", "Compaction store killed right after `compact` returns",
         "`expand` returns the original byte for byte (no compaction command yet)", 20),
    _row("B7.54", "Two indexers at once; a reader during a writer",
         "One waits or is refused; the reader sees the old or the new generation", 2),
    # -- B8 ----------------------------------------------------------------------------------
    _row("B8.55", "Sustained use: MCP sessions packing and retrieving, seed and compaction "
         "hooks, and an editor (an edit, an addition and a removal a second, 50 files "
         "rewritten at once): two sessions for half a minute (`excerpt bench soak`; four for ten "
         "minutes under `-m slow`)",
         "No error; no excerpt served whose file had changed before the call; every process "
         "stopped at the end", 1),
    _row("B8.56", "A server killed (SIGKILL) in the middle of a pack, then started again",
         "Its next packs equal a fresh server's on a fully built index", 1),
    _row("B8.57", "An excerpt served from a file version replaced before the call, or a "
         "handle called fresh after its file changed",
         "Counted as a stale serve by the soak's check", 3),
    # -- T -----------------------------------------------------------------------------------
    _row("T1", "Hostile task text: backtracking shapes, huge inputs",
         "Analysed in time linear in its length; no call stalls the server", None),
    _row("T2", "Pathological source files: deep nesting, huge repetition",
         "Parsed and scanned within budgets, or omitted with a reason; the run goes on",
         None),
    _row("T3", "Environment faults: unreadable directories, PATH_MAX, `core.worktree`, an "
         "unusable cache, killed workers, closed stdout, `/dev/zero`",
         "A documented exit code and one line, or an omission; never an internal error",
         None),
    _row("T4", "Ignore rules outside git", "The files kept are the ones git itself lists "
         "for the same tree (differential)", None),
    _row("T5", "JSON-RPC frames: malformed, unparsable, deeply nested, lone surrogates",
         "Every request answered with a result or an error; the server stays up", None),
    _row("T6", "Tampered cache rows",
         "Detected by a checksum on read; that file's rows are rebuilt", None),
    _row("T7", "Canary secrets on every surface",
         "No canary in any output, log, cache byte or index term", None),
)  # fmt: skip

BY_ID: dict[str, Row] = {row.id: row for row in ROWS}
_KEYS = frozenset({"cases", "ids"})


def _mark_problem(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str | None:
    if len(args) != 1 or not isinstance(args[0], str):
        return "takes one row id, e.g. reliability('B1.4', cases=3)"
    if args[0] not in BY_ID:
        return f"unknown reliability row {args[0]!r} (rows: tests/reliability_rows.py)"
    if set(kwargs) - _KEYS:
        return f"unknown keyword {sorted(set(kwargs) - _KEYS)[0]!r}"
    cases = kwargs.get("cases", 1)
    if not isinstance(cases, int) or isinstance(cases, bool) or cases < 1:
        return f"cases must be a positive integer, not {cases!r}"
    ids = kwargs.get("ids", ())
    if not isinstance(ids, tuple | list) or not all(isinstance(i, str) for i in ids):
        return "ids must be a tuple of parametrize ids"
    return None


def _instance_ids(item: Any) -> frozenset[str] | None:
    """The ids a marker's ``ids`` may name for ``item``: its whole parametrize id and each
    parameter's own (``mode-auto-task-int`` is also ``mode-auto`` and ``task-int``); ``None``
    for a test that is not parametrised."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    return frozenset([str(callspec.id), *map(str, getattr(callspec, "_idlist", ()))])


def entries_for(item: Any) -> list[tuple[str, int]]:
    """``(row, cases)`` for each reliability marker that applies to ``item``."""
    out = []
    own = _instance_ids(item) or frozenset()
    for mark in item.iter_markers("reliability"):
        ids = mark.kwargs.get("ids", ())
        if ids and not own & set(ids):
            continue
        out.append((str(mark.args[0]), int(mark.kwargs.get("cases", 1))))
    return sorted(out)


def marker_problems(items: Iterable[Any]) -> list[str]:
    """What is wrong with the reliability markers of ``items`` (the test items one collector
    produced: the instances of a parametrised test are all among them)."""
    problems: set[str] = set()
    named: set[tuple[str, str, str]] = set()  # (test, row, id) that a marker's ids name
    instances: set[tuple[str, str]] = set()  # (test, id) that exist
    for item in items:
        own = _instance_ids(item)
        test = str(getattr(item, "originalname", item.name))
        instances |= {(test, i) for i in own or ()}
        for mark in item.iter_markers("reliability"):
            problem = _mark_problem(mark.args, mark.kwargs)
            if problem is None and mark.kwargs.get("ids") and own is None:
                problem = "ids given for a test that is not parametrised"
            if problem is not None:
                problems.add(f"{item.nodeid}: reliability marker: {problem}")
                continue
            named |= {(test, str(mark.args[0]), i) for i in mark.kwargs.get("ids", ())}
    for test, row, missing in named:
        if (test, missing) not in instances:
            problems.add(f"{test}: reliability {row} names id {missing!r}, which no instance has")
    return sorted(problems)
