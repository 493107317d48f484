"""Recordings of localization runs: per task, everything ranking and selection read.

``bench localize --record DIR`` keeps, for each task, the index's answers (``MemoryView``),
the bytes of every file a pack or the BM25 baseline read, which gold files the tree held and
the index report; ``--replay DIR`` ranks and selects again from them with no git directory,
tree export, index or parse. A file's bytes are stored once per content hash, however many
tasks read it. Layout::

    DIR/recording.json            {"format": FORMAT, "parsed_languages": [...]}
    DIR/tasks/<task>.json.gz      one task: view, reads, gold files present, report
    DIR/blobs/<sha256>.gz         file contents

Each file is written whole or not at all (a killed run leaves none half-written), and not
synced to disk: a recording lost to a power cut is only made again.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from excerpt.errors import UsageError
from excerpt.tooling import (
    PARSED_LANGUAGES,
    FileContent,
    FileSource,
    IndexReport,
    MemoryView,
    Omission,
    ReplayMiss,
    replace_atomic,
    sha256_hex,
    view_from_dict,
    view_to_dict,
)

__all__ = [
    "FORMAT",
    "RecordingSource",
    "ReplaySource",
    "TaskRecording",
    "read_task_recording",
    "start_recording",
    "write_task_recording",
]

FORMAT = "excerpt.bench-recording/v1"


@dataclass(slots=True)
class RecordingSource:
    """A ``FileSource`` that keeps what it read."""

    inner: FileSource
    seen: dict[str, FileContent | Omission] = field(default_factory=dict)

    def read(self, path: str) -> FileContent | Omission:
        got = self.inner.read(path)
        self.seen[path] = got
        return got


@dataclass(frozen=True, slots=True)
class ReplaySource:
    """A ``FileSource`` answering from a recording; a path never read is a ``ReplayMiss``,
    or, given ``unrecorded``, an unreadable file whose path is added to it."""

    files: Mapping[str, FileContent | Omission]
    unrecorded: set[str] | None = None

    def read(self, path: str) -> FileContent | Omission:
        if path not in self.files:
            if self.unrecorded is None:
                raise ReplayMiss(f"no recorded read of {path}")
            self.unrecorded.add(path)
            return Omission(path=path, reason="unreadable")
        return self.files[path]


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRecording:
    instance_id: str
    task_sha256: str
    root: str
    view: MemoryView
    files: Mapping[str, FileContent | Omission]
    raw: Mapping[str, bytes | None]  # whole-file reads of the BM25 baseline (None: unreadable)
    gold_present: tuple[str, ...]
    report: IndexReport


def start_recording(directory: Path) -> None:
    """Make ``directory`` a recording (an existing one of the same format is added to).

    Raises:
        UsageError: it holds something else.
    """
    marker = directory / "recording.json"
    if marker.exists():
        _check_format(directory)
        return
    if directory.exists() and any(directory.iterdir()):
        raise UsageError(f"--record: {directory} exists and is not a recording")
    (directory / "tasks").mkdir(parents=True, exist_ok=True)
    (directory / "blobs").mkdir(exist_ok=True)
    doc = {"format": FORMAT, "parsed_languages": list(PARSED_LANGUAGES)}
    replace_atomic(marker, json.dumps(doc).encode("utf-8"), sync=False)


def write_task_recording(directory: Path, rec: TaskRecording) -> None:
    """Store one task's recording (its blobs first, so a task file never names a missing one)."""
    files = {path: _file_doc(directory, got) for path, got in sorted(rec.files.items())}
    raw = {
        path: None if data is None else _blob(directory, data)
        for path, data in sorted(rec.raw.items())
    }
    doc = {
        "instance_id": rec.instance_id,
        "task_sha256": rec.task_sha256,
        "root": rec.root,
        "view": view_to_dict(rec.view),
        "files": files,
        "raw": raw,
        "gold_present": list(rec.gold_present),
        "report": _report_doc(rec.report),
    }
    data = gzip.compress(json.dumps(doc, sort_keys=True).encode("utf-8"), mtime=0)
    replace_atomic(_task_path(directory, rec.instance_id), data, sync=False)


def read_task_recording(directory: Path, instance_id: str) -> TaskRecording:
    """One task's recording.

    Raises:
        UsageError: the directory is not a recording, or holds no (intact) one of this task.
    """
    _check_format(directory)
    path = _task_path(directory, instance_id)
    try:
        doc = json.loads(gzip.decompress(path.read_bytes()))
        if doc["instance_id"] != instance_id:
            raise ValueError("another task")
        files = {p: _file_of(directory, p, d) for p, d in doc["files"].items()}
        raw = {p: None if d is None else _read_blob(directory, d) for p, d in doc["raw"].items()}
        return TaskRecording(
            instance_id=instance_id,
            task_sha256=str(doc["task_sha256"]),
            root=str(doc["root"]),
            view=view_from_dict(doc["view"]),
            files=files,
            raw=raw,
            gold_present=tuple(doc["gold_present"]),
            report=IndexReport(
                **{
                    **doc["report"],
                    "omitted_paths": tuple(map(tuple, doc["report"]["omitted_paths"])),
                }
            ),
        )
    except FileNotFoundError:
        raise UsageError(f"--replay: {directory} has no recording of {instance_id}") from None
    except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
        raise UsageError(
            f"--replay: the recording of {instance_id} cannot be read ({type(exc).__name__})"
        ) from None


def _check_format(directory: Path) -> None:
    try:
        doc = json.loads((directory / "recording.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise UsageError(f"{directory} is not a recording (no recording.json)") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UsageError(f"{directory} is not a recording of format {FORMAT}")
    # ranking reads a file's language through the registry (which are code, which are data):
    # answers recorded under another set of parsed languages would replay as other choices
    recorded = doc.get("parsed_languages")
    if recorded != list(PARSED_LANGUAGES):
        if not isinstance(recorded, list):
            which = "an older build that does not say which languages it parsed"
        else:
            added = sorted(set(PARSED_LANGUAGES) - set(recorded))
            gone = sorted(set(recorded) - set(PARSED_LANGUAGES))
            change = [f"this one adds {', '.join(added)}"] if added else []
            change += [f"drops {', '.join(gone)}"] if gone else []
            which = f"a build that parses other languages ({'; '.join(change) or 'another order'})"
        raise UsageError(f"{directory} was recorded by {which}: record it again with this build")


def _task_path(directory: Path, instance_id: str) -> Path:
    safe = re.sub(r"[^\w.-]", "_", instance_id)[:80]
    return directory / "tasks" / f"{safe}-{sha256_hex(instance_id.encode('utf-8'))[:12]}.json.gz"


def _blob(directory: Path, data: bytes) -> str:
    digest = sha256_hex(data)
    path = directory / "blobs" / f"{digest}.gz"
    if not path.exists():
        replace_atomic(path, gzip.compress(data, mtime=0), sync=False)
    return digest


def _read_blob(directory: Path, digest: str) -> bytes:
    data = gzip.decompress((directory / "blobs" / f"{digest}.gz").read_bytes())
    if sha256_hex(data) != digest:
        raise ValueError(f"blob {digest} is corrupt")
    return data


def _file_doc(directory: Path, got: FileContent | Omission) -> dict[str, Any]:
    if isinstance(got, Omission):
        return {"omission": got.reason, "size": got.size}
    return {
        "blob": _blob(directory, got.data),
        "size": got.size,
        "mtime_ns": got.mtime_ns,
        "binary": got.binary,
        "encoding": got.encoding,
    }


def _file_of(directory: Path, path: str, doc: Mapping[str, Any]) -> FileContent | Omission:
    if "omission" in doc:
        return Omission(path=path, reason=str(doc["omission"]), size=doc["size"])
    data = _read_blob(directory, str(doc["blob"]))
    return FileContent(
        path=path, data=data, size=int(doc["size"]), mtime_ns=int(doc["mtime_ns"]),
        sha256=str(doc["blob"]), binary=bool(doc["binary"]), encoding=str(doc["encoding"]),
    )  # fmt: skip


def _report_doc(report: IndexReport) -> dict[str, Any]:
    doc = dataclasses.asdict(report)
    doc.pop("cache_dir", None)
    doc["omitted_paths"] = [list(p) for p in report.omitted_paths]
    return doc
