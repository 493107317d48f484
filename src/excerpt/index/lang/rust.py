"""Rust: ``use`` paths and ``mod x;`` declarations resolve through the crate's module tree.

Crates are found by ``Cargo.toml`` (a workspace may hold several, and ``use other_crate::…``
reaches a sibling); methods in an ``impl`` block are qualified by the implemented type.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from excerpt.core.manifests import package_manifest
from excerpt.index.lang.base import (
    Import,
    Language,
    Resolve,
    TestPaths,
    Workspace,
    line_of,
    node_text,
)

if TYPE_CHECKING:
    import tree_sitter as ts

__all__ = ["RUST"]

_MANIFEST = package_manifest("rust")  # Cargo.toml

_NAME = "rust"
# blanks within a line only: ``\s*`` after ``^`` spans line ends, and each of n blank lines
# after ``[package]`` then tried all the lines below it (200,000 blank lines: 95 s)
_CRATE_NAME = re.compile(
    rb"^\[package\][^\[]*?^[ \t]*name[ \t]*=[ \t]*[\"']([^\"']+)", re.MULTILINE | re.DOTALL
)


def _grammar() -> object:
    import tree_sitter_rust

    return tree_sitter_rust.language()


def _definitions() -> tuple[str, ...]:
    import tree_sitter_rust

    return (tree_sitter_rust.TAGS_QUERY,)


_IMPORTS = """
        (use_declaration argument: (_) @use)
        (mod_item name: (identifier) @mod !body)
    """


def _use(node: ts.Node) -> list[Import]:
    return [Import(module=node_text(node), names=(), line=line_of(node))]


def _mod(node: ts.Node) -> list[Import]:
    return [Import(module=node_text(node), names=(), line=line_of(node), kind="mod")]


def _impl_type(node: ts.Node) -> str | None:
    """An ``impl`` lends its bare type name (``impl<T> a::Stack<T>`` -> ``Stack``)."""
    if node.type != "impl_item":
        return None
    text = re.sub(r"<.*", "", node_text(node.child_by_field_name("type")), flags=re.DOTALL)
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
    return words[-1] if words else None


def _crate_name(data: bytes) -> str | None:
    match = _CRATE_NAME.search(data)
    return match.group(1).decode("utf-8", "replace") if match else None


@dataclass
class _Tables:
    by_path: set[str]
    cargo_dirs: set[str] = field(default_factory=set)
    crates: dict[str, str] = field(default_factory=dict)  # crate name -> Cargo.toml dir
    modules: dict[tuple[str, tuple[str, ...]], str] = field(default_factory=dict)


def _resolver(ws: Workspace) -> Resolve:
    t = _Tables(by_path=set(ws.by_path))
    for path in ws.paths:
        directory, name = posixpath.split(path)
        if name == _MANIFEST:
            t.cargo_dirs.add(directory)
            manifest = ws.by_path[path].manifest
            if manifest:
                t.crates[manifest.replace("-", "_")] = directory
    for path, facts in ws.by_path.items():
        if facts.language == _NAME:
            crate = _crate_of(path, t.cargo_dirs)
            if crate is not None:
                t.modules[(crate, _module_path(path, crate))] = path
    return partial(_resolve, t)


def _crate_of(path: str, cargo_dirs: set[str]) -> str | None:
    directory = posixpath.dirname(path)
    while True:
        if directory in cargo_dirs and path.startswith(posixpath.join(directory, "src") + "/"):
            return directory
        if not directory:
            return None
        directory = posixpath.dirname(directory)


def _module_path(path: str, crate: str) -> tuple[str, ...]:
    rel = path[len(posixpath.join(crate, "src")) + 1 :]
    parts = rel[: -len(".rs")].split("/")
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def _resolve(t: _Tables, src: str, imp: Import) -> list[str]:
    crate = _crate_of(src, t.cargo_dirs)
    named = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)::", imp.module)
    if imp.kind != "mod" and named and named.group(1) in t.crates:
        # ``use shop::x`` from an integration test or a sibling crate of the workspace
        rest = imp.module[named.end() :]
        own = Import(module=f"crate::{rest}", names=imp.names, line=imp.line)
        return _resolve_use(t, t.crates[named.group(1)], (), own)
    if crate is None:
        if imp.kind == "mod":  # loose files: mod x; next to the declaring file
            here = posixpath.dirname(src)
            options = (f"{imp.module}.rs", f"{imp.module}/mod.rs")
            return [
                posixpath.join(here, o) for o in options if posixpath.join(here, o) in t.by_path
            ]
        return []
    current = _module_path(src, crate)
    if imp.kind == "mod":
        return _lookup(t, crate, (*current, imp.module))
    return _resolve_use(t, crate, current, imp)


def _resolve_use(t: _Tables, crate: str, current: tuple[str, ...], imp: Import) -> list[str]:
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
        found += _lookup(t, crate, (*base, *parts[1:], name))
    return found or _lookup(t, crate, (*base, *parts[1:]))


def _lookup(t: _Tables, crate: str, path: tuple[str, ...]) -> list[str]:
    """The file of the longest module prefix of ``path``; the crate root (``lib.rs``) holds
    items named directly under ``crate::``."""
    for k in range(len(path), -1, -1):
        hit = t.modules.get((crate, path[:k]))
        if hit:
            return [hit]
    return []


RUST = Language(
    name=_NAME,
    extensions=(".rs",),
    grammar=_grammar,
    definitions=_definitions,
    imports=_IMPORTS,
    import_hooks={"use": _use, "mod": _mod},
    container=_impl_type,
    resolver=_resolver,
    manifests={_MANIFEST: _crate_name},
    tests=TestPaths(
        # integration tests, benches and their helpers, at any depth outside src/
        dirs=frozenset({"tests", "benches"}),
        dirs_not_under=frozenset({"src"}),
        bare_names=True,  # an integration test is named after what it tests
    ),
)
