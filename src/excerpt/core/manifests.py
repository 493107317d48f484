"""Build and package manifests by file name: the one table of them. Pure data.

Each name has its ecosystem and its kind; the consumers derive their sets from here instead
of keeping lists of their own: ranking (a package manifest makes its directory a component, a
manifest or a lock file is demoted unless the task is about it, the root's manifests are the
fallback overview), the index (the name each language's manifest reader reads) and the
harness (the files whose presence makes a directory a project, in the order each ecosystem's
tool looks for them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal, get_args

__all__ = [
    "KINDS",
    "MANIFESTS",
    "Ecosystem",
    "Kind",
    "Manifest",
    "names",
    "package_manifest",
    "project_files",
]

# package: declares a project of its own (its name, its dependencies), so its directory is
#   one: a crate, a Go module, a Node package, a Maven module, a Python distribution.
# dependencies: lists dependencies without declaring a project; it often sits beside a
#   package manifest or in a folder of its own (``docs/requirements.txt``).
# build: drives a build or its tasks without declaring a package (a Makefile, ``tox.ini``,
#   Gradle's settings).
# lock: the resolved dependencies a package manager writes; nobody edits it by hand.
Kind = Literal["package", "dependencies", "build", "lock"]
KINDS: Final[tuple[Kind, ...]] = get_args(Kind)
Ecosystem = Literal[
    "python", "conda", "node", "deno", "rust", "go", "maven", "gradle", "php", "ruby",
    "elixir", "swift", "cocoapods", "dart", "dotnet", "nix", "terraform", "bazel", "make",
    "just", "meson",
]  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Manifest:
    """One manifest file name: the ecosystem whose tools read it, and what it is.

    ``program``: a script its tool runs, which may hold code of its own beside what it
    declares (``setup.py``'s build commands and C extensions, ``noxfile.py``'s sessions).
    """

    name: str
    ecosystem: Ecosystem
    kind: Kind
    program: bool = False

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise ValueError(f"a manifest is a file name, not {self.name!r}")


def _of(
    ecosystem: Ecosystem, kind: Kind, *file_names: str, program: bool = False
) -> tuple[Manifest, ...]:
    return tuple(
        Manifest(name=n, ecosystem=ecosystem, kind=kind, program=program) for n in file_names
    )


# Within an ecosystem and kind, the order its tool looks for them (GNU make reads
# ``GNUmakefile`` before ``Makefile``): the harness reads the first one present.
_TABLE: Final[tuple[Manifest, ...]] = (
    *_of("python", "package", "pyproject.toml"),
    *_of("python", "package", "setup.py", program=True),
    *_of("python", "package", "setup.cfg"),
    *_of("python", "dependencies", "requirements.txt"),
    *_of("python", "build", "tox.ini"),
    *_of("python", "build", "noxfile.py", program=True),
    *_of("python", "lock", "uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock"),
    *_of("conda", "lock", "pixi.lock", "conda-lock.yml"),
    *_of("node", "package", "package.json"),
    *_of(
        "node", "lock", "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml",
        "yarn.lock", "bun.lock", "bun.lockb",
    ),
    *_of("deno", "package", "deno.json", "deno.jsonc"),
    *_of("deno", "lock", "deno.lock"),
    *_of("rust", "package", "Cargo.toml"),
    *_of("rust", "lock", "Cargo.lock"),
    *_of("go", "package", "go.mod"),
    *_of("go", "lock", "go.sum", "go.work.sum"),
    *_of("maven", "package", "pom.xml"),
    *_of("gradle", "package", "build.gradle", "build.gradle.kts"),
    *_of("gradle", "build", "settings.gradle", "settings.gradle.kts"),
    *_of("gradle", "lock", "gradle.lockfile"),
    *_of("php", "package", "composer.json"),
    *_of("php", "lock", "composer.lock"),
    # a Ruby project's root file (a gem's own declaration is its ``<name>.gemspec``)
    *_of("ruby", "package", "Gemfile"),
    *_of("ruby", "lock", "Gemfile.lock"),
    *_of("elixir", "package", "mix.exs"),
    *_of("elixir", "lock", "mix.lock"),
    *_of("swift", "package", "Package.swift"),
    *_of("swift", "lock", "Package.resolved"),
    *_of("cocoapods", "lock", "Podfile.lock"),
    *_of("dart", "lock", "pubspec.lock"),
    *_of("dotnet", "lock", "packages.lock.json"),
    *_of("nix", "lock", "flake.lock"),
    *_of("terraform", "lock", ".terraform.lock.hcl"),
    *_of("bazel", "lock", "MODULE.bazel.lock"),
    *_of("make", "build", "GNUmakefile", "Makefile", "makefile"),
    *_of("just", "build", "justfile", "Justfile", ".justfile"),
    # its ``project()`` declares a name, but every source directory has a ``meson.build``
    *_of("meson", "build", "meson.build"),
)  # fmt: skip


def _by_name(table: Iterable[Manifest]) -> Mapping[str, Manifest]:
    out: dict[str, Manifest] = {}
    for manifest in table:
        if manifest.name in out:
            raise ValueError(f"the manifest {manifest.name!r} is listed twice")
        out[manifest.name] = manifest
    return MappingProxyType(out)


MANIFESTS: Final[Mapping[str, Manifest]] = _by_name(_TABLE)


def names(
    *,
    kinds: Iterable[Kind] = KINDS,
    ecosystem: Ecosystem | None = None,
    programs: bool = True,
) -> tuple[str, ...]:
    """The manifest file names of these kinds (of one ecosystem, if given; without the
    ``program`` ones if ``programs`` is false), in table order."""
    wanted = frozenset(kinds)
    return tuple(
        m.name
        for m in _TABLE
        if m.kind in wanted
        and (ecosystem is None or m.ecosystem == ecosystem)
        and (programs or not m.program)
    )


def package_manifest(ecosystem: Ecosystem) -> str:
    """The file name of an ecosystem's one package manifest (``go.mod``, ``Cargo.toml``).

    Raises:
        ValueError: the ecosystem has none, or several (Python, Deno, Gradle).
    """
    found = names(kinds=("package",), ecosystem=ecosystem)
    if len(found) != 1:
        raise ValueError(f"{ecosystem} has {len(found)} package manifests, not one")
    return found[0]


def project_files(ecosystem: Ecosystem) -> tuple[str, ...]:
    """The files of an ecosystem that make a directory a project of it (all but its lock
    files), in the order its tool looks for them."""
    return names(kinds=("package", "dependencies", "build"), ecosystem=ecosystem)
