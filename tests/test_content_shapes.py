"""Content shapes that are costly to parse, scan or tokenise: one 10 MB line of minified
code, a 1 MB base64 blob inside JSON, a million short lines. Indexing each stays within a
small multiple of indexing ordinary code of the same size, measured in the same test (linear
cost), and each file is indexed or omitted with its reason."""

from __future__ import annotations

import base64
import random
import time
from pathlib import Path

import pytest

from conftest import write_tree
from excerpt.index.build import index_repository

ROOT = Path(__file__).resolve().parents[1]
ORDINARY = (ROOT / "src/excerpt/rank/signals.py").read_text(encoding="utf-8")


def _ordinary(size: int) -> str:
    return (ORDINARY * (size // len(ORDINARY) + 1))[:size]


def _seconds(root: Path, cache: Path) -> tuple[float, dict[str, str], int]:
    started = time.perf_counter()
    report = index_repository(root, cache_dir=cache, jobs=1)
    return time.perf_counter() - started, dict(report.omitted_paths), report.files_indexed


def _shapes() -> dict[str, tuple[str, str | None]]:
    """name -> (file name, the omission reason expected, or None: indexed)."""
    return {
        "minified-10MB-line": ("app.min.js", "too_large"),
        "base64-1MB-in-json": ("fixture.json", None),
        "million-short-lines": ("counts.txt", None),
        "minified-1MB-line": ("vendor.min.js", None),
    }


def _content(name: str) -> str:
    rng = random.Random(17)
    if name == "minified-10MB-line":
        return "var a=1;" * 1_250_000
    if name == "base64-1MB-in-json":
        return '{"data": "' + base64.b64encode(rng.randbytes(750_000)).decode() + '"}\n'
    if name == "million-short-lines":
        return "x\n" * 1_000_000
    return "".join(f"var v{i}=function(e){{return e*{i}}};" for i in range(30_000))


@pytest.mark.reliability("B2.17", cases=1)
@pytest.mark.parametrize("name", sorted(_shapes()))
def test_a_costly_shape_is_indexed_in_time_linear_in_its_size(tmp_path: Path, name: str) -> None:
    file_name, expected = _shapes()[name]
    text = _content(name)
    hostile = write_tree(tmp_path / "hostile", {file_name: text})
    # the baseline: a quarter of the size in ordinary code, times four
    baseline_size = min(len(text), 2_000_000) // 4
    ordinary = write_tree(tmp_path / "ordinary", {"module.py": _ordinary(baseline_size)})
    base, _, indexed = _seconds(ordinary, tmp_path / "cache-ordinary")
    assert indexed == 1
    took, omitted, indexed = _seconds(hostile, tmp_path / "cache-hostile")
    if expected is None:
        assert indexed == 1 and omitted == {}
    else:
        assert omitted == {file_name: expected} and indexed == 0
    assert took <= 10 * (4 * base) + 0.2, (name, took, base)
