"""How the pack tests get packs and plans, and check them: through the library (the delivered
pack, or the selection beneath it), through the CLI, and through the standalone
``scripts/verify_pack.py``."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import excerpt.deliver as deliver
from excerpt.cli import main
from excerpt.pack import PackRequest
from excerpt.pack.build import select

VERIFY = Path(__file__).resolve().parents[1] / "scripts" / "verify_pack.py"
Doc = dict[str, Any]


def line_of(text: str, needle: str, after: int = 0) -> int:
    """The 1-based number of the first line after line ``after`` that contains ``needle``."""
    for number, line in enumerate(text.split("\n"), start=1):
        if number > after and needle in line:
            return number
    raise AssertionError(f"{needle!r} not in fixture text")


def file_lines(repo: Path, path: str) -> list[bytes]:
    """SPEC §3.1 lines: each ends at ``\\n`` and keeps it; a lone ``\\r`` ends nothing."""
    parts = (repo / path).read_bytes().split(b"\n")
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def lines_bytes(repo: Path, path: str, start: int, end: int) -> int:
    return sum(len(line) for line in file_lines(repo, path)[start - 1 : end])


def delivered_of(repo: Path, task: str, cache: Path, budget: int = 32_000, **kw: Any) -> Doc:
    """The pack a surface delivers: its whole rendering fitted to the budget."""
    request = PackRequest(repo=repo, task=task, budget=budget, cache_dir=cache, **kw)
    return dict(deliver.build_pack(request).pack.to_dict())


def pack_of(repo: Path, task: str, cache: Path, budget: int = 32_000, **kw: Any) -> Doc:
    """The selection beneath the rendering: excerpt text within the budget, handles
    remembered as a served pack's are."""
    request = PackRequest(repo=repo, task=task, budget=budget, cache_dir=cache, **kw)
    prep = deliver.prepare(request)
    pack = select(prep, task, budget)
    deliver.remember_pack(prep, pack)
    return dict(pack.to_dict())


def plan_of(repo: Path, task: str, cache: Path, **kw: Any) -> Doc:
    return dict(
        deliver.build_plan(PackRequest(repo=repo, task=task, cache_dir=cache, **kw)).plan.to_dict()
    )


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def recomputed_pack_id(pack: Doc) -> str:
    body = {k: v for k, v in pack.items() if k != "pack_id"}
    return "sha256:" + hashlib.sha256(canonical(body)).hexdigest()


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_verify(pack: Doc | str, repo: Path, where: Path) -> subprocess.CompletedProcess[str]:
    """``scripts/verify_pack.py`` on ``pack`` (written to ``where``) against ``repo``."""
    where.mkdir(parents=True, exist_ok=True)
    target = where / "pack.json"
    text = pack if isinstance(pack, str) else json.dumps(pack, ensure_ascii=False)
    target.write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(VERIFY), str(target), "--repo", str(repo)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def signals(entry: Doc) -> list[str]:
    return [r["signal"] for r in entry["reasons"]]


def first_index(items: list[Doc], path: str) -> int:
    return next(i for i, item in enumerate(items) if item["path"] == path)
