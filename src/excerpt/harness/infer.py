"""Infer how a repository is set up and validated, from its files alone.

Manifests are found per directory (one group per package of a monorepo), each ecosystem's
reader proposes commands with the ``file:line`` that supports them, and CI run steps
corroborate them (more evidence, more confidence) or add what CI runs that no manifest names.
Nothing is executed.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from excerpt.core.manifests import names, package_manifest, project_files
from excerpt.core.settings import Limits
from excerpt.discover import resolve_root
from excerpt.harness.ci import UNKNOWN_DIR, CiStep, ci_steps, kind_of, signatures
from excerpt.harness.files import RepoFiles
from excerpt.harness.model import KINDS, Command, Harness
from excerpt.harness.native import (
    cargo_commands,
    deno_commands,
    go_commands,
    gradle_commands,
    just_commands,
    make_commands,
    maven_commands,
    meson_commands,
)
from excerpt.harness.node import NodeWorkspace, node_commands, node_workspace, ws_locked
from excerpt.harness.python import PYTHON_MARKERS, python_commands

__all__ = ["MAX_EVIDENCE", "MAX_GROUPS", "infer_harness"]

MAX_GROUPS = 64
MAX_DEPTH = 4
MAX_EVIDENCE = 6
# Directories whose manifests describe samples, fixtures or vendored code, not the project.
_SKIP_PARTS = frozenset(
    {
        "fixtures", "__fixtures__", "fixture", "testdata", "test-data", "test_data",
        "examples", "example", "samples", "sample", "templates", "template", "playground",
        "vendor", "vendored", "third_party", "third-party", "node_modules", "docs", "doc",
        "test", "tests", "__tests__", "e2e", "benchmarks", "bench",
    }
)  # fmt: skip
_CORROBORATED = 0.1
# A Makefile in a test directory drives the tests (C projects: `make -C tests test-x`).
_MAKEFILES = frozenset(project_files("make"))
_PACKAGE_JSON = package_manifest("node")
_TEST_DIRS = frozenset({"test", "tests"})


def infer_harness(
    repo: str | os.PathLike[str], *, use_ci: bool = True, limits: Limits | None = None
) -> Harness:
    """Setup and validate commands for the repository at ``repo``, with evidence.

    ``use_ci=False`` ignores CI files (to measure what the manifests alone say).

    Raises:
        NotADirectoryFault: ``repo`` is not a readable directory.
        GitFault: git refuses to list the work tree.
    """
    files = RepoFiles(resolve_root(repo), limits)
    found = _project_dirs(files)
    notes = []
    dirs = sorted(found, key=lambda d: (d.count("/"), d))[:MAX_GROUPS]
    if len(found) > MAX_GROUPS:
        notes.append(f"{len(found)} package directories; the {MAX_GROUPS} shallowest are shown")
    if files.truncated:
        notes.append("discovery stopped at a limit; some manifests may be missing")
    commands = _from_manifests(files, sorted(dirs, key=_dir_order))
    if use_ci:
        commands = _with_ci(commands, ci_steps(files))
    notes += files.notes
    if not commands:
        notes.append("no manifest, build file or CI workflow names a command")
    return Harness(commands=tuple(_ordered(commands)), notes=tuple(notes))


def _dir_order(directory: str) -> tuple[int, str]:
    return (0 if directory == "." else 1, directory)


def _project_dirs(files: RepoFiles) -> set[str]:
    dirs = set()
    for path in files.paths:
        pure = PurePosixPath(path)
        if pure.name not in _MANIFESTS:
            continue
        parents = pure.parts[:-1]
        skipped = _SKIP_PARTS - _TEST_DIRS if pure.name in _MAKEFILES else _SKIP_PARTS
        if len(parents) > MAX_DEPTH or any(p in skipped or p.startswith(".") for p in parents):
            continue
        dirs.add(files.dir_of(path))
    return dirs


def _ancestors(directory: str) -> list[str]:
    """The directories enclosing ``directory``, the root (``.``) first."""
    parts = PurePosixPath(directory).parts if directory != "." else ()
    return ["/".join(parts[:depth]) or "." for depth in range(len(parts))]


def _covered_by_parent(files: RepoFiles, directory: str, markers: Iterable[str]) -> bool:
    """True when an enclosing directory's build already covers this one (Maven modules,
    Gradle settings, Meson subdirs)."""
    return any(
        files.exists(files.in_dir(parent, m)) for parent in _ancestors(directory) for m in markers
    )


def _inside(directory: str, root: str) -> bool:
    return directory != root and (root == "." or directory.startswith(root + "/"))


def _cargo_root(files: RepoFiles, directory: str) -> bool:
    for parent in _ancestors(directory):
        doc = files.toml(files.in_dir(parent, "Cargo.toml"))
        if doc is not None and "workspace" in doc:
            return False
    return True


def _from_manifests(files: RepoFiles, dirs: list[str]) -> list[Command]:
    workspaces, member_of = _node_projects(files, dirs)
    out: list[Command] = []
    for directory in dirs:
        has = {name for name in _MANIFESTS if files.exists(files.in_dir(directory, name))}
        if not _TEST_DIRS.isdisjoint(PurePosixPath(directory).parts):
            has &= _MAKEFILES  # a test directory is a project only for its Makefile
        if directory in member_of:
            out += node_commands(files, directory, member_of[directory], member=True)
        elif directory in workspaces:
            out += node_commands(files, directory, workspaces[directory], member=False)
        for eco in _ECOSYSTEMS:
            manifest = next((m for m in eco.manifests if m in has), None)
            if manifest is None or _covered_by_parent(files, directory, eco.covered_by):
                continue
            out += eco.build(files, directory, files.in_dir(directory, manifest))
    return out


def _node_projects(
    files: RepoFiles, dirs: list[str]
) -> tuple[dict[str, NodeWorkspace], dict[str, NodeWorkspace]]:
    """The Node workspace roots, and the workspace each member directory belongs to."""
    workspaces: dict[str, NodeWorkspace] = {}
    member_of: dict[str, NodeWorkspace] = {}
    for directory in dirs:
        if directory in member_of or not files.exists(files.in_dir(directory, _PACKAGE_JSON)):
            continue
        if any(_inside(directory, root) for root in workspaces) and not ws_locked(files, directory):
            continue  # a nested package of a Node project: run from its enclosing root
        ws = node_workspace(files, directory)
        if ws is not None:
            workspaces[directory] = ws
            member_of.update({m: ws for m in ws.members if m != directory})
    return workspaces, member_of


Build = Callable[[RepoFiles, str, str], list[Command]]  # files, directory, manifest found


@dataclass(frozen=True, slots=True, kw_only=True)
class _Ecosystem:
    """A kind of project: its manifests (the first one present is read) and the manifests
    of an enclosing directory whose build already covers it."""

    manifests: tuple[str, ...]
    build: Build
    covered_by: tuple[str, ...] = ()


def _python_project(files: RepoFiles, directory: str, _manifest: str) -> list[Command]:
    if files.exists(files.in_dir(directory, "__init__.py")):
        return []  # a package inside a project, not a project
    return python_commands(files, directory)


def _cargo_project(files: RepoFiles, directory: str, _manifest: str) -> list[Command]:
    return cargo_commands(files, directory) if _cargo_root(files, directory) else []


def _directory_only(build: Callable[[RepoFiles, str], list[Command]]) -> Build:
    return lambda files, directory, _manifest: build(files, directory)


# Every ecosystem a directory may hold, in the order their commands are listed.
_ECOSYSTEMS = (
    _Ecosystem(manifests=PYTHON_MARKERS, build=_python_project),
    _Ecosystem(manifests=project_files("deno"), build=deno_commands),
    _Ecosystem(
        manifests=project_files("meson"),
        build=_directory_only(meson_commands),
        covered_by=project_files("meson"),
    ),
    _Ecosystem(manifests=project_files("go"), build=_directory_only(go_commands)),
    _Ecosystem(manifests=project_files("rust"), build=_cargo_project),
    _Ecosystem(
        manifests=project_files("maven"),
        build=_directory_only(maven_commands),
        covered_by=project_files("maven"),
    ),
    _Ecosystem(
        manifests=project_files("gradle"),
        build=gradle_commands,
        covered_by=names(kinds=("build",), ecosystem="gradle"),  # its settings
    ),
    _Ecosystem(manifests=project_files("make"), build=make_commands),
    _Ecosystem(manifests=project_files("just"), build=just_commands),
)
# The files that make a directory a project: what some ecosystem above reads, or Node's.
_MANIFESTS = frozenset({_PACKAGE_JSON, *(m for eco in _ECOSYSTEMS for m in eco.manifests)})


def _with_ci(commands: list[Command], steps: list[CiStep]) -> list[Command]:
    """Add CI evidence to the commands CI also runs; add what CI runs that nothing names."""
    by_sig: dict[tuple[str, str], list[CiStep]] = defaultdict(list)
    for step in steps:
        for sig in signatures(step.command):
            by_sig[sig].append(step)
    used: set[CiStep] = set()
    out = []
    for command in commands:
        seen = [s for sig in signatures(command.command) for s in by_sig.get(sig, ())]
        seen = [s for s in seen if s.directory == command.directory]
        if seen:
            used.update(seen)
            cited = dict.fromkeys([*command.evidence, *(s.evidence for s in seen)])
            evidence = tuple(list(cited)[:MAX_EVIDENCE])
            confidence = min(1.0, command.confidence + _CORROBORATED)
            command = replace(command, evidence=evidence, confidence=confidence)
        out.append(command)
    known = {(c.command, c.directory) for c in out}
    for step in steps:
        sigs = signatures(step.command)
        kind = next((k for k in map(kind_of, sigs) if k is not None), None)
        if step in used or step.auxiliary or kind in (None, "install") or "$" in step.command:
            continue
        if step.directory == UNKNOWN_DIR:
            continue
        if (step.command, step.directory) in known:
            continue
        known.add((step.command, step.directory))
        out.append(
            Command(
                command=step.command,
                kind=kind,
                directory=step.directory,
                tool=sigs[0][0] if sigs[0][0] not in ("script", "install") else "ci",
                evidence=(step.evidence,),
                confidence=0.6,
            )
        )
    return out


def _ordered(commands: list[Command]) -> list[Command]:
    """Root first, then by directory; inside a directory by kind, then confidence, then name."""
    unique: dict[tuple[str, str, str], Command] = {}
    for c in commands:
        key = (c.directory, c.kind, c.command)
        if key in unique:
            prev = unique[key]
            merged = tuple(dict.fromkeys([*prev.evidence, *c.evidence]))
            c = replace(prev, evidence=merged, confidence=max(prev.confidence, c.confidence))
        unique[key] = c
    return sorted(
        unique.values(),
        key=lambda c: (*_dir_order(c.directory), KINDS.index(c.kind), -c.confidence, c.command),
    )
