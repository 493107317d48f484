"""PHP: definitions with spans, ``use`` through PSR-4 and ``require`` of paths, tests."""

from __future__ import annotations

import pytest

from excerpt.index.lang import is_test_path, manifest_of
from lang_repo import Indexed, covers, imp, index_fixture

COMPOSER = (
    '{"autoload": {"psr-4": {"Acme\\\\": "src/"}},\n'
    ' "autoload-dev": {"psr-4": {"Acme\\\\Tests\\\\": ["tests/"]}}}\n'
)
REPO = {
    "composer.json": COMPOSER,
    "src/Billing/Invoice.php": (
        "<?php\n"
        "\n"
        "namespace Acme\\Billing;\n"
        "\n"
        "final class Invoice\n"
        "{\n"
        "    private float $total = 0.0;\n"
        "\n"
        "    public function applyDiscount(float $rate): float\n"
        "    {\n"
        "        return $this->total * (1 - $rate);\n"
        "    }\n"
        "}\n"
    ),
    "src/Billing/Charger.php": (
        "<?php\n"
        "\n"
        "namespace Acme\\Billing;\n"
        "\n"
        "use Acme\\Support\\{Money, Clock as SystemClock};\n"
        "use Psr\\Log\\LoggerInterface;\n"
        "\n"
        "require_once __DIR__ . '/../helpers.php';\n"
        "\n"
        "class Charger\n"
        "{\n"
        "    public function charge(Invoice $invoice): Money\n"
        "    {\n"
        "        return new Money($invoice->applyDiscount(0.1));\n"
        "    }\n"
        "}\n"
    ),
    "src/Support/Money.php": (
        "<?php\n\nnamespace Acme\\Support;\n\nenum Currency { case Eur; }\n\n"
        "final class Money { }\n"
    ),
    "src/helpers.php": "<?php\n\nfunction format_money(float $x): string\n{\n    return '';\n}\n",
    "tests/Billing/ChargerTest.php": (
        "<?php\n"
        "\n"
        "namespace Acme\\Tests\\Billing;\n"
        "\n"
        "use Acme\\Billing\\Charger;\n"
        "use PHPUnit\\Framework\\TestCase;\n"
        "\n"
        "final class ChargerTest extends TestCase\n"
        "{\n"
        "    public function testCharges(): void\n"
        "    {\n"
        "        $this->assertNotNull((new Charger())->charge(new Invoice()));\n"
        "    }\n"
        "}\n"
    ),
}


@pytest.fixture(scope="module")
def php_repo(tmp_path_factory: pytest.TempPathFactory) -> Indexed:
    return index_fixture(tmp_path_factory.mktemp("php"), REPO)


def test_definitions_with_kinds_qualnames_and_spans(php_repo: Indexed) -> None:
    invoice = "src/Billing/Invoice.php"
    assert php_repo.symbols_of(invoice) == {
        (invoice, "module", "Acme\\Billing", 3, 3),
        (invoice, "class", "Invoice", 5, 13),
        (invoice, "field", "Invoice.total", 7, 7),
        (invoice, "method", "Invoice.applyDiscount", 9, 12),
    }
    money = "src/Support/Money.php"
    assert (money, "class", "Currency", 5, 5) in php_repo.symbols  # an enum
    assert ("src/helpers.php", "function", "format_money", 3, 6) in php_repo.symbols


def test_uses_resolve_by_psr4_and_requires_by_path(php_repo: Indexed) -> None:
    assert php_repo.edges_of("imports") == {
        imp("src/Billing/Charger.php", "src/Support/Money.php"),  # grouped use
        imp("src/Billing/Charger.php", "src/helpers.php"),  # __DIR__ . '/../helpers.php'
        imp("tests/Billing/ChargerTest.php", "src/Billing/Charger.php"),
    }  # Clock has no file; Psr and PHPUnit are vendor code


def test_a_composer_manifest_gives_its_psr4_prefixes() -> None:
    assert manifest_of("composer.json", COMPOSER.encode()) == (
        '[["Acme", "src"], ["Acme\\\\Tests", "tests"]]'
    )
    assert manifest_of("composer.json", b"not json") is None
    assert manifest_of("composer.json", b'{"name": "a/b"}') is None


def test_tests_by_layout_and_name(php_repo: Indexed) -> None:
    assert php_repo.tests == {"tests/Billing/ChargerTest.php"}
    tests = php_repo.edges_of("tests")
    assert covers("tests/Billing/ChargerTest.php", "src/Billing/Charger.php", "name") in tests
    assert is_test_path("src/Billing/ChargerTest.php")
    assert not is_test_path("src/Latest.php")


def test_a_task_naming_a_method_ranks_its_file_first(php_repo: Indexed) -> None:
    assert php_repo.ranked("applyDiscount ignores the rate")[0] == "src/Billing/Invoice.php"
