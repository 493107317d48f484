"""Python projects: the environment manager, then pytest, tox, nox, ruff and mypy."""

from __future__ import annotations

import configparser
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from excerpt.core.manifests import project_files
from excerpt.harness.files import RepoFiles
from excerpt.harness.model import Command, Kind

__all__ = ["PYTHON_MARKERS", "python_commands"]

# The files that make a directory a Python project: its manifests, requirements, tox and nox.
PYTHON_MARKERS = project_files("python")
_REQUIREMENTS = re.compile(
    r"(?:requirements(?:[-_.](?:dev|test|tests|testing|ci|lint))?|"
    r"(?:dev|test|tests|testing)[-_]requirements)\.txt"
)
_PREFIX = {"uv": "uv run ", "poetry": "poetry run ", "pdm": "pdm run ", "hatch": "", "pip": ""}
_SCRIPT_KINDS: dict[str, Kind] = {
    "test": "test",
    "tests": "test",
    "lint": "lint",
    "style": "lint",
    "typing": "typecheck",
    "types": "typecheck",
    "typecheck": "typecheck",
    "type-check": "typecheck",
    "mypy": "typecheck",
}
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(slots=True)
class _Project:
    """What one directory's Python files say, with the place each fact was read."""

    directory: str
    pyproject: dict[str, Any] = field(default_factory=dict)
    hatch: dict[str, Any] = field(default_factory=dict)
    setup_cfg: configparser.ConfigParser | None = None
    tox_ini: configparser.ConfigParser | None = None
    deps: dict[str, str] = field(default_factory=dict)  # name → evidence
    extras: dict[str, str] = field(default_factory=dict)


def _ini(text: str | None) -> configparser.ConfigParser | None:
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _dep_name(spec: object) -> str | None:
    if not isinstance(spec, str):
        return None
    m = _NAME.match(spec)
    return m.group(1).lower().replace("_", "-") if m else None


def _collect(files: RepoFiles, directory: str) -> _Project:
    project = _Project(directory)
    py = files.in_dir(directory, "pyproject.toml")
    project.pyproject = files.toml(py) or {}
    project.hatch = files.toml(files.in_dir(directory, "hatch.toml")) or {}
    project.setup_cfg = _ini(files.text(files.in_dir(directory, "setup.cfg")))
    project.tox_ini = _ini(files.text(files.in_dir(directory, "tox.ini")))
    doc = project.pyproject

    def note(names: Iterable[object], where: str) -> None:
        for spec in names:
            name = _dep_name(spec)
            if name and name not in project.deps:
                quoted = re.escape(name).replace(r"\-", "[-_]")
                project.deps[name] = files.cite(where, rf"""(?i)(^|["'\s]){quoted}\b""")

    proj = _dict(doc.get("project"))
    note(_list(proj.get("dependencies")), py)
    for extra, specs in _dict(proj.get("optional-dependencies")).items():
        project.extras[extra] = files.cite(py, rf"^\s*{re.escape(extra)}\s*=")
        note(_list(specs), py)
    for specs in _dict(doc.get("dependency-groups")).values():
        note(_list(specs), py)
    tool = _dict(doc.get("tool"))
    poetry = _dict(tool.get("poetry"))
    note(_dict(poetry.get("dependencies")), py)
    note(_dict(poetry.get("dev-dependencies")), py)
    for group in _dict(poetry.get("group")).values():
        note(_dict(_dict(group).get("dependencies")), py)
    for specs in _dict(_dict(tool.get("pdm")).get("dev-dependencies")).values():
        note(_list(specs), py)
    note(_list(_dict(tool.get("uv")).get("dev-dependencies")), py)
    for path in _requirement_files(files, directory):
        note((files.text(path) or "").splitlines(), path)
    cfg = project.setup_cfg
    if cfg is not None and cfg.has_section("options.extras_require"):
        where = files.in_dir(directory, "setup.cfg")
        for extra, specs in cfg.items("options.extras_require"):
            project.extras.setdefault(extra, files.cite(where, rf"^\s*{re.escape(extra)}\s*="))
            note(specs.splitlines(), where)
    return project


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _requirement_files(files: RepoFiles, directory: str) -> list[str]:
    prefix = "" if directory == "." else directory + "/"
    found = []
    for path in files.paths:
        rest = path[len(prefix) :] if path.startswith(prefix) else None
        if rest is None:
            continue
        name = rest.removeprefix("requirements/")
        in_folder = rest.startswith("requirements/") and name.endswith(".txt")
        if "/" not in name and (in_folder or _REQUIREMENTS.fullmatch(name.lower())):
            found.append(path)
    return sorted(found)


def _manager(files: RepoFiles, project: _Project) -> tuple[str, str]:
    """The environment manager and the evidence for it."""
    d = project.directory
    tool = _dict(project.pyproject.get("tool"))
    py = files.in_dir(d, "pyproject.toml")
    for lock, manager in (("uv.lock", "uv"), ("poetry.lock", "poetry"), ("pdm.lock", "pdm")):
        if files.exists(files.in_dir(d, lock)):
            return manager, f"{files.in_dir(d, lock)}:1"
    for section, manager in (("uv", "uv"), ("poetry", "poetry"), ("pdm", "pdm")):
        if section in tool:
            return manager, files.cite(py, rf"^\[tool\.{section}[\].]")
    if files.exists(files.in_dir(d, "hatch.toml")):
        return "hatch", f"{files.in_dir(d, 'hatch.toml')}:1"
    if "envs" in _dict(tool.get("hatch")):
        return "hatch", files.cite(py, r"^\[tool\.hatch\.envs")
    return "pip", ""


def python_commands(files: RepoFiles, directory: str) -> list[Command]:
    """Setup and validate commands of the Python project at ``directory`` (may be none)."""
    project = _collect(files, directory)
    manager, manager_evidence = _manager(files, project)
    out = _setup(files, project, manager, manager_evidence)
    out += _pytest(files, project, manager, manager_evidence)
    out += _runners(files, project)
    out += _linters(files, project, manager)
    if manager == "hatch":
        out += _hatch_scripts(files, project)
    return out


def _cmd(
    command: str, kind: Kind, directory: str, tool: str, evidence: Iterable[str], conf: float
) -> Command:
    ev = tuple(dict.fromkeys(e for e in evidence if e))
    return Command(
        command=command, kind=kind, directory=directory, tool=tool, evidence=ev, confidence=conf
    )


def _setup(files: RepoFiles, p: _Project, manager: str, evidence: str) -> list[Command]:
    d = p.directory
    if manager != "pip":
        verb = {"uv": "uv sync", "poetry": "poetry install", "pdm": "pdm install"}
        command = verb.get(manager, "hatch env create")
        return [_cmd(command, "install", d, manager, [evidence], 0.9)]
    out = []
    installable = (
        "project" in p.pyproject
        or "build-system" in p.pyproject
        or files.exists(files.in_dir(d, "setup.py"))
        or (p.setup_cfg is not None and p.setup_cfg.has_section("metadata"))
    )
    if installable:
        extra = next((e for e in ("test", "tests", "testing", "dev") if e in p.extras), None)
        target = f"'.[{extra}]'" if extra else "."
        where = p.extras[extra] if extra else _installable_evidence(files, p)
        out.append(_cmd(f"python -m pip install -e {target}", "install", d, "pip", [where], 0.8))
    for path in _requirement_files(files, d):
        rel = path if d == "." else path[len(d) + 1 :]
        out.append(_cmd(f"python -m pip install -r {rel}", "install", d, "pip", [f"{path}:1"], 0.7))
    return out


def _installable_evidence(files: RepoFiles, p: _Project) -> str:
    d = p.directory
    if p.pyproject:
        return files.cite(files.in_dir(d, "pyproject.toml"), r"^\[(project|build-system)\]")
    if files.exists(files.in_dir(d, "setup.py")):
        return f"{files.in_dir(d, 'setup.py')}:1"
    return files.cite(files.in_dir(d, "setup.cfg"), r"^\[metadata\]")


def _pytest_evidence(files: RepoFiles, p: _Project) -> list[str]:
    d = p.directory
    ev = []
    if "pytest" in _dict(p.pyproject.get("tool")):
        ev.append(files.cite(files.in_dir(d, "pyproject.toml"), r"^\[tool\.pytest"))
    if files.exists(files.in_dir(d, "pytest.ini")):
        ev.append(f"{files.in_dir(d, 'pytest.ini')}:1")
    if p.setup_cfg is not None and p.setup_cfg.has_section("tool:pytest"):
        ev.append(files.cite(files.in_dir(d, "setup.cfg"), r"^\[tool:pytest\]"))
    if p.tox_ini is not None and p.tox_ini.has_section("pytest"):
        ev.append(files.cite(files.in_dir(d, "tox.ini"), r"^\[pytest\]"))
    if "pytest" in p.deps:
        ev.append(p.deps["pytest"])
    for name in ("conftest.py", "tests/conftest.py", "test/conftest.py"):
        if files.exists(files.in_dir(d, name)):
            ev.append(f"{files.in_dir(d, name)}:1")
    return ev


def _pytest(files: RepoFiles, p: _Project, manager: str, evidence: str) -> list[Command]:
    d = p.directory
    ev = _pytest_evidence(files, p)
    if ev:
        if manager == "hatch":
            if _hatch_env_scripts(p).get(("default", "test")):
                return []  # the project's own `hatch run test` (added with the scripts)
            return [_cmd("hatch test", "test", d, "hatch", [evidence, *ev], 0.8)]
        command = "python -m pytest" if manager == "pip" else f"{_PREFIX[manager]}pytest"
        return [_cmd(command, "test", d, "pytest", [*ev, evidence], 0.9 if len(ev) > 1 else 0.8)]
    tests = [
        path
        for path in files.paths
        if re.fullmatch(rf"{re.escape(d + '/') if d != '.' else ''}tests?/test_\w+\.py", path)
    ]
    if tests:
        return [_cmd("python -m unittest", "test", d, "unittest", [f"{tests[0]}:1"], 0.4)]
    return []


def _runners(files: RepoFiles, p: _Project) -> list[Command]:
    d = p.directory
    out = []
    tox_ev = []
    if p.tox_ini is not None and any(s.startswith(("tox", "testenv")) for s in p.tox_ini):
        tox_ev.append(files.cite(files.in_dir(d, "tox.ini"), r"^\[(tox|testenv)"))
    if "tox" in _dict(p.pyproject.get("tool")):
        tox_ev.append(files.cite(files.in_dir(d, "pyproject.toml"), r"^\[tool\.tox"))
    if tox_ev:
        out.append(_cmd("tox", "test", d, "tox", tox_ev, 0.8))
    nox = files.in_dir(d, "noxfile.py")
    if files.exists(nox):
        out.append(_cmd("nox", "test", d, "nox", [files.cite(nox, r"@nox\.session")], 0.8))
    return out


def _linters(files: RepoFiles, p: _Project, manager: str) -> list[Command]:
    d = p.directory
    tool = _dict(p.pyproject.get("tool"))
    py = files.in_dir(d, "pyproject.toml")
    prefix = _PREFIX[manager] if manager != "hatch" else ""
    out = []
    ruff_ev = [files.cite(py, r"^\[tool\.ruff") if "ruff" in tool else ""]
    ruff_ev += [f"{files.in_dir(d, n)}:1" for n in ("ruff.toml", ".ruff.toml")]
    ruff_ev = [e for e in ruff_ev if e and files.exists(e.rsplit(":", 1)[0])]
    if "ruff" in p.deps:
        ruff_ev.append(p.deps["ruff"])
    if ruff_ev:
        out.append(_cmd(f"{prefix}ruff check .", "lint", d, "ruff", ruff_ev, 0.8))
    mypy_ev = [files.cite(py, r"^\[tool\.mypy") if "mypy" in tool else ""]
    mypy_ev += [f"{files.in_dir(d, n)}:1" for n in ("mypy.ini", ".mypy.ini")]
    mypy_ev = [e for e in mypy_ev if e and files.exists(e.rsplit(":", 1)[0])]
    if p.setup_cfg is not None and p.setup_cfg.has_section("mypy"):
        mypy_ev.append(files.cite(files.in_dir(d, "setup.cfg"), r"^\[mypy\]"))
    if mypy_ev:
        out.append(_cmd(f"{prefix}mypy", "typecheck", d, "mypy", mypy_ev, 0.8))
    return out


def _hatch_env_scripts(p: _Project) -> dict[tuple[str, str], str]:
    """``(env, script)`` → the section header that declares it (pyproject or hatch.toml)."""
    sources = (
        (_dict(_dict(_dict(p.pyproject.get("tool")).get("hatch")).get("envs")), r"tool\.hatch\."),
        (_dict(p.hatch.get("envs")), ""),
    )
    return {
        (env, name): rf"^\[{prefix}envs\.{re.escape(env)}\.scripts\]"
        for envs, prefix in sources
        for env, spec in envs.items()
        for name in _dict(_dict(spec).get("scripts"))
    }


def _hatch_scripts(files: RepoFiles, p: _Project) -> list[Command]:
    out = []
    for (env, name), section in sorted(_hatch_env_scripts(p).items()):
        kind = _SCRIPT_KINDS.get(name)
        if kind is None:
            continue
        target = name if env == "default" else f"{env}:{name}"
        config = "pyproject.toml" if section.startswith(r"^\[tool") else "hatch.toml"
        where = files.cite(
            files.in_dir(p.directory, config), rf"^\s*{re.escape(name)}\s*=", after=section
        )
        out.append(_cmd(f"hatch run {target}", kind, p.directory, "hatch", [where], 0.9))
    return out
