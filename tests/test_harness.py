"""``excerpt harness``: setup and validate commands inferred from files, never run.

SPEC §7 (harness) and §11 (``harness --json``); RELIABILITY B1/B3/B6 (sensitive files are never
opened, symlinks out of the root are not followed, nothing is executed, the repository is
never written, git lists a git repository). Covers the Node, Python, Go, Rust, Maven, Gradle,
Make and just readers, CI workflows as corroborating evidence, command signatures, the
``Harness.to_dict`` shape, the CLI and the MCP ``harness_infer`` tool.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from conftest import git, tree_snapshot, write_tree
from excerpt.cli import main
from excerpt.harness import Harness, infer_harness
from excerpt.harness.ci import kind_of, signatures
from excerpt.mcp.server import build_server
from excerpt.render.markdown import render_harness
from open_audit import recording_opens

pytestmark = pytest.mark.timeout(30)

MakeRepo = Callable[..., Path]
Doc = dict[str, Any]
ITEM_KEYS = {"command", "kind", "directory", "tool", "evidence", "confidence"}
KIND_ORDER = ("install", "test", "typecheck", "lint", "build")
WF = ".github/workflows/ci.yml"

# -- helpers -------------------------------------------------------------------------------------


def pkg(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2) + "\n"


def infer(root: Path, files: Mapping[str, str | bytes] | None = None, **kw: Any) -> Doc:
    if files is not None:
        write_tree(root, files)
    return infer_harness(root, **kw).to_dict()


def items(doc: Doc) -> list[Doc]:
    return [*doc["setup"], *doc["validate"]]


def find(doc: Doc, command: str, directory: str = ".") -> Doc | None:
    hits = [c for c in items(doc) if c["command"] == command and c["directory"] == directory]
    assert len(hits) <= 1, hits
    return hits[0] if hits else None


def get(doc: Doc, command: str, directory: str = ".") -> Doc:
    found = find(doc, command, directory)
    assert found is not None, f"{command!r} in {directory!r} not in {commands(doc)}"
    return found


def commands(doc: Doc, directory: str | None = None) -> set[str]:
    return {c["command"] for c in items(doc) if directory is None or c["directory"] == directory}


def directories(doc: Doc) -> set[str]:
    return {c["directory"] for c in items(doc)}


def line_of(text: str, needle: str) -> int:
    hits = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def assert_evidence_real(root: Path, doc: Doc) -> None:
    for item in items(doc):
        assert item["evidence"], item
        for ev in item["evidence"]:
            name, sep, line = ev.rpartition(":")
            assert sep and line.isdigit(), ev
            path = root / name
            assert path.is_file(), ev
            assert 1 <= int(line) <= max(1, len(path.read_bytes().splitlines())), ev


def workflow(steps: str, job: str = "test", extra: str = "") -> str:
    return (
        "name: CI\non: [push]\njobs:\n"
        f"  {job}:\n    runs-on: ubuntu-latest\n{extra}    steps:\n"
        "      - uses: actions/checkout@v4\n" + steps
    )


NODE_NPM = {"package.json": pkg({"scripts": {"test": "jest"}}), "package-lock.json": "{}\n"}

# ============================================================================ Node


def test_package_manager_field_wins_over_a_lockfile_of_another_manager(tmp_path: Path) -> None:
    text = pkg({"name": "x", "packageManager": "pnpm@9.1.0", "scripts": {"test": "vitest"}})
    doc = infer(tmp_path, {"package.json": text, "package-lock.json": "{}\n"})
    assert [c["command"] for c in doc["setup"]] == ["pnpm install"]  # not frozen: no pnpm lock
    install = doc["setup"][0]
    assert install["tool"] == "pnpm"
    assert install["evidence"] == [f"package.json:{line_of(text, 'packageManager')}"]
    assert commands(doc) == {"pnpm install", "pnpm test"}


@pytest.mark.parametrize(
    ("extra", "install", "test"),
    [
        ({"package-lock.json": "{}\n"}, "npm ci", "npm test"),
        ({"npm-shrinkwrap.json": "{}\n"}, "npm ci", "npm test"),
        ({"pnpm-lock.yaml": "lockfileVersion: '9.0'\n"}, "pnpm install --frozen-lockfile",
         "pnpm test"),
        ({"yarn.lock": "# yarn v1\n"}, "yarn install --frozen-lockfile", "yarn test"),
        ({"yarn.lock": "x\n", ".yarnrc.yml": "nodeLinker: pnp\n"}, "yarn install --immutable",
         "yarn test"),
        ({"bun.lockb": b"\x00bun\x01"}, "bun install --frozen-lockfile", "bun run test"),
        ({"bun.lock": "{}\n"}, "bun install --frozen-lockfile", "bun run test"),
        ({}, "npm install", "npm test"),
    ],
    ids=["npm", "shrinkwrap", "pnpm", "yarn-classic", "yarn-berry", "bun-lockb", "bun-lock",
         "none"],
)  # fmt: skip
def test_the_lockfile_chooses_the_manager_and_its_install_command(
    tmp_path: Path, extra: dict[str, str | bytes], install: str, test: str
) -> None:
    doc = infer(tmp_path, {"package.json": pkg({"scripts": {"test": "jest"}}), **extra})
    assert [c["command"] for c in doc["setup"]] == [install]
    assert [c["command"] for c in doc["validate"]] == [test]
    lock = next(iter(extra), "package.json")
    assert doc["setup"][0]["evidence"] == [f"{lock}:1"]
    assert doc["setup"][0]["tool"] == install.split()[0]


@pytest.mark.parametrize(
    ("declared", "install"),
    [
        ("yarn@4.1.0", "yarn install --immutable"),
        ("yarn@1.22.19", "yarn install --frozen-lockfile"),
    ],
)
def test_yarn_berry_is_told_by_the_declared_version(
    tmp_path: Path, declared: str, install: str
) -> None:
    files = {"package.json": pkg({"packageManager": declared}), "yarn.lock": "x\n"}
    assert commands(infer(tmp_path, files)) == {install}


def test_a_locked_install_is_more_certain_than_an_unlocked_one(tmp_path: Path) -> None:
    locked = infer(tmp_path / "a", NODE_NPM)
    unlocked = infer(tmp_path / "b", {"package.json": NODE_NPM["package.json"]})
    assert get(locked, "npm ci")["confidence"] > get(unlocked, "npm install")["confidence"]


@pytest.mark.parametrize(
    ("lock", "expected"),
    [
        (
            "package-lock.json",
            {"npm test": "test", "npm run typecheck": "typecheck", "npm run lint": "lint",
             "npm run build": "build"},
        ),
        (
            "pnpm-lock.yaml",
            {"pnpm test": "test", "pnpm run typecheck": "typecheck", "pnpm run lint": "lint",
             "pnpm run build": "build"},
        ),
        (
            "yarn.lock",
            {"yarn test": "test", "yarn run typecheck": "typecheck", "yarn run lint": "lint",
             "yarn run build": "build"},
        ),
        (
            "bun.lock",
            {"bun run test": "test", "bun run typecheck": "typecheck", "bun run lint": "lint",
             "bun run build": "build"},
        ),
    ],
)  # fmt: skip
def test_scripts_become_validate_commands_of_the_chosen_manager(
    tmp_path: Path, lock: str, expected: dict[str, str]
) -> None:
    scripts = {"dev": "vite", "test": "vitest", "typecheck": "tsc", "lint": "eslint .",
               "build": "vite build", "start": "node ."}  # fmt: skip
    text = pkg({"name": "x", "scripts": scripts})
    doc = infer(tmp_path, {"package.json": text, lock: "x\n"})
    assert {c["command"]: c["kind"] for c in doc["validate"]} == expected
    for c in doc["validate"]:
        script = c["command"].split()[-1]
        key = f'"{script}":'
        assert c["evidence"] == [f"package.json:{line_of(text, key)}"]
        assert c["directory"] == "."


def test_the_npm_init_placeholder_test_script_is_ignored(tmp_path: Path) -> None:
    placeholder = 'echo "Error: no test specified" && exit 1'
    doc = infer(tmp_path, {"package.json": pkg({"scripts": {"test": placeholder, "lint": "x"}})})
    assert commands(doc) == {"npm install", "npm run lint"}


def test_empty_and_non_string_scripts_are_ignored(tmp_path: Path) -> None:
    doc = infer(
        tmp_path, {"package.json": pkg({"scripts": {"test": " ", "lint": 3, "build": "b"}})}
    )
    assert commands(doc) == {"npm install", "npm run build"}


def test_test_variant_scripts_are_tests_with_less_confidence(tmp_path: Path) -> None:
    scripts = {"test": "jest", "test:unit": "jest unit", "test-e2e": "playwright test",
               "test:watch": "jest --watch", "testing": "x", "pretest": "x",
               "latest": "x"}  # fmt: skip
    text = pkg({"scripts": scripts})
    doc = infer(tmp_path, {"package.json": text})
    tests = {c["command"]: c for c in doc["validate"] if c["kind"] == "test"}
    assert set(tests) == {"npm test", "npm run test:unit", "npm run test-e2e"}
    assert tests["npm run test:unit"]["evidence"] == [f"package.json:{line_of(text, 'test:unit')}"]
    assert tests["npm run test:unit"]["confidence"] < tests["npm test"]["confidence"]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"tsconfig.json": "{}\n", "dep": "devDependencies"}, "npx tsc --noEmit"),
        ({"tsconfig.json": "{}\n", "dep": "dependencies"}, "npx tsc --noEmit"),
        ({"tsconfig.json": "{}\n", "pnpm-lock.yaml": "x\n", "dep": "devDependencies"},
         "pnpm exec tsc --noEmit"),
        ({"tsconfig.json": "{}\n"}, None),  # no typescript dependency
        ({"dep": "devDependencies"}, None),  # no tsconfig
    ],
    ids=["dev-dep", "dep", "pnpm", "no-dep", "no-tsconfig"],
)  # fmt: skip
def test_tsc_is_a_fallback_only_with_tsconfig_and_a_typescript_dependency(
    tmp_path: Path, files: dict[str, str], expected: str | None
) -> None:
    files = dict(files)
    dep = files.pop("dep", None)
    manifest: dict[str, Any] = {"name": "x"}
    if dep:
        manifest[dep] = {"typescript": "^5.4.0"}
    doc = infer(tmp_path, {"package.json": pkg(manifest), **files})
    typecheck = [c for c in doc["validate"] if c["kind"] == "typecheck"]
    if expected is None:
        assert typecheck == []
    else:
        assert [(c["command"], c["tool"], c["evidence"]) for c in typecheck] == [
            (expected, "tsc", ["tsconfig.json:1"])
        ]


def test_a_typecheck_script_replaces_the_tsc_fallback(tmp_path: Path) -> None:
    manifest = {"scripts": {"typecheck": "tsc -b"}, "devDependencies": {"typescript": "5"}}
    doc = infer(tmp_path, {"package.json": pkg(manifest), "tsconfig.json": "{}\n"})
    assert [c["command"] for c in doc["validate"]] == ["npm run typecheck"]


def _assert_members(doc: Doc, manager: str, members: dict[str, set[str]]) -> None:
    for directory, expected in members.items():
        got = [c for c in items(doc) if c["directory"] == directory]
        assert {c["command"] for c in got} == expected, directory
        assert all(c["kind"] != "install" and c["tool"] == manager for c in got)
        for c in got:
            assert all(e.startswith(f"{directory}/package.json:") for e in c["evidence"])


def test_package_json_workspaces_list_gives_members_the_root_manager(tmp_path: Path) -> None:
    files = {
        "package.json": pkg({"workspaces": ["packages/*"], "scripts": {"lint": "eslint ."}}),
        "pnpm-lock.yaml": "x\n",
        "packages/a/package.json": pkg({"scripts": {"test": "vitest", "build": "tsup"}}),
        "packages/b/package.json": pkg({"scripts": {"lint": "eslint ."}}),
        "packages/b/src/index.ts": "export {}\n",
    }
    doc = infer(tmp_path, files)
    assert [c["command"] for c in doc["setup"]] == ["pnpm install --frozen-lockfile"]
    assert commands(doc, ".") == {"pnpm install --frozen-lockfile", "pnpm run lint"}
    _assert_members(
        doc,
        "pnpm",
        {"packages/a": {"pnpm test", "pnpm run build"}, "packages/b": {"pnpm run lint"}},
    )
    assert directories(doc) == {".", "packages/a", "packages/b"}


def test_package_json_workspaces_packages_object_form(tmp_path: Path) -> None:
    files = {
        "package.json": pkg({"private": True, "workspaces": {"packages": ["apps/*"]}}),
        "yarn.lock": "x\n",
        "apps/web/package.json": pkg({"scripts": {"test": "jest"}}),
    }
    doc = infer(tmp_path, files)
    assert commands(doc, ".") == {"yarn install --frozen-lockfile"}
    _assert_members(doc, "yarn", {"apps/web": {"yarn test"}})


def test_pnpm_workspace_yaml_with_exclusions(tmp_path: Path) -> None:
    files = {
        "package.json": pkg({"name": "root"}),
        "pnpm-lock.yaml": "x\n",
        "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n  - '!packages/legacy'\n",
        "packages/core/package.json": pkg({"scripts": {"test": "vitest"}}),
        "packages/legacy/package.json": pkg({"scripts": {"test": "mocha"}}),
    }
    doc = infer(tmp_path, files)
    _assert_members(doc, "pnpm", {"packages/core": {"pnpm test"}})
    assert "packages/legacy" not in directories(doc)


def test_a_nested_package_without_lockfile_that_is_no_member_is_not_a_project(
    tmp_path: Path,
) -> None:
    files = {
        **NODE_NPM,
        "tools/codegen/package.json": pkg({"scripts": {"test": "node t.js", "build": "x"}}),
    }
    doc = infer(tmp_path, files)
    assert directories(doc) == {"."}
    assert commands(doc) == {"npm ci", "npm test"}


def test_a_nested_package_with_its_own_lockfile_is_its_own_project(tmp_path: Path) -> None:
    files = {
        **NODE_NPM,
        "site/package.json": pkg({"scripts": {"build": "astro build"}}),
        "site/yarn.lock": "x\n",
    }
    doc = infer(tmp_path, files)
    assert commands(doc, "site") == {"yarn install --frozen-lockfile", "yarn run build"}


def test_independent_packages_without_a_root_are_separate_projects(tmp_path: Path) -> None:
    files = {
        "web/package.json": pkg({"scripts": {"test": "vitest"}}),
        "api/package.json": pkg({"scripts": {"test": "jest"}}),
    }
    doc = infer(tmp_path, files)
    assert commands(doc, "web") == {"npm install", "npm test"}
    assert commands(doc, "api") == {"npm install", "npm test"}


@pytest.mark.parametrize(
    "text",
    ["{not json", "[1, 2]", '{"scripts": ["test"], "workspaces": 5, "packageManager": 7}'],
)
def test_malformed_package_json_does_not_crash(tmp_path: Path, text: str) -> None:
    doc = infer(tmp_path, {"package.json": text})
    assert all(c["kind"] == "install" for c in items(doc))


# ============================================================================ Python

PYTEST_CFG = "[project]\nname = 'x'\n\n[tool.pytest.ini_options]\naddopts = '-q'\n"


@pytest.mark.parametrize(
    ("files", "install", "test", "tool"),
    [
        ({"pyproject.toml": PYTEST_CFG, "uv.lock": "version = 1\n"}, "uv sync", "uv run pytest",
         "uv"),
        ({"pyproject.toml": PYTEST_CFG + "\n[tool.uv]\npackage = true\n"}, "uv sync",
         "uv run pytest", "uv"),
        ({"pyproject.toml": "[tool.poetry]\nname = 'x'\n\n[tool.pytest.ini_options]\n",
          "poetry.lock": "x\n"}, "poetry install", "poetry run pytest", "poetry"),
        ({"pyproject.toml": PYTEST_CFG + "\n[tool.pdm]\ndistribution = true\n"}, "pdm install",
         "pdm run pytest", "pdm"),
        ({"pyproject.toml": PYTEST_CFG, "hatch.toml": "[envs.default]\n"}, "hatch env create",
         "hatch test", "hatch"),
        ({"pyproject.toml": PYTEST_CFG}, "python -m pip install -e .", "python -m pytest", "pip"),
    ],
    ids=["uv-lock", "uv-section", "poetry", "pdm", "hatch", "pip"],
)  # fmt: skip
def test_python_manager_and_its_pytest_runner(
    tmp_path: Path, files: dict[str, str], install: str, test: str, tool: str
) -> None:
    doc = infer(tmp_path, files)
    assert [c["command"] for c in doc["setup"]] == [install]
    assert doc["setup"][0]["tool"] == tool
    assert [c["command"] for c in doc["validate"]] == [test]
    lock = {"uv": "uv.lock", "poetry": "poetry.lock", "hatch": "hatch.toml"}.get(tool)
    if lock and lock in files:
        assert doc["setup"][0]["evidence"] == [f"{lock}:1"]


@pytest.mark.parametrize(
    ("files", "evidence"),
    [
        ({"pyproject.toml": PYTEST_CFG}, "pyproject.toml:4"),
        ({"pytest.ini": "[pytest]\naddopts = -q\n"}, "pytest.ini:1"),
        ({"setup.cfg": "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n"}, "setup.cfg:4"),
        ({"tox.ini": "[tox]\nenvlist = py311\n\n[pytest]\naddopts = -q\n"}, "tox.ini:4"),
        ({"pyproject.toml": "[project]\nname = 'x'\n[project.optional-dependencies]\n"
          "test = [\n  'coverage',\n  'pytest>=8',\n]\n"}, "pyproject.toml:6"),
        ({"conftest.py": "import pytest\n"}, "conftest.py:1"),
        ({"tests/conftest.py": "import pytest\n"}, "tests/conftest.py:1"),
    ],
    ids=["ini_options", "pytest.ini", "setup.cfg", "tox.ini", "dependency", "conftest",
         "tests-conftest"],
)  # fmt: skip
def test_pytest_is_found_from_each_source_with_its_line(
    tmp_path: Path, files: dict[str, str], evidence: str
) -> None:
    doc = infer(tmp_path, {"setup.py": "from setuptools import setup\nsetup()\n", **files})
    test = get(doc, "python -m pytest")
    assert (test["kind"], test["tool"]) == ("test", "pytest")
    assert evidence in test["evidence"]
    assert "python -m unittest" not in commands(doc)


def test_more_pytest_sources_give_more_confidence(tmp_path: Path) -> None:
    one = infer(tmp_path / "one", {"pytest.ini": "[pytest]\n", "setup.py": ""})
    two = infer(tmp_path / "two", {"pytest.ini": "[pytest]\n", "setup.py": "", "conftest.py": ""})
    assert get(two, "python -m pytest")["confidence"] > get(one, "python -m pytest")["confidence"]


@pytest.mark.parametrize(
    ("extras", "expected"),
    [
        ("dev = ['ruff']\ntest = ['pytest']\n", "python -m pip install -e '.[test]'"),
        ("test = ['pytest']\ndev = ['ruff']\n", "python -m pip install -e '.[test]'"),
        ("dev = ['pytest']\ndocs = ['sphinx']\n", "python -m pip install -e '.[dev]'"),
        ("docs = ['sphinx']\n", "python -m pip install -e ."),
    ],
)
def test_pip_install_chooses_the_test_extra_then_dev(
    tmp_path: Path, extras: str, expected: str
) -> None:
    text = f"[project]\nname = 'x'\n\n[project.optional-dependencies]\n{extras}"
    doc = infer(tmp_path, {"pyproject.toml": text})
    assert [c["command"] for c in doc["setup"]] == [expected]
    if "[" in expected:
        extra = expected.split("[")[1].split("]")[0]
        assert doc["setup"][0]["evidence"] == [f"pyproject.toml:{line_of(text, f'{extra} =')}"]


def test_requirements_files_are_installed_each(tmp_path: Path) -> None:
    files = {
        "setup.py": "from setuptools import setup\nsetup()\n",
        "requirements.txt": "flask\n",
        "requirements-dev.txt": "pytest\n",
        "requirements/ci.txt": "tox\n",
        "docs/requirements.txt": "sphinx\n",
        "notes.txt": "not requirements\n",
    }
    doc = infer(tmp_path, files)
    pip_r = {c["command"]: c["evidence"] for c in doc["setup"] if " -r " in c["command"]}
    assert pip_r == {
        "python -m pip install -r requirements.txt": ["requirements.txt:1"],
        "python -m pip install -r requirements-dev.txt": ["requirements-dev.txt:1"],
        "python -m pip install -r requirements/ci.txt": ["requirements/ci.txt:1"],
    }
    assert "python -m pytest" in commands(doc)  # pytest is a requirement


def test_a_requirements_only_project_gets_its_pip_install(tmp_path: Path) -> None:
    files = {"requirements.txt": "flask\npytest\n", "app.py": "print(1)\n"}
    doc = infer(tmp_path, files)
    assert "python -m pip install -r requirements.txt" in commands(doc)


@pytest.mark.parametrize(
    ("files", "command", "evidence"),
    [
        ({"setup.py": "", "requirements-dev.txt": "ruff\n# tests\npytest>=8\n"},
         "python -m pytest", "requirements-dev.txt:3"),
        ({"pyproject.toml": "[tool.poetry]\nname = 'x'\n\n[tool.poetry.group.dev.dependencies]\n"
          "ruff = '*'\npytest = '^8'\n", "poetry.lock": "x\n"},
         "poetry run pytest", "pyproject.toml:6"),
        ({"setup.cfg": "[metadata]\nname = x\n\n[options.extras_require]\ntest =\n    pytest\n"},
         "python -m pytest", "setup.cfg:6"),
    ],
    ids=["requirements", "poetry", "setup.cfg-extras"],
)  # fmt: skip
def test_dependency_evidence_names_the_dependency_line(
    tmp_path: Path, files: dict[str, str], command: str, evidence: str
) -> None:
    assert evidence in get(infer(tmp_path, files), command)["evidence"]


def test_tox_ini_and_pyproject_tool_tox_give_tox(tmp_path: Path) -> None:
    ini = infer(tmp_path / "a", {"tox.ini": "# envs\n[tox]\nenvlist = py3\n\n[testenv]\n"})
    assert get(ini, "tox")["evidence"] == ["tox.ini:2"]
    assert get(ini, "tox")["kind"] == "test"
    text = "[project]\nname = 'x'\n\n[tool.tox]\nrequires = ['tox>=4']\n"
    toml = infer(tmp_path / "b", {"pyproject.toml": text})
    assert get(toml, "tox")["evidence"] == ["pyproject.toml:4"]


def test_noxfile_gives_nox_at_its_first_session(tmp_path: Path) -> None:
    text = "import nox\n\n\n@nox.session(python=['3.12'])\ndef tests(session):\n    pass\n"
    doc = infer(tmp_path, {"noxfile.py": text})
    nox = get(doc, "nox")
    assert (nox["kind"], nox["tool"], nox["evidence"]) == ("test", "nox", ["noxfile.py:4"])


@pytest.mark.parametrize(
    ("files", "ruff", "mypy"),
    [
        ({"pyproject.toml": "[project]\nname = 'x'\n\n[tool.ruff]\nline-length = 100\n\n"
          "[tool.mypy]\nstrict = true\n"},
         ("ruff check .", ["pyproject.toml:4"]), ("mypy", ["pyproject.toml:7"])),
        ({"setup.py": "", "ruff.toml": "line-length = 100\n", "mypy.ini": "[mypy]\n"},
         ("ruff check .", ["ruff.toml:1"]), ("mypy", ["mypy.ini:1"])),
        ({"setup.py": "", ".ruff.toml": "x = 1\n", "setup.cfg": "[flake8]\n\n[mypy]\nstrict = 1\n"},
         ("ruff check .", [".ruff.toml:1"]), ("mypy", ["setup.cfg:3"])),
        ({"pyproject.toml": "[project]\nname = 'x'\n\n[tool.ruff]\n\n[tool.mypy]\n",
          "uv.lock": "x\n"},
         ("uv run ruff check .", ["pyproject.toml:4"]), ("uv run mypy", ["pyproject.toml:6"])),
        ({"setup.py": ""}, None, None),
    ],
    ids=["pyproject", "own-files", "dot-ruff-setup-cfg", "uv-prefix", "none"],
)  # fmt: skip
def test_ruff_and_mypy_configs(
    tmp_path: Path,
    files: dict[str, str],
    ruff: tuple[str, list[str]] | None,
    mypy: tuple[str, list[str]] | None,
) -> None:
    doc = infer(tmp_path, files)
    lint = [(c["command"], c["evidence"]) for c in doc["validate"] if c["tool"] == "ruff"]
    types = [(c["command"], c["evidence"]) for c in doc["validate"] if c["tool"] == "mypy"]
    assert lint == ([ruff] if ruff else [])
    assert types == ([mypy] if mypy else [])
    assert all(c["kind"] == "lint" for c in doc["validate"] if c["tool"] == "ruff")
    assert all(c["kind"] == "typecheck" for c in doc["validate"] if c["tool"] == "mypy")


HATCH = """\
[project]
name = "x"

[tool.hatch.envs.default.scripts]
test = "pytest {args}"
serve = "python -m http.server"

[tool.hatch.envs.lint.scripts]
typing = "mypy src"
style = "ruff check ."

[tool.pytest.ini_options]
"""


def test_hatch_env_scripts(tmp_path: Path) -> None:
    doc = infer(tmp_path, {"pyproject.toml": HATCH})
    got = {(c["command"], c["kind"], c["evidence"][0]) for c in doc["validate"]}
    assert got == {
        ("hatch run test", "test", "pyproject.toml:5"),
        ("hatch run lint:typing", "typecheck", "pyproject.toml:9"),
        ("hatch run lint:style", "lint", "pyproject.toml:10"),
    }
    assert "hatch test" not in commands(doc)  # the project's own test script replaces it


def test_hatch_toml_env_scripts(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "hatch.toml": "[envs.default.scripts]\ntest = 'pytest {args}'\n",
    }
    assert get(infer(tmp_path, files), "hatch run test")["evidence"] == ["hatch.toml:2"]


def test_a_setup_py_inside_a_package_is_not_a_project(tmp_path: Path) -> None:
    files = {
        "setup.py": "",
        "src/pkg/__init__.py": "",
        "src/pkg/setup.py": "",
        "src/pkg/tox.ini": "[tox]\n",
    }
    doc = infer(tmp_path, files)
    assert directories(doc) == {"."}


def test_unittest_is_the_fallback_without_pytest(tmp_path: Path) -> None:
    doc = infer(tmp_path, {"setup.py": "", "tests/test_core.py": "import unittest\n"})
    test = get(doc, "python -m unittest")
    assert (test["kind"], test["tool"], test["evidence"]) == (
        "test",
        "unittest",
        ["tests/test_core.py:1"],
    )
    with_pytest = infer(tmp_path / "b", {"setup.py": "", "pytest.ini": "[pytest]\n",
                                         "tests/test_core.py": ""})  # fmt: skip
    assert "python -m unittest" not in commands(with_pytest)


@pytest.mark.parametrize(
    "text", ["[project\nname = 'x'\n", "x = = 1\n", b"\xff\xfe[\x00t\x00", "[tool]\nuv = 5\n"]
)
def test_malformed_pyproject_does_not_crash(tmp_path: Path, text: str | bytes) -> None:
    doc = infer(tmp_path, {"pyproject.toml": text, "uv.lock": "x\n", "tests/test_a.py": ""})
    assert get(doc, "uv sync")["evidence"] == ["uv.lock:1"]
    assert all(c["directory"] == "." for c in items(doc))


@pytest.mark.parametrize(
    ("name", "text"),
    [("setup.cfg", "no section header\nx = 1\n"), ("tox.ini", "[tox\n")],
)
def test_malformed_ini_files_do_not_crash(tmp_path: Path, name: str, text: str) -> None:
    doc = infer(tmp_path, {name: text, "setup.py": ""})
    assert commands(doc) == {"python -m pip install -e ."}


# ============================================================================ Go, Rust, Java


def test_go_module_and_golangci(tmp_path: Path) -> None:
    files = {"go.mod": "// c\nmodule example.com/x\n\ngo 1.22\n", ".golangci.yml": "run: {}\n"}
    doc = infer(tmp_path, files)
    kinds = {c["command"]: (c["kind"], c["evidence"]) for c in items(doc)}
    assert kinds == {
        "go mod download": ("install", ["go.mod:2"]),
        "go build ./...": ("build", ["go.mod:2"]),
        "go test ./...": ("test", ["go.mod:2"]),
        "go vet ./...": ("lint", ["go.mod:2"]),
        "golangci-lint run": ("lint", [".golangci.yml:1"]),
    }
    plain = infer(tmp_path / "b", {"go.mod": "module x\n"})
    assert "golangci-lint run" not in commands(plain)


def test_rust_package_has_no_workspace_flag(tmp_path: Path) -> None:
    doc = infer(tmp_path, {"Cargo.toml": "[package]\nname = 'x'\nversion = '0.1.0'\n"})
    assert {"cargo test", "cargo build", "cargo clippy", "cargo fetch"} == commands(doc)
    assert get(doc, "cargo test")["kind"] == "test"


def test_rust_virtual_workspace_uses_workspace_and_members_give_no_group(tmp_path: Path) -> None:
    files = {
        "Cargo.toml": "# ws\n[workspace]\nmembers = ['crates/*']\n",
        "crates/a/Cargo.toml": "[package]\nname = 'a'\n",
        "crates/b/Cargo.toml": "[package]\nname = 'b'\n",
    }
    doc = infer(tmp_path, files)
    assert directories(doc) == {"."}
    test = get(doc, "cargo test --workspace")
    assert test["evidence"] == ["Cargo.toml:2"]
    assert "cargo build --workspace" in commands(doc)
    assert "cargo test" not in commands(doc)


@pytest.mark.parametrize(("wrapper", "mvn"), [(True, "./mvnw"), (False, "mvn")])
def test_maven_wrapper_and_child_modules(tmp_path: Path, wrapper: bool, mvn: str) -> None:
    files = {
        "pom.xml": "<?xml version='1.0'?>\n<project>\n  <modules><module>core</module></modules>\n"
        "</project>\n",
        "core/pom.xml": "<project>\n</project>\n",
    }
    if wrapper:
        files["mvnw"] = "#!/bin/sh\n"
    doc = infer(tmp_path, files)
    assert directories(doc) == {"."}
    assert get(doc, f"{mvn} -B test")["evidence"] == ["pom.xml:2"]
    assert get(doc, f"{mvn} -B test")["kind"] == "test"
    assert get(doc, f"{mvn} -B package -DskipTests")["kind"] == "build"


@pytest.mark.parametrize(("wrapper", "gradle"), [(True, "./gradlew"), (False, "gradle")])
def test_gradle_wrapper_and_settings_cover_subprojects(
    tmp_path: Path, wrapper: bool, gradle: str
) -> None:
    files = {
        "settings.gradle.kts": 'include("lib")\n',
        "build.gradle.kts": "plugins {}\n",
        "lib/build.gradle.kts": "plugins {}\n",
    }
    if wrapper:
        files["gradlew"] = "#!/bin/sh\n"
    doc = infer(tmp_path, files)
    assert directories(doc) == {"."}
    assert commands(doc) == {f"{gradle} test", f"{gradle} assemble"}


def test_gradle_projects_without_settings_are_separate(tmp_path: Path) -> None:
    doc = infer(tmp_path, {"a/build.gradle": "x\n", "b/build.gradle": "x\n"})
    assert commands(doc, "a") == commands(doc, "b") == {"gradle test", "gradle assemble"}


# ============================================================================ Make and just

MAKEFILE = """\
lint := ruff
build ?= dist
VERSION = 1.0
.PHONY: test lint

# test: commented out
test lint-all: deps
\tpytest

check::
\t$(MAKE) test

deps:
\tpip install -r requirements.txt
all: check
\techo test:
"""


def test_make_targets(tmp_path: Path) -> None:
    doc = infer(tmp_path, {"Makefile": MAKEFILE})
    got = {(c["command"], c["kind"], tuple(c["evidence"])) for c in items(doc)}
    assert got == {
        ("make test", "test", ("Makefile:7",)),
        ("make check", "test", ("Makefile:10",)),
        ("make deps", "install", ("Makefile:13",)),
    }  # `lint := ruff` and `build ?= dist` are variables, not targets


def test_make_multi_target_lines(tmp_path: Path) -> None:
    doc = infer(tmp_path, {"GNUmakefile": "X := 1\n\ntest lint build: deps\n\ttrue\n"})
    got = {(c["command"], c["kind"], tuple(c["evidence"])) for c in items(doc)}
    assert got == {
        ("make test", "test", ("GNUmakefile:3",)),
        ("make lint", "lint", ("GNUmakefile:3",)),
        ("make build", "build", ("GNUmakefile:3",)),
    }


def test_make_test_variants_and_ci_target(tmp_path: Path) -> None:
    text = "".join(
        f"{t}:\n\ttrue\n"
        for t in ("test-unit", "check_all", "platformTests", "unit-tests", "ci", "latest",
                  "test-watch", "build-tests", "install-tests", "clean")
    )  # fmt: skip
    doc = infer(tmp_path, {"Makefile": text})
    got = {c["command"]: c for c in items(doc)}
    assert set(got) == {"make test-unit", "make check_all", "make platformTests",
                        "make unit-tests", "make ci"}  # fmt: skip
    assert all(c["kind"] == "test" for c in got.values())
    assert got["make ci"]["confidence"] > got["make test-unit"]["confidence"]
    assert got["make unit-tests"]["evidence"] == [f"Makefile:{line_of(text, 'unit-tests:')}"]


def test_a_makefile_in_a_tests_directory_is_a_project(tmp_path: Path) -> None:
    doc = infer(tmp_path, {"tests/Makefile": "test:\n\t./run\n", "tests/fixtures/go.mod": "x\n"})
    assert [(c["command"], c["directory"]) for c in items(doc)] == [("make test", "tests")]


@pytest.mark.parametrize(
    ("makefile", "setup"),
    [
        pytest.param(
            "all:\n\tcc -o prog prog.c\n"
            "install: all\n\tinstall -m 755 prog $(DESTDIR)$(PREFIX)/bin\n",
            False, id="c-prefix",
        ),
        pytest.param(
            "DESTDIR ?=\ninstall: lib-install bin-install\nlib-install:\n\tcp lib.a /tmp\n",
            False, id="prerequisites-in-a-destdir-makefile",
        ),
        pytest.param(
            "install uninstall:\n\t$(MAKE) -C lib $@\n", False, id="delegates-with-uninstall"
        ),
        pytest.param("install:\n\tpip install -e '.[dev]'\n", True, id="python-deps"),
        pytest.param("install: venv\nvenv:\n\tpython3 -m venv .venv\n", True, id="prereq-only"),
    ],
)  # fmt: skip
def test_make_install_is_setup_only_when_it_does_not_install_into_the_system(
    tmp_path: Path, makefile: str, setup: bool
) -> None:
    doc = infer(tmp_path, {"Makefile": makefile})
    assert (find(doc, "make install") is not None) is setup
    noted = [n for n in doc["notes"] if n.startswith("make install (Makefile:")]
    assert len(noted) == (0 if setup else 1)
    if not setup:
        assert "installs into the system" in noted[0]


def test_deno_config_and_tasks(tmp_path: Path) -> None:
    lint_body = "deno lint --fix"
    text = pkg({"tasks": {"dev": "deno run -A main.ts", "test": "deno test -A", "lint": lint_body}})
    doc = infer(tmp_path, {"deno.json": text})
    got = {c["command"]: (c["kind"], c["evidence"]) for c in items(doc)}
    assert got == {
        "deno test": ("test", ["deno.json:1"]),
        "deno lint": ("lint", ["deno.json:1"]),
        "deno task test": ("test", [f"deno.json:{line_of(text, 'deno test -A')}"]),
        "deno task lint": ("lint", [f"deno.json:{line_of(text, lint_body)}"]),
    }


def test_deno_jsonc_with_comments_and_trailing_commas_gives_its_tasks(tmp_path: Path) -> None:
    text = (
        "// the project's tasks\n"
        "{\n"
        '  /* block\n     comment */ "tasks": {\n'
        '    "test": "deno test -A https://example.invalid/a//b", // a comment after\n'
        '    "lint": "deno lint",\n'
        "  },\n"
        '  "fmt": { "indentWidth": 2, },\n'
        "}\n"
    )
    doc = infer(tmp_path, {"deno.jsonc": text})
    got = {c["command"]: c["evidence"] for c in items(doc)}
    assert got["deno task test"] == [f"deno.jsonc:{line_of(text, 'deno test -A')}"]
    assert got["deno task lint"] == [f"deno.jsonc:{line_of(text, 'deno lint')}"]


def test_a_malformed_deno_jsonc_still_gives_the_deno_defaults(tmp_path: Path) -> None:
    doc = infer(tmp_path, {"deno.jsonc": '{ "tasks": { "test": "deno test", /* unterminated\n'})
    assert {c["command"] for c in items(doc)} == {"deno test", "deno lint"}


def test_scripts_written_on_one_line_cite_that_line(tmp_path: Path) -> None:
    text = '{\n  "name": "x",\n  "scripts": {"build": "tsc", "test": "vitest run"}\n}\n'
    doc = infer(tmp_path, {"package.json": text, "package-lock.json": "{}\n"})
    assert get(doc, "npm test")["evidence"][0] == "package.json:3"
    assert get(doc, "npm run build")["evidence"][0] == "package.json:3"


def test_meson_project_root_gets_setup_compile_and_test_and_subdirs_are_covered(
    tmp_path: Path,
) -> None:
    root_build = "# lz4-like\nproject('demo', 'c')\nsubdir('lib')\n"
    doc = infer(
        tmp_path,
        {"native/meson.build": root_build, "native/lib/meson.build": "library('x', 'x.c')\n"},
    )
    got = {(c["command"], c["kind"], c["directory"]) for c in items(doc)}
    assert got == {
        ("meson setup builddir", "install", "native"),
        ("meson compile -C builddir", "build", "native"),
        ("meson test -C builddir", "test", "native"),
    }
    assert get(doc, "meson test -C builddir", "native")["evidence"] == ["native/meson.build:2"]


JUSTFILE = """\
set shell := ["bash", "-c"]
alias lint := style
build := "dist"
export RUST_LOG := "info"

# run the tests
test *ARGS:
    pytest {{ARGS}}

[private]
style: deps
    ruff check .

@typecheck:
    mypy

deps:
    uv sync
"""


def test_just_recipes(tmp_path: Path) -> None:
    doc = infer(tmp_path, {"justfile": JUSTFILE})
    got = {(c["command"], c["kind"], tuple(c["evidence"])) for c in items(doc)}
    assert got == {
        ("just test", "test", ("justfile:7",)),
        ("just typecheck", "typecheck", ("justfile:14",)),
        ("just deps", "install", ("justfile:17",)),
    }  # `alias lint` and `build :=` are not recipes


def test_just_recipe_with_a_default_parameter(tmp_path: Path) -> None:
    doc = infer(tmp_path, {"justfile": "build target='release':\n    cargo build\n"})
    assert get(doc, "just build")["evidence"] == ["justfile:1"]


# ============================================================================ CI


def test_ci_run_step_corroborates_a_manifest_command(tmp_path: Path) -> None:
    wf = workflow("      - run: npm ci\n      - run: npm test\n")
    with_ci = infer(tmp_path, {**NODE_NPM, WF: wf})
    without = infer(tmp_path, use_ci=False)
    test, bare = get(with_ci, "npm test"), get(without, "npm test")
    assert test["evidence"] == [*bare["evidence"], f"{WF}:{line_of(wf, 'npm test')}"]
    assert test["confidence"] > bare["confidence"]
    assert f"{WF}:{line_of(wf, 'npm ci')}" in get(with_ci, "npm ci")["evidence"]


def test_a_ci_spelling_of_the_same_job_corroborates(tmp_path: Path) -> None:
    text = "[project]\nname = 'x'\n\n[tool.pytest.ini_options]\n"
    wf = workflow("      - run: uv run --frozen pytest -x --cov\n")
    doc = infer(tmp_path, {"pyproject.toml": text, "uv.lock": "x\n", WF: wf})
    test = get(doc, "uv run pytest")
    assert f"{WF}:{line_of(wf, 'pytest -x')}" in test["evidence"]
    assert [c for c in doc["validate"] if c["kind"] == "test"] == [test]


@pytest.mark.parametrize(
    "steps",
    [
        "      - run: npm test\n",
        "      - name: Test\n        run: |\n          echo start\n\n          npm test\n",
        "      - run: |\n          echo start\n          npm test \\\n"
        "            -- --coverage \\\n            --ci\n          echo done\n",
        "      - run: >-\n          npm test\n",
        "      - name: t\n        run: echo a && npm test\n",
    ],
    ids=["plain", "block", "continued", "folded", "and-chain"],
)
def test_ci_evidence_is_the_exact_line_of_the_command(tmp_path: Path, steps: str) -> None:
    wf = workflow(steps)
    doc = infer(tmp_path, {**NODE_NPM, WF: wf})
    assert get(doc, "npm test")["evidence"][-1] == f"{WF}:{line_of(wf, 'npm test')}"


def test_a_continued_command_is_one_ci_only_command(tmp_path: Path) -> None:
    wf = workflow("      - run: |\n          npx eslint \\\n            --max-warnings 0 .\n")
    doc = infer(tmp_path, {"go.mod": "module x\n", WF: wf})
    lint = get(doc, "npx eslint --max-warnings 0 .")
    assert (lint["kind"], lint["tool"]) == ("lint", "eslint")
    assert lint["evidence"] == [f"{WF}:{line_of(wf, 'npx eslint')}"]


def test_working_directory_and_cd_only_corroborate_their_directory(tmp_path: Path) -> None:
    wf = workflow(
        "      - working-directory: ./web\n        run: npm test\n      - run: cd api && npm test\n"
    )
    files = {
        **NODE_NPM,
        "web/package.json": pkg({"scripts": {"test": "vitest"}}),
        "web/package-lock.json": "{}\n",
        "api/package.json": pkg({"scripts": {"test": "jest"}}),
        "api/package-lock.json": "{}\n",
        WF: wf,
    }
    doc = infer(tmp_path, files)
    assert not any(e.startswith(WF) for e in get(doc, "npm test")["evidence"])
    assert get(doc, "npm test", "web")["evidence"][-1] == f"{WF}:{line_of(wf, 'working-dir') + 1}"
    assert get(doc, "npm test", "api")["evidence"][-1] == f"{WF}:{line_of(wf, 'cd api')}"


def test_job_default_working_directory(tmp_path: Path) -> None:
    extra = "    defaults:\n      run:\n        working-directory: web\n"
    wf = workflow("      - run: npm test\n", extra=extra)
    files = {
        **NODE_NPM,
        "web/package.json": pkg({"scripts": {"test": "vitest"}}),
        "web/package-lock.json": "{}\n",
        WF: wf,
    }
    doc = infer(tmp_path, files)
    assert get(doc, "npm test", "web")["evidence"][-1] == f"{WF}:{line_of(wf, 'npm test')}"
    assert not any(e.startswith(WF) for e in get(doc, "npm test")["evidence"])


def test_cd_on_its_own_line_moves_the_following_commands(tmp_path: Path) -> None:
    wf = workflow("      - run: |\n          cd web\n          npm test\n")
    files = {
        **NODE_NPM,
        "web/package.json": pkg({"scripts": {"test": "vitest"}}),
        "web/package-lock.json": "{}\n",
        WF: wf,
    }
    doc = infer(tmp_path, files)
    assert not any(e.startswith(WF) for e in get(doc, "npm test")["evidence"])
    assert get(doc, "npm test", "web")["evidence"][-1] == f"{WF}:{line_of(wf, 'npm test')}"


def test_ci_only_commands_of_a_known_kind_are_added(tmp_path: Path) -> None:
    wf = workflow(
        "      - run: uv run pytest -x tests/unit\n"
        "      - run: make ci\n"
        "      - run: echo hello\n"
        "      - run: ./scripts/smoke.sh\n"
    )
    doc = infer(tmp_path, {"go.mod": "module x\n", WF: wf})
    test = get(doc, "uv run pytest -x tests/unit")
    assert test == {
        "command": "uv run pytest -x tests/unit",
        "kind": "test",
        "directory": ".",
        "tool": "pytest",
        "evidence": [f"{WF}:{line_of(wf, 'tests/unit')}"],
        "confidence": 0.6,
    }
    assert not any(c in commands(doc) for c in ("make ci", "echo hello", "./scripts/smoke.sh"))
    no_ci = infer(tmp_path, use_ci=False)
    assert commands(doc) - commands(no_ci) == {"uv run pytest -x tests/unit"}


def test_ci_steps_with_expressions_or_variables_are_not_added(tmp_path: Path) -> None:
    wf = workflow(
        "      - run: npm run ${{ matrix.task }}\n"
        "      - run: pytest $PYTEST_ARGS\n"
        "      - run: go test $(go list ./...)\n"
        '      - run: cargo test --features "${FEATURES}"\n'
    )
    doc = infer(tmp_path, {"setup.py": "", WF: wf})
    assert not any("$" in c["command"] for c in items(doc))
    assert commands(doc) == {"python -m pip install -e ."}


def test_a_cd_into_a_variable_directory_adds_nothing(tmp_path: Path) -> None:
    wf = workflow("      - run: cd $GITHUB_WORKSPACE/web && go test ./...\n")
    doc = infer(tmp_path, {"setup.py": "", WF: wf})
    assert not any("$" in c["directory"] for c in items(doc))


def test_ci_only_install_steps_are_not_added(tmp_path: Path) -> None:
    wf = workflow(
        "      - run: pip install pre-commit\n      - run: npm ci\n      - run: uv sync\n"
    )
    doc = infer(tmp_path, {"go.mod": "module x\n", WF: wf})
    assert doc == infer(tmp_path, use_ci=False)


@pytest.mark.parametrize(
    ("job", "file"),
    [("docs", WF), ("release", WF), ("deploy-prod", WF), ("test", ".github/workflows/publish.yml")],
)
def test_docs_release_and_deploy_jobs_do_not_add_commands(
    tmp_path: Path, job: str, file: str
) -> None:
    wf = workflow("      - run: cargo test\n      - run: uv run pytest\n", job=job)
    doc = infer(tmp_path, {"go.mod": "module x\n", file: wf})
    assert commands(doc) == commands(infer(tmp_path, use_ci=False))


def test_a_test_job_named_docker_is_not_auxiliary(tmp_path: Path) -> None:
    wf = workflow("      - run: uv run pytest -x\n", job="docker-tests")
    doc = infer(tmp_path, {"go.mod": "module x\n", WF: wf})
    assert "uv run pytest -x" in commands(doc)


def test_gitlab_ci_script_lists(tmp_path: Path) -> None:
    gl = (
        "stages: [test]\n"
        "variables:\n  FOO: bar\n"
        "test:\n  stage: test\n  script:\n    - npm ci\n    - npm test\n    - go vet ./...\n"
        "pages:\n  script:\n    - cargo test\n"
    )
    doc = infer(tmp_path, {**NODE_NPM, ".gitlab-ci.yml": gl})
    assert get(doc, "npm test")["evidence"][-1] == f".gitlab-ci.yml:{line_of(gl, 'npm test')}"
    vet = get(doc, "go vet ./...")
    assert (vet["kind"], vet["confidence"]) == ("lint", 0.6)
    assert vet["evidence"] == [f".gitlab-ci.yml:{line_of(gl, 'go vet')}"]
    assert "cargo test" not in commands(doc)


@pytest.mark.parametrize(
    "text",
    [
        "jobs: [\n  - run: npm test\n  : :\n",
        "- a\n- b\n",
        "jobs:\n  t:\n    steps: 5\n",
        "jobs:\n  t:\n    steps:\n      - run: [npm, test]\n      - 7\n",
        "\t\x00 not yaml",
        "a: &x [*x]\n",
        "",
    ],
    ids=["broken", "list", "steps-int", "run-list", "binary", "recursive-alias", "empty"],
)
def test_malformed_workflows_are_ignored(tmp_path: Path, text: str) -> None:
    doc = infer(tmp_path, {**NODE_NPM, WF: text})
    assert doc == infer(tmp_path, use_ci=False)


def test_use_ci_false_ignores_workflows_entirely(tmp_path: Path) -> None:
    wf = workflow("      - run: npm test\n      - run: cargo clippy\n")
    files = {**NODE_NPM, WF: wf, ".gitlab-ci.yml": "t:\n  script:\n    - go test ./...\n"}
    no_ci = infer(tmp_path, files, use_ci=False)
    assert commands(infer(tmp_path)) - commands(no_ci) == {"cargo clippy", "go test ./..."}
    shutil.rmtree(tmp_path / ".github")
    (tmp_path / ".gitlab-ci.yml").unlink()
    assert no_ci == infer(tmp_path)


# ============================================================================ signatures

EQUIVALENT = [
    ["npm test", "npm run test", "npm t", "pnpm test", "pnpm run test", "yarn test",
     "yarn run test", "bun run test", "npm test -- --coverage", "pnpm --filter web test",
     "env CI=1 npm test"],
    ["npm run lint", "pnpm lint", "yarn lint", "bun run lint"],
    ["uv run --frozen pytest -x", "python -m pytest", "python3 -m pytest -q",
     "coverage run -m pytest", "pytest", "poetry run pytest tests", "pdm run pytest", "py.test",
     "time pytest", "uv run --with foo pytest", "pytest > out.txt",
     "pytest -k ${{ matrix.k }}"],
    ["cargo +nightly test --all-features", "cargo test", "cargo nextest run"],
    ["./mvnw -B verify", "mvn verify", "mvn -q -B -Pci verify"],
    ["./gradlew :lib:test", "gradle test", "./gradlew test"],
    ["FOO=1 sudo make test", "make test", "make -C sub test", "make -j 4 test", "make -j4 test",
     "make test > log.txt 2>&1"],
    ["npx tsc --noEmit", "tsc", "pnpm exec tsc -p .", "bunx tsc", "yarn exec tsc"],
    ["go test ./...", "go test -race ./pkg/...", "go test ./... 2>&1"],
    ["ruff check .", "ruff check --fix src", "ruff ."],
    ["npm ci", "npm install", "pnpm install --frozen-lockfile", "yarn", "bun install"],
]  # fmt: skip
KINDS = ["test", "lint", "test", "test", "test", "test", "test", "typecheck", "test", "lint",
         "install"]  # fmt: skip


@pytest.mark.parametrize(("group", "kind"), list(zip(EQUIVALENT, KINDS, strict=True)))
def test_signatures_of_equivalent_commands_are_equal(group: list[str], kind: str) -> None:
    first = signatures(group[0])
    assert first
    for command in group[1:]:
        assert signatures(command) == first, command
    assert [kind_of(s) for s in first] == [kind]


def test_signatures_of_different_jobs_differ() -> None:
    firsts = [tuple(signatures(g[0])) for g in EQUIVALENT]
    assert len(set(firsts)) == len(firsts)
    assert signatures("bun test") != signatures("bun run test")  # bun's runner, not the script
    assert signatures("make test lint") == signatures("make test") + signatures("make lint")


@pytest.mark.parametrize(
    "command",
    ["", "   ", "echo hi", "ls -la", "docker run x", "./scripts/ci.sh", "npm", "npx", "cargo",
     "go", "python -m", "python script.py", "coverage run pytest", "npm run", "pnpm exec",
     "'unterminated", "npx cowsay hi"],
)  # fmt: skip
def test_unrecognised_commands_have_no_signature(command: str) -> None:
    assert signatures(command) == []


# ============================================================================ safety


@pytest.mark.reliability("B3.23", cases=4)
def test_sensitive_files_are_never_opened(tmp_path: Path) -> None:
    files = {
        **NODE_NPM,
        ".env": "API_KEY=zqcanary\n",
        ".env.local": "X=1\n",
        "web/.env.production": "X=1\n",
        "id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n",
        "pyproject.toml": "[tool.pytest.ini_options]\n",
    }
    write_tree(tmp_path, files)
    with recording_opens() as opened:
        doc = infer(tmp_path)
    assert "npm test" in commands(doc)  # package.json was read
    assert any(os.path.basename(p) == "package.json" for p in opened)
    sensitive = {".env", ".env.local", ".env.production", "id_rsa"}
    assert not [p for p in opened if os.path.basename(p) in sensitive]
    assert "zqcanary" not in json.dumps(doc)


@pytest.mark.reliability("B1.1", cases=2)
@pytest.mark.reliability("B1.2")
def test_a_symlinked_manifest_pointing_outside_is_not_read(tmp_path: Path) -> None:
    outside = write_tree(
        tmp_path / "outside",
        {"package.json": pkg({"scripts": {"test": "jest"}}), "pyproject.toml": PYTEST_CFG},
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").symlink_to(outside / "package.json")
    (repo / "pyproject.toml").symlink_to(outside / "pyproject.toml")
    (repo / "linked").symlink_to(outside, target_is_directory=True)
    with recording_opens() as opened:
        doc = infer(repo)
    assert items(doc) == []
    real = {os.path.realpath(p) for p in opened if os.path.isabs(p)}
    assert not any(p.startswith(str(outside.resolve())) for p in real)


Dict_ = dict[str, str | bytes]


def _hostile(tmp_path: Path) -> tuple[Dict_, Path]:
    marker = tmp_path / "MARKER"
    evil = tmp_path / "evil.sh"
    evil.write_text(f"#!/bin/sh\ntouch {marker}\n")
    evil.chmod(0o755)
    files: Dict_ = {
        "package.json": pkg(
            {
                "scripts": {
                    "preinstall": f"sh {evil}",
                    "prepare": f"sh {evil}",
                    "test": f"sh {evil}",
                    "lint": f"touch {marker}",
                },
                "packageManager": f"npm@$(touch {marker})",
            }
        ),
        "Makefile": f"X := $(shell touch {marker})\ntest:\n\ttouch {marker}\n",
        "justfile": f"test:\n    touch {marker}\n",
        "setup.py": f"import pathlib\npathlib.Path({str(marker)!r}).touch()\n",
        "conftest.py": f"import pathlib\npathlib.Path({str(marker)!r}).touch()\n",
        "noxfile.py": f"import pathlib\npathlib.Path({str(marker)!r}).touch()\n",
        "mvnw": f"#!/bin/sh\ntouch {marker}\n",
        "pom.xml": "<project>\n</project>\n",
        "gradlew": f"#!/bin/sh\ntouch {marker}\n",
        "build.gradle": "x\n",
        WF: workflow(f"      - run: sh {evil} && npm test\n"),
    }
    return files, marker


def test_nothing_is_executed_for_a_hostile_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files, marker = _hostile(tmp_path)
    repo = write_tree(tmp_path / "repo", files)
    for name in ("mvnw", "gradlew"):
        (repo / name).chmod(0o755)
    before = tree_snapshot(repo)
    doc = infer(repo)
    assert "make test" in commands(doc) and "npm test" in commands(doc)
    assert main(["harness", "--repo", str(repo), "--json"]) == 0
    assert main(["harness", "--repo", str(repo)]) == 0
    capsys.readouterr()
    assert not marker.exists()
    assert tree_snapshot(repo) == before


@pytest.mark.reliability("B6.42")
@pytest.mark.reliability("B6.43")
def test_a_git_repository_is_unchanged_byte_for_byte_and_its_config_runs_nothing(
    tmp_path: Path, make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    files, marker = _hostile(tmp_path)
    repo = make_repo(files)
    evil = tmp_path / "evil.sh"
    for key, value in (
        ("core.fsmonitor", str(evil)),
        ("core.pager", str(evil)),
        ("diff.external", str(evil)),
        ("core.hooksPath", str(tmp_path / "hooks")),
    ):
        git(repo, "config", key, value)
    (tmp_path / "hooks").mkdir()
    for hook in ("post-checkout", "post-index-change", "pre-commit"):
        shutil.copy(evil, tmp_path / "hooks" / hook)
    (repo / "untracked.txt").write_text("new\n")
    os.utime(repo / "package.json", ns=(1, 1))  # stale stat info: tempts an index refresh
    before = tree_snapshot(repo)
    doc = infer(repo)
    assert main(["harness", "--repo", str(repo), "--json"]) == 0
    capsys.readouterr()
    assert "npm test" in commands(doc)
    assert not marker.exists()
    assert tree_snapshot(repo) == before


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("package.json", '{"scripts":{"test":"jest"},"pad":"' + "a" * (3 * 1024 * 1024) + '"}'),
        ("package.json", '{"scripts":{"test":"jest"},"pad":"' + "a" * (1536 * 1024) + '"}'),
        ("package.json", b'{"scripts":{"test":"jest"}}\x00\x00\x01\x02'),
        ("Makefile", b"\x00\xff\xfetest:\n\ttrue\n"),
        ("pyproject.toml", b"\x00" * 10_000),
        ("go.mod", b"\x89PNG\r\n\x1a\n\x00\x00"),
    ],
    ids=["3MB", "1.5MB", "binary-json", "binary-make", "nul-toml", "binary-gomod"],
)
@pytest.mark.reliability("T2")
def test_a_huge_or_binary_manifest_does_not_crash(
    tmp_path: Path, name: str, content: str | bytes
) -> None:
    doc = infer(tmp_path, {name: content})
    assert not {"npm test", "make test", "python -m pytest"} & commands(doc)
    assert_evidence_real(tmp_path, doc)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("package.json", "[" * 3000),
        ("pyproject.toml", "x = " + "[" * 3000),
        ("Cargo.toml", "x = " + "{a = " * 3000),
        (WF, "[" * 3000),
        ("pnpm-workspace.yaml", "[" * 3000),
    ],
    ids=["json", "pyproject", "cargo", "workflow", "pnpm-workspace"],
)
@pytest.mark.reliability("T2")
def test_deeply_nested_manifests_do_not_crash(tmp_path: Path, name: str, content: str) -> None:
    base = {"package.json": "{}\n"} if name != "package.json" else {}
    doc = infer(tmp_path, {**base, name: content})
    assert isinstance(doc["setup"], list)


def test_git_lists_a_git_repository(tmp_path: Path, make_repo: MakeRepo) -> None:
    repo = make_repo(
        {
            **NODE_NPM,
            ".gitignore": "generated/\n",
            "services/api/go.mod": "module api\n",
        }
    )
    # only git honours .git/info/exclude; a plain directory walk would list scratch/
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("scratch/\n")
    write_tree(
        repo,
        {
            "scratch/go.mod": "module scratch\n",
            "scratch/lock/package.json": pkg({"scripts": {"test": "x"}}),
            "scratch/lock/yarn.lock": "x\n",
            "generated/Cargo.toml": "[package]\nname = 'g'\n",
            "node_modules/x/package.json": pkg({"scripts": {"test": "x"}}),
            "node_modules/x/package-lock.json": "{}\n",
            "newsvc/go.mod": "module newsvc\n",  # untracked, not ignored: listed
        },
    )
    doc = infer(repo)
    assert directories(doc) == {".", "services/api", "newsvc"}


# ============================================================================ output

MIXED = {
    **NODE_NPM,
    "package.json": pkg({"workspaces": ["packages/*"], "scripts": {"test": "jest", "lint": "x"}}),
    "packages/ui/package.json": pkg({"scripts": {"build": "tsup"}}),
    "py/pyproject.toml": PYTEST_CFG + "\n[tool.ruff]\n",
    "py/uv.lock": "x\n",
    "go/go.mod": "module x\n",
    "Makefile": "test:\n\tnpm test\n",
    WF: workflow("      - run: npm ci\n      - run: npm test\n      - run: uv run mypy src\n"),
}


def test_to_dict_shape(tmp_path: Path) -> None:
    doc = infer(tmp_path, MIXED)
    assert {"setup", "validate"} <= set(doc)
    assert doc["setup"] and doc["validate"]
    for group in ("setup", "validate"):
        for item in doc[group]:
            assert set(item) == ITEM_KEYS
            assert isinstance(item["command"], str) and item["command"]
            assert isinstance(item["tool"], str) and item["tool"]
            assert isinstance(item["directory"], str)
            assert isinstance(item["confidence"], float) and 0 < item["confidence"] <= 1
            assert item["confidence"] == round(item["confidence"], 2)
            assert (item["kind"] == "install") == (group == "setup")
            assert item["kind"] in KIND_ORDER
            assert all(isinstance(e, str) for e in item["evidence"])
            directory = tmp_path / item["directory"]
            assert directory.is_dir()
    assert_evidence_real(tmp_path, doc)
    assert json.loads(json.dumps(doc)) == doc


def test_harness_object_groups_match_to_dict(tmp_path: Path) -> None:
    write_tree(tmp_path, MIXED)
    harness = infer_harness(tmp_path)
    assert isinstance(harness, Harness)
    assert [c.to_dict() for c in harness.setup] == harness.to_dict()["setup"]
    assert {c.group for c in harness.validate} == {"validate"}
    assert len(harness.setup) + len(harness.validate) == len(harness.commands)


def test_output_is_deterministic(tmp_path: Path) -> None:
    first = infer(tmp_path / "a", MIXED)
    assert infer(tmp_path / "a") == first
    # the same files written in the opposite order give the same answer
    reverse = dict(reversed(list(MIXED.items())))
    assert infer(tmp_path / "b", reverse) == first


def test_ordering_root_first_then_by_directory_and_kind(tmp_path: Path) -> None:
    doc = infer(tmp_path, MIXED)
    for group in ("setup", "validate"):
        keys = [
            (c["directory"] != ".", c["directory"], KIND_ORDER.index(c["kind"])) for c in doc[group]
        ]
        assert keys == sorted(keys)
    assert doc["setup"][0]["directory"] == "." and doc["validate"][0]["directory"] == "."
    assert list(doc)[:2] == ["setup", "validate"]


def test_empty_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, {"README.md": "# nothing\n"})
    doc = infer(tmp_path)
    assert (doc["setup"], doc["validate"]) == ([], [])
    assert main(["harness", "--repo", str(tmp_path)]) == 0
    assert "No setup or validation command" in capsys.readouterr().out


def test_cli_json_is_the_library_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, MIXED)
    assert main(["harness", "--repo", str(tmp_path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == infer(tmp_path)
    assert err == ""
    assert main(["harness", "--repo", str(tmp_path), "--json", "--no-ci"]) == 0
    no_ci = json.loads(capsys.readouterr().out)
    assert no_ci == infer(tmp_path, use_ci=False)
    assert "uv run mypy src" in commands(json.loads(out))
    assert "uv run mypy src" not in commands(no_ci)
    assert not any(e.startswith(".github/") for c in items(no_ci) for e in c["evidence"])


def test_cli_human_output_mentions_each_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(tmp_path, MIXED)
    assert main(["harness", "--repo", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    doc = infer(tmp_path)
    for c in items(doc):
        assert f"`{c['command']}`" in out
        assert all(e in out for e in c["evidence"])
    for directory in directories(doc) - {"."}:
        assert f"`{directory}`" in out
    assert "nothing was run" in out


def test_human_output_escapes_backticks_and_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wf = workflow(
        '      - run: "pytest -k \\"`whoami`\\" \\e[31m\\u0007"\n'
        '      - working-directory: "sub\\e]52;c;x\\u0007dir"\n        run: go test ./...\n'
    )
    write_tree(tmp_path, {WF: wf})
    doc = infer(tmp_path)
    command = next(c["command"] for c in items(doc) if c["command"].startswith("pytest"))
    assert "\x1b" in command and "`whoami`" in command  # the data keeps the bytes
    assert main(["harness", "--repo", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\u001b" in out and "\\u0007" in out
    line = next(line for line in out.splitlines() if "whoami" in line)
    assert line.startswith("- ``") and '"`whoami`"' in line  # a longer fence around backticks
    assert main(["harness", "--repo", str(tmp_path), "--json"]) == 0
    raw = capsys.readouterr().out
    assert "\x1b" not in raw and json.loads(raw) == doc
    assert render_harness(doc) == out


def test_a_missing_repository_is_exit_3_with_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["harness", "--repo", str(tmp_path / "missing")]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("Error: ") and err.count("\n") == 1
    assert "Traceback" not in err
    # under --json: one JSON line on stdout, and the same on stderr (SPEC §11)
    assert main(["harness", "--repo", str(tmp_path / "missing"), "--json"]) == 3
    out, err = capsys.readouterr()
    assert err == out and out.count("\n") == 1 and "Traceback" not in err
    assert json.loads(out) == {
        "error": f"repository not found: {tmp_path / 'missing'}",
        "code": "repo_unavailable",
        "exit": 3,
    }


def test_a_file_as_repository_is_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("x\n")
    assert main(["harness", "--repo", str(tmp_path / "f")]) == 3
    assert capsys.readouterr().err.startswith("Error: ")


def test_mcp_harness_infer_returns_structured_setup_and_validate(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", MIXED)
    before = tree_snapshot(repo)

    async def go() -> tuple[Any, Any, Any]:
        with anyio.fail_after(30):
            async with Client(build_server(repo, tmp_path / "cache", tools="all")) as client:
                return (
                    await client.call_tool("harness_infer", {}),
                    await client.call_tool("harness_infer", {"use_ci": False}),
                    await client.call_tool("harness_infer", {"use_ci": "yes", "x": 1}),
                )

    full, no_ci, bad = anyio.run(go)
    assert full.is_error is not True
    assert full.structured_content == infer_harness(repo).to_dict()
    assert full.structured_content["setup"] and full.structured_content["validate"]
    assert full.content[0].text == render_harness(full.structured_content)
    assert no_ci.structured_content == infer_harness(repo, use_ci=False).to_dict()
    assert bad.is_error is True
    assert tree_snapshot(repo) == before
