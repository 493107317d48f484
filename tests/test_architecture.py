"""The layout shows the architecture: imports point down the pipeline, the API is curated."""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import excerpt

SRC = Path(excerpt.__file__).parent

# Each package (or top-level module) may import only from those listed, plus itself and
# excerpt.errors. The pipeline runs down the first block; ``pipeline`` is the one module
# where its steps meet. ``risk`` is a concept matcher the pipeline uses (ranking reads
# the query's concepts, selection a path's): it sits below rank and imports no stage above
# the index. Side rooms (harness, gate, evals) consume the pipeline; nothing in it imports
# them. ``batch`` runs jobs on worker processes (and indexes many repositories): the CLI
# fans out through it. ``tooling`` is the declared surface the benchmarks (the excerpt-bench
# distribution, ``bench/``) build on; nothing in the product imports it.
ALLOWED = {
    "core": set(),
    "discover": {"core"},
    "index": {"core", "discover"},
    "risk": {"core", "discover", "index"},
    "rank": {"core", "index", "risk"},
    "pack": {"core", "discover", "index", "rank", "risk"},
    "pipeline": {"core", "discover", "index", "rank", "pack", "risk"},
    "render": {"core", "discover", "index", "rank", "pack", "risk"},
    "deliver": {"core", "discover", "index", "rank", "pack", "pipeline", "render", "risk"},
    "batch": {"core", "discover", "index"},
    "harness": {"core", "discover"},
    "compact": {"core"},
    "gate": {"core", "discover", "index", "risk"},
    "handoff": {"core", "discover", "index", "pack", "pipeline"},
    "mcp": {
        "core", "discover", "index", "rank", "pack", "pipeline", "render", "deliver",
        "harness", "risk", "gate", "handoff", "compact",
        # the server answers its hooks' seed requests from its warm index
        "hooks",
    },
    "hooks": {
        "core", "discover", "index", "rank", "pack", "pipeline", "render", "deliver",
        "compact",
    },
    "evals": {"core", "discover", "index", "rank", "pack", "pipeline", "render", "deliver",
              "harness", "risk", "gate"},
    "cli": {
        "core", "discover", "index", "rank", "pack", "pipeline", "render", "deliver", "mcp",
        "evals", "harness", "risk", "gate", "handoff", "compact", "batch", "hooks",
    },
    # the names tools outside the product build on (the benchmarks): above everything
    "tooling": {
        "core", "discover", "index", "rank", "pack", "pipeline", "render", "deliver", "mcp",
        "evals", "harness", "risk", "gate", "handoff", "compact", "batch", "hooks", "cli",
    },
}  # fmt: skip
# Modules outside the pipeline's layering: the package's lazy entry points and the tree.
UNLAYERED = {"__init__", "__main__", "errors", "launch"}


def _units() -> set[str]:
    """Every package and top-level module of ``src/excerpt``."""
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in SRC.glob("*.py")}
    return packages | (modules - UNLAYERED)


def test_every_package_and_module_has_a_place_in_the_layering() -> None:
    assert _units() == set(ALLOWED), "a new package needs its line in ALLOWED"


def _sources(unit: str) -> list[Path]:
    return sorted((SRC / unit).rglob("*.py")) if (SRC / unit).is_dir() else [SRC / f"{unit}.py"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name == "excerpt" or name.startswith("excerpt.")}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_point_down_the_pipeline(package: str) -> None:
    allowed = {package, "errors"} | ALLOWED[package]
    for path in _sources(package):
        for module in _imports(path):
            parts = module.split(".")
            if package in ("cli", "mcp", "hooks") and module == "excerpt":
                continue  # the version string
            assert len(parts) > 1 and parts[1] in allowed, f"{path.name} imports {module}"


BENCH = SRC.parents[1] / "bench" / "src" / "excerpt_bench"
# what the benchmarks may import of excerpt: the declared tooling API and the errors
DECLARED = {"excerpt.tooling", "excerpt.errors"}


def _undeclared(source: str) -> list[str]:
    """The imports of excerpt in ``source`` that are not the declared tooling API."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            names = names[:1] if node.module in DECLARED else names
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found += [
            n for n in names if (n == "excerpt" or n.startswith("excerpt.")) and n not in DECLARED
        ]
    return found


def test_an_undeclared_import_is_caught() -> None:
    assert _undeclared("from excerpt.index.view import SqliteView\n") == [
        "excerpt.index.view", "excerpt.index.view.SqliteView"
    ]  # fmt: skip
    assert _undeclared("def f():\n    import excerpt.rank.score\n") == ["excerpt.rank.score"]
    assert _undeclared("from excerpt import deliver\n") == ["excerpt", "excerpt.deliver"]
    assert _undeclared("from excerpt.tooling import rank_files\nimport excerpt_bench\n") == []


def test_the_benchmarks_import_nothing_of_excerpt_but_the_tooling_api() -> None:
    paths = sorted(BENCH.rglob("*.py"))
    assert len(paths) > 20
    undeclared = {
        p.relative_to(BENCH).as_posix(): found
        for p in paths
        if (found := _undeclared(p.read_text(encoding="utf-8")))
    }
    assert undeclared == {}, "add the name to excerpt.tooling (and its docstring), or do without"


def test_nothing_in_the_product_imports_the_tooling_api_or_the_benchmarks() -> None:
    reaching = {
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if path.name != "tooling.py"
        and any(
            m == "excerpt.tooling" or m.split(".")[0] == "excerpt_bench" for m in _all_imports(path)
        )
    }
    assert reaching == set()


def _all_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_tooling_api_is_the_list_its_docstring_documents() -> None:
    tooling = importlib.import_module("excerpt.tooling")
    documented = re.findall(r"``(\w+)``", (tooling.__doc__ or "").split("The names, by", 1)[1])
    assert sorted(documented) == sorted(tooling.__all__)  # each named once, every one
    assert all(hasattr(tooling, name) for name in tooling.__all__)


def _reaches_under_the_packing_api(node: ast.AST) -> bool:
    """An import of selection (``excerpt.pack.build``) or of the preparation it fits
    (``excerpt.pipeline.prepare``)."""
    if isinstance(node, ast.ImportFrom) and node.level == 0:
        names = {alias.name for alias in node.names}
        return node.module == "excerpt.pack.build" or (
            node.module == "excerpt.pipeline" and "prepare" in names
        )
    if isinstance(node, ast.Import):
        return bool({"excerpt.pack.build", "excerpt.pipeline"} & {a.name for a in node.names})
    return False


def test_packs_are_reached_through_the_packing_api_alone() -> None:
    # the CLI, the MCP tools, the hooks and the benchmarks all pack through excerpt.deliver,
    # so none fits, remembers or renders a pack its own way
    reaching = set()
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if path.parent.name != "pack" and any(map(_reaches_under_the_packing_api, ast.walk(tree))):
            reaching.add(path.relative_to(SRC).as_posix())
    assert reaching == {"deliver/__init__.py"}


def _documented_names() -> list[str]:
    """The names the package docstring lists, stage by stage."""
    doc = excerpt.__doc__ or ""
    block = doc.split("The names, by stage", 1)[1].split("\n\n")[1]  # the list after it
    return re.findall(r"``(\w+)``", block.replace("``excerpt.errors``", ""))


def test_public_api_is_sorted_and_every_name_exists() -> None:
    names = list(excerpt.__all__)
    assert names == sorted(names)
    for name in names:
        assert hasattr(excerpt, name), name
        module = importlib.import_module("excerpt")
        assert getattr(module, name) is getattr(excerpt, name)


def test_public_api_is_the_documented_list() -> None:
    documented = _documented_names()
    assert len(documented) == len(set(documented)), "a name is documented twice"
    assert sorted(documented) == list(excerpt.__all__)


def test_importing_excerpt_loads_no_stage() -> None:
    code = (
        "import sys, excerpt; "
        "print(sorted(m for m in sys.modules if m.startswith(('excerpt.', 'mcp', 'pydantic',"
        " 'tree_sitter', 'bpe_openai'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_every_error_class_carries_an_exit_code() -> None:
    errors = [
        getattr(excerpt, n) for n in excerpt.__all__ if n.endswith(("Error", "Fault", "Busy"))
    ]
    assert errors
    for cls in errors:
        assert issubclass(cls, excerpt.ExcerptError)
        assert cls.exit_code in (1, 2, 3)


def test_library_code_never_prints() -> None:
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [
            n for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print"
        ]  # fmt: skip
        assert not calls, path


def _module_graph() -> dict[str, set[str]]:
    """Every module of ``excerpt`` and the modules of ``excerpt`` it imports, at the top or
    inside a function (a lazy import still ties the two); ``from pkg import sub`` names the
    submodule, not the package."""
    modules: dict[str, Path] = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                subs = [f"{node.module}.{alias.name}" for alias in node.names]
                targets += [s for s in subs if s in modules]
                if any(s not in modules for s in subs):
                    targets.append(node.module)
            elif isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def test_no_module_imports_one_that_imports_it_back() -> None:
    # an import circle, lazy or not, is two modules that cannot be read (or moved) apart;
    # any cycle, of two modules or more, is one
    graph = _module_graph()
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        order[node] = low[node] = len(order)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in order:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], order[other])
        if low[node] == order[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    assert cycles == []


def test_the_architecture_page_is_the_code_s_own() -> None:
    # docs/architecture.md is generated from the imports and docstrings: a change to either
    # that the page does not show fails here (python scripts/architecture.py writes it again)
    root = SRC.parents[1]
    proc = subprocess.run(
        [sys.executable, str(root / "scripts" / "architecture.py"), "--check"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:]


def test_the_readme_is_a_front_door_of_at_most_150_lines() -> None:
    readme = (SRC.parents[1] / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    # the two commands, then the clients, before any reference
    heads, fence = [], ""
    for line in readme.splitlines():
        if line.startswith("```"):
            mark = line[: len(line) - len(line.lstrip("`"))]
            fence = "" if fence and mark == fence else (fence or mark)
        elif not fence and line.startswith("## "):
            heads.append(line)
    assert heads[:2] == ["## Two commands", "## Use it in your client"]
    # a table of the clients, one command each
    assert all(f"excerpt setup {c}" in readme for c in ("claude", "codex", "cursor"))


def test_every_command_s_help_ends_with_its_documentation_page() -> None:
    from excerpt.cli import build_parser

    docs = SRC.parents[1] / "docs"
    seen = 0

    def walk(parser: argparse.ArgumentParser) -> None:
        nonlocal seen
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    last = sub.format_help().rstrip().splitlines()[-1]
                    page = re.fullmatch(r"docs: (docs/[\w-]+\.md) \(the site: mkdocs build\)", last)
                    assert page is not None, sub.prog
                    assert (docs.parent / page.group(1)).is_file(), sub.prog
                    seen += 1
                    walk(sub)

    walk(build_parser())
    assert seen >= 20
