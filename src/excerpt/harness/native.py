"""Go modules, Cargo packages and workspaces, Maven and Gradle builds, Make and just targets."""

from __future__ import annotations

import re

from excerpt.harness.files import RepoFiles
from excerpt.harness.model import Command, Kind

__all__ = [
    "cargo_commands",
    "deno_commands",
    "go_commands",
    "gradle_commands",
    "just_commands",
    "make_commands",
    "maven_commands",
    "meson_commands",
]

_TARGET_KINDS: dict[str, Kind] = {
    "test": "test",
    "tests": "test",
    "check": "test",
    "test-all": "test",
    "ci": "test",
    "lint": "lint",
    "typecheck": "typecheck",
    "type-check": "typecheck",
    "types": "typecheck",
    "mypy": "typecheck",
    "build": "build",
    "install": "install",
    "setup": "install",
    "deps": "install",
    "bootstrap": "install",
}
# test-unit, check_all, platformTest, abiTests, unit-tests (not "latest")
_TEST_VARIANT = re.compile(
    r"^(?!build|clean|install)(^(test|check)[_-]\w|.*[a-z0-9]Tests?$|.*[_-]tests?$)"
)
_MAKE_RULE = re.compile(r"^([A-Za-z0-9_.\-/ ]+?)\s*::?(?![=])")
_JUST_RECIPE = re.compile(r"^@?([A-Za-z0-9_-]+)(?:\s+[^:]*)?\s*:(?![=])")
_JUST_KEYWORDS = frozenset({"set", "alias", "export", "import", "mod"})


def _target_kind(target: str) -> tuple[Kind | None, float]:
    """The kind of a Make target or just recipe by its name, and how sure that is."""
    if target in _TARGET_KINDS:
        return _TARGET_KINDS[target], 0.8
    if _TEST_VARIANT.match(target) and "watch" not in target:
        return "test", 0.6
    return None, 0.0


def _cmd(command: str, kind: Kind, directory: str, tool: str, ev: str, conf: float) -> Command:
    return Command(
        command=command, kind=kind, directory=directory, tool=tool, evidence=(ev,), confidence=conf
    )


def go_commands(files: RepoFiles, directory: str) -> list[Command]:
    mod = files.in_dir(directory, "go.mod")
    ev = files.cite(mod, r"^module\b")
    out = [
        _cmd("go mod download", "install", directory, "go", ev, 0.8),
        _cmd("go build ./...", "build", directory, "go", ev, 0.8),
        _cmd("go test ./...", "test", directory, "go", ev, 0.9),
        _cmd("go vet ./...", "lint", directory, "go", ev, 0.7),
    ]
    for name in (".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"):
        if files.exists(files.in_dir(directory, name)):
            where = f"{files.in_dir(directory, name)}:1"
            out.append(_cmd("golangci-lint run", "lint", directory, "golangci-lint", where, 0.8))
            break
    return out


def cargo_commands(files: RepoFiles, directory: str) -> list[Command]:
    manifest = files.in_dir(directory, "Cargo.toml")
    doc = files.toml(manifest)
    if doc is None:
        return []  # unreadable or malformed: cargo itself would refuse it
    virtual = "workspace" in doc and "package" not in doc
    flag = " --workspace" if virtual else ""
    ev = files.cite(manifest, r"^\[workspace\]" if virtual else r"^\[package\]")
    return [
        _cmd("cargo fetch", "install", directory, "cargo", ev, 0.7),
        _cmd(f"cargo build{flag}", "build", directory, "cargo", ev, 0.9),
        _cmd(f"cargo test{flag}", "test", directory, "cargo", ev, 0.9),
        _cmd(f"cargo clippy{flag}", "lint", directory, "cargo", ev, 0.6),
    ]


def deno_commands(files: RepoFiles, directory: str, config: str) -> list[Command]:
    ev = f"{config}:1"
    out = [
        _cmd("deno test", "test", directory, "deno", ev, 0.8),
        _cmd("deno lint", "lint", directory, "deno", ev, 0.6),
    ]
    doc = files.json(config, comments=True)
    tasks = doc.get("tasks") if isinstance(doc, dict) else None
    for name in sorted(tasks) if isinstance(tasks, dict) else []:
        kind, confidence = _target_kind(name)
        if kind is not None and kind != "install":
            where = files.cite(config, rf'"{re.escape(name)}"\s*:', after=r'"tasks"\s*:')
            out.append(_cmd(f"deno task {name}", kind, directory, "deno", where, confidence))
    return out


def meson_commands(files: RepoFiles, directory: str) -> list[Command]:
    ev = files.cite(files.in_dir(directory, "meson.build"), r"^\s*project\s*\(")
    return [
        _cmd("meson setup builddir", "install", directory, "meson", ev, 0.7),
        _cmd("meson compile -C builddir", "build", directory, "meson", ev, 0.8),
        _cmd("meson test -C builddir", "test", directory, "meson", ev, 0.8),
    ]


def maven_commands(files: RepoFiles, directory: str) -> list[Command]:
    pom = files.in_dir(directory, "pom.xml")
    mvn = "./mvnw" if files.exists(files.in_dir(directory, "mvnw")) else "mvn"
    ev = files.cite(pom, r"<project\b")
    return [
        _cmd(f"{mvn} -B test", "test", directory, "maven", ev, 0.9),
        _cmd(f"{mvn} -B package -DskipTests", "build", directory, "maven", ev, 0.8),
    ]


def gradle_commands(files: RepoFiles, directory: str, build_file: str) -> list[Command]:
    gradle = "./gradlew" if files.exists(files.in_dir(directory, "gradlew")) else "gradle"
    ev = f"{build_file}:1"
    return [
        _cmd(f"{gradle} test", "test", directory, "gradle", ev, 0.9),
        _cmd(f"{gradle} assemble", "build", directory, "gradle", ev, 0.8),
    ]


# what a recipe that installs into the system says: a prefix, a destination root, install(1)
_SYSTEM_INSTALL = re.compile(
    r"\$[({](DESTDIR|PREFIX|prefix|bindir|libdir|includedir|mandir|INSTALL\w*)[)}]"
    r"|\binstall\s+-[mdDpv]|(^|\s)/usr/|\bldconfig\b"
)
_UNINSTALL = re.compile(r"^([\w.\-/ ]+ )?uninstall\b[^=]*:(?!=)")


def make_commands(files: RepoFiles, directory: str, makefile: str) -> list[Command]:
    out = []
    seen = set()
    lines = (files.text(makefile) or "").splitlines()
    for number, line in enumerate(lines, start=1):
        if line.startswith(("\t", " ", "#", ".")) or "=" in line.split(":", 1)[0]:
            continue
        m = _MAKE_RULE.match(line)
        if not m:
            continue
        for target in m.group(1).split():
            kind, confidence = _target_kind(target)
            if not kind or target in seen:
                continue
            seen.add(target)
            ev = f"{makefile}:{number}"
            if kind == "install" and _installs_into_system(lines, number):
                files.notes.append(
                    f"make {target} ({ev}) installs into the system (prefix or DESTDIR): "
                    "not a setup step"
                )
                continue
            out.append(_cmd(f"make {target}", kind, directory, "make", ev, confidence))
    return out


def _installs_into_system(lines: list[str], number: int) -> bool:
    """Whether the rule on line ``number`` copies files under a system prefix, as a C
    project's ``make install`` does, rather than installing what development needs."""
    recipe = []
    for line in lines[number:]:
        if not line.startswith("\t"):
            break
        recipe.append(line)
    if any(_SYSTEM_INSTALL.search(line) for line in recipe):
        return True
    # a recipe that only delegates (``$(MAKE) -C lib $@``) or names prerequisites: the
    # conventions of a system install elsewhere in the file (an ``uninstall`` target, DESTDIR)
    return any("DESTDIR" in line or _UNINSTALL.match(line) for line in lines)


def just_commands(files: RepoFiles, directory: str, justfile: str) -> list[Command]:
    out = []
    seen = set()
    for number, line in enumerate((files.text(justfile) or "").splitlines(), start=1):
        if line.startswith((" ", "\t", "#", "[")):
            continue
        m = _JUST_RECIPE.match(line)
        if not m or m.group(1) in _JUST_KEYWORDS or m.group(1) in seen:
            continue
        kind, confidence = _target_kind(m.group(1))
        if kind:
            seen.add(m.group(1))
            ev = f"{justfile}:{number}"
            out.append(_cmd(f"just {m.group(1)}", kind, directory, "just", ev, confidence))
    return out
