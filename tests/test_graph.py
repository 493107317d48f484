"""The file graph: imports resolved to repository files, tests tied to their sources.

Every case is a repository built at test time, indexed for real, read back from the store.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from excerpt.core.settings import INDEX_DB
from excerpt.index.build import index_repository
from excerpt.index.lang import is_test_path
from excerpt.index.lang.base import FileFacts, Import
from excerpt.index.resolve import resolve_graph, resolve_imports
from excerpt.index.store import IndexStore

MakeRepo = Callable[..., Path]
EdgeRow = tuple[str, str, str, str]  # src, dst, kind, evidence


def index_snapshot(repo: Path, cache_dir: Path) -> dict[str, Any]:
    report = index_repository(repo, cache_dir=cache_dir)
    assert report.cache_dir is not None
    store = IndexStore.open(report.cache_dir)
    try:
        return store.snapshot()
    finally:
        store.close()


def edges(snap: Mapping[str, Any], kind: str | None = None) -> set[EdgeRow]:
    return {(e[0], e[1], e[2], e[3]) for e in snap["edges"] if kind is None or e[2] == kind}


def qualnames(snap: Mapping[str, Any]) -> set[tuple[str, str, str]]:
    """``(path, kind, qualname)`` of every stored symbol."""
    return {(path, kind, qual) for path, kind, _name, qual, _start, _end in snap["symbols"]}


def imp(src: str, dst: str) -> EdgeRow:
    return (src, dst, "imports", "import")


def covers(src: str, dst: str, evidence: str) -> EdgeRow:
    """A ``tests`` edge: ``src`` is a test of ``dst``."""
    return (src, dst, "tests", evidence)


# -- one repository per language ---------------------------------------------------------------

PYTHON = {
    "pyproject.toml": '[project]\nname = "pkg"\n',
    "src/pkg/__init__.py": "",
    "src/pkg/service.py": (
        "import os\nfrom .models import User\n\n\ndef run():\n    return User(os.getcwd())\n"
    ),
    "src/pkg/models.py": ("class User:\n    def __init__(self, name):\n        self.name = name\n"),
    "tests/test_service.py": (
        "from pkg.service import run\n\n\ndef test_run():\n    assert run()\n"
    ),
}
PYTHON_EDGES = {
    imp("src/pkg/service.py", "src/pkg/models.py"),
    imp("tests/test_service.py", "src/pkg/service.py"),
    covers("tests/test_service.py", "src/pkg/service.py", "import"),
    covers("tests/test_service.py", "src/pkg/service.py", "name"),
}
PYTHON_SYMBOLS = {
    ("src/pkg/service.py", "function", "run"),
    ("src/pkg/models.py", "class", "User"),
    ("src/pkg/models.py", "method", "User.__init__"),
    ("tests/test_service.py", "function", "test_run"),
}

JAVASCRIPT = {
    "package.json": '{"name": "app", "version": "1.0.0"}\n',
    "src/app.js": (
        "import { fmt } from './util';\n"
        "import React from 'react';\n"
        "const lib = require('./lib/index');\n"
        "\n"
        "export class App {\n"
        "  render() {\n"
        "    return fmt(lib.value);\n"
        "  }\n"
        "}\n"
    ),
    "src/util.js": "export function fmt(x) {\n  return String(x);\n}\n",
    "src/lib/index.js": "module.exports = { value: 1 };\n",
    "src/util.test.js": "test('fmt', () => {\n  expect(1).toBe(1);\n});\n",
}
JAVASCRIPT_EDGES = {
    imp("src/app.js", "src/util.js"),
    imp("src/app.js", "src/lib/index.js"),
    covers("src/util.test.js", "src/util.js", "name"),
}
JAVASCRIPT_SYMBOLS = {
    ("src/app.js", "class", "App"),
    ("src/app.js", "method", "App.render"),
    ("src/util.js", "function", "fmt"),
}

TYPESCRIPT = {
    "package.json": '{"name": "acme", "private": true, "workspaces": ["packages/*"]}\n',
    "packages/core/package.json": '{"name": "@acme/core", "version": "0.1.0"}\n',
    "packages/core/src/index.ts": (
        "export interface Greeter {\n"
        "  greet(name: string): string;\n"
        "}\n"
        "\n"
        "export function greet(name: string): string {\n"
        "  return `hi ${name}`;\n"
        "}\n"
    ),
    "packages/web/package.json": '{"name": "@acme/web", "version": "0.1.0"}\n',
    "packages/web/src/page.tsx": (
        "import React from 'react';\n"
        "import { greet } from '@acme/core';\n"
        "import { Button } from './button.js';\n"
        "\n"
        "export function Page() {\n"
        "  return <Button label={greet('x')} />;\n"
        "}\n"
    ),
    "packages/web/src/button.tsx": (
        "export function Button(props: { label: string }) {\n"
        "  return <button>{props.label}</button>;\n"
        "}\n"
    ),
    "packages/web/src/button.spec.tsx": (
        "import { Button } from './button';\n\n"
        "describe('Button', () => {\n  it('renders', () => {});\n});\n"
    ),
}
TYPESCRIPT_EDGES = {
    imp("packages/web/src/page.tsx", "packages/core/src/index.ts"),  # workspace package name
    imp("packages/web/src/page.tsx", "packages/web/src/button.tsx"),  # ./button.js → .tsx
    imp("packages/web/src/button.spec.tsx", "packages/web/src/button.tsx"),
    covers("packages/web/src/button.spec.tsx", "packages/web/src/button.tsx", "import"),
    covers("packages/web/src/button.spec.tsx", "packages/web/src/button.tsx", "name"),
}
TYPESCRIPT_SYMBOLS = {
    ("packages/core/src/index.ts", "interface", "Greeter"),
    ("packages/core/src/index.ts", "method", "Greeter.greet"),
    ("packages/core/src/index.ts", "function", "greet"),
    ("packages/web/src/page.tsx", "function", "Page"),
    ("packages/web/src/button.tsx", "function", "Button"),
}

GO = {
    "go.mod": "module example.com/shop\n\ngo 1.22\n",
    "cmd/main.go": (
        "package main\n\n"
        'import (\n\t"fmt"\n\n\t"example.com/shop/internal/orders"\n)\n\n'
        "func main() {\n\tfmt.Println(orders.Total())\n}\n"
    ),
    "internal/orders/orders.go": (
        "package orders\n\n"
        "type Order struct {\n\tID int\n}\n\n"
        "func (o *Order) Valid() bool {\n\treturn o.ID > 0\n}\n\n"
        "func Total() int {\n\treturn 0\n}\n"
    ),
    "internal/orders/store.go": (
        'package orders\n\nimport "sync"\n\ntype Store struct {\n\tmu sync.Mutex\n}\n'
    ),
    "internal/orders/orders_test.go": (
        'package orders\n\nimport "testing"\n\n'
        'func TestTotal(t *testing.T) {\n\tif Total() != 0 {\n\t\tt.Fatal("x")\n\t}\n}\n'
    ),
}
GO_EDGES = {
    imp("cmd/main.go", "internal/orders/orders.go"),
    imp("cmd/main.go", "internal/orders/store.go"),  # a Go import names a whole directory
    covers("internal/orders/orders_test.go", "internal/orders/orders.go", "name"),
}
GO_SYMBOLS = {
    ("cmd/main.go", "function", "main"),
    ("internal/orders/orders.go", "type", "Order"),
    ("internal/orders/orders.go", "method", "Order.Valid"),
    ("internal/orders/orders.go", "function", "Total"),
    ("internal/orders/store.go", "type", "Store"),
    ("internal/orders/orders_test.go", "function", "TestTotal"),
}

RUST = {
    "Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": "mod billing;\npub mod util;\nuse std::io;\n\npub fn run() {}\n",
    "src/billing.rs": (
        "use crate::util::fmt_money;\n\n"
        "pub struct Invoice {\n    cents: i64,\n}\n\n"
        "impl Invoice {\n    pub fn total(&self) -> String {\n"
        "        fmt_money(self.cents)\n    }\n}\n"
    ),
    "src/util/mod.rs": 'pub fn fmt_money(cents: i64) -> String {\n    format!("{}", cents)\n}\n',
    "tests/billing.rs": "use shop::run;\n\n#[test]\nfn it_bills() {\n    run();\n}\n",
}
RUST_EDGES = {
    imp("src/lib.rs", "src/billing.rs"),
    imp("src/lib.rs", "src/util/mod.rs"),
    imp("src/billing.rs", "src/util/mod.rs"),
    covers("tests/billing.rs", "src/billing.rs", "name"),
    # ``use shop::run`` names the crate itself (its name from Cargo.toml): the crate root
    imp("tests/billing.rs", "src/lib.rs"),
    covers("tests/billing.rs", "src/lib.rs", "import"),
}
RUST_SYMBOLS = {
    ("src/lib.rs", "module", "billing"),
    ("src/lib.rs", "module", "util"),
    ("src/lib.rs", "function", "run"),
    ("src/billing.rs", "class", "Invoice"),
    ("src/billing.rs", "method", "Invoice.total"),
    ("src/util/mod.rs", "function", "fmt_money"),
    ("tests/billing.rs", "function", "it_bills"),
}

JAVA = {
    "pom.xml": "<project/>\n",
    "src/main/java/com/shop/Order.java": (
        "package com.shop;\n\n"
        "import java.util.List;\n\n"
        "public class Order {\n"
        "    public int total(List<Integer> xs) {\n        return xs.size();\n    }\n"
        "}\n"
    ),
    "src/main/java/com/shop/Money.java": "package com.shop;\n\npublic final class Money {}\n",
    "src/main/java/com/shop/api/OrderController.java": (
        "package com.shop.api;\n\n"
        "import com.shop.Order;\n\n"
        "public class OrderController {\n"
        "    public Order get() {\n        return new Order();\n    }\n"
        "}\n"
    ),
    "src/test/java/com/shop/OrderTest.java": (
        "package com.shop;\n\n"
        "import org.junit.jupiter.api.Test;\n\n"
        "class OrderTest {\n    @Test\n    void totals() {}\n}\n"
    ),
}
JAVA_EDGES = {
    imp("src/main/java/com/shop/api/OrderController.java", "src/main/java/com/shop/Order.java"),
    covers("src/test/java/com/shop/OrderTest.java", "src/main/java/com/shop/Order.java", "name"),
}
JAVA_SYMBOLS = {
    ("src/main/java/com/shop/Order.java", "class", "Order"),
    ("src/main/java/com/shop/Order.java", "method", "Order.total"),
    ("src/main/java/com/shop/Money.java", "class", "Money"),
    ("src/main/java/com/shop/api/OrderController.java", "class", "OrderController"),
    ("src/main/java/com/shop/api/OrderController.java", "method", "OrderController.get"),
    ("src/test/java/com/shop/OrderTest.java", "class", "OrderTest"),
    ("src/test/java/com/shop/OrderTest.java", "method", "OrderTest.totals"),
}

FIXTURES = [
    pytest.param(PYTHON, PYTHON_EDGES, PYTHON_SYMBOLS, id="python"),
    pytest.param(JAVASCRIPT, JAVASCRIPT_EDGES, JAVASCRIPT_SYMBOLS, id="javascript"),
    pytest.param(TYPESCRIPT, TYPESCRIPT_EDGES, TYPESCRIPT_SYMBOLS, id="typescript-monorepo"),
    pytest.param(GO, GO_EDGES, GO_SYMBOLS, id="go"),
    pytest.param(RUST, RUST_EDGES, RUST_SYMBOLS, id="rust"),
    pytest.param(JAVA, JAVA_EDGES, JAVA_SYMBOLS, id="java"),
]


@pytest.mark.parametrize(("files", "expected_edges", "expected_symbols"), FIXTURES)
def test_import_and_test_edges_are_exact(
    make_repo: MakeRepo,
    cache_dir: Path,
    files: dict[str, str],
    expected_edges: set[EdgeRow],
    expected_symbols: set[tuple[str, str, str]],
) -> None:
    snap = index_snapshot(make_repo(files), cache_dir)
    assert edges(snap) == expected_edges


@pytest.mark.parametrize(("files", "expected_edges", "expected_symbols"), FIXTURES)
def test_fixture_symbols_are_stored_with_qualified_names(
    make_repo: MakeRepo,
    cache_dir: Path,
    files: dict[str, str],
    expected_edges: set[EdgeRow],
    expected_symbols: set[tuple[str, str, str]],
) -> None:
    snap = index_snapshot(make_repo(files), cache_dir)
    assert qualnames(snap) == expected_symbols


@pytest.mark.parametrize(("files", "expected_edges", "expected_symbols"), FIXTURES)
def test_fixture_shapes(
    files: dict[str, str],
    expected_edges: set[EdgeRow],
    expected_symbols: set[tuple[str, str, str]],
) -> None:
    """Each fixture has ≥ 3 sources and ≥ 1 test, and every edge joins two of its files."""
    code = [p for p in files if p.rsplit(".", 1)[-1] in ("py", "js", "ts", "tsx", "go", "rs")]
    code += [p for p in files if p.endswith(".java")]
    tests = [p for p in code if is_test_path(p)]
    assert len(code) - len(tests) >= 3
    assert tests
    assert {p for e in expected_edges for p in e[:2]} <= set(files)


def test_test_flags_are_stored(make_repo: MakeRepo, cache_dir: Path) -> None:
    snap = index_snapshot(make_repo({**GO, **{"x/" + k: v for k, v in JAVA.items()}}), cache_dir)
    flagged = {row[0] for row in snap["files"] if row[8]}
    assert flagged == {"internal/orders/orders_test.go", "x/src/test/java/com/shop/OrderTest.java"}


def test_stored_import_rows_keep_what_was_written(make_repo: MakeRepo, cache_dir: Path) -> None:
    snap = index_snapshot(make_repo(PYTHON), cache_dir)
    rows = {row for row in snap["imports"] if row[0] == "src/pkg/service.py"}
    assert rows == {
        ("src/pkg/service.py", "os", "[]", 1, "import"),
        ("src/pkg/service.py", ".models", '["User"]', 2, "import"),
    }


# -- externals, cycles, change -----------------------------------------------------------------


def test_external_imports_produce_no_edges(make_repo: MakeRepo, cache_dir: Path) -> None:
    repo = make_repo(
        {
            "go.mod": "module example.com/x\n",
            "py/app.py": "import os\nimport os.path\nfrom collections import OrderedDict\n",
            "web/app.js": "import React from 'react';\nconst fs = require('fs');\n",
            "web/lib.ts": "import { z } from '@scope/pkg/sub';\nimport x = require('lodash');\n",
            "cmd/main.go": 'package main\n\nimport (\n\t"fmt"\n\t"net/http"\n)\n',
            "src/main.rs": "use std::io;\nuse serde::Deserialize;\n",
            "Cargo.toml": '[package]\nname = "x"\n',
            "A.java": "package a;\nimport java.util.List;\nimport java.util.*;\n",
        }
    )
    snap = index_snapshot(repo, cache_dir)
    assert len(snap["imports"]) == 13  # all of them were read …
    assert snap["edges"] == []  # … and none points into the repository


def test_an_import_cycle_gives_both_edges(make_repo: MakeRepo, cache_dir: Path) -> None:
    repo = make_repo(
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg import b\n\ndef fa():\n    return b.fb\n",
            "pkg/b.py": "from . import a\n\ndef fb():\n    return a.fa\n",
            "web/x.js": "import { y } from './y';\nexport const x = 1;\n",
            "web/y.js": "import { x } from './x';\nexport const y = 2;\n",
        }
    )
    snap = index_snapshot(repo, cache_dir)
    assert edges(snap) == {
        imp("pkg/a.py", "pkg/b.py"),
        imp("pkg/a.py", "pkg/__init__.py"),  # `from pkg import b` runs pkg/__init__.py
        imp("pkg/b.py", "pkg/a.py"),
        imp("pkg/b.py", "pkg/__init__.py"),
        imp("web/x.js", "web/y.js"),
        imp("web/y.js", "web/x.js"),
    }


def test_a_self_import_is_not_an_edge(make_repo: MakeRepo, cache_dir: Path) -> None:
    repo = make_repo({"me.py": "import me\n", "lib/self.js": "import s from './self';\n"})
    assert index_snapshot(repo, cache_dir)["edges"] == []


def test_deleted_files_lose_their_edges_on_reindex(make_repo: MakeRepo, cache_dir: Path) -> None:
    repo = make_repo(PYTHON)
    assert edges(index_snapshot(repo, cache_dir)) == PYTHON_EDGES

    (repo / "src/pkg/models.py").unlink()
    snap = index_snapshot(repo, cache_dir)
    assert edges(snap) == {
        # `from .models import User` now resolves no further than the package itself
        imp("src/pkg/service.py", "src/pkg/__init__.py"),
        imp("tests/test_service.py", "src/pkg/service.py"),
        covers("tests/test_service.py", "src/pkg/service.py", "import"),
        covers("tests/test_service.py", "src/pkg/service.py", "name"),
    }
    assert "src/pkg/models.py" not in {row[0] for row in snap["files"]}
    assert not any(row[0] == "src/pkg/models.py" for row in snap["symbols"])

    (repo / "tests/test_service.py").unlink()
    snap = index_snapshot(repo, cache_dir)
    assert edges(snap) == {imp("src/pkg/service.py", "src/pkg/__init__.py")}


def test_a_file_added_later_resolves_older_imports(make_repo: MakeRepo, cache_dir: Path) -> None:
    files = {k: v for k, v in PYTHON.items() if k != "src/pkg/models.py"}
    repo = make_repo(files)
    assert imp("src/pkg/service.py", "src/pkg/models.py") not in edges(
        index_snapshot(repo, cache_dir)
    )
    (repo / "src/pkg/models.py").write_text(PYTHON["src/pkg/models.py"], encoding="utf-8")
    assert edges(index_snapshot(repo, cache_dir)) == PYTHON_EDGES


def test_an_edited_import_moves_its_edge(make_repo: MakeRepo, cache_dir: Path) -> None:
    repo = make_repo(JAVASCRIPT)
    index_snapshot(repo, cache_dir)
    (repo / "src/app.js").write_text(
        "import { value } from './lib/index.js';\nexport const app = value;\n", encoding="utf-8"
    )
    snap = index_snapshot(repo, cache_dir)
    assert edges(snap) == {
        imp("src/app.js", "src/lib/index.js"),
        covers("src/util.test.js", "src/util.js", "name"),
    }


def test_reindex_without_changes_keeps_the_same_graph(make_repo: MakeRepo, cache_dir: Path) -> None:
    repo = make_repo(RUST)
    first = index_snapshot(repo, cache_dir)
    assert index_snapshot(repo, cache_dir) == first


# -- resolution details ------------------------------------------------------------------------


def test_python_relative_imports_climb_packages(make_repo: MakeRepo, cache_dir: Path) -> None:
    repo = make_repo(
        {
            "app/__init__.py": "",
            "app/x.py": "y = 1\n",
            "app/sub/__init__.py": "",
            "app/sub/d.py": "from ..x import y\nimport app.x as ax\n",
            "app/sub/e.py": "from .d import *\n",
        }
    )
    assert edges(index_snapshot(repo, cache_dir)) == {
        imp("app/sub/d.py", "app/x.py"),
        imp("app/sub/e.py", "app/sub/d.py"),
    }


def test_js_resolution_forms(make_repo: MakeRepo, cache_dir: Path) -> None:
    repo = make_repo(
        {
            "top.js": "export * from './src/a';\n",
            "src/a.js": "export function f() {\n  return import('./lazy');\n}\n",
            "src/lazy.mjs": "export default 1;\n",
            "src/t.ts": "import a = require('./a');\nimport c from './comp';\n",
            "src/comp/index.tsx": "export default function C() { return null; }\n",
            "src/up.js": "export * from '../top';\n",
        }
    )
    assert edges(index_snapshot(repo, cache_dir)) == {
        imp("top.js", "src/a.js"),
        imp("src/a.js", "src/lazy.mjs"),
        imp("src/t.ts", "src/a.js"),
        imp("src/t.ts", "src/comp/index.tsx"),
        imp("src/up.js", "top.js"),
    }


def test_rust_use_groups_and_super(make_repo: MakeRepo, cache_dir: Path) -> None:
    repo = make_repo(
        {
            "Cargo.toml": '[package]\nname = "r"\n',
            "src/main.rs": "mod a;\nmod b;\nuse crate::a::{Thing, Other};\n",
            "src/a.rs": "mod inner;\nuse super::b::helper;\n",
            "src/a/inner.rs": "use super::super::b;\n",
            "src/b.rs": "pub fn helper() {}\n",
        }
    )
    assert edges(index_snapshot(repo, cache_dir)) == {
        imp("src/main.rs", "src/a.rs"),
        imp("src/main.rs", "src/b.rs"),
        imp("src/a.rs", "src/a/inner.rs"),
        imp("src/a.rs", "src/b.rs"),
        imp("src/a/inner.rs", "src/b.rs"),
    }


def test_java_wildcard_and_static_imports(make_repo: MakeRepo, cache_dir: Path) -> None:
    repo = make_repo(
        {
            "src/main/java/com/x/A.java": (
                "package com.x;\nimport com.y.*;\nimport static com.z.Util.helper;\nclass A {}\n"
            ),
            "src/main/java/com/y/B.java": "package com.y;\npublic class B {}\n",
            "src/main/java/com/y/C.java": "package com.y;\npublic class C {}\n",
            "src/main/java/com/z/Util.java": "package com.z;\npublic class Util {}\n",
        }
    )
    assert edges(index_snapshot(repo, cache_dir)) == {
        imp("src/main/java/com/x/A.java", "src/main/java/com/y/B.java"),
        imp("src/main/java/com/x/A.java", "src/main/java/com/y/C.java"),
        imp("src/main/java/com/x/A.java", "src/main/java/com/z/Util.java"),
    }


def test_java_static_wildcard_import_resolves_to_the_class(
    make_repo: MakeRepo, cache_dir: Path
) -> None:
    repo = make_repo(
        {
            "src/main/java/com/shop/Money.java": "package com.shop;\npublic class Money {}\n",
            "src/main/java/com/shop/Cart.java": "package com.shop;\npublic class Cart {}\n",
            "src/test/java/com/shop/CartTest.java": (
                "package com.shop;\nimport static com.shop.Money.*;\nclass CartTest {}\n"
            ),
        }
    )
    assert imp(
        "src/test/java/com/shop/CartTest.java", "src/main/java/com/shop/Money.java"
    ) in edges(index_snapshot(repo, cache_dir))


def test_go_test_files_are_never_import_targets(make_repo: MakeRepo, cache_dir: Path) -> None:
    repo = make_repo(
        {
            "go.mod": "module example.com/m\n",
            "main.go": 'package main\n\nimport "example.com/m/lib"\n',
            "lib/a.go": "package lib\n",
            "lib/b.go": "package lib\n",
            "lib/a_test.go": "package lib\n",
        }
    )
    assert edges(index_snapshot(repo, cache_dir)) == {
        imp("main.go", "lib/a.go"),
        imp("main.go", "lib/b.go"),
        covers("lib/a_test.go", "lib/a.go", "name"),
    }


def test_name_match_prefers_the_source_nearest_the_test(
    make_repo: MakeRepo, cache_dir: Path
) -> None:
    repo = make_repo(
        {
            "billing/views.py": "def bill(): pass\n",
            "shop/views.py": "def shop(): pass\n",
            "shop/models.py": "class Item: pass\n",
            "shop/tests/test_views.py": "def test_it(): pass\n",
        }
    )
    assert edges(index_snapshot(repo, cache_dir), "tests") == {
        covers("shop/tests/test_views.py", "shop/views.py", "name"),
    }


def test_test_edges_stay_within_a_language_family(make_repo: MakeRepo, cache_dir: Path) -> None:
    repo = make_repo(
        {
            "lib/util.py": "def u(): pass\n",
            "web/util.ts": "export const u = 1;\n",
            "web/util.test.js": "test('u', () => {});\n",
            "tests/test_util.py": "def test_u(): pass\n",
        }
    )
    assert edges(index_snapshot(repo, cache_dir), "tests") == {
        covers("web/util.test.js", "web/util.ts", "name"),
        covers("tests/test_util.py", "lib/util.py", "name"),
    }


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_service.py", True),
        ("pkg/service_test.py", True),
        ("conftest.py", True),
        ("tests/helpers.py", True),
        ("tests/__init__.py", False),
        ("pkg/service.py", False),
        ("src/util.test.js", True),
        ("web/button.spec.tsx", True),
        ("web/__tests__/x.ts", True),
        ("web/button.tsx", False),
        ("internal/orders/orders_test.go", True),
        ("internal/orders/orders.go", False),
        ("tests/billing.rs", True),
        ("src/billing.rs", False),
        ("src/tests/mod.rs", False),
        ("tests/utils/mocked_pagers.rs", True),
        ("crates/core/benches/bench_walk.rs", True),
        ("src/test/java/com/shop/Helper.java", True),
        ("src/test-jdk17/java/com/shop/Records.java", True),
        ("src/integrationTest/java/com/shop/Checkout.java", True),
        ("src/testFixtures/java/com/shop/Orders.java", True),
        ("src/it/java/com/shop/Smoke.java", True),
        ("module/src/test/java/com/shop/Helper.java", True),
        ("src/latest/java/com/shop/Order.java", False),
        ("src/main/java/com/shop/Contest.java", False),
        ("src/main/java/com/shop/OrderTest.java", True),
        ("src/main/java/com/shop/Order.java", False),
        ("src/main/java/com/shop/Testimony.java", False),
        ("docs/test_plan.md", False),
    ],
)
def test_is_test_path(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test


def _edges(facts: list[FileFacts]) -> set[tuple[str, str, str, str]]:
    return {(e.src, e.dst, e.kind, e.evidence) for e in resolve_graph(facts)}


def _py(path: str, *imports: tuple[str, tuple[str, ...]]) -> FileFacts:
    return FileFacts(
        path=path,
        language="python",
        imports=tuple(Import(module=m, names=n, line=1) for m, n in imports),
    )


def test_a_stdlib_import_inside_a_package_does_not_bind_to_a_same_named_sibling() -> None:
    facts = [_py("pkg/__init__.py"), _py("pkg/svc.py", ("logging", ())), _py("pkg/logging.py")]
    assert _edges(facts) == set()


def test_a_script_directory_import_binds_to_the_sibling_module() -> None:
    facts = [_py("scripts/run.py", ("helpers", ())), _py("scripts/helpers.py")]
    assert _edges(facts) == {("scripts/run.py", "scripts/helpers.py", "imports", "import")}


def test_a_main_code_wildcard_import_does_not_reach_into_test_classes() -> None:
    def java(path: str, package: str, *imports: Import) -> FileFacts:
        return FileFacts(path=path, language="java", package=package, imports=imports)

    facts = [
        java("src/main/java/a/App.java", "a", Import(module="b", names=("*",), line=1)),
        java("src/main/java/b/Lib.java", "b"),
        java("src/test/java/b/LibTest.java", "b"),
    ]
    assert _edges(facts) == {
        ("src/main/java/a/App.java", "src/main/java/b/Lib.java", "imports", "import"),
        ("src/test/java/b/LibTest.java", "src/main/java/b/Lib.java", "tests", "name"),
    }


def test_a_helper_in_a_test_directory_is_not_named_after_a_dotfile() -> None:
    facts = [
        FileFacts(path="test/specs/utils/kindOf.js", language="javascript"),
        FileFacts(path=".eslintrc.cjs", language="javascript"),
        FileFacts(path="lib/kindOf.js", language="javascript"),
    ]
    assert _edges(facts) == set()


def test_an_index_built_under_the_narrower_test_rules_is_migrated_and_its_graph_rebuilt(
    make_repo: MakeRepo, cache_dir: Path
) -> None:
    repo = make_repo(
        {
            "src/main/java/com/shop/Order.java": "package com.shop;\npublic class Order {}\n",
            "src/integrationTest/java/com/shop/OrderTest.java": (
                "package com.shop;\nimport com.shop.Order;\nclass OrderTest { Order o; }\n"
            ),
            "src/integrationTest/java/com/shop/Fixtures.java": "package com.shop;\nclass F {}\n",
        }
    )
    fresh = index_snapshot(repo, cache_dir)
    report = index_repository(repo, cache_dir=cache_dir)
    assert report.cache_dir is not None
    # the cache as the previous schema left it: flags from the old rule, no graph to rebuild
    conn = sqlite3.connect(report.cache_dir / INDEX_DB)
    conn.execute("UPDATE files SET is_test = 0")
    conn.execute("DELETE FROM edges")
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'graph_dirty'")
    for column in ("symbols_check", "imports_check", "terms_check"):
        conn.execute(f"ALTER TABLE files DROP COLUMN {column}")
    conn.execute("DROP TABLE repairs")
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()

    after = index_repository(repo, cache_dir=cache_dir)
    assert (after.rebuilt, after.files_read) == (None, 0)  # migrated in place, nothing re-read
    migrated = index_snapshot(repo, cache_dir)
    store = IndexStore.open(report.cache_dir)
    try:
        flags = {p: f.is_test for p, f in store.view().files().items()}
    finally:
        store.close()
    assert flags == {
        "src/main/java/com/shop/Order.java": False,
        "src/integrationTest/java/com/shop/OrderTest.java": True,
        "src/integrationTest/java/com/shop/Fixtures.java": True,
    }
    assert edges(migrated) == edges(fresh) != set()


@pytest.mark.parametrize(("files", "expected_edges", "expected_symbols"), FIXTURES)
def test_an_edit_that_leaves_a_file_s_imports_alone_keeps_the_graph_without_a_rebuild(
    make_repo: MakeRepo,
    cache_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    expected_edges: set[EdgeRow],
    expected_symbols: set[tuple[str, str, str]],
) -> None:
    import excerpt.index.build as build

    repo = make_repo(files)
    index_snapshot(repo, cache_dir)
    rebuilds: list[int] = []

    def counted(facts: Any) -> Any:
        rebuilds.append(1)
        return resolve_graph(facts)

    monkeypatch.setattr(build, "resolve_graph", counted)
    for path in sorted(files):  # every file in turn, its bytes changed below its imports
        with (repo / path).open("a", encoding="utf-8") as fh:
            fh.write("\n\n")
        snap = index_snapshot(repo, cache_dir)
        assert edges(snap) == expected_edges, path
    assert rebuilds == []
    # and what it kept is what an index built from nothing gives
    assert edges(index_snapshot(repo, tmp_path / "fresh")) == expected_edges
    # an edit that changes a file's imports resolves that file's imports alone
    resolved: list[list[str]] = []

    def one(facts: Any, sources: Any) -> Any:
        resolved.append(sorted(sources))
        return resolve_imports(facts, sources)

    monkeypatch.setattr(build, "resolve_imports", one)
    importer = min(e[0] for e in expected_edges if e[2] == "imports")
    rebuilds.clear()
    held = {r[3] for r in snap["imports"] if r[0] == importer}  # the import statements' lines
    text = (repo / importer).read_text(encoding="utf-8").splitlines(keepends=True)
    kept = ["\n" if n in held else line for n, line in enumerate(text, start=1)]
    (repo / importer).write_text("".join(kept), encoding="utf-8")
    snap = index_snapshot(repo, cache_dir)
    assert (rebuilds, resolved) == ([], [[importer]])
    assert not any(e[0] == importer and e[2] == "imports" for e in edges(snap))
    assert edges(snap) == edges(index_snapshot(repo, tmp_path / "fresh-after-import-edit"))
    # a removed file asks for the whole graph
    rebuilds.clear()
    (repo / importer).unlink()
    snap = index_snapshot(repo, cache_dir)
    assert rebuilds == [1]
    assert edges(snap) == edges(index_snapshot(repo, tmp_path / "fresh-after-remove"))
