"""The ``Language`` record every language module fills in, and the values its hooks exchange.

A language is data plus a few small functions: how its files are named, which grammar parses
them, which queries find definitions and imports, how an import capture becomes an ``Import``,
how imports resolve to workspace files, and which paths are tests. Nothing here knows any
particular language.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    import tree_sitter as ts

__all__ = [
    "TEST_AFFIXES",
    "TEST_DIRS",
    "ContainerHook",
    "FileFacts",
    "Import",
    "ImportHook",
    "Language",
    "ManifestReader",
    "OwnerHook",
    "PackageHook",
    "Resolve",
    "ResolverFactory",
    "TestPaths",
    "Workspace",
    "line_of",
    "node_text",
    "quoted_source",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Import:
    """An import as written: ``module`` (e.g. ``..pkg.mod``, ``./util``, ``crate::a::B``)."""

    module: str
    names: tuple[str, ...]
    line: int
    kind: str = "import"  # "import" | "mod" (a Rust ``mod x;`` declaration)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_import, (self.module, self.names, self.line, self.kind))  # as Symbol's


def _import(module: str, names: tuple[str, ...], line: int, kind: str) -> Import:
    return Import(module=module, names=names, line=line, kind=kind)


@dataclass(frozen=True, slots=True, kw_only=True)
class FileFacts:
    """What resolution needs to know about one indexed file."""

    path: str
    language: str
    imports: tuple[Import, ...] = ()
    package: str | None = None
    manifest: str | None = None  # what a language's manifest reader found (see ``manifests``)


@dataclass(frozen=True, slots=True, kw_only=True)
class Workspace:
    """Every indexed file, as a resolver's tables are built from it."""

    by_path: Mapping[str, FileFacts]  # in the order the facts were given
    paths: tuple[str, ...]  # sorted
    dir_files: Mapping[str, Sequence[str]]  # directory -> its files, sorted
    is_test: Callable[[str], bool]  # the registry's test-path rule, for any path


# Hooks. A hook receives a captured syntax node of its language's own query.
ImportHook = Callable[["ts.Node"], Iterable[Import]]
"""The imports one capture of the import query stands for."""
PackageHook = Callable[["ts.Node"], "str | None"]
"""The package a ``@package`` capture declares (Java's ``package a.b;``)."""
ContainerHook = Callable[["ts.Node"], "str | None"]
"""The name an enclosing node that is not itself a definition lends to the definitions inside
it (a Rust ``impl`` block), or None for any other node."""
OwnerHook = Callable[["ts.Node", str], "str | None"]
"""For a definition node and its kind, the name that qualifies it instead of its enclosing
definitions (a Go method's receiver type), or None to keep the enclosing ones."""
Resolve = Callable[[str, Import], Iterable[str]]
"""The workspace files an import of the given file refers to (none for external modules)."""
ResolverFactory = Callable[[Workspace], Resolve]
"""Builds a language's lookup tables from the workspace once per graph build."""
ManifestReader = Callable[[bytes], "str | None"]
"""The name a manifest file declares (a Go module path, a package or crate name)."""

TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "testing"})
# the test affixes of all the ecosystems so far: test_x, x_test, TestX, XTest(s), XIT, x_spec
TEST_AFFIXES = re.compile(r"^test_|_test$|^Test(?=[A-Z])|(?<=[a-z0-9])(Tests?|IT)$|_spec$")


@dataclass(frozen=True, slots=True, kw_only=True)
class TestPaths:
    """Which files of a language are tests, and what a test's name says it tests. Data only.

    A path is a test when its extension is one of ``extensions`` and any rule holds: its
    stem (the file name up to its last dot) matches ``stem``; its file name is one of
    ``names``; the directory after its first ``src/`` matches ``source_sets`` (Maven and
    Gradle test source sets); or a directory above it is one of ``dirs``, unless the file is
    named one of ``dirs_exempt`` or any path component is one of ``dirs_not_under``.
    """

    __test__: ClassVar[bool] = False  # not a pytest test class

    extensions: tuple[str, ...] = ()  # case-sensitive, with the dot; () = the language's own
    stem: re.Pattern[str] | None = None
    names: frozenset[str] = frozenset()
    source_sets: re.Pattern[str] | None = None
    dirs: frozenset[str] = frozenset()
    dirs_exempt: frozenset[str] = frozenset()
    dirs_not_under: frozenset[str] = frozenset()
    # naming a test's subject: ``x.test.js`` -> ``x``; else the name without ``affixes``
    infixes: tuple[str, ...] = ("test.", "spec.")
    affixes: re.Pattern[str] = TEST_AFFIXES
    bare_names: bool = False  # a test without an affix is named after its subject (Rust)

    def matches(self, path: str) -> bool:
        """True when ``path`` (a file of this rule's extensions) is a test by these rules."""
        parts = path.split("/")
        name = parts[-1]
        if name in self.names:
            return True
        if self.stem is not None and self.stem.search(name.rpartition(".")[0]):
            return True
        if (
            self.source_sets is not None
            and "src" in parts[:-2]
            and self.source_sets.match(parts[parts.index("src") + 1])
        ):
            return True
        return (
            name not in self.dirs_exempt
            and not any(p in self.dirs_not_under for p in parts)
            and any(p in self.dirs for p in parts[:-1])
        )

    def subject(self, path: str) -> str | None:
        """The source stem a test's name points at (``test_views.py`` -> ``views``), lower-case.

        None when the name carries no test affix (a helper or fixture inside a test
        directory), unless ``bare_names``.
        """
        name = path.rsplit("/", 1)[-1]
        stem, _, rest = name.partition(".")
        if rest.startswith(self.infixes):
            return stem.lower()
        subject = self.affixes.sub("", stem)
        if subject == stem and not self.bare_names:
            return None
        return subject.lower() or None


_V = TypeVar("_V")


def _frozen(mapping: Mapping[str, _V]) -> Mapping[str, _V]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Language:
    """Everything the index knows about one parsed language. One record per grammar,
    compared by identity.

    Several records form a family (JavaScript, TypeScript, TSX) when their files import one
    another and a test in one may test a file in another; they share ``family`` and usually
    one ``resolver``.
    """

    name: str  # stored as the file's language in the index; unique across the registry
    family: str = ""  # "" = the language's own name
    extensions: tuple[str, ...]  # lower-case, with the dot; matched case-insensitively
    filenames: tuple[str, ...] = ()  # whole file names (``Rakefile``), matched exactly
    grammar: Callable[[], object]  # the tree-sitter language pointer; imports the wheel
    # tags-query sources (the wheel's TAGS_QUERY or our own); only @definition.* patterns used
    definitions: Callable[[], tuple[str, ...]]
    imports: str = ""  # our import query; each capture named in ``import_hooks`` is read
    import_hooks: Mapping[str, ImportHook] = field(default_factory=dict)
    package_hook: PackageHook | None = None  # reads the ``@package`` capture
    wrappers: frozenset[str] = frozenset()  # parent node types a definition's lines include
    declarators: frozenset[str] = frozenset()  # node types whose parent statement is the span
    container: ContainerHook | None = None
    owner: OwnerHook | None = None
    # rewrites, at equal length (spans hold), input the grammar's own scanner misreads
    prepare: Callable[[bytes], bytes] | None = None
    resolver: ResolverFactory | None = None  # None: imports never resolve to files
    manifests: Mapping[str, ManifestReader] = field(default_factory=dict)  # file name -> reader
    tests: TestPaths = TestPaths()

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise ValueError(f"bad language name {self.name!r}")
        for ext in self.extensions:
            if not ext.startswith(".") or ext != ext.lower():
                raise ValueError(f"{self.name}: extension {ext!r} must be lower-case with a dot")
        for capture in [*self.import_hooks, *(["package"] if self.package_hook else [])]:
            if not re.search(rf"@{re.escape(capture)}\b", self.imports):
                raise ValueError(f"{self.name}: no @{capture} capture in the import query")
        object.__setattr__(self, "import_hooks", _frozen(self.import_hooks))
        object.__setattr__(self, "manifests", _frozen(self.manifests))

    @property
    def family_name(self) -> str:
        """The family's name: languages of one family share import resolution and tests."""
        return self.family or self.name

    @property
    def test_extensions(self) -> tuple[str, ...]:
        """The extensions ``tests`` applies to."""
        return self.tests.extensions or self.extensions


def node_text(node: ts.Node | None) -> str:
    """The node's source text (empty for a missing node)."""
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def line_of(node: ts.Node) -> int:
    """The 1-based line a node starts on."""
    return int(node.start_point.row) + 1


def quoted_source(node: ts.Node) -> list[Import]:
    """An import hook for a captured string literal naming a module (``'./util'``)."""
    spec = node_text(node).strip("\"'`")
    return [Import(module=spec, names=(), line=line_of(node))] if spec else []
