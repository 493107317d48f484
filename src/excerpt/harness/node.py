"""Node projects: the package manager (``packageManager``, then lockfile) and package scripts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from excerpt.harness.files import RepoFiles
from excerpt.harness.model import Command, Kind

__all__ = ["NodeWorkspace", "node_commands", "node_workspace", "ws_locked"]

_LOCKFILES = (
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("bun.lock", "bun"),
    ("bun.lockb", "bun"),
)
_SCRIPT_KINDS: dict[str, Kind] = {
    "test": "test",
    "typecheck": "typecheck",
    "type-check": "typecheck",
    "check-types": "typecheck",
    "types": "typecheck",
    "tsc": "typecheck",
    "lint": "lint",
    "build": "build",
}
_TEST_VARIANT = re.compile(r"test[:_-]\w")  # test:unit, test-e2e: the parts a CI may run
_NPM_INIT_TEST = re.compile(r"no test specified")


@dataclass(frozen=True, slots=True)
class NodeWorkspace:
    """The package manager chosen at a root, and the member directories of its workspace."""

    directory: str
    manager: str
    berry: bool
    locked: bool
    evidence: str
    members: tuple[str, ...]


def _package(files: RepoFiles, rel: str) -> dict[str, Any] | None:
    text = files.text(rel)
    if text is None:
        return None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def ws_locked(files: RepoFiles, directory: str) -> bool:
    """True when ``directory`` has a lockfile of its own (an independent Node project)."""
    return any(files.exists(files.in_dir(directory, name)) for name, _pm in _LOCKFILES)


def node_workspace(files: RepoFiles, directory: str) -> NodeWorkspace | None:
    """The manager and workspace of the package rooted at ``directory``, if it has one."""
    manifest = files.in_dir(directory, "package.json")
    doc = _package(files, manifest)
    if doc is None:
        return None
    declared = doc.get("packageManager")
    lock = next(
        ((name, pm) for name, pm in _LOCKFILES if files.exists(files.in_dir(directory, name))),
        None,
    )
    berry = files.exists(files.in_dir(directory, ".yarnrc.yml"))
    if isinstance(declared, str) and re.match(r"(npm|pnpm|yarn|bun)@", declared):
        manager, version = declared.split("@", 1)
        evidence = files.cite(manifest, r'"packageManager"\s*:')
        berry = berry or (manager == "yarn" and not version.startswith("1."))
    elif lock is not None:
        manager, evidence = lock[1], f"{files.in_dir(directory, lock[0])}:1"
    else:
        manager, evidence = "npm", files.cite(manifest)
    locked = lock is not None and lock[1] == manager
    return NodeWorkspace(
        directory=directory,
        manager=manager,
        berry=manager == "yarn" and berry,
        locked=locked,
        evidence=evidence,
        members=tuple(_members(files, directory, doc, manager)),
    )


def _members(files: RepoFiles, directory: str, doc: dict[str, Any], manager: str) -> Iterator[str]:
    patterns: list[str] = []
    declared = doc.get("workspaces")
    if isinstance(declared, dict):
        declared = declared.get("packages")
    if isinstance(declared, list):
        patterns += [p for p in declared if isinstance(p, str)]
    pnpm = files.text(files.in_dir(directory, "pnpm-workspace.yaml"))
    if pnpm is not None:
        try:
            loaded = yaml.safe_load(pnpm)
        except (yaml.YAMLError, RecursionError):
            loaded = None
        if isinstance(loaded, dict) and isinstance(loaded.get("packages"), list):
            patterns += [p for p in loaded["packages"] if isinstance(p, str)]
    include = [_glob(p) for p in patterns if not p.startswith("!")]
    exclude = [_glob(p[1:]) for p in patterns if p.startswith("!")]
    prefix = "" if directory == "." else directory + "/"
    for path in files.paths:
        if not path.endswith("/package.json") or not path.startswith(prefix):
            continue
        member = path[len(prefix) : -len("/package.json")]
        if any(r.fullmatch(member) for r in include) and not any(
            r.fullmatch(member) for r in exclude
        ):
            yield prefix + member


def _glob(pattern: str) -> re.Pattern[str]:
    pattern = pattern.strip().removeprefix("./").rstrip("/")
    out = ""
    for piece in re.split(r"(\*\*/?|\*)", pattern):
        if piece.startswith("**"):
            out += "(?:.*/)?" if piece.endswith("/") else ".*"
        elif piece == "*":
            out += "[^/]*"
        else:
            out += re.escape(piece)
    return re.compile(out)


def _install(ws: NodeWorkspace) -> str:
    if ws.manager == "npm":
        return "npm ci" if ws.locked else "npm install"
    if ws.manager == "pnpm":
        return "pnpm install --frozen-lockfile" if ws.locked else "pnpm install"
    if ws.manager == "yarn":
        if not ws.locked:
            return "yarn install"
        return "yarn install --immutable" if ws.berry else "yarn install --frozen-lockfile"
    return "bun install --frozen-lockfile" if ws.locked else "bun install"


def _run(manager: str, script: str) -> str:
    if script == "test" and manager != "bun":
        return f"{manager} test"  # `bun test` is bun's own runner, not the script
    return f"{manager} run {script}"


def _exec_tsc(manager: str) -> str:
    return {
        "npm": "npx tsc --noEmit",
        "pnpm": "pnpm exec tsc --noEmit",
        "yarn": "yarn tsc --noEmit",
        "bun": "bunx tsc --noEmit",
    }[manager]


def node_commands(
    files: RepoFiles, directory: str, workspace: NodeWorkspace, *, member: bool
) -> list[Command]:
    """Setup (at a workspace root only) and script commands of the package at ``directory``."""
    manifest = files.in_dir(directory, "package.json")
    doc = _package(files, manifest)
    if doc is None:
        return []
    out: list[Command] = []
    pm = workspace.manager
    if not member:
        out.append(
            Command(
                command=_install(workspace),
                kind="install",
                directory=directory,
                tool=pm,
                evidence=(workspace.evidence,),
                confidence=0.9 if workspace.locked else 0.7,
            )
        )
    scripts = doc.get("scripts")
    scripts = scripts if isinstance(scripts, dict) else {}
    kinds: set[str] = set()
    for name, body in scripts.items():
        variant = _TEST_VARIANT.match(name) and "watch" not in name
        kind = _SCRIPT_KINDS.get(name) or ("test" if variant else None)
        if kind is None or not isinstance(body, str) or not body.strip():
            continue
        if kind == "test" and _NPM_INIT_TEST.search(body):
            continue
        kinds.add(kind)
        out.append(
            Command(
                command=_run(pm, name),
                kind=kind,
                directory=directory,
                tool=pm,
                evidence=(files.cite(manifest, rf'"{re.escape(name)}"\s*:', after='"scripts"'),),
                confidence=0.9 if name in _SCRIPT_KINDS else 0.7,
            )
        )
    if "typecheck" not in kinds and _uses_typescript(files, directory, doc):
        out.append(
            Command(
                command=_exec_tsc(pm),
                kind="typecheck",
                directory=directory,
                tool="tsc",
                evidence=(files.cite(files.in_dir(directory, "tsconfig.json")),),
                confidence=0.5,
            )
        )
    return out


def _uses_typescript(files: RepoFiles, directory: str, doc: dict[str, Any]) -> bool:
    if not files.exists(files.in_dir(directory, "tsconfig.json")):
        return False
    deps: Sequence[object] = [doc.get(k) for k in ("devDependencies", "dependencies")]
    return any(isinstance(d, dict) and "typescript" in d for d in deps)
