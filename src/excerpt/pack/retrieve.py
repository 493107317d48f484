"""Stale-safe retrieval of excerpts by handle (SPEC §3.3).

A path is refused before anything is opened when it is absolute, climbs out (``..``), holds
a NUL or a percent-encoded separator, or is sensitive; symlinks out of the root are refused
by the guarded reader. A file whose hash no longer matches is ``stale`` and no text is
returned; ``moved_to`` is given only when the excerpt's exact bytes (known from the pack that
handed the handle out) occur in the new file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from excerpt.core.hashing import sha256_hex
from excerpt.core.lines import split_lines
from excerpt.core.secrets import secret_lines
from excerpt.core.settings import Limits
from excerpt.discover.reader import Omission, read_file
from excerpt.discover.sensitive import is_sensitive_path
from excerpt.errors import UsageError
from excerpt.pack.handles import Handle, parse_handle

__all__ = ["Retrieved", "refusal_reason", "retrieve"]

_ENCODED = re.compile(r"%(2e|2f|5c|00)", re.I)
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True, slots=True, kw_only=True)
class Retrieved:
    handle: str
    status: str  # fresh | stale | missing | refused
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    text: str | None = None
    excerpt_sha256: str | None = None
    moved_to: str | None = None
    error: str | None = None  # why it was refused (fixed phrases, no repository text)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "handle": self.handle,
            "status": self.status,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "text": self.text,
            "excerpt_sha256": self.excerpt_sha256,
            "moved_to": self.moved_to,
        }
        if self.error is not None:
            out["error"] = self.error
        return out


def refusal_reason(path: str) -> str | None:
    """Why a workspace-relative path may not be served, checked before any open."""
    if not path or "\0" in path:
        return "empty path or NUL byte"
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        return "absolute path"
    if "\\" in path:
        return "backslash in path"
    if _ENCODED.search(path):
        return "percent-encoded separator or dot"
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "path traversal or empty component"
    if is_sensitive_path(path):
        return "sensitive path"
    return None


KnownExcerpt = tuple[str, int, str]  # (excerpt sha256, line count, first line sha256)


def retrieve(root: Path, raw: str, known: dict[str, KnownExcerpt] | None = None) -> Retrieved:
    """Resolve one handle against the workspace at ``root`` (resolved).

    ``known`` maps handles a pack handed out to what their excerpt was, for ``moved_to``.
    Malformed handles and refused paths come back as ``refused``; nothing raises.
    """
    try:
        handle = parse_handle(raw)
    except UsageError as exc:
        return Retrieved(handle=raw, status="refused", error=exc.message)
    reason = refusal_reason(handle.path)
    if reason is not None:
        return Retrieved(handle=raw, status="refused", path=None, error=reason)
    content = read_file(root, handle.path, Limits())

    def answer(status: str, **fields: Any) -> Retrieved:
        return Retrieved(handle=raw, path=handle.path, status=status, **fields)

    if isinstance(content, Omission):
        if content.reason == "not_regular_file" and not os.path.lexists(root / handle.path):
            return answer("missing")
        return answer("refused", error=f"not servable: {content.reason}")
    if content.binary or content.encoding not in ("utf-8", "utf-8-sig"):
        return answer("refused", error="not servable: not UTF-8 text")
    lines = split_lines(content.data)
    if content.sha256[:16] != handle.digest:
        moved = _moved_to(handle, lines, content.sha256, (known or {}).get(raw))
        return answer("stale", moved_to=moved)
    if handle.end_line > len(lines):
        return answer("refused", error="line range beyond the end of the file")
    data = b"".join(lines[handle.start_line - 1 : handle.end_line])
    if _holds_secret(lines, handle):
        # a handle binds the file, not the range: widening it must not reach a secret
        return answer("refused", error="the range holds lines the secret detector flags")
    return answer(
        "fresh",
        start_line=handle.start_line,
        end_line=handle.end_line,
        text=data.decode("utf-8"),
        excerpt_sha256=sha256_hex(data),
    )


def _holds_secret(lines: list[bytes], handle: Handle) -> bool:
    """Whether the range touches a flagged line, including the inside of a private-key block
    that starts above it (so the scan covers everything up to the range's end)."""
    findings = secret_lines(b"".join(lines[: handle.end_line]).decode("utf-8"))
    return any(
        f.start_line <= handle.end_line and f.end_line >= handle.start_line for f in findings
    )


def _moved_to(
    handle: Handle, lines: list[bytes], new_sha256: str, known: KnownExcerpt | None
) -> str | None:
    """A handle to where the excerpt's exact bytes now are, if they are anywhere."""
    if known is None:
        return None
    excerpt_sha, count, first_sha = known
    for start in range(1, len(lines) - count + 2):
        if sha256_hex(lines[start - 1]) != first_sha:
            continue
        if sha256_hex(b"".join(lines[start - 1 : start - 1 + count])) == excerpt_sha:
            return str(Handle(handle.path, start, start + count - 1, new_sha256[:16]))
    return None
