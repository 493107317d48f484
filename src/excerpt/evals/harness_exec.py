"""Running a shipped fixture's expected commands: allowlist, environment, toolchains, timeout.

Only commands that match ``ALLOWED_FORMS`` (ordinary install/test/run forms) are turned into an
argv; they run without a shell, with stdin closed, a minimal environment, install lifecycle
scripts disabled, in a temporary copy of the fixture, each under a timeout. Nothing here reads
an inferred command: the suite hands in the corpus's expected commands only.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "ALLOWED_FORMS",
    "RUN_ERRORS",
    "TIMEOUT_S",
    "CommandRun",
    "allowlisted",
    "command_env",
    "hardened",
    "make_venv",
    "missing_tools",
    "run_argv",
]

# What starting or waiting for a process may raise (for callers that do not import subprocess).
RUN_ERRORS: tuple[type[Exception], ...] = (OSError, subprocess.SubprocessError)

TIMEOUT_S = 60.0
_TAIL_LINES = 20
_NAME = r"[A-Za-z0-9][A-Za-z0-9:._-]*"
_FILE = r"(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_./-]*"
_EXTRAS = r"\.\[[A-Za-z0-9_-]+(?:,[A-Za-z0-9_-]+)*\]"
# Matched against the argv joined by single spaces, after shlex has removed the quoting.
ALLOWED_FORMS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(form)
    for form in (
        r"npm (?:ci|install)",
        rf"npm (?:test|run {_NAME})",
        r"pnpm install(?: --frozen-lockfile)?",
        rf"pnpm (?:test|run {_NAME})",
        r"yarn install(?: --frozen-lockfile| --immutable)?",
        rf"yarn (?:test|run {_NAME})",
        r"bun install(?: --frozen-lockfile)?",
        rf"bun run {_NAME}",
        rf"python -m pip install -e (?:\.|{_EXTRAS})",
        rf"python -m pip install -r {_FILE}",
        r"python -m pytest",
        r"uv sync|poetry install|pdm install",
        r"(?:uv|poetry|pdm) run (?:pytest|ruff check \.|mypy)",
        r"ruff check \.|mypy",
        r"cargo (?:fetch|build|test|clippy)(?: --workspace)?",
        r"go (?:mod download|build \./\.\.\.|test \./\.\.\.|vet \./\.\.\.)",
    )
)
# Refused before parsing: anything a shell would treat specially, even though none is used.
_SHELL_SYNTAX = re.compile(r"[;&|<>`$(){}*?!#~\\\n\r]")


def allowlisted(command: str) -> tuple[str, ...] | None:
    """The argv of ``command`` when it is one of the allowlisted forms, else None (refused)."""
    if _SHELL_SYNTAX.search(command):
        return None
    try:
        argv = tuple(shlex.split(command))
    except ValueError:  # unbalanced quotes
        return None
    if not argv or any(not arg or any(ch.isspace() or ch in "'\"" for ch in arg) for arg in argv):
        return None
    joined = " ".join(argv)
    return argv if any(form.fullmatch(joined) for form in ALLOWED_FORMS) else None


def hardened(argv: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``argv`` with install lifecycle scripts disabled and offline builds made possible, and a
    note for each change."""
    out = tuple(argv)
    if len(out) >= 2 and out[0] in ("npm", "pnpm", "bun", "yarn") and out[1] in ("ci", "install"):
        if out[0] == "yarn" and "--immutable" in out:  # yarn 2+ has no --ignore-scripts
            return (*out, "--mode=skip-build"), ("--mode=skip-build added (yarn berry)",)
        return (*out, "--ignore-scripts"), ("--ignore-scripts added",)
    if out[:5] == ("python", "-m", "pip", "install", "-e"):
        # The build backend comes from the running environment: no index to fetch it from.
        return (*out, "--no-build-isolation"), ("--no-build-isolation added (offline build)",)
    return out, ()


def command_env(scratch: Path, venv_bin: Path | None = None) -> dict[str, str]:
    """The whole environment a command sees: PATH (the venv first), a scratch HOME, offline and
    script-free package managers; nothing else from the caller's environment."""
    path = os.environ.get("PATH", os.defpath)
    if venv_bin is not None:
        path = f"{venv_bin}{os.pathsep}{path}"
    env = {
        "PATH": path,
        "HOME": str(scratch / "home"),
        "TMPDIR": str(scratch / "tmp"),
        "LANG": "C.UTF-8",
        "npm_config_ignore_scripts": "true",
        "npm_config_audit": "false",
        "npm_config_fund": "false",
        "npm_config_update_notifier": "false",
        "npm_config_offline": "true",
        "YARN_ENABLE_SCRIPTS": "false",
        "CARGO_NET_OFFLINE": "true",
        "CARGO_TARGET_DIR": str(scratch / "target"),
        "PIP_NO_INPUT": "1",
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    # rustup's cargo proxy finds its toolchains under RUSTUP_HOME, by default in the real home.
    rustup = os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup")
    if Path(rustup).is_dir():
        env["RUSTUP_HOME"] = rustup
    if "RUSTUP_TOOLCHAIN" in os.environ:
        env["RUSTUP_TOOLCHAIN"] = os.environ["RUSTUP_TOOLCHAIN"]
    for name in ("home", "tmp"):
        (scratch / name).mkdir(parents=True, exist_ok=True)
    return env


def _python_missing(argv: Sequence[str]) -> list[str]:
    """Why the venv cannot run ``python -m MODULE …`` offline from the running environment."""
    module = argv[2] if len(argv) > 2 and argv[1] == "-m" else ""
    needs = ["venv", module] if module else ["venv"]
    missing = [
        f"python: {name} not importable" for name in needs if importlib.util.find_spec(name) is None
    ]
    if tuple(argv[2:5]) == ("pip", "install", "-e"):
        missing += _editable_missing()
    return missing


def _editable_missing() -> list[str]:
    """Why an editable install cannot be built here without fetching a build backend."""
    if importlib.util.find_spec("wheel") is not None:
        return []
    try:
        version = metadata.version("setuptools")
        major, minor = (int(p) for p in version.split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return ["python: setuptools not installed, an editable install cannot be built offline"]
    if (major, minor) >= (70, 1):  # bdist_wheel is bundled from 70.1
        return []
    return [
        f"python: setuptools {version} without wheel cannot build an editable install offline "
        "(needs setuptools>=70.1 or wheel)"
    ]


def missing_tools(argvs: Sequence[Sequence[str]]) -> list[str]:
    """Reasons, one per missing toolchain, in first-use order (empty when all are present)."""
    reasons: list[str] = []
    for argv in argvs:
        if argv[0] == "python":
            found = _python_missing(argv)
        else:
            needed = [argv[0], *(["node"] if argv[0] in ("npm", "pnpm", "yarn") else [])]
            needed += ["cargo-clippy"] if tuple(argv[:2]) == ("cargo", "clippy") else []
            found = [f"{tool} not on PATH" for tool in needed if shutil.which(tool) is None]
            if argv[0] == "cargo" and not found:
                found = _cargo_missing()
        reasons += [r for r in found if r not in reasons]
    return reasons


def _cargo_missing() -> list[str]:
    """Why ``cargo`` on PATH cannot run: a rustup proxy with no toolchain it can find (where
    ``RUSTUP_HOME`` is not set and the home has no ``.rustup``, as in a fresh HOME)."""
    with tempfile.TemporaryDirectory(prefix="excerpt-cargo-") as scratch:
        env = command_env(Path(scratch))
        for name in ("home", "tmp"):
            (Path(scratch) / name).mkdir(exist_ok=True)
        try:
            done = subprocess.run(
                ["cargo", "--version"], stdin=subprocess.DEVNULL, capture_output=True,
                env=env, timeout=TIMEOUT_S, check=False,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            return ["cargo: could not be started"]
    if done.returncode == 0:
        return []
    return ["cargo: no usable toolchain (a rustup proxy with no default toolchain?)"]


def make_venv(scratch: Path, timeout: float = TIMEOUT_S) -> Path:
    """A venv (without pip) that also sees the running interpreter's site-packages, so pip,
    setuptools and pytest come from here and nothing is downloaded. Returns its bin directory.

    Raises:
        OSError: the venv could not be created.
    """
    venv = scratch / "venv"
    done = subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise OSError(f"python -m venv exited {done.returncode}")
    where = {"base": str(venv), "platbase": str(venv)}
    own = Path(sysconfig.get_path("purelib", vars=where))
    parents = dict.fromkeys(
        [sysconfig.get_path("purelib"), sysconfig.get_path("platlib"), *site.getsitepackages()]
    )
    own.mkdir(parents=True, exist_ok=True)
    (own / "_excerpt_parent.pth").write_text("\n".join(parents) + "\n", encoding="utf-8")
    return venv / ("Scripts" if os.name == "nt" else "bin")


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandRun:
    """One executed (or refused) command: exit code None when it never finished."""

    command: str
    directory: str
    argv: tuple[str, ...] = ()
    exit_code: int | None = None
    seconds: float = 0.0
    reason: str = ""
    notes: tuple[str, ...] = ()
    tail: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "command": self.command,
            "directory": self.directory,
            "argv": list(self.argv),
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 2),
        }
        if self.reason:
            doc["reason"] = self.reason
        if self.notes:
            doc["notes"] = list(self.notes)
        if not self.ok and self.tail:
            doc["output_tail"] = list(self.tail)
        return doc


def run_argv(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float = TIMEOUT_S
) -> tuple[int | None, float, str, tuple[str, ...]]:
    """Run ``argv`` (never through a shell) with stdin closed; ``(exit code, seconds, reason,
    last output lines)``. A timeout kills the whole process group and leaves exit code None."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(  # argv from the allowlist, no shell
            list(argv),
            cwd=cwd,
            env=dict(env),
            shell=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a timeout reaches grandchildren
        )
    except OSError as exc:
        return None, time.monotonic() - start, f"cannot start {argv[0]}: {exc.strerror}", ()
    reason = ""
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out = _drain(proc)
        reason = f"timed out after {timeout:g} s"
    code = None if reason else proc.returncode
    text = out.decode("utf-8", "replace")
    return code, time.monotonic() - start, reason, tuple(text.splitlines()[-_TAIL_LINES:])


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _drain(proc: subprocess.Popen[bytes]) -> bytes:
    try:
        out, _ = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # a descendant escaped the group and holds the pipe
        if proc.stdout is not None:
            proc.stdout.close()
        proc.kill()
        proc.wait()
        return b""
    return out or b""
