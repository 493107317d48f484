"""Resolve imports to workspace files and associate tests with sources. Pure.

In: per-file facts (language, imports as written, Java package, manifest name). Out: edges
``(src, dst, kind, evidence)`` with kind ``imports`` (src imports dst) or ``tests`` (src is a
test of dst). External modules resolve to nothing; nothing here touches the disk.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from excerpt.index.extract import Import

__all__ = ["Edge", "FileFacts", "is_test_path", "resolve_graph"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileFacts:
    """What resolution needs to know about one indexed file."""

    path: str
    language: str
    imports: tuple[Import, ...] = ()
    package: str | None = None
    manifest: str | None = None  # go.mod module path, package.json name


@dataclass(frozen=True, slots=True, order=True)
class Edge:
    src: str
    dst: str
    kind: str  # "imports" | "tests"
    evidence: str  # "import" | "name"


_JS_LANGS = frozenset({"javascript", "typescript", "tsx"})
_JS_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")
_TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "testing"})


_JAVA_TEST_SET = re.compile(r"^(test|it)([-_A-Z].*)?$|^.*[a-z]Test$")
_JAVA_TEST_NAME = re.compile(r"(Tests?|IT)$|^Test[A-Z]")


def is_test_path(path: str) -> bool:
    """True for test files by the naming conventions of the supported ecosystems."""
    parts = path.split("/")
    name = parts[-1]
    stem, _, ext = name.rpartition(".")
    if ext == "py":
        return (
            name.startswith("test_")
            or stem.endswith("_test")
            or name == "conftest.py"
            or (any(p in _TEST_DIRS for p in parts[:-1]) and name != "__init__.py")
        )
    if ext == "go":
        return stem.endswith("_test")
    if ext == "java":
        # Maven and Gradle test source sets: src/test, src/it, src/test-jdk17,
        # src/testFixtures, src/integrationTest
        source_set = parts[parts.index("src") + 1] if "src" in parts[:-2] else ""
        return bool(_JAVA_TEST_SET.match(source_set) or _JAVA_TEST_NAME.search(stem))
    if ext in ("js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts"):
        return bool(re.search(r"\.(test|spec)$", stem)) or any(p in _TEST_DIRS for p in parts[:-1])
    if ext == "rs":
        # integration tests, benches and their helpers, at any depth outside src/
        return "src" not in parts and any(p in ("tests", "benches") for p in parts[:-1])
    return False


_TEST_AFFIX = re.compile(r"^test_|_test$|^Test(?=[A-Z])|(?<=[a-z0-9])(Tests?|IT)$|_spec$")


def _test_subject(path: str) -> str | None:
    """The source stem a test file's name points at (``test_views.py`` → ``views``).

    None when the name carries no test affix (a helper or fixture inside a test directory),
    except for Rust integration tests, which are named after what they test.
    """
    name = path.rsplit("/", 1)[-1]
    stem, _, rest = name.partition(".")
    if rest.startswith(("test.", "spec.")):
        return stem.lower()
    subject = _TEST_AFFIX.sub("", stem)
    if subject == stem and not name.endswith(".rs"):
        return None
    return subject.lower() or None


@dataclass
class _Tables:
    by_path: dict[str, FileFacts]
    py_modules: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    java_classes: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    java_packages: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    dir_files: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    go_modules: dict[str, str] = field(default_factory=dict)  # module path -> dir
    js_packages: dict[str, str] = field(default_factory=dict)  # package name -> dir
    cargo_dirs: set[str] = field(default_factory=set)
    rust_modules: dict[tuple[str, tuple[str, ...]], str] = field(default_factory=dict)
    init_dirs: set[str] = field(default_factory=set)
    rust_crates: dict[str, str] = field(default_factory=dict)  # crate name -> Cargo.toml dir
    py_suffixes: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def _tables(files: Iterable[FileFacts]) -> _Tables:
    by_path = {f.path: f for f in files}
    init_dirs = {posixpath.dirname(p) for p in by_path if p.rsplit("/", 1)[-1] == "__init__.py"}
    t = _Tables(by_path=by_path, init_dirs=init_dirs)
    for path, facts in sorted(by_path.items()):
        directory, name = posixpath.split(path)
        t.dir_files[directory].append(path)
        if facts.language == "python":
            t.py_modules[_py_module(path, init_dirs)].append(path)
            parts = path.rsplit(".", 1)[0].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            for k in range(len(parts)):
                t.py_suffixes[".".join(parts[k:])].append(path)
        elif facts.language == "java" and facts.package is not None:
            stem = name.rsplit(".", 1)[0]
            t.java_classes[f"{facts.package}.{stem}"].append(path)
            t.java_packages[facts.package].append(path)
        if name == "go.mod" and facts.manifest:
            t.go_modules[facts.manifest] = directory
        elif name == "package.json" and facts.manifest:
            t.js_packages[facts.manifest] = directory
        elif name == "Cargo.toml":
            t.cargo_dirs.add(directory)
            if facts.manifest:
                t.rust_crates[facts.manifest.replace("-", "_")] = directory
    for path, facts in by_path.items():
        if facts.language == "rust":
            crate = _crate_of(path, t.cargo_dirs)
            if crate is not None:
                t.rust_modules[(crate, _rust_module_path(path, crate))] = path
    return t


def _py_module(path: str, init_dirs: set[str]) -> str:
    directory, name = posixpath.split(path)
    parts = [] if name in ("__init__.py", "__init__.pyi") else [name.rsplit(".", 1)[0]]
    while directory in init_dirs:
        head, tail = posixpath.split(directory)
        parts.insert(0, tail)
        if directory == head or not directory:
            break
        directory = head
    return ".".join(p for p in parts if p)


def _resolve_python(t: _Tables, src: str, imp: Import) -> list[str]:
    module = imp.module
    if module.startswith("."):
        level = len(module) - len(module.lstrip("."))
        own = _py_module(src, t.init_dirs)
        package = own.split(".") if src.endswith("__init__.py") else own.split(".")[:-1]
        base = package[: len(package) - (level - 1)] if level - 1 <= len(package) else []
        rest = module[level:]
        module = ".".join([*base, *([rest] if rest else [])])
    found: list[str] = []
    for name in imp.names:
        found += t.py_modules.get(f"{module}.{name}" if module else name, [])
    parts = module.split(".") if module else []
    for k in range(len(parts), 0, -1):
        hit = t.py_modules.get(".".join(parts[:k]))
        if hit:
            found += hit
            break
    if not found and len(parts) > 1:  # namespace packages, missing __init__.py
        for k in range(len(parts), 1, -1):
            hit = t.py_suffixes.get(".".join(parts[:k]))
            if hit and len(hit) == 1:
                found += hit
                break
    here = posixpath.dirname(src)
    if not found and parts and here not in t.init_dirs:  # a script next to its module
        sibling = posixpath.join(here, parts[0] + ".py")
        if sibling in t.by_path:
            found.append(sibling)
    return found


def _resolve_js(t: _Tables, src: str, imp: Import) -> list[str]:
    spec = imp.module.split("?", 1)[0]
    if spec.startswith("."):
        return _js_candidates(t, posixpath.normpath(posixpath.join(posixpath.dirname(src), spec)))
    for name in sorted(t.js_packages, key=len, reverse=True):
        if spec == name or spec.startswith(name + "/"):
            base = posixpath.join(t.js_packages[name], spec[len(name) + 1 :])
            hit = _js_candidates(t, base.rstrip("/"))
            return hit or _js_candidates(t, posixpath.join(t.js_packages[name], "src", "index"))
    return []


def _js_candidates(t: _Tables, base: str) -> list[str]:
    stem, ext = posixpath.splitext(base)
    options = [base, *(base + e for e in _JS_EXTS), *(f"{base}/index{e}" for e in _JS_EXTS)]
    if ext in (".js", ".jsx", ".mjs", ".cjs"):
        options += [stem + e for e in (".ts", ".tsx", ".mts", ".cts")]
    for option in options:
        if option in t.by_path and option != ".":
            return [option]
    return []


def _resolve_go(t: _Tables, src: str, imp: Import) -> list[str]:
    for module, directory in sorted(t.go_modules.items(), key=lambda kv: -len(kv[0])):
        if imp.module == module or imp.module.startswith(module + "/"):
            target = posixpath.normpath(posixpath.join(directory, imp.module[len(module) + 1 :]))
            target = "" if target == "." else target
            return [
                p
                for p in t.dir_files.get(target, [])
                if p.endswith(".go") and not p.endswith("_test.go") and p != src
            ]
    return []


def _crate_of(path: str, cargo_dirs: set[str]) -> str | None:
    directory = posixpath.dirname(path)
    while True:
        if directory in cargo_dirs and path.startswith(posixpath.join(directory, "src") + "/"):
            return directory
        if not directory:
            return None
        directory = posixpath.dirname(directory)


def _rust_module_path(path: str, crate: str) -> tuple[str, ...]:
    rel = path[len(posixpath.join(crate, "src")) + 1 :]
    parts = rel[: -len(".rs")].split("/")
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def _resolve_rust(t: _Tables, src: str, imp: Import) -> list[str]:
    crate = _crate_of(src, t.cargo_dirs)
    named = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)::", imp.module)
    if imp.kind != "mod" and named and named.group(1) in t.rust_crates:
        # ``use shop::x`` from an integration test or a sibling crate of the workspace
        rest = imp.module[named.end() :]
        own = Import(module=f"crate::{rest}", names=imp.names, line=imp.line)
        return _resolve_rust_use(t, t.rust_crates[named.group(1)], (), own)
    if crate is None:
        if imp.kind == "mod":  # loose files: mod x; next to the declaring file
            here = posixpath.dirname(src)
            options = (f"{imp.module}.rs", f"{imp.module}/mod.rs")
            return [
                posixpath.join(here, o) for o in options if posixpath.join(here, o) in t.by_path
            ]
        return []
    current = _rust_module_path(src, crate)
    if imp.kind == "mod":
        return _rust_lookup(t, crate, (*current, imp.module))
    return _resolve_rust_use(t, crate, current, imp)


def _resolve_rust_use(t: _Tables, crate: str, current: tuple[str, ...], imp: Import) -> list[str]:
    text = re.sub(r"\s+", "", imp.module)
    head, _, group = text.partition("::{")
    parts = [p for p in head.split("::") if p]
    names = [n.split("::")[0] for n in group.rstrip("}").split(",") if n] if group else []
    if not parts:
        return []
    if parts[0] == "crate":
        base: tuple[str, ...] = ()
    elif parts[0] in ("self", "super"):
        base = current
        while parts and parts[0] in ("self", "super"):
            base = base[:-1] if parts[0] == "super" else base
            parts = parts[1:]
        parts = ["_", *parts]
    else:
        return []
    found: list[str] = []
    for name in names:
        found += _rust_lookup(t, crate, (*base, *parts[1:], name))
    return found or _rust_lookup(t, crate, (*base, *parts[1:]))


def _rust_lookup(t: _Tables, crate: str, path: tuple[str, ...]) -> list[str]:
    """The file of the longest module prefix of ``path``; the crate root (``lib.rs``) holds
    items named directly under ``crate::``."""
    for k in range(len(path), -1, -1):
        hit = t.rust_modules.get((crate, path[:k]))
        if hit:
            return [hit]
    return []


def _resolve_java(t: _Tables, src: str, imp: Import) -> list[str]:
    if imp.names == ("*",):
        in_package = [
            p
            for p in t.java_packages.get(imp.module, [])
            if p != src and (is_test_path(src) or not is_test_path(p))
        ]
        if in_package:
            return in_package
        # otherwise ``import static a.b.Class.*``: the class itself
    parts = imp.module.split(".")
    for k in range(len(parts), 1, -1):  # static imports name a member after the class
        hit = t.java_classes.get(".".join(parts[:k]))
        if hit:
            return hit
    return []


_RESOLVERS = {
    "python": _resolve_python,
    "javascript": _resolve_js,
    "typescript": _resolve_js,
    "tsx": _resolve_js,
    "go": _resolve_go,
    "rust": _resolve_rust,
    "java": _resolve_java,
}


def resolve_graph(files: Iterable[FileFacts]) -> list[Edge]:
    """Import edges and test associations among ``files``, sorted and unique."""
    t = _tables(files)
    edges: set[Edge] = set()
    for path, facts in t.by_path.items():
        resolver = _RESOLVERS.get(facts.language)
        if resolver is None:
            continue
        for imp in facts.imports:
            for dst in resolver(t, path, imp):
                if dst != path:
                    edges.add(Edge(path, dst, "imports", "import"))
    edges |= _test_edges(t.by_path, edges)
    return sorted(edges)


def _family(language: str) -> str:
    return "js" if language in _JS_LANGS else language


def _test_edges(by_path: Mapping[str, FileFacts], imports: set[Edge]) -> set[Edge]:
    tests = {p for p, f in by_path.items() if f.language in _RESOLVERS and is_test_path(p)}
    sources: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path, facts in by_path.items():
        if facts.language in _RESOLVERS and path not in tests:
            stem = path.rsplit("/", 1)[-1].split(".", 1)[0].lower()
            sources[(_family(facts.language), stem)].append(path)
    out = {
        Edge(e.src, e.dst, "tests", "import")
        for e in imports
        if e.src in tests and e.dst not in tests
    }
    for test in sorted(tests):
        subject = _test_subject(test)
        if subject is None:
            continue
        candidates = sources.get((_family(by_path[test].language), subject), [])
        best = _closest(test, candidates)
        if best is not None:
            out.add(Edge(test, best, "tests", "name"))
    return out


def _closest(test: str, candidates: list[str]) -> str | None:
    """The candidate whose directories look most like the test's; None when ambiguous."""
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    words = set(re.split(r"[/_.-]+", test.rsplit("/", 1)[0].lower())) - _TEST_DIRS - {""}
    scored = sorted(
        ((_shared_dirs(test, c) + _dir_overlap(words, c), c) for c in candidates), reverse=True
    )
    (best_score, best), (second_score, _) = scored[0], scored[1]
    return best if best_score > second_score else None


def _dir_overlap(words: set[str], path: str) -> int:
    return len(words & set(re.split(r"[/_.-]+", path.rsplit("/", 1)[0].lower())))


def _shared_dirs(a: str, b: str) -> int:
    """How alike two paths' directories are: common leading plus trailing components."""
    da, db = a.split("/")[:-1], b.split("/")[:-1]
    lead = next(
        (i for i, (x, y) in enumerate(zip(da, db, strict=False)) if x != y), min(len(da), len(db))
    )
    trail = next(
        (i for i, (x, y) in enumerate(zip(reversed(da), reversed(db), strict=False)) if x != y),
        min(len(da), len(db)),
    )
    return 2 * lead + trail
