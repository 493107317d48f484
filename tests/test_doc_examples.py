"""The shell examples of the documentation run, so they cannot drift from the code.

Every fenced block whose info string is ``console`` in ``README.md`` or ``docs/*.md`` is a
transcript: a line ``$ COMMAND`` runs (``bash -c``, ``excerpt`` being this checkout's), and the
lines under it, up to the next ``$``, are lines its output must hold, in order (``…`` stands
for any lines between). ``# exit N`` under a command says the exit code it must end with
(default 0). The commands run in the example repository (``trees.DOCUMENTED_SHOP``, a small
shop, committed to git), with a HOME and a cache of their own: what the documentation shows is
what a newcomer gets there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import git_commit_all, write_tree
from trees import DOCUMENTED_SHOP

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Step:
    command: str
    expected: tuple[str, ...]
    exit: int


@dataclass(frozen=True)
class Transcript:
    page: str
    line: int
    steps: tuple[Step, ...]


def transcripts() -> list[Transcript]:
    """Every ``console`` block of the documentation, parsed."""
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        at = 0
        while at < len(lines):
            if lines[at].strip() != "```console":
                at += 1
                continue
            start, at = at + 1, at + 1
            block = []
            while at < len(lines) and lines[at].strip() != "```":
                block.append(lines[at])
                at += 1
            found.append(Transcript(page.name, start, tuple(_steps(block))))
    return found


def _steps(block: list[str]) -> list[Step]:
    steps: list[Step] = []
    expected: list[str] = []
    command, code = "", 0
    for line in [*block, "$ "]:
        if line.startswith("$ "):
            if command:
                steps.append(Step(command, tuple(expected), code))
            command, expected, code = line[2:].strip(), [], 0
        elif re.fullmatch(r"# exit \d+", line.strip()):
            code = int(line.split()[-1])
        elif line.strip():
            expected.append(line.rstrip())
    return steps


def _holds(output: str, expected: tuple[str, ...]) -> str | None:
    """None when ``output`` holds the expected lines in order (a line ``…``: any lines
    between; ``…`` inside a line: any text there); else the first line it misses."""
    lines = output.splitlines()
    at = 0
    for want in expected:
        if want.strip() == "…":
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in want.strip().split("…")))
        while at < len(lines) and pattern.search(lines[at]) is None:
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("docs") / "shop", DOCUMENTED_SHOP)
    git_commit_all(root)
    return root


ALL = transcripts()


def test_the_documentation_has_runnable_examples() -> None:
    pages = {t.page for t in ALL}
    assert len(ALL) >= 5 and {"pack.md", "indexing.md"} <= pages, pages


@pytest.mark.parametrize("transcript", ALL, ids=[f"{t.page}:{t.line}" for t in ALL])
def test_a_documented_example_gives_what_the_page_shows(
    transcript: Transcript, shop: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "shop"
    shutil.copytree(shop, repo, symlinks=True)
    bin_dir = Path(sys.executable).parent
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path / "home"),
        "EXCERPT_CACHE_DIR": str(tmp_path / "cache"),
        "LANG": "C.UTF-8",
    }
    for step in transcript.steps:
        proc = subprocess.run(
            ["bash", "-c", step.command], cwd=repo, env=env, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
        where = f"{transcript.page}:{transcript.line}: $ {step.command}"
        assert proc.returncode == step.exit, f"{where}\n{proc.stderr[-2000:]}"
        missing = _holds(proc.stdout + proc.stderr, step.expected)
        assert missing is None, f"{where}\nmissing: {missing!r}\n{proc.stdout[-3000:]}"
