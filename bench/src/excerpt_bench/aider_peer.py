"""Aider's repo map as the peer of ``excerpt bench perf``, run with another environment's Python.

Aider is not a dependency of excerpt: the user names the interpreter of an environment that has
``aider-chat`` installed (``--aider-python``), and the shipped driver
``excerpt_bench/data/aider_repomap.py`` runs in it as a subprocess: stdin closed but for one
JSON request, its own process group, a scratch HOME and TMPDIR, an environment that keeps
litellm and model hubs offline (the driver also refuses every socket), under a timeout. Its
stdout is one JSON result; its stderr is kept and its last line reported when it fails.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from excerpt.errors import EnvironmentFault, UsageError
from excerpt.tooling import nearest_rank

__all__ = [
    "MAP_TOKENS",
    "TIMEOUT_S",
    "AiderFigures",
    "check_python",
    "run_repo_map",
    "tree_files",
]

# RepoMap's and the coder's default; Aider's CLI asks the model instead: max_input_tokens / 8,
# clamped to 1024..4096 (1024 when the model's window is unknown).
MAP_TOKENS = 1024
TIMEOUT_S = 1800.0
_PROBE_TIMEOUT_S = 60.0
_CACHE_PREFIX = ".aider.tags.cache.v"
_STEP = "excerpt-aider-step: "  # the driver's progress lines on stderr
_PROBE = """\
import importlib.util, json, sys
try:
    import aider
    found = importlib.util.find_spec("aider.repomap") is not None
except ImportError:
    found = False
if not found:
    sys.exit(3)
sys.stdout.write(json.dumps({"version": str(getattr(aider, "__version__", "unknown"))}))
"""


@dataclass(frozen=True, slots=True)
class AiderFigures:
    version: str
    map_tokens: int
    cold_s: float  # median of the cold runs
    warm_p50_s: float
    warm_p95_s: float
    peak_rss_mb: float
    map_chars: tuple[int, ...]  # the size of each warm map (none empty when Aider worked)


def _env(scratch: Path) -> dict[str, str]:
    home, tmp = scratch / "home", scratch / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "TIKTOKEN_CACHE_DIR": str(tmp),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }


def _run(
    argv: Sequence[str], stdin: bytes, scratch: Path, timeout: float
) -> tuple[int | None, bytes, str]:
    """``(exit code or None on a timeout, stdout, stderr)``; a timeout kills the process group."""
    try:
        proc = subprocess.Popen(  # the named interpreter, no shell
            list(argv),
            cwd=scratch,
            env=_env(scratch),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return -1, b"", f"cannot start {argv[0]}: {exc.strerror or exc}"
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
        out, err = proc.communicate()
        return None, out, err.decode("utf-8", "replace")
    return proc.returncode, out, err.decode("utf-8", "replace")


def _last_step(text: str) -> str:
    steps = [line for line in text.splitlines() if line.startswith(_STEP)]
    return steps[-1][len(_STEP) :] if steps else "before its first cold map"


def _last_line(text: str) -> str:
    # splitlines also splits at the carriage returns of a progress bar
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith(_STEP)]
    return lines[-1][:300] if lines else "nothing on stderr"


def check_python(python: Path) -> str:
    """Aider's version in the environment of ``python``.

    Raises:
        UsageError: ``python`` is not an executable file, does not run as Python, or has no
            ``aider`` package with a ``repomap`` module.
    """
    python = Path(os.path.abspath(python))  # not resolved: a venv's python is a symlink
    if not python.is_file() or not os.access(python, os.X_OK):
        raise UsageError(f"--aider-python must be an executable Python interpreter: {python}")
    with tempfile.TemporaryDirectory(prefix="excerpt-aider-") as tmp:
        code, out, err = _run([str(python), "-c", _PROBE], b"", Path(tmp), _PROBE_TIMEOUT_S)
    if code == 3:
        raise UsageError(
            f"--aider-python {python} has no aider: install aider-chat into that environment"
            f" ({python} -m pip install aider-chat)"
        )
    try:
        version = json.loads(out)["version"] if code == 0 else None
    except (ValueError, TypeError, KeyError):
        version = None
    if not isinstance(version, str):
        why = "timed out" if code is None else _last_line(err)
        raise UsageError(f"--aider-python {python} did not run as a Python interpreter ({why})")
    return version


def tree_files(root: Path) -> list[str]:
    """Every file of the tree, relative and sorted, as ``git ls-files`` would list a tree whose
    every file is tracked (no ``.git``, no tags cache of Aider's)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git" and not d.startswith(_CACHE_PREFIX)]
        rel = os.path.relpath(dirpath, root)
        out.extend(name if rel == "." else f"{rel}/{name}" for name in filenames)
    return sorted(out)


def run_repo_map(
    python: Path,
    root: Path,
    tasks: Sequence[str],
    *,
    runs: int,
    map_tokens: int = MAP_TOKENS,
    timeout: float = TIMEOUT_S,
) -> AiderFigures:
    """Aider's repo map on ``root``: ``runs`` cold maps, then one warm map per task.

    Writes only Aider's tags cache inside ``root`` (a temporary copy) and deletes it between
    cold runs.

    Raises:
        EnvironmentFault: the driver crashed, timed out or answered something else than its
            JSON result.
    """
    python = Path(os.path.abspath(python))
    request = {
        "root": str(root),
        "files": tree_files(root),
        "tasks": list(tasks),
        "map_tokens": map_tokens,
        "cold_runs": runs,
    }
    with (
        resources.as_file(resources.files("excerpt_bench") / "data" / "aider_repomap.py") as driver,
        tempfile.TemporaryDirectory(prefix="excerpt-aider-") as tmp,
    ):
        code, out, err = _run(
            [str(python), str(driver)], json.dumps(request).encode(), Path(tmp), timeout
        )
    if code is None:
        raise EnvironmentFault(
            f"Aider's repo map did not finish within {timeout:g} s (last step:"
            f" {_last_step(err)}; {runs} cold and {len(tasks)} warm maps asked); give a larger"
            " --aider-timeout"
        )
    if code != 0:
        how = f"killed by signal {-code}" if code < 0 else f"exit {code}"
        raise EnvironmentFault(
            f"Aider's repo map failed ({how}; last step: {_last_step(err)}): {_last_line(err)}"
        )
    try:
        doc: dict[str, Any] = json.loads(out)
        cold = [float(s) for s in doc["cold_s"]]
        warm = [float(s) for s in doc["warm_s"]]
        figures = AiderFigures(
            version=str(doc["aider_version"]),
            map_tokens=int(doc["map_tokens"]),
            cold_s=statistics.median(cold),
            warm_p50_s=statistics.median(warm),
            warm_p95_s=nearest_rank(warm, 0.95),
            peak_rss_mb=float(doc["peak_rss_mb"]),
            map_chars=tuple(int(n) for n in doc["warm_map_chars"]),
        )
    except (ValueError, TypeError, KeyError, statistics.StatisticsError):
        raise EnvironmentFault(
            "Aider's repo map driver answered something else than its JSON result"
        ) from None
    return figures
