"""Aider's repo map, timed cold and warm: run by ``excerpt bench perf --aider-python PYTHON``.

Runs with the interpreter of an environment that has ``aider-chat`` installed (not excerpt's).
Reads one JSON request on stdin::

    {"root": DIR, "files": [RELATIVE PATH, ...], "tasks": [TEXT, ...],
     "map_tokens": 1024, "cold_runs": N}

and prints one JSON result on stdout, nothing else (whatever Aider prints goes to stderr, and
so do this driver's progress lines, ``excerpt-aider-step: ...``)::

    {"aider_version", "map_tokens", "cold_s": [...], "warm_s": [...], "cold_map_chars",
     "warm_map_chars": [...], "peak_rss_mb", "tsl_pack"}

Cold: a new ``RepoMap`` and its first ``get_repo_map`` (the first task's request) on a tree
with no tags cache (the cache Aider keeps in ``ROOT/.aider.tags.cache.v*`` is deleted before
each cold run). Warm: each task's ``get_repo_map`` after that on the same ``RepoMap``, with the
mentions Aider's coder derives from a message (``get_ident_mentions``, ``get_file_mentions``,
``get_ident_filename_matches``, re-implemented here: the coder needs a model and a git repo).
Every file of the tree is an "other file" (what Aider lists with ``git ls-files``) and none is
in the chat.

Tokens are counted without a tokenizer (Aider's goes through litellm and tiktoken, which
download their encodings): one token per 4 characters. The network is refused in this process.
"""

from __future__ import annotations

import glob
import json
import os
import re
import resource
import shutil
import socket
import sys
import time
import traceback
from typing import Any


def _refuse(*_args: object, **_kwargs: object) -> Any:
    raise OSError("the network is disabled in excerpt's Aider driver")


def _offline() -> None:
    socket.socket.connect = _refuse  # type: ignore[method-assign]
    socket.socket.connect_ex = _refuse  # type: ignore[method-assign]
    socket.getaddrinfo = _refuse
    socket.create_connection = _refuse


class Model:
    """What RepoMap asks of Aider's model: a token count (4 characters a token, no tokenizer)."""

    name = "excerpt-offline-chars-per-4"

    def token_count(self, text: object) -> int:
        if not isinstance(text, str):
            text = json.dumps(text)
        return len(text) // 4


class Io:
    """What RepoMap asks of Aider's InputOutput: messages (dropped) and reading a file as
    ``InputOutput.read_text`` does (UTF-8, None when unreadable)."""

    encoding = "utf-8"

    def read_text(self, filename: object, silent: bool = False) -> str | None:
        try:
            with open(str(filename), encoding=self.encoding) as fh:
                return fh.read()
        except (OSError, UnicodeError):
            return None

    def tool_output(self, *_args: object, **_kwargs: object) -> None:
        pass

    tool_warning = tool_error = tool_output


def ident_mentions(text: str) -> set[str]:
    """Coder.get_ident_mentions."""
    return set(re.split(r"\W+", text))


def file_mentions(text: str, rel_files: list[str]) -> set[str]:
    """Coder.get_file_mentions with nothing in the chat: every file is addable."""
    words = {w.rstrip(",.!;:?") for w in text.split()}
    words = {w.strip("\"'`*_") for w in words}
    normalized = {w.replace("\\", "/") for w in words}
    out: set[str] = set()
    by_name: dict[str, list[str]] = {}
    for rel in rel_files:
        if rel.replace("\\", "/") in normalized:
            out.add(rel)
        name = os.path.basename(rel)
        if "/" in name or "\\" in name or "." in name or "_" in name or "-" in name:
            by_name.setdefault(name, []).append(rel)
    for name, rels in by_name.items():
        if len(rels) == 1 and name in words:
            out.add(rels[0])
    return out


def ident_filename_matches(idents: set[str], rel_files: list[str]) -> set[str]:
    """Coder.get_ident_filename_matches."""
    stems: dict[str, set[str]] = {}
    for rel in rel_files:
        if not rel or rel == ".":
            continue
        stem = os.path.splitext(os.path.basename(rel))[0].lower()
        if len(stem) >= 5:
            stems.setdefault(stem, set()).add(rel)
    out: set[str] = set()
    for ident in idents:
        if len(ident) >= 5:
            out.update(stems.get(ident.lower(), ()))
    return out


def request_map(repo_map: Any, text: str, abs_files: list[str], rel_files: list[str]) -> str:
    """Coder.get_repo_map with nothing in the chat: the map for one message."""
    idents = ident_mentions(text)
    fnames = file_mentions(text, rel_files) | ident_filename_matches(idents, rel_files)
    out = repo_map.get_repo_map(set(), abs_files, mentioned_fnames=fnames, mentioned_idents=idents)
    if not out:  # the coder's last fallback: the unhinted map
        out = repo_map.get_repo_map(set(), abs_files)
    return str(out or "")


STEP = "excerpt-aider-step: "


def step(text: str) -> None:
    """A progress line on stderr: the runner names the last one when this process times out."""
    sys.stderr.write(f"{STEP}{text}\n")
    sys.stderr.flush()


def measure(req: dict[str, Any]) -> dict[str, Any]:
    import aider
    from aider import repomap as aider_repomap

    root = req["root"]
    rel_files = list(req["files"])
    abs_files = [os.path.join(root, rel) for rel in rel_files]
    tasks = list(req["tasks"])
    map_tokens = int(req["map_tokens"])
    model, io = Model(), Io()

    def fresh() -> Any:
        return aider_repomap.RepoMap(map_tokens=map_tokens, root=root, main_model=model, io=io)

    cold_s: list[float] = []
    cold_chars, repo_map = 0, None
    runs = int(req["cold_runs"])
    for n in range(runs):
        for cache in glob.glob(os.path.join(glob.escape(root), ".aider.tags.cache.v*")):
            shutil.rmtree(cache)
        step(f"cold map {n + 1}/{runs} started")
        started = time.perf_counter()
        repo_map = fresh()
        cold_chars = len(request_map(repo_map, tasks[0], abs_files, rel_files))
        cold_s.append(time.perf_counter() - started)
        step(f"cold map {n + 1}/{runs} took {cold_s[-1]:.1f} s")
    warm_s: list[float] = []
    warm_chars: list[int] = []
    for n, text in enumerate(tasks):
        started = time.perf_counter()
        warm_chars.append(len(request_map(repo_map, text, abs_files, rel_files)))
        warm_s.append(time.perf_counter() - started)
        step(f"warm map {n + 1}/{len(tasks)} took {warm_s[-1]:.2f} s")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    scale = 1 if sys.platform == "darwin" else 1024
    return {
        "aider_version": str(getattr(aider, "__version__", "unknown")),
        "map_tokens": map_tokens,
        "cold_s": cold_s,
        "warm_s": warm_s,
        "cold_map_chars": cold_chars,
        "warm_map_chars": warm_chars,
        "peak_rss_mb": round(rss * scale / 1e6, 1),
        "tsl_pack": bool(getattr(aider_repomap, "USING_TSL_PACK", False)),
    }


def main() -> int:
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything Aider or its libraries print lands on stderr
    sys.stdout = sys.stderr
    _offline()
    try:
        result = measure(json.loads(sys.stdin.read()))
    except Exception:  # noqa: BLE001 - whatever Aider raised: its traceback on stderr, exit 1
        traceback.print_exc()
        return 1
    out.write(json.dumps(result) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
