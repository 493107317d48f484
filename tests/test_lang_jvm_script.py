"""Kotlin, Swift, Scala, Lua and shell, each on a small repository built at test time and
indexed for real: definitions with kinds and spans, imports resolved to files, tests tied to
their subjects, and a pack for a task naming a function led by that function's file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from excerpt.deliver import build_pack
from excerpt.index.build import index_repository
from excerpt.index.extract import extract
from excerpt.index.lang import is_test_path, language_of
from excerpt.index.lang.shell import SHELL as SHELL_LANGUAGE
from excerpt.index.store import IndexStore
from excerpt.pack import PackRequest

SymbolRow = tuple[str, str, str, int, int]  # path, kind, qualname, start, end
EdgeRow = tuple[str, str, str, str]  # src, dst, kind, evidence


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    language: str
    files: Mapping[str, str]
    symbols: frozenset[SymbolRow]  # each is stored
    edges: frozenset[EdgeRow]  # exactly the stored edges
    tests: frozenset[str]  # exactly the files that are tests
    task: str
    first: str  # the file a pack for ``task`` leads with


def imports(src: str, dst: str) -> EdgeRow:
    return (src, dst, "imports", "import")


def covers(test: str, subject: str, evidence: str) -> EdgeRow:
    return (test, subject, "tests", evidence)


def tree(files: Mapping[str, str]) -> dict[str, str]:
    return {path: dedent(text).lstrip("\n") for path, text in files.items()}


# -- Kotlin: Gradle layout, imports through package headers ------------------------------------

KT = "src/main/kotlin/com/acme/shop/"
KOTLIN = Case(
    language="kotlin",
    files=tree(
        {
            "build.gradle.kts": 'plugins { kotlin("jvm") }\n',
            KT + "Cart.kt": """
                package com.acme.shop

                import com.acme.shop.model.Item
                import com.acme.shop.util.*

                class Cart {
                    private val items = mutableListOf<Item>()

                    fun add(item: Item) {
                        items += item
                    }

                    fun totalCents(): Long = audit(items.sumOf { it.cents })

                    companion object {
                        fun empty(): Cart = Cart()
                    }
                }
                """,
            KT + "model/Item.kt": """
                package com.acme.shop.model

                data class Item(val name: String, val cents: Long)

                interface Priced {
                    fun price(): Long
                }

                typealias Items = List<Item>
                """,
            KT + "util/Audit.kt": """
                package com.acme.shop.util

                fun audit(total: Long): Long = total

                object Ledger {
                    fun record(total: Long) {}
                }
                """,
            "src/test/kotlin/com/acme/shop/CartTest.kt": """
                package com.acme.shop

                import com.acme.shop.model.Item
                import kotlin.test.Test

                class CartTest {
                    @Test
                    fun addsUp() {
                        Cart().add(Item("tea", 3))
                    }
                }
                """,
        }
    ),
    symbols=frozenset(
        {
            (KT + "Cart.kt", "class", "Cart", 6, 18),
            (KT + "Cart.kt", "method", "Cart.add", 9, 11),
            (KT + "Cart.kt", "method", "Cart.totalCents", 13, 13),
            (KT + "Cart.kt", "method", "Cart.empty", 16, 16),
            (KT + "model/Item.kt", "class", "Item", 3, 3),
            (KT + "model/Item.kt", "interface", "Priced", 5, 7),
            (KT + "model/Item.kt", "method", "Priced.price", 6, 6),
            (KT + "model/Item.kt", "type", "Items", 9, 9),
            (KT + "util/Audit.kt", "function", "audit", 3, 3),
            (KT + "util/Audit.kt", "class", "Ledger", 5, 7),
            (KT + "util/Audit.kt", "method", "Ledger.record", 6, 6),
        }
    ),
    edges=frozenset(
        {
            imports(KT + "Cart.kt", KT + "model/Item.kt"),
            imports(KT + "Cart.kt", KT + "util/Audit.kt"),  # the package's single file
            imports("src/test/kotlin/com/acme/shop/CartTest.kt", KT + "model/Item.kt"),
            covers("src/test/kotlin/com/acme/shop/CartTest.kt", KT + "model/Item.kt", "import"),
            covers("src/test/kotlin/com/acme/shop/CartTest.kt", KT + "Cart.kt", "name"),
        }
    ),
    tests=frozenset({"src/test/kotlin/com/acme/shop/CartTest.kt"}),
    task="totalCents is wrong for an empty cart",
    first=KT + "Cart.kt",
)

# -- Swift: a SwiftPM package, ``import X`` is the module Sources/X/ ---------------------------

SWIFT = Case(
    language="swift",
    files=tree(
        {
            "Package.swift": """
                // swift-tools-version:5.9
                import PackageDescription

                let package = Package(name: "Shop")
                """,
            "Sources/Shop/Cart.swift": """
                public struct Cart {
                    var items: [Item] = []

                    public mutating func add(_ item: Item) {
                        items.append(item)
                    }

                    public func totalCents() -> Int {
                        items.reduce(0) { $0 + $1.cents }
                    }
                }

                extension Cart {
                    func isEmpty() -> Bool { items.isEmpty }
                }
                """,
            "Sources/Shop/Item.swift": """
                public struct Item {
                    let cents: Int
                }
                """,
            "Sources/ShopCLI/main.swift": """
                import Shop

                print(Cart().totalCents())
                """,
            "Tests/ShopTests/CartTests.swift": """
                import XCTest
                @testable import Shop

                final class CartTests: XCTestCase {
                    func testTotal() {
                        XCTAssertEqual(Cart().totalCents(), 0)
                    }
                }
                """,
        }
    ),
    symbols=frozenset(
        {
            ("Sources/Shop/Cart.swift", "class", "Cart", 1, 11),
            ("Sources/Shop/Cart.swift", "method", "Cart.add", 4, 6),
            ("Sources/Shop/Cart.swift", "method", "Cart.totalCents", 8, 10),
            ("Sources/Shop/Cart.swift", "method", "Cart.isEmpty", 14, 14),
            ("Sources/Shop/Item.swift", "class", "Item", 1, 3),
            ("Tests/ShopTests/CartTests.swift", "class", "CartTests", 4, 8),
            ("Tests/ShopTests/CartTests.swift", "method", "CartTests.testTotal", 5, 7),
        }
    ),
    edges=frozenset(
        {
            imports("Sources/ShopCLI/main.swift", "Sources/Shop/Cart.swift"),
            imports("Sources/ShopCLI/main.swift", "Sources/Shop/Item.swift"),
            imports("Tests/ShopTests/CartTests.swift", "Sources/Shop/Cart.swift"),
            imports("Tests/ShopTests/CartTests.swift", "Sources/Shop/Item.swift"),
            covers("Tests/ShopTests/CartTests.swift", "Sources/Shop/Cart.swift", "import"),
            covers("Tests/ShopTests/CartTests.swift", "Sources/Shop/Item.swift", "import"),
            covers("Tests/ShopTests/CartTests.swift", "Sources/Shop/Cart.swift", "name"),
        }
    ),
    tests=frozenset({"Tests/ShopTests/CartTests.swift"}),
    task="totalCents ignores the last item",
    first="Sources/Shop/Cart.swift",
)

# -- Scala: sbt layout, absolute and package-relative imports ---------------------------------

SC = "src/main/scala/com/acme/shop/"
SCALA = Case(
    language="scala",
    files=tree(
        {
            SC + "Cart.scala": """
                package com.acme
                package shop

                import shop.model.Item
                import com.acme.shop.util._

                final class Cart(items: List[Item]) {
                  def totalCents: Long = Audit.log(items.map(_.cents).sum)
                }

                object Cart {
                  def empty: Cart = new Cart(Nil)
                }
                """,
            SC + "model/Item.scala": """
                package com.acme.shop.model

                final case class Item(name: String, cents: Long)
                """,
            SC + "util/Audit.scala": """
                package com.acme.shop.util

                object Audit {
                  def log(total: Long): Long = total
                }
                """,
            "src/test/scala/com/acme/shop/CartSpec.scala": """
                package com.acme.shop

                import com.acme.shop.model.{Item => It}

                class CartSpec {
                  def totals(): Unit = assert(new Cart(List(It("tea", 3))).totalCents == 3)
                }
                """,
            "scripts/report.sc": """
                def report(): Unit = println("ok")
                """,
        }
    ),
    symbols=frozenset(
        {
            (SC + "Cart.scala", "class", "Cart", 7, 9),
            (SC + "Cart.scala", "method", "Cart.totalCents", 8, 8),
            (SC + "Cart.scala", "class", "Cart", 11, 13),
            (SC + "Cart.scala", "method", "Cart.empty", 12, 12),
            (SC + "model/Item.scala", "class", "Item", 3, 3),
            (SC + "util/Audit.scala", "class", "Audit", 3, 5),
            (SC + "util/Audit.scala", "method", "Audit.log", 4, 4),
            ("scripts/report.sc", "function", "report", 1, 1),
        }
    ),
    edges=frozenset(
        {
            imports(SC + "Cart.scala", SC + "model/Item.scala"),  # relative to com.acme
            imports(SC + "Cart.scala", SC + "util/Audit.scala"),
            imports("src/test/scala/com/acme/shop/CartSpec.scala", SC + "model/Item.scala"),
            covers(
                "src/test/scala/com/acme/shop/CartSpec.scala", SC + "model/Item.scala", "import"
            ),
            covers("src/test/scala/com/acme/shop/CartSpec.scala", SC + "Cart.scala", "name"),
        }
    ),
    tests=frozenset({"src/test/scala/com/acme/shop/CartSpec.scala"}),
    task="totalCents overflows for a large cart",
    first=SC + "Cart.scala",
)

# -- Lua: a Neovim plugin, require() searched from lua/ ----------------------------------------

LUA = Case(
    language="lua",
    files=tree(
        {
            "lua/shop/init.lua": """
                local cart = require("shop.cart")

                local M = {}

                function M.setup(opts)
                  M.cart = cart.new(opts)
                end

                return M
                """,
            "lua/shop/cart.lua": """
                local util = require "shop.util"

                local M = {}

                function M.total_cents(items)
                  return util.sum(items)
                end

                function M:add(item)
                  table.insert(self, item)
                end

                return M
                """,
            "lua/shop/util.lua": """
                local M = {}

                M.sum = function(items)
                  return #items
                end

                return M
                """,
            "plugin/shop.lua": """
                require("shop").setup({})
                """,
            "spec/shop/cart_spec.lua": """
                local cart = require("shop.cart")

                describe("cart", function()
                  it("totals", function()
                    assert.equals(0, cart.total_cents({}))
                  end)
                end)
                """,
        }
    ),
    symbols=frozenset(
        {
            ("lua/shop/init.lua", "function", "M.setup", 5, 7),
            ("lua/shop/cart.lua", "function", "M.total_cents", 5, 7),
            ("lua/shop/cart.lua", "method", "M.add", 9, 11),
            ("lua/shop/util.lua", "function", "M.sum", 3, 5),
        }
    ),
    edges=frozenset(
        {
            imports("lua/shop/init.lua", "lua/shop/cart.lua"),
            imports("lua/shop/cart.lua", "lua/shop/util.lua"),
            imports("plugin/shop.lua", "lua/shop/init.lua"),
            imports("spec/shop/cart_spec.lua", "lua/shop/cart.lua"),
            covers("spec/shop/cart_spec.lua", "lua/shop/cart.lua", "import"),
            covers("spec/shop/cart_spec.lua", "lua/shop/cart.lua", "name"),
        }
    ),
    tests=frozenset({"spec/shop/cart_spec.lua"}),
    task="total_cents returns the item count",
    first="lua/shop/cart.lua",
)

# -- shell: source with a literal path, Bats tests -------------------------------------------

SHELL = Case(
    language="shell",
    files=tree(
        {
            "bin/shop.sh": """
                #!/usr/bin/env bash
                DIR="$(cd "$(dirname "$0")" && pwd)"
                source "$DIR/../lib/cart.sh"
                source "$DEPLOY_HOME/lib/env.sh"
                main() {
                  cart_total "$@"
                }
                """,
            "tools/deploy/lib/env.sh": """
                export SHOP_ENV=prod
                """,
            "lib/cart.sh": """
                . ./lib/util.sh

                cart_total() {
                  log_line "$(( $1 + $2 ))"
                }
                """,
            "lib/util.bash": """
                function log_line {
                  printf '%s\\n' "$1"
                }
                """,
            "lib/util.sh": """
                source "${BASH_SOURCE%/*}/util.bash"
                """,
            "test/cart.bats": """
                load test_helper

                @test "totals" {
                  source "$BATS_TEST_DIRNAME/../lib/cart.sh"
                  run cart_total 1 2
                }
                """,
            "test/test_helper.bash": """
                setup() {
                  export SHOP_HOME="$BATS_TMPDIR"
                }
                """,
        }
    ),
    symbols=frozenset(
        {
            ("bin/shop.sh", "function", "main", 5, 7),
            ("lib/cart.sh", "function", "cart_total", 3, 5),
            ("lib/util.bash", "function", "log_line", 1, 3),
            ("test/test_helper.bash", "function", "setup", 1, 3),
        }
    ),
    edges=frozenset(
        {
            imports("bin/shop.sh", "lib/cart.sh"),  # "$DIR/../…" from the script's directory
            imports("bin/shop.sh", "tools/deploy/lib/env.sh"),  # the one path ending so
            imports("lib/cart.sh", "lib/util.sh"),  # ./lib/… from the root
            imports("lib/util.sh", "lib/util.bash"),
            imports("test/cart.bats", "test/test_helper.bash"),  # bats ``load``
            imports("test/cart.bats", "lib/cart.sh"),
            covers("test/cart.bats", "lib/cart.sh", "import"),
            covers("test/cart.bats", "lib/cart.sh", "name"),
        }
    ),
    tests=frozenset({"test/cart.bats", "test/test_helper.bash"}),
    task="cart_total adds the wrong numbers",
    first="lib/cart.sh",
)

ALL = [KOTLIN, SWIFT, SCALA, LUA, SHELL]
CASES = [pytest.param(case, id=case.language) for case in ALL]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path, Any]]:
    """Each case's repository, cache directory and store snapshot, indexed once."""
    out: dict[str, tuple[Path, Path, Any]] = {}
    for case in ALL:
        root = tmp_path_factory.mktemp(case.language)
        repo, cache = root / "repo", root / "cache"
        for path, text in case.files.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text, encoding="utf-8")
        report = index_repository(repo, cache_dir=cache)
        assert report.cache_dir is not None
        with IndexStore.open(report.cache_dir) as store:
            out[case.language] = (repo, cache, store.snapshot())
    return out


@pytest.mark.parametrize("case", CASES)
def test_definitions_have_kinds_qualnames_and_spans(
    case: Case, indexed: dict[str, tuple[Path, Path, Any]]
) -> None:
    snap = indexed[case.language][2]
    stored = {(path, kind, qual, start, end) for path, kind, _, qual, start, end in snap["symbols"]}
    assert case.symbols <= stored, sorted(case.symbols - stored)


@pytest.mark.parametrize("case", CASES)
def test_imports_resolve_to_files_and_tests_to_subjects(
    case: Case, indexed: dict[str, tuple[Path, Path, Any]]
) -> None:
    snap = indexed[case.language][2]
    assert {tuple(e) for e in snap["edges"]} == case.edges


@pytest.mark.parametrize("case", CASES)
def test_test_files_follow_the_ecosystem_layout(case: Case) -> None:
    assert {language_of(p) for p in case.files} == {case.language}
    assert {p for p in case.files if is_test_path(p)} == case.tests


@pytest.mark.parametrize("case", CASES)
def test_a_pack_for_a_named_function_leads_with_its_file(
    case: Case, indexed: dict[str, tuple[Path, Path, Any]]
) -> None:
    repo, cache, _ = indexed[case.language]
    pack = build_pack(PackRequest(repo=repo, task=case.task, budget=8_000, cache_dir=cache)).pack
    assert pack.to_dict()["items"][0]["path"] == case.first


def test_shell_input_the_bash_scanner_misreads_is_rewritten_at_equal_length() -> None:
    """``{`` then a code point past U+00FF sends tree-sitter-bash's ``isdigit`` out of range."""
    data = "echo {1..9\u65e5}\n{\U000425dc\nok() { :; }\n".encode()
    assert SHELL_LANGUAGE.prepare is not None
    prepared = SHELL_LANGUAGE.prepare(data)
    assert len(prepared) == len(data)
    assert not re.search(rb"\{[0-9]*(\.\.[0-9]*)?[\x80-\xff]", prepared)
    assert [s.qualname for s in extract("shell", data).symbols] == ["ok"]
