"""``excerpt hook EVENT``: the process a client starts for each hook event.

It reads the client's JSON on stdin and writes its answer on stdout, and it never breaks the
client: whatever goes wrong (bad input, no index, an unreadable repository, a timeout, a
bug), it exits 0 with nothing on stdout, so the prompt goes on and the tool output reaches
the model as it was; what went wrong is one line in ``hooks.log`` under the cache. (An exit
code of 2 would block a prompt in both clients: it is never used.)

It runs after every tool call, so this module imports only the standard library until it
knows there is work: a ``PostToolUse`` payload under the compaction threshold is answered
(with nothing) before the library loads.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Any

from excerpt.hooks.options import Decision, HookOptions, parser
from excerpt.hooks.options import log as _log

__all__ = ["main"]

MAX_INPUT = 64 * 1024 * 1024  # a larger payload passes through untouched


def main(argv: list[str]) -> int:
    """Run one hook; always returns 0."""
    started = time.monotonic()
    opts: HookOptions | None = None
    try:
        opts = parser().parse_args(argv, namespace=HookOptions())
    except (SystemExit, ValueError):
        _log(f"bad hook command line: {' '.join(argv)[:500]}")
        _drain()
        return 0
    if opts.cache_dir:  # as EXCERPT_CACHE_DIR: the client's environment may not carry it
        os.environ["EXCERPT_CACHE_DIR"] = opts.cache_dir
    try:
        raw = _read_input()
        if raw is None:
            _log(f"{opts.event}: input over {MAX_INPUT:,} bytes, passed through")
            return 0
        if len(raw) < 256 and b'"excerpt_probe"' in raw:  # excerpt setup's check
            sys.stdout.write(_probe_answer(opts))
            return 0
        if opts.event == "PostToolUse" and len(raw) < opts.min_bytes:
            return 0  # nothing this small is compacted: answered before the library loads
        answer = _answer(opts, raw, started)
        if answer:
            sys.stdout.write(answer)
            sys.stdout.flush()
    except BaseException as exc:  # the one net: a hook never fails its client  # noqa: BLE001
        _log(f"{opts.event}: {type(exc).__name__}: {exc}"[:2000])
    return 0


def _answer(opts: HookOptions, raw: bytes, started: float) -> str:
    """The answer to write, computed within the timeout where it can be slow (a seed)."""
    from excerpt.hooks.run import answer_event, late_answer

    if opts.event != "UserPromptSubmit":
        return answer_event(opts, raw)
    done: dict[str, Any] = {}
    decision = Decision()

    def work() -> None:
        try:
            done["answer"] = answer_event(opts, raw, decision)
        except BaseException as exc:  # noqa: BLE001 (reported by the waiting thread)
            done["error"] = exc

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(max(0.0, opts.timeout - (time.monotonic() - started)))
    if worker.is_alive() and not decision.give_up():
        worker.join()  # the seed is recorded as sent: it is sent
    if "error" in done:
        raise done["error"]
    if "answer" in done:
        return str(done["answer"])
    # late: say so in one line, let a background refresh finish the work for the next prompt
    # and leave at once (the worker may be inside a refresh: the index survives being cut)
    note = late_answer(opts, raw)
    sys.stdout.write(note)
    sys.stdout.flush()
    _log(f"{opts.event}: over {opts.timeout:.2f} s, a note instead of a seed")
    os._exit(0)


def _probe_answer(opts: HookOptions) -> str:
    import json

    from excerpt import __version__

    doc = {"excerpt_probe": "ok", "version": __version__, "event": opts.event,
           "client": opts.client, "repo": opts.repo}  # fmt: skip
    return json.dumps(doc) + "\n"


def _read_input() -> bytes | None:
    data = sys.stdin.buffer.read(MAX_INPUT + 1)
    if len(data) > MAX_INPUT:
        _drain()
        return None
    return data


def _drain() -> None:
    """Read stdin to its end, so the client never writes into a closed pipe."""
    with contextlib.suppress(OSError, ValueError):
        while sys.stdin.buffer.read(1 << 20):
            pass
