"""A tree of 100,000 files (100 directories of 1,000): the cold index completes, every file
is indexed or omitted with a reason (none dropped silently), and the indexing process stays
under 1 GiB of resident memory. Run with ``pytest -m slow``."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.mark.reliability("B1.9", cases=1)
def test_a_hundred_thousand_files_are_indexed_with_none_dropped_in_bounded_memory(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    for d in range(100):
        directory = root / f"pkg{d:03d}"
        directory.mkdir(parents=True)
        for f in range(1000):
            body = f"def f{d}_{f}(x):\n    return x + {f}\n" if f % 10 else f"data {f}\n"
            (directory / (f"m{f:04d}.py" if f % 10 else f"n{f:04d}.txt")).write_text(body)
    (root / "pkg000" / "huge.bin").write_bytes(b"\0" * 64)  # one omission (binary)
    env = {**os.environ, "EXCERPT_CACHE_DIR": str(tmp_path / "cache")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run(
        [sys.executable, "-m", "excerpt", "index", "--repo", str(root), "--json"],
        env=env, capture_output=True, text=True, timeout=1700, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    omitted = sum(report["omitted"].values())
    assert report["files_discovered"] == 100_001
    assert report["files_indexed"] + omitted == report["files_discovered"]
    assert not report["discovery_truncated"]
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert max(peak_kib, before) < 1 << 20, peak_kib  # KiB on Linux: under 1 GiB
