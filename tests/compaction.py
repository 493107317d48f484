"""What the compaction tests share: a store on a memory filesystem, the pattern of a marker,
and the round trip every compacted view must survive."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from excerpt.compact import Compaction, Store, compact, expand

# a marker: groups 1 and 2 the lines of a line marker (its indentation and newline taken with
# it), 3 the path of a JSON marker (what is around it is the original's and stays)
MARK = re.compile(
    rb"(?m)(?:^[ \t]*(?=\[\xe2\x80\xa6 [^\n]*? --lines \d))?"
    rb"\[\xe2\x80\xa6 [^\n]*? \xc2\xb7 excerpt expand [0-9a-f]{16}"
    rb" --(?:lines (\d+)-(\d+)|path '((?:[^']|'\\'')*)')\](?(1)\n?)"
)


@contextmanager
def memory_store() -> Iterator[Store]:
    """A store on a memory filesystem when there is one: the same code, without a disk's
    fsync wait."""
    base = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(dir=base) as root:
        yield Store(root=Path(root))


def marker_path(m: re.Match[bytes]) -> str:
    """The JSON path a marker's expand call names, unquoted."""
    return m.group(3).decode().replace("'\\''", "'")


def round_trip(data: bytes, store: Store, kind: str) -> Compaction:
    """Compact, expand whole, and rebuild the original from the view, each marker (one line)
    replaced by what its own expand call returns."""
    done = compact(data, store=store, kind=kind)  # type: ignore[arg-type]
    assert expand(done.id, store=store).data == data
    view = done.text.encode("utf-8", "surrogateescape")
    if done.unchanged:
        assert view == data
        return done
    marks = list(MARK.finditer(view))
    assert len(marks) == len(done.elisions)
    rebuilt, at = [], 0
    lines = data.split(b"\n")
    for m, e in zip(marks, done.elisions, strict=True):
        assert b"\n" not in m.group().rstrip(b"\n")
        if m.group(1):
            a, b = int(m.group(1)), int(m.group(2))
            part = expand(done.id, store=store, lines=f"{a}-{b}").data
            assert part == b"".join(x + b"\n" for x in lines[a - 1 : b])[: len(part)]
        else:
            part = expand(done.id, store=store, path=marker_path(m)).data
        assert len(part) == e["bytes"]
        rebuilt += [view[at : m.start()], part]
        at = m.end()
    rebuilt.append(view[at:])
    assert b"".join(rebuilt) == data
    assert done.compacted_bytes <= 0.9 * done.original_bytes
    return done
