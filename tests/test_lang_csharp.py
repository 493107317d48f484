"""C#: definitions with spans, ``using`` resolved through namespaces, test projects."""

from __future__ import annotations

import pytest

from excerpt.index.lang import is_test_path
from lang_repo import Indexed, covers, imp, index_fixture

REPO = {
    "src/Acme.Core/Models/Invoice.cs": (
        "namespace Acme.Core.Models;\n"
        "\n"
        "public class Invoice\n"
        "{\n"
        "    public decimal Total { get; set; }\n"
        "\n"
        "    public decimal ApplyDiscount(decimal rate)\n"
        "    {\n"
        "        return Total * (1 - rate);\n"
        "    }\n"
        "}\n"
    ),
    "src/Acme.Core/Services/Billing.cs": (
        "using System;\n"
        "using Acme.Core.Models;\n"
        "using static Acme.Core.Models.Invoice;\n"
        "\n"
        "namespace Acme.Core.Services\n"
        "{\n"
        "    public interface IBilling\n"
        "    {\n"
        "        decimal Charge(Invoice invoice);\n"
        "    }\n"
        "\n"
        "    public class Billing : IBilling\n"
        "    {\n"
        "        public decimal Charge(Invoice invoice) => invoice.ApplyDiscount(0.1m);\n"
        "    }\n"
        "}\n"
    ),
    "src/Acme.Core/GlobalUsings.cs": "global using Acme.Core.Models;\n",
    "Acme.Core.Tests/BillingTests.cs": (
        "using Acme.Core.Models;\n"
        "using Acme.Core.Services;\n"
        "using Xunit;\n"
        "\n"
        "namespace Acme.Core.Tests;\n"
        "\n"
        "public class BillingTests\n"
        "{\n"
        "    [Fact]\n"
        "    public void ChargesWithDiscount()\n"
        "    {\n"
        "        Assert.Equal(90m, new Billing().Charge(new Invoice { Total = 100m }));\n"
        "    }\n"
        "}\n"
    ),
    "Acme.Core.Tests/Fakes.cs": (
        "namespace Acme.Core.Tests;\n\ninternal sealed class FakeClock { }\n"
    ),
}


@pytest.fixture(scope="module")
def csharp_repo(tmp_path_factory: pytest.TempPathFactory) -> Indexed:
    return index_fixture(tmp_path_factory.mktemp("csharp"), REPO)


def test_definitions_with_kinds_qualnames_and_spans(csharp_repo: Indexed) -> None:
    invoice, billing = "src/Acme.Core/Models/Invoice.cs", "src/Acme.Core/Services/Billing.cs"
    assert csharp_repo.languages[invoice] == "csharp"
    assert csharp_repo.symbols_of(invoice) == {
        (invoice, "class", "Invoice", 3, 11),
        (invoice, "field", "Invoice.Total", 5, 5),
        (invoice, "method", "Invoice.ApplyDiscount", 7, 10),
    }
    assert csharp_repo.symbols_of(billing) == {
        (billing, "interface", "IBilling", 7, 10),
        (billing, "method", "IBilling.Charge", 9, 9),
        (billing, "class", "Billing", 12, 15),
        (billing, "method", "Billing.Charge", 14, 14),
    }
    test = "Acme.Core.Tests/BillingTests.cs"
    assert (test, "method", "BillingTests.ChargesWithDiscount", 9, 13) in csharp_repo.symbols


def test_usings_resolve_to_the_files_of_their_namespace(csharp_repo: Indexed) -> None:
    assert csharp_repo.edges_of("imports") == {
        imp("src/Acme.Core/Services/Billing.cs", "src/Acme.Core/Models/Invoice.cs"),
        imp("Acme.Core.Tests/BillingTests.cs", "src/Acme.Core/Models/Invoice.cs"),
        imp("Acme.Core.Tests/BillingTests.cs", "src/Acme.Core/Services/Billing.cs"),
    }  # System and Xunit are external; a global using ties its file to nothing


def test_test_projects_and_test_classes(csharp_repo: Indexed) -> None:
    assert csharp_repo.tests == {"Acme.Core.Tests/BillingTests.cs", "Acme.Core.Tests/Fakes.cs"}
    assert covers(
        "Acme.Core.Tests/BillingTests.cs", "src/Acme.Core/Services/Billing.cs", "name"
    ) in csharp_repo.edges_of("tests")
    for path in ("src/Foo/BarTests.cs", "tests/Foo/Bar.cs", "src/Foo.UnitTests/Helpers/X.cs"):
        assert is_test_path(path), path
    for path in ("src/Foo/Contest.cs", "src/Foo.Testing/X.cs", "src/Latest.cs"):
        assert not is_test_path(path), path


def test_a_task_naming_a_method_ranks_its_file_first(csharp_repo: Indexed) -> None:
    ranked = csharp_repo.ranked("ApplyDiscount rounds the total wrong")
    assert ranked[0] == "src/Acme.Core/Models/Invoice.cs"
