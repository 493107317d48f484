"""Ruby: definitions with spans, ``require``/``require_relative`` resolved, spec layout."""

from __future__ import annotations

import pytest

from excerpt.index.lang import is_test_path, language_of
from lang_repo import Indexed, covers, imp, index_fixture

REPO = {
    "lib/shop.rb": 'require "shop/cart"\nrequire "json"\n\nmodule Shop\n  VERSION = "1.0"\nend\n',
    "lib/shop/cart.rb": (
        'require_relative "pricing"\n'
        "\n"
        "module Shop\n"
        "  class Cart\n"
        "    def initialize\n"
        "      @items = []\n"
        "    end\n"
        "\n"
        "    def total\n"
        "      Pricing.sum(@items)\n"
        "    end\n"
        "  end\n"
        "end\n"
    ),
    "lib/shop/pricing.rb": (
        "module Shop\n"
        "  module Pricing\n"
        "    def self.sum(items)\n"
        "      items.sum(&:price)\n"
        "    end\n"
        "  end\n"
        "end\n"
    ),
    "spec/spec_helper.rb": 'require "shop"\n',
    "spec/shop/cart_spec.rb": (
        'require "spec_helper"\n'
        'require "shop/cart"\n'
        "\n"
        "RSpec.describe Shop::Cart do\n"
        '  it "totals nothing" do\n'
        "    expect(Shop::Cart.new.total).to eq(0)\n"
        "  end\n"
        "end\n"
    ),
}


@pytest.fixture(scope="module")
def ruby_repo(tmp_path_factory: pytest.TempPathFactory) -> Indexed:
    return index_fixture(tmp_path_factory.mktemp("ruby"), REPO)


def test_definitions_with_kinds_qualnames_and_spans(ruby_repo: Indexed) -> None:
    assert ruby_repo.symbols_of("lib/shop/cart.rb") == {
        ("lib/shop/cart.rb", "module", "Shop", 3, 13),
        ("lib/shop/cart.rb", "class", "Shop.Cart", 4, 12),
        ("lib/shop/cart.rb", "method", "Shop.Cart.initialize", 5, 7),
        ("lib/shop/cart.rb", "method", "Shop.Cart.total", 9, 11),
    }
    assert ruby_repo.symbols_of("lib/shop/pricing.rb") == {
        ("lib/shop/pricing.rb", "module", "Shop", 1, 7),
        ("lib/shop/pricing.rb", "module", "Shop.Pricing", 2, 6),
        ("lib/shop/pricing.rb", "method", "Shop.Pricing.sum", 3, 5),
    }


def test_requires_resolve_relative_to_the_file_and_through_lib(ruby_repo: Indexed) -> None:
    assert ruby_repo.edges_of("imports") == {
        imp("lib/shop.rb", "lib/shop/cart.rb"),
        imp("lib/shop/cart.rb", "lib/shop/pricing.rb"),
        imp("spec/spec_helper.rb", "lib/shop.rb"),
        imp("spec/shop/cart_spec.rb", "spec/spec_helper.rb"),  # a spec's load path
        imp("spec/shop/cart_spec.rb", "lib/shop/cart.rb"),
    }  # json is a gem


def test_specs_are_tests_of_what_they_name_and_require(ruby_repo: Indexed) -> None:
    assert ruby_repo.tests == {"spec/spec_helper.rb", "spec/shop/cart_spec.rb"}
    tests = ruby_repo.edges_of("tests")
    assert covers("spec/shop/cart_spec.rb", "lib/shop/cart.rb", "name") in tests
    assert covers("spec/shop/cart_spec.rb", "lib/shop/cart.rb", "import") in tests
    for path in ("test/shop/cart_test.rb", "test/test_cart.rb", "test/spec_cart.rb"):
        assert is_test_path(path), path
    assert not is_test_path("lib/shop/testing.rb")
    assert language_of("Rakefile") == language_of("tasks/a.rake") == "ruby"


def test_a_task_naming_a_method_ranks_its_file_first(ruby_repo: Indexed) -> None:
    assert ruby_repo.ranked("Pricing.sum ignores quantities")[0] == "lib/shop/pricing.rb"
