"""The language registry: one record per language, and nothing else in the index knows one."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import excerpt.index
from excerpt.index import lang as registry
from excerpt.index.lang import LANGUAGES, PARSED_LANGUAGES, by_name, grammar, unparsed
from excerpt.index.lang.base import Language, TestPaths
from excerpt.index.lang.python import PYTHON

INDEX = Path(excerpt.index.__file__).parent
LANG = INDEX / "lang"
PYPROJECT = INDEX.parents[2] / "pyproject.toml"

PARSED_NAMES = {lang.name for lang in LANGUAGES} | {lang.family_name for lang in LANGUAGES}
KNOWN_NAMES = PARSED_NAMES | set(unparsed.EXTENSIONS.values()) | set(unparsed.NAMES.values())


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the constant nodes that are docstrings (of the module, classes, functions)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _language_literals(path: Path) -> list[str]:
    """Where ``path`` names a language: any string literal naming a parsed language (as in
    ``_JS = frozenset({"javascript", …})``), and any comparison, dict key or ``case`` against
    a name ``language_of`` can return."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and id(node) not in docstrings
            and isinstance(node.value, str)
            and node.value in PARSED_NAMES
        ):
            found.append(f"{path.name}:{node.lineno}: {node.value!r}")
        compared: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            compared = [node.left, *node.comparators]
        elif isinstance(node, ast.Dict):
            compared = [k for k in node.keys if k is not None]
        elif isinstance(node, ast.match_case):
            compared = [node.pattern]
        for operand in compared:
            found += [
                f"{path.name}:{getattr(operand, 'lineno', '?')}: compares with {s!r}"
                for s in _strings(operand)
                if s in KNOWN_NAMES
            ]
    return found


def test_nothing_in_the_index_outside_the_registry_branches_on_a_language_name() -> None:
    modules = sorted(INDEX.glob("*.py"))
    assert modules and all(p.parent == INDEX for p in modules)
    found = [hit for path in modules for hit in _language_literals(path)]
    assert found == []


def test_the_scan_finds_a_language_branch(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        '"""A docstring may say python."""\n'
        'KINDS = {"javascript": 1}\n'
        'def f(language: str) -> bool:\n    return language == "markdown"\n',
        encoding="utf-8",
    )
    assert sorted(_language_literals(probe)) == [
        "probe.py:2: 'javascript'",
        "probe.py:2: compares with 'javascript'",
        "probe.py:4: compares with 'markdown'",
    ]


def test_parsed_languages_are_the_registry_in_order() -> None:
    assert PARSED_LANGUAGES == (
        "python", "javascript", "typescript", "tsx", "go", "rust", "java",
        "c", "cpp", "csharp", "ruby", "php",
        "kotlin", "swift", "scala", "lua", "shell",
    )  # fmt: skip
    assert all(
        by_name(name) is lang for name, lang in zip(PARSED_LANGUAGES, LANGUAGES, strict=True)
    )
    assert by_name("markdown") is None


def test_importing_the_index_loads_no_grammar() -> None:
    probe = (
        "import sys, json; import excerpt.index.extract, excerpt.index.resolve, "
        "excerpt.index.lang; print(json.dumps(sorted(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True)
    loaded = json.loads(proc.stdout)
    assert [m for m in loaded if m.startswith("tree_sitter_")] == []


@pytest.mark.parametrize("name", PARSED_LANGUAGES)
def test_every_language_has_a_grammar_with_definitions(name: str) -> None:
    g = grammar(name)
    captures = {g.query.capture_name(i) for i in range(g.query.capture_count)}
    assert "name" in captures
    assert any(c.startswith("definition.") for c in captures)


def _grammar_wheels() -> set[str]:
    """The grammar modules the language modules import (inside their loaders)."""
    wheels: set[str] = set()
    for path in LANG.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                wheels |= {a.name for a in node.names if a.name.startswith("tree_sitter_")}
    return wheels


def test_every_grammar_wheel_is_a_pinned_dependency_and_has_a_mypy_override() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    pins = {
        re.split(r"[<>=~!]", dep, maxsplit=1)[0].strip().replace("-", "_"): dep
        for dep in project["project"]["dependencies"]
    }
    overrides = {
        module
        for override in project["tool"]["mypy"]["overrides"]
        if override.get("ignore_missing_imports")
        for module in override["module"]
    }
    wheels = _grammar_wheels()
    assert len(wheels) >= 6
    for wheel in sorted(wheels):
        assert wheel in pins, f"{wheel} is not a dependency"
        assert "<" in pins[wheel] and ">=" in pins[wheel], f"{wheel} is not pinned to a range"
        assert wheel in overrides, f"{wheel} has no mypy override"


def test_test_rules_apply_only_to_their_language_s_files() -> None:
    for lang in LANGUAGES:
        assert set(lang.test_extensions) <= set(lang.extensions), lang.name


def test_the_registry_says_how_to_add_a_language() -> None:
    doc = registry.__doc__ or ""
    assert "To add a language" in doc
    assert "LANGUAGES" in doc and "pyproject.toml" in doc


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param({"name": "Python"}, "bad language name", id="name"),
        pytest.param({"extensions": (".PY",)}, "lower-case", id="extension-case"),
        pytest.param({"extensions": ("py",)}, "with a dot", id="extension-dot"),
        pytest.param({"import_hooks": {"use": lambda node: []}}, "no @use capture", id="hook"),
    ],
)
def test_a_language_record_checks_its_invariants(change: dict[str, object], message: str) -> None:
    fields = {f: getattr(PYTHON, f) for f in Language.__dataclass_fields__}
    with pytest.raises(ValueError, match=message):
        Language(**{**fields, **change})


def test_a_language_record_is_read_only() -> None:
    with pytest.raises(TypeError):
        PYTHON.import_hooks["x"] = PYTHON.import_hooks["import"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("rules", "path", "is_test"),
    [
        pytest.param(TestPaths(names=frozenset({"conftest.py"})), "a/conftest.py", True, id="name"),
        pytest.param(TestPaths(stem=re.compile(r"_spec$")), "a/x_spec.rb", True, id="stem"),
        pytest.param(TestPaths(stem=re.compile(r"_spec$")), "a/x.rb", False, id="stem-miss"),
        pytest.param(TestPaths(dirs=frozenset({"t"})), "t/x.pl", True, id="dir"),
        pytest.param(
            TestPaths(dirs=frozenset({"t"}), dirs_exempt=frozenset({"x.pl"})),
            "t/x.pl",
            False,
            id="dir-exempt",
        ),
        pytest.param(
            TestPaths(dirs=frozenset({"t"}), dirs_not_under=frozenset({"lib"})),
            "lib/t/x.pl",
            False,
            id="dir-not-under",
        ),
        pytest.param(
            TestPaths(source_sets=re.compile(r"^test$")), "src/test/kotlin/A.kt", True, id="set"
        ),
    ],
)
def test_test_path_rules_are_data(rules: TestPaths, path: str, is_test: bool) -> None:
    assert rules.matches(path) is is_test


@pytest.mark.parametrize(
    ("path", "bare", "subject"),
    [
        ("tests/test_views.py", False, "views"),
        ("spec/order_spec.rb", False, "order"),
        ("web/button.test.tsx", False, "button"),
        ("src/OrderTest.java", False, "order"),
        ("tests/helpers.py", False, None),
        ("tests/walk.rs", True, "walk"),
    ],
)
def test_a_test_s_name_says_what_it_tests(path: str, bare: bool, subject: str | None) -> None:
    assert TestPaths(bare_names=bare).subject(path) == subject


def test_every_parsed_language_has_a_fence_info_string() -> None:
    from excerpt.index.lang import PARSED_LANGUAGES
    from excerpt.render.packs import _FENCE_LANG

    assert set(PARSED_LANGUAGES) <= set(_FENCE_LANG)


def test_an_index_made_by_another_registry_reads_every_file_again_once(tmp_path: Path) -> None:
    from excerpt.core.settings import repo_cache_dir
    from excerpt.index import lang
    from excerpt.index.build import index_repository
    from excerpt.index.store import IndexStore

    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n", encoding="utf-8")
    (root / "b.rb").write_text("def b\n  1\nend\n", encoding="utf-8")
    cache = tmp_path / "cache"
    assert index_repository(root, cache_dir=cache).files_read == 2
    assert index_repository(root, cache_dir=cache).files_read == 0
    # as if b.rb had been stored by a build that did not parse Ruby
    with IndexStore.open(repo_cache_dir(root.resolve(), cache)) as store:
        store.set_meta(extraction="an older registry")
    assert index_repository(root, cache_dir=cache).files_read == 2
    assert index_repository(root, cache_dir=cache).files_read == 0
    assert lang.extraction_signature() == lang.extraction_signature()
