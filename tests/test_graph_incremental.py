"""The graph kept up to date edit by edit equals the graph of an index built from nothing.

A refresh resolves again only the imports of files whose import rows changed, and the whole
graph when a file is added, removed or renamed or its language, package or manifest changes
(``excerpt.index.store``). Random sequences of such edits are applied to a small repository of
each parsed language, its modules importing one another in that language's own forms; after
every step the refreshed index must equal, row by row, an index of the same tree built in an
empty cache.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from excerpt.index.build import index_repository, refresh_paths
from excerpt.index.lang import PARSED_LANGUAGES
from excerpt.index.store import IndexStore


@dataclass(frozen=True)
class Layout:
    """How one language writes a module named ``m`` importing modules ``imps``, its test, and
    the files every repository of it has (``extra`` gets the current module names)."""

    module: Callable[[str, list[str]], tuple[str, str]]
    test: Callable[[str], tuple[str, str]]
    fixed: dict[str, str]
    extra: Callable[[list[str]], dict[str, str]] | None = None


def _cap(m: str) -> str:
    return m[:1].upper() + m[1:]


def _lines(template: str, imps: list[str]) -> str:
    return "".join(template.format(t=t, T=_cap(t)) for t in imps)


def _js(ext: str) -> Layout:
    return Layout(
        module=lambda m, imps: (
            f"src/{m}.{ext}",
            _lines("import {{ {t} }} from './{t}';\n", imps)
            + f"\nexport function {m}() {{\n  return 1;\n}}\n",
        ),
        test=lambda m: (
            f"test/{m}.test.{ext}",
            f"import {{ {m} }} from '../src/{m}';\n\ntest('{m}', () => {m}());\n",
        ),
        fixed={},
    )


def _jvm(lang: str, ext: str, semi: str) -> Layout:
    return Layout(
        module=lambda m, imps: (
            f"src/main/{lang}/com/shop/{_cap(m)}.{ext}",
            f"package com.shop{semi}\n\n"
            + _lines("import com.shop.{T}" + semi + "\n", imps)
            + f"\npublic class {_cap(m)} {{}}\n",
        ),
        test=lambda m: (
            f"src/test/{lang}/com/shop/{_cap(m)}Test.{ext}",
            f"package com.shop{semi}\n\nimport com.shop.{_cap(m)}{semi}\n\n"
            f"class {_cap(m)}Test {{}}\n",
        ),
        fixed={},
    )


def _c_family(ext: str) -> Layout:
    return Layout(
        module=lambda m, imps: (
            f"src/{m}.{ext}",
            _lines('#include "{t}.' + ext + '"\n', imps) + f"\nint {m}_value(void);\n",
        ),
        test=lambda m: (
            f"tests/test_{m}.c",
            f'#include "../src/{m}.{ext}"\n\nint main(void) {{}}\n',
        ),
        fixed={},
    )


_GO_IMPORT = '\t"example.com/shop/{t}"\n'

LAYOUTS: dict[str, Layout] = {
    "python": Layout(
        module=lambda m, imps: (
            f"pkg/{m}.py",
            _lines("from pkg import {t}\n", imps) + f"\n\ndef {m}_fn():\n    return 1\n",
        ),
        test=lambda m: (
            f"tests/test_{m}.py",
            f"from pkg.{m} import {m}_fn\n\n\ndef test_{m}():\n    assert {m}_fn()\n",
        ),
        fixed={"pkg/__init__.py": ""},
    ),
    "javascript": _js("js"),
    "typescript": _js("ts"),
    "tsx": _js("tsx"),
    "go": Layout(
        module=lambda m, imps: (
            f"{m}/{m}.go",
            f"package {m}\n\n"
            + (f"import (\n{_lines(_GO_IMPORT, imps)})\n\n" if imps else "")
            + "func F() int { return 1 }\n",
        ),
        test=lambda m: (
            f"{m}/{m}_test.go",
            f'package {m}\n\nimport "testing"\n\nfunc TestF(t *testing.T) {{ F() }}\n',
        ),
        fixed={"go.mod": "module example.com/shop\n\ngo 1.21\n"},
    ),
    "rust": Layout(
        module=lambda m, imps: (
            f"src/{m}.rs",
            _lines("use crate::{t}::{T};\n", imps) + f"\npub struct {_cap(m)};\n",
        ),
        test=lambda m: (
            f"tests/{m}_test.rs",
            f"use shop::{m}::{_cap(m)};\n\n#[test]\nfn t() {{}}\n",
        ),
        fixed={"Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\n'},
        extra=lambda names: {"src/lib.rs": "".join(f"pub mod {m};\n" for m in sorted(names))},
    ),
    "java": _jvm("java", "java", ";"),
    "kotlin": _jvm("kotlin", "kt", ""),
    "scala": _jvm("scala", "scala", ""),
    "c": _c_family("h"),
    "cpp": _c_family("hpp"),
    "csharp": Layout(
        module=lambda m, imps: (
            f"Shop/{_cap(m)}.cs",
            _lines("using Shop.{T};\n", imps)
            + f"\nnamespace Shop.{_cap(m)} {{\n    public class {_cap(m)}Type {{}}\n}}\n",
        ),
        test=lambda m: (
            f"Shop.Tests/{_cap(m)}Tests.cs",
            f"using Shop.{_cap(m)};\n\n"
            f"namespace Shop.Tests {{\n    public class {_cap(m)}Tests {{}}\n}}\n",
        ),
        fixed={},
    ),
    "ruby": Layout(
        module=lambda m, imps: (
            f"lib/{m}.rb",
            _lines("require_relative '{t}'\n", imps) + f"\nmodule {_cap(m)}\nend\n",
        ),
        test=lambda m: (
            f"spec/{m}_spec.rb",
            f"require '{m}'\n\nRSpec.describe {_cap(m)} do\nend\n",
        ),
        fixed={},
    ),
    "php": Layout(
        module=lambda m, imps: (
            f"src/{m}.php",
            "<?php\n" + _lines("require_once '{t}.php';\n", imps) + f"\nfunction {m}_fn() {{}}\n",
        ),
        test=lambda m: (
            f"tests/{_cap(m)}Test.php",
            f"<?php\nrequire_once '../src/{m}.php';\n\nclass {_cap(m)}Test {{}}\n",
        ),
        fixed={},
    ),
    "swift": Layout(
        module=lambda m, imps: (
            f"Sources/{_cap(m)}/{_cap(m)}.swift",
            _lines("import {T}\n", imps) + f"\npublic struct {_cap(m)} {{}}\n",
        ),
        test=lambda m: (
            f"Tests/{_cap(m)}Tests/{_cap(m)}Tests.swift",
            f"import XCTest\nimport {_cap(m)}\n\nfinal class {_cap(m)}Tests: XCTestCase {{}}\n",
        ),
        fixed={},
    ),
    "lua": Layout(
        module=lambda m, imps: (
            f"{m}.lua",
            _lines('local {t} = require("{t}")\n', imps) + "\nlocal M = {}\nreturn M\n",
        ),
        test=lambda m: (f"spec/{m}_spec.lua", f'local {m} = require("{m}")\n'),
        fixed={},
    ),
    "shell": Layout(
        module=lambda m, imps: (
            f"lib/{m}.sh",
            "#!/bin/sh\n" + _lines('. "./{t}.sh"\n', imps) + f"\n{m}_fn() {{\n  echo 1\n}}\n",
        ),
        test=lambda m: (f"test/{m}.bats", f'#!/usr/bin/env bats\nload "../lib/{m}.sh"\n'),
        fixed={},
    ),
}

NAMES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf")


class Tree:
    """A repository of one language whose modules change at random, written to disk."""

    def __init__(self, root: Path, layout: Layout, rng: random.Random) -> None:
        self.root, self.layout, self.rng = root, layout, rng
        self.modules: dict[str, list[str]] = {}  # name -> the names it imports
        self.tests: set[str] = set()
        self.body: dict[str, int] = {}  # name -> lines appended below its code
        self.touched: set[str] = set()  # the paths written or removed since it was cleared
        for path, text in layout.fixed.items():
            self._write(path, text)
        for name in NAMES[:4]:
            self.modules[name] = []
        for name in self.modules:
            self.modules[name] = self._imports(name)
            self._write_module(name)
        self.tests.add(NAMES[0])
        self._write(*layout.test(NAMES[0]))
        self._write_extra()

    def _imports(self, name: str) -> list[str]:
        pool = [n for n in NAMES if n != name]  # some not (yet) in the tree
        return sorted(self.rng.sample(pool, self.rng.randint(0, 3)))

    def _write(self, path: str, text: str) -> None:
        self.touched.add(path)
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def _write_module(self, name: str) -> None:
        path, text = self.layout.module(name, self.modules[name])
        self._write(path, text + "\n" * self.body.get(name, 0))

    def _write_extra(self) -> None:
        if self.layout.extra is not None:
            for path, text in self.layout.extra(list(self.modules)).items():
                self._write(path, text)

    def _remove(self, name: str) -> None:
        self.touched.add(self.layout.module(name, [])[0])
        (self.root / self.layout.module(name, [])[0]).unlink()
        del self.modules[name]
        self.body.pop(name, None)
        if name in self.tests:
            self.touched.add(self.layout.test(name)[0])
            (self.root / self.layout.test(name)[0]).unlink()
            self.tests.discard(name)

    def step(self) -> str:
        """Apply one random edit; what it was."""
        ops = ["imports", "imports", "body", "add", "remove", "rename", "test"]
        op = self.rng.choice(ops)
        present, absent = sorted(self.modules), [n for n in NAMES if n not in self.modules]
        if (op in ("add", "rename") and not absent) or (
            op in ("remove", "rename") and len(present) < 2
        ):
            op = "imports"
        name = self.rng.choice(present)
        if op == "imports":
            self.modules[name] = self._imports(name)
            self._write_module(name)
        elif op == "body":
            self.body[name] = self.body.get(name, 0) + 1
            self._write_module(name)
        elif op == "add":
            name = self.rng.choice(absent)
            self.modules[name] = self._imports(name)
            self._write_module(name)
        elif op == "remove":
            self._remove(name)
        elif op == "rename":
            imports, new = self.modules[name], self.rng.choice(absent)
            self._remove(name)
            self.modules[new] = [n for n in imports if n != new]
            self._write_module(new)
            op = f"rename {name} ->"
            name = new
        else:  # a test added or removed
            if name in self.tests:
                self.touched.add(self.layout.test(name)[0])
                (self.root / self.layout.test(name)[0]).unlink()
                self.tests.discard(name)
            else:
                self.tests.add(name)
                self._write(*self.layout.test(name))
        self._write_extra()
        return f"{op} {name}"


def _snapshot(root: Path, cache: Path) -> dict[str, Any]:
    report = index_repository(root, cache_dir=cache, jobs=1, history=None)
    assert report.cache_dir is not None
    store = IndexStore.open(report.cache_dir)
    try:
        return store.snapshot()
    finally:
        store.close()


def _named_snapshot(tree: Tree, cache: Path) -> tuple[dict[str, Any], bool]:
    """The index refreshed from the paths the last steps touched (``refresh_paths``, as the
    MCP server's watcher names them), or the whole tree when those cannot be refreshed
    alone; and which it was."""
    report = refresh_paths(tree.root, sorted(tree.touched), cache_dir=cache, jobs=1)
    tree.touched.clear()
    if report is None:
        return _snapshot(tree.root, cache), False
    assert report.cache_dir is not None
    store = IndexStore.open(report.cache_dir)
    try:
        return store.snapshot(), True
    finally:
        store.close()


def _run(tmp_path: Path, language: str, seed: int, steps: int, *, named: bool = False) -> None:
    rng = random.Random(f"{language}/{seed}")
    tree = Tree(tmp_path / "repo", LAYOUTS[language], rng)
    cache = tmp_path / "cache"
    first = _snapshot(tree.root, cache)
    assert first["edges"], f"{language}: the layout resolves no import"
    tree.touched.clear()
    done: list[str] = []
    for n in range(steps):
        done.append(tree.step())
        if named:
            kept, alone = _named_snapshot(tree, cache)
            # files written in place are refreshed alone; a file added or removed is not
            edits = done[-1].split()[0] in ("imports", "body")
            assert alone == edits, f"{language} seed {seed} after {done}"
        else:
            kept = _snapshot(tree.root, cache)
        fresh = _snapshot(tree.root, tmp_path / f"fresh{n}")
        assert kept == fresh, f"{language} seed {seed} after {done}"


def test_every_parsed_language_has_a_layout() -> None:
    assert set(LAYOUTS) == set(PARSED_LANGUAGES)


@pytest.mark.parametrize("language", sorted(LAYOUTS))
def test_a_refreshed_graph_equals_a_fresh_index_after_random_edits(
    tmp_path: Path, language: str
) -> None:
    _run(tmp_path, language, seed=0, steps=6)


@pytest.mark.parametrize("language", sorted(LAYOUTS))
def test_the_named_paths_refreshed_alone_equal_a_fresh_index_after_random_edits(
    tmp_path: Path, language: str
) -> None:
    _run(tmp_path, language, seed=100, steps=6, named=True)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 13))
@pytest.mark.parametrize("language", sorted(LAYOUTS))
def test_a_refreshed_graph_equals_a_fresh_index_after_random_edits_many_seeds(
    tmp_path: Path, language: str, seed: int
) -> None:
    _run(tmp_path, language, seed=seed, steps=6)


def test_past_the_pending_limit_the_whole_graph_is_resolved_and_equal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import excerpt.index.build as build
    from excerpt.index.resolve import resolve_graph

    monkeypatch.setattr(build, "_PENDING_MAX", 1)
    whole: list[int] = []

    def counted(facts: Any) -> Any:
        whole.append(1)
        return resolve_graph(facts)

    monkeypatch.setattr(build, "resolve_graph", counted)
    tree = Tree(tmp_path / "repo", LAYOUTS["python"], random.Random("limit"))
    cache = tmp_path / "cache"
    _snapshot(tree.root, cache)
    whole.clear()
    for name in sorted(tree.modules)[:2]:  # two files' imports changed in one refresh
        tree.modules[name] = [n for n in sorted(tree.modules) if n != name]
        tree._write_module(name)
    kept = _snapshot(tree.root, cache)
    assert whole == [1]
    assert kept == _snapshot(tree.root, tmp_path / "fresh")
