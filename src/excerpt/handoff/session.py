"""Pre-fill a handoff from an agent's session transcript (JSON Lines): files touched and
commands run, in the order the session made them.

Claude Code (``~/.claude/projects/<project>/<session>.jsonl``): an ``assistant`` entry's
``message.content`` holds ``tool_use`` blocks (``Bash`` with ``input.command``; ``Edit``,
``MultiEdit``, ``Write`` with ``input.file_path``; ``NotebookEdit`` with
``input.notebook_path``); a later ``user`` entry holds the ``tool_result`` with the same
``tool_use_id``. A result with ``is_error`` that starts ``Exit code N`` exited ``N``; one
without ``is_error`` exited 0; any other error's exit code is unknown (null).

Codex (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``): ``response_item`` entries whose
``payload`` is a ``function_call`` (``shell`` with ``arguments.command`` as argv,
``exec_command`` with ``arguments.cmd``) and its ``function_call_output`` (the same
``call_id``; exit code from ``metadata.exit_code`` of a JSON output or from ``Process exited
with code N``), an ``event_msg`` ``exec_command_end`` (its ``exit_code``), and
``apply_patch`` calls, whose ``*** Add/Update/Delete File:`` and ``*** Move to:`` lines name
the files touched.

Paths are made relative to the repository; a path outside it is left out (and counted).
A result keeps its last 10 lines, at most 2,000 characters. Lines that are not JSON (a
session cut off mid-write) are passed over and counted.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from excerpt.errors import UsageError
from excerpt.handoff.model import MAX_TEXT, path_problem

__all__ = ["SessionFacts", "read_session"]

MAX_SESSION_BYTES = 256 * 1024 * 1024
MAX_LINE_BYTES = 32 * 1024 * 1024
RESULT_LINES = 10
RESULT_CHARS = 2000
_EDITS = {"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path",
          "NotebookEdit": "notebook_path"}  # fmt: skip
_PATCH_MARKS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


@dataclass(slots=True)
class SessionFacts:
    """What a transcript says was done (``outside``: paths left out, ``skipped``: lines)."""

    files_touched: list[str] = field(default_factory=list)
    commands: list[dict[str, Any]] = field(default_factory=list)
    outside: int = 0
    skipped: int = 0
    entries: int = 0


class _Reader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.facts = SessionFacts()
        self.pending: dict[str, dict[str, Any]] = {}  # call id -> its command entry
        self.cwd: str | None = None

    def touch(self, raw: Any, base: str | None = None) -> None:
        if not isinstance(raw, str) or not raw.strip():
            return
        rel = _relative(self.root, raw.strip(), base or self.cwd)
        if rel is None:
            self.facts.outside += 1
        elif rel not in self.facts.files_touched:
            self.facts.files_touched.append(rel)

    def command(self, call_id: Any, text: str) -> None:
        text = text.replace("\0", "\\x00")[:MAX_TEXT]
        if not text.strip():
            return
        entry: dict[str, Any] = {"command": text, "exit_code": None, "result": ""}
        self.facts.commands.append(entry)
        if isinstance(call_id, str):
            self.pending[call_id] = entry

    def result(self, call_id: Any, code: int | None, output: str) -> None:
        entry = self.pending.get(call_id) if isinstance(call_id, str) else None
        if entry is None:
            return
        if code is not None:
            entry["exit_code"] = code
        if output and not entry["result"]:
            entry["result"] = _tail(output)

    def line(self, obj: Any) -> None:
        if not isinstance(obj, dict):
            self.facts.skipped += 1
            return
        if isinstance(obj.get("cwd"), str):
            self.cwd = obj["cwd"]
        payload = obj.get("payload")
        if isinstance(payload, dict):
            self.facts.entries += 1
            self.codex(str(obj.get("type")), payload)
        elif isinstance(obj.get("message"), dict):
            self.facts.entries += 1
            self.claude(obj["message"])

    # ------------------------------------------------------------------ Claude Code
    def claude(self, message: dict[str, Any]) -> None:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                self.claude_use(block)
            elif block.get("type") == "tool_result":
                text = _text_of(block.get("content"))
                code = _claude_exit(text, block.get("is_error") is True)
                self.result(block.get("tool_use_id"), code, text)

    def claude_use(self, block: dict[str, Any]) -> None:
        name, given = block.get("name"), block.get("input")
        args = given if isinstance(given, dict) else {}
        if name == "Bash" and isinstance(args.get("command"), str):
            self.command(block.get("id"), args["command"])
        elif name in _EDITS:
            self.touch(args.get(_EDITS[str(name)]))

    # ------------------------------------------------------------------ Codex
    def codex(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "session_meta" or kind == "turn_context":
            if isinstance(payload.get("cwd"), str):
                self.cwd = payload["cwd"]
            return
        ptype = payload.get("type")
        if ptype == "function_call":
            self.codex_call(payload)
        elif ptype == "custom_tool_call" and payload.get("name") == "apply_patch":
            self.patch(payload.get("input"), None)
        elif ptype in ("function_call_output", "custom_tool_call_output"):
            code, text = _codex_output(payload.get("output"))
            self.result(payload.get("call_id"), code, text)
        elif kind == "event_msg" and ptype == "exec_command_end":
            code = payload.get("exit_code")
            output = payload.get("aggregated_output") or payload.get("stdout") or ""
            self.result(payload.get("call_id"), _int(code), str(output))

    def codex_call(self, payload: dict[str, Any]) -> None:
        try:
            args = json.loads(payload.get("arguments") or "{}")
        except (TypeError, ValueError, RecursionError):
            return
        if not isinstance(args, dict):
            return
        workdir = args.get("workdir") if isinstance(args.get("workdir"), str) else None
        name, call_id = payload.get("name"), payload.get("call_id")
        if name == "apply_patch":
            self.patch(args.get("input"), workdir)
            return
        argv = args.get("command")
        if isinstance(argv, list) and all(isinstance(a, str) for a in argv) and argv:
            if argv[0] == "apply_patch" and len(argv) == 2:
                self.patch(argv[1], workdir)
                return
            shell = len(argv) == 3 and argv[1] in ("-lc", "-c") and argv[0].endswith("sh")
            self.command(call_id, argv[2] if shell else shlex.join(argv))
        elif isinstance(args.get("cmd"), str):
            self.command(call_id, args["cmd"])

    def patch(self, text: Any, workdir: str | None) -> None:
        for line in text.splitlines() if isinstance(text, str) else []:
            for mark in _PATCH_MARKS:
                if line.startswith(mark):
                    self.touch(line[len(mark) :], workdir)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


def _claude_exit(text: str, is_error: bool) -> int | None:
    if not is_error:
        return 0
    first = text.split("\n", 1)[0].strip()
    if first.startswith("Exit code ") and first[10:].strip().lstrip("-").isdigit():
        return int(first[10:].strip())
    return None


def _codex_output(output: Any) -> tuple[int | None, str]:
    if not isinstance(output, str):
        return None, ""
    try:
        parsed = json.loads(output)
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
        meta = parsed.get("metadata")
        code = _int(meta.get("exit_code")) if isinstance(meta, dict) else None
        return code, parsed["output"]
    for line in output.splitlines()[:20]:
        for prefix in ("Process exited with code ", "Exit code: "):
            rest = line.strip().removeprefix(prefix)
            if rest != line.strip() and rest.lstrip("-").isdigit():
                body = output.split("\nOutput:\n", 1)
                return int(rest), body[1] if len(body) == 2 else output
    return None, output


def _tail(text: str) -> str:
    lines = text.rstrip("\n").split("\n")
    kept = "\n".join(lines[-RESULT_LINES:])
    if len(kept) > RESULT_CHARS:
        kept = kept[-RESULT_CHARS:]
    return kept.replace("\0", "\\x00")


def _relative(root: Path, raw: str, base: str | None) -> str | None:
    """``raw`` as a path relative to ``root``, or None when it is outside."""
    path = PurePosixPath(raw)
    if not path.is_absolute():
        path = PurePosixPath(base) / path if base else PurePosixPath(root.as_posix()) / path
    parts: list[str] = []
    for part in path.parts[1:]:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    full = PurePosixPath("/", *parts)
    for top in dict.fromkeys((root.as_posix(), os.path.realpath(root))):
        try:
            rel = full.relative_to(top).as_posix()
        except ValueError:
            continue
        return rel if rel != "." and path_problem(rel) is None else None
    return None


def read_session(source: str | os.PathLike[str], root: Path) -> SessionFacts:
    """The files touched and commands run that a transcript records.

    Raises:
        UsageError: unreadable, larger than 256 MiB, binary, or holding no Claude Code or
            Codex entry.
    """
    name = os.fspath(source)
    reader = _Reader(root)
    try:
        with Path(name).open("rb") as fh:
            if os.fstat(fh.fileno()).st_size > MAX_SESSION_BYTES:
                raise UsageError("the session transcript is larger than 256 MiB")
            if b"\0" in fh.read(8192):
                raise UsageError("the session transcript is binary, not JSON Lines")
            fh.seek(0)
            total = 0
            for raw in fh:
                total += len(raw)
                if total > MAX_SESSION_BYTES:
                    raise UsageError("the session transcript is larger than 256 MiB")
                _feed(reader, raw)
    except OSError as exc:
        raise UsageError(f"cannot read the session transcript {name}: {exc.strerror}") from None
    except ValueError:
        raise UsageError(f"cannot read the session transcript {name}: not a valid name") from None
    if reader.facts.entries == 0:
        raise UsageError("the session transcript holds no Claude Code or Codex entry")
    return reader.facts


def _feed(reader: _Reader, raw: bytes) -> None:
    if not raw.strip():
        return
    if len(raw) > MAX_LINE_BYTES:
        reader.facts.skipped += 1
        return
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        reader.facts.skipped += 1
        return
    reader.line(obj)
