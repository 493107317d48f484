"""C and C++: definitions with spans, ``#include`` resolved to files, tests by layout."""

from __future__ import annotations

import pytest

from excerpt.index.extract import extract
from excerpt.index.lang import is_test_path, language_of
from lang_repo import Indexed, covers, imp, index_fixture

C_REPO = {
    "include/calc.h": (
        "#ifndef CALC_H\n"
        "#define CALC_H\n"
        "\n"
        "struct calc_state {\n"
        "    int total;\n"
        "};\n"
        "\n"
        "int calc_add(struct calc_state *s, int x);\n"
        "\n"
        "#endif\n"
    ),
    "src/calc.c": (
        '#include "calc.h"\n'
        '#include "util.h"\n'
        "#include <stdio.h>\n"
        "\n"
        "int calc_add(struct calc_state *s, int x)\n"
        "{\n"
        "    s->total += clamp_int(x);\n"
        "    return s->total;\n"
        "}\n"
        "\n"
        "static char *calc_name(void)\n"
        "{\n"
        '    return "calc";\n'
        "}\n"
    ),
    "src/util.h": (
        "#define CLAMP_MAX 100\n"
        "\n"
        "static inline int clamp_int(int x)\n"
        "{\n"
        "    return x > CLAMP_MAX ? CLAMP_MAX : x;\n"
        "}\n"
    ),
    "tests/test_calc.c": (
        '#include "calc.h"\n'
        "#include <assert.h>\n"
        "\n"
        "int main(void)\n"
        "{\n"
        "    struct calc_state s = {0};\n"
        "    assert(calc_add(&s, 1) == 1);\n"
        "    return 0;\n"
        "}\n"
    ),
}

CPP_REPO = {
    "include/geo/shape.hpp": (
        "#pragma once\n"
        "namespace geo {\n"
        "class Shape {\n"
        " public:\n"
        "  virtual ~Shape() {}\n"
        "  virtual double area() const = 0;\n"
        "};\n"
        "}\n"
    ),
    "src/circle.hpp": (
        "#pragma once\n"
        "#include <geo/shape.hpp>\n"
        "namespace geo {\n"
        "class Circle : public Shape {\n"
        " public:\n"
        "  explicit Circle(double r) : r_(r) {}\n"
        "  double area() const override;\n"
        " private:\n"
        "  double r_;\n"
        "};\n"
        "}\n"
    ),
    "src/circle.cpp": (
        '#include "circle.hpp"\n'
        "#include <vector>\n"
        "\n"
        "namespace geo {\n"
        "double Circle::area() const {\n"
        "  return 3.14159 * r_ * r_;\n"
        "}\n"
        "\n"
        "template <typename T>\n"
        "T scaled(T v, T k) {\n"
        "  return v * k;\n"
        "}\n"
        "}\n"
    ),
    "tests/circle_test.cpp": (
        '#include "../src/circle.hpp"\n\nint main() { return geo::Circle(1).area() > 3 ? 0 : 1; }\n'
    ),
}


@pytest.fixture(scope="module")
def c_repo(tmp_path_factory: pytest.TempPathFactory) -> Indexed:
    return index_fixture(tmp_path_factory.mktemp("c"), C_REPO)


@pytest.fixture(scope="module")
def cpp_repo(tmp_path_factory: pytest.TempPathFactory) -> Indexed:
    return index_fixture(tmp_path_factory.mktemp("cpp"), CPP_REPO)


def test_c_definitions_are_whole_function_definitions_not_prototypes(c_repo: Indexed) -> None:
    assert c_repo.symbols_of("include/calc.h") == {
        ("include/calc.h", "macro", "CALC_H", 2, 2),
        ("include/calc.h", "class", "calc_state", 4, 6),
    }  # the prototype of calc_add is no definition
    assert c_repo.symbols_of("src/calc.c") == {
        ("src/calc.c", "function", "calc_add", 5, 9),
        ("src/calc.c", "function", "calc_name", 11, 14),  # returns a pointer: body kept
    }
    assert c_repo.symbols_of("src/util.h") == {
        ("src/util.h", "macro", "CLAMP_MAX", 1, 1),
        ("src/util.h", "function", "clamp_int", 3, 6),
    }


def test_c_includes_resolve_beside_the_file_then_in_include_directories(c_repo: Indexed) -> None:
    assert c_repo.edges_of("imports") == {
        imp("src/calc.c", "include/calc.h"),
        imp("src/calc.c", "src/util.h"),
        imp("tests/test_calc.c", "include/calc.h"),
    }  # <stdio.h> and <assert.h> exist under no include/ directory


def test_c_tests_by_layout_and_by_what_they_include(c_repo: Indexed) -> None:
    assert c_repo.tests == {"tests/test_calc.c"}
    assert covers("tests/test_calc.c", "include/calc.h", "import") in c_repo.edges_of("tests")
    for path in ("src/calc_test.c", "src/test_calc.c", "src/test-calc.c", "test/x.h"):
        assert is_test_path(path), path
    assert not is_test_path("src/contest.c")


def test_a_task_naming_a_c_function_ranks_its_file_first(c_repo: Indexed) -> None:
    assert c_repo.ranked("calc_add loses the running total")[0] == "src/calc.c"


def test_cpp_definitions_with_out_of_class_methods_qualified_by_their_scope(
    cpp_repo: Indexed,
) -> None:
    assert cpp_repo.languages["src/circle.cpp"] == "cpp"
    assert cpp_repo.symbols_of("include/geo/shape.hpp") == {
        ("include/geo/shape.hpp", "class", "Shape", 3, 7),
        ("include/geo/shape.hpp", "method", "Shape.~Shape", 5, 5),
    }
    assert cpp_repo.symbols_of("src/circle.hpp") == {
        ("src/circle.hpp", "class", "Circle", 4, 10),
        ("src/circle.hpp", "method", "Circle.Circle", 6, 6),
    }
    assert cpp_repo.symbols_of("src/circle.cpp") == {
        ("src/circle.cpp", "method", "Circle.area", 5, 7),
        ("src/circle.cpp", "function", "scaled", 9, 12),  # the template line included
    }


def test_cpp_angle_includes_resolve_under_include_directories(cpp_repo: Indexed) -> None:
    assert cpp_repo.edges_of("imports") == {
        imp("src/circle.hpp", "include/geo/shape.hpp"),
        imp("src/circle.cpp", "src/circle.hpp"),
        imp("tests/circle_test.cpp", "src/circle.hpp"),
    }
    assert cpp_repo.tests == {"tests/circle_test.cpp"}
    assert covers("tests/circle_test.cpp", "src/circle.hpp", "import") in cpp_repo.edges_of("tests")


def test_a_task_naming_a_cpp_function_ranks_its_file_first(cpp_repo: Indexed) -> None:
    assert cpp_repo.ranked("scaled() overflows for large factors")[0] == "src/circle.cpp"


@pytest.mark.parametrize(
    ("path", "language"),
    [("a.c", "c"), ("a.h", "c"), ("a.cc", "cpp"), ("a.cxx", "cpp"), ("a.hh", "cpp")],
)
def test_c_family_extensions(path: str, language: str) -> None:
    assert language_of(path) == language


def test_cpp_operators_destructors_and_reference_returns() -> None:
    source = (
        b"class S {\n"
        b"  ~S() {}\n"
        b"  S& operator=(const S&) = default;\n"
        b"};\n"
        b"const int& S::get() const { return x; }\n"
        b"a::b::C<int>::~C() {}\n"
    )
    rows = [(s.kind, s.qualname, s.start_line) for s in extract("cpp", source).symbols]
    assert rows == [
        ("class", "S", 1),
        ("method", "S.~S", 2),
        ("method", "S.operator=", 3),
        ("method", "S.get", 5),
        ("method", "a.b.C.~C", 6),
    ]


def test_unreadable_source_extracts_without_error() -> None:
    for language in ("c", "cpp"):
        assert extract(language, b"int f( {{ #include\n\x00\xff") is not None
