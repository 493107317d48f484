"""A file's kind weighs on its rank: notes, manifests, data, examples and tests yield to the
code a task is about, unless the task names them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import write_tree
from excerpt.deliver import build_plan
from excerpt.pack import PackRequest

WORDS = "walking skips hidden files when the walker follows links"
TREE = {
    "walker/__init__.py": "",
    "walker/walk.py": (
        "def walk(root, hidden=False):\n"
        "    '''Walking: the walker follows links, and skips hidden files unless asked.'''\n"
        "    for entry in root.iterdir():\n"
        "        if entry.name.startswith('.') and not hidden:\n"
        "            continue\n"
        "        yield entry\n"
    ),
    "walker/output.py": "def show(entry):\n    print(entry)\n",
    # every one of these holds the task's words, more often than the code does
    "CHANGELOG.md": "".join(f"- {WORDS} (#{n})\n" for n in range(20)),
    "LICENSE": f"Permission is granted: {WORDS}.\n" * 5,
    "pyproject.toml": f'[project]\nname = "walker"\ndescription = "{WORDS}"\n',
    "conf/walker.yaml": f"# {WORDS}\nhidden: false\nwalking: true\nfiles: hidden\n",
    "examples/walk_hidden.py": (
        "from walker.walk import walk\n\n# walking hidden files\n"
        "for hidden in walk('.', hidden=True):\n    print('hidden files', hidden)\n"
    ),
    # manual pages, as written and as a template a build fills in
    "doc/walker.1": f".TH WALKER 1\n.SH DESCRIPTION\n{WORDS}\n.B --hidden\n{WORDS}\n",
    "assets/manual/walker.1.in": f".TH {{{{PROJECT}}}} 1\n.SH OPTIONS\n{WORDS}\n{WORDS}\n",
    # a web library copied into the package's assets, and a vendored C library
    "walker/static/jquery.js": f"/* {WORDS} */\nfunction walk(hidden) {{ /* {WORDS} */ }}\n",
    "extern/libwalk/walk.h": f"/* {WORDS} */\nint walk(int hidden); /* {WORDS} */\n",
    "tests/__init__.py": "",
    "tests/test_hidden.py": (
        "from walker.walk import walk\n\n\ndef test_hidden(tmp_path):\n"
        "    assert list(walk(tmp_path)) == []\n"
    ),
}


def plan(tmp_path: Path, cache_dir: Path, task: str) -> dict[str, dict[str, Any]]:
    root = write_tree(tmp_path / "repo", TREE)
    doc = build_plan(PackRequest(repo=root, task=task, cache_dir=cache_dir)).plan.to_dict()
    out: dict[str, dict[str, Any]] = {}
    for c in doc["candidates"]:
        out.setdefault(c["path"], {"rank": len(out) + 1, "reasons": c["reasons"]})
    return out


def demotion(entry: dict[str, Any]) -> str | None:
    return next((r["detail"] for r in entry["reasons"] if r["signal"] == "demoted"), None)


def test_the_code_outranks_notes_manifests_data_examples_and_tests(
    tmp_path: Path, cache_dir: Path
) -> None:
    ranked = plan(tmp_path, cache_dir, "Walking skips hidden files")
    assert min(ranked, key=lambda p: ranked[p]["rank"]) == "walker/walk.py"
    expected = {
        "CHANGELOG.md": "project notes (changelog, licence, credits)",
        "LICENSE": "project notes (changelog, licence, credits)",
        "pyproject.toml": "package manifest (the task is not about dependencies)",
        "conf/walker.yaml": "data or configuration file",
        "examples/walk_hidden.py": "example or benchmark code",
        "tests/test_hidden.py": "test file (the task does not mention tests)",
        "doc/walker.1": "documentation",
        "assets/manual/walker.1.in": "documentation",
        "walker/static/jquery.js": "library copy",
        "extern/libwalk/walk.h": "vendored code",
    }
    assert {p: demotion(ranked[p]) for p in expected if p in ranked} == expected
    assert demotion(ranked["walker/walk.py"]) is None


@pytest.mark.parametrize(
    ("task", "path"),
    [
        pytest.param(
            "Add a changelog entry: walking skips hidden files", "CHANGELOG.md",
            id="changelog-named",
        ),
        pytest.param(
            "Walking skips hidden files: update the license year", "LICENSE",
            id="license-named",
        ),
        pytest.param(
            "Upgrade the dependency that skips hidden files when walking", "pyproject.toml",
            id="about-dependencies",
        ),
        pytest.param(
            "Walking skips hidden files; pyproject.toml description is stale", "pyproject.toml",
            id="manifest-named",
        ),
        pytest.param(
            "The yaml setting for hidden files is ignored when walking", "conf/walker.yaml",
            id="data-kind-named",
        ),
        pytest.param(
            "The example that walks hidden files skips them", "examples/walk_hidden.py",
            id="example-named",
        ),
    ],
)  # fmt: skip
def test_a_file_the_task_names_by_kind_is_not_demoted_for_its_kind(
    tmp_path: Path, cache_dir: Path, task: str, path: str
) -> None:
    ranked = plan(tmp_path, cache_dir, task)
    assert path in ranked
    assert demotion(ranked[path]) is None


def test_a_changelog_updated_in_passing_is_still_notes(tmp_path: Path, cache_dir: Path) -> None:
    # a commit's last bullet does the bookkeeping of a change made in the code
    ranked = plan(tmp_path, cache_dir, "Walking skips hidden files\n\n* update CHANGELOG.md")
    assert ranked["walker/walk.py"]["rank"] < ranked["CHANGELOG.md"]["rank"]
    assert demotion(ranked["CHANGELOG.md"]) == "project notes (changelog, licence, credits)"


SAMPLES = {
    "Rust/output.rs": 'fn output() { println!("paging output"); }\n',
    "Swift/output.swift": 'func output() { print("paging output") }\n',
    "Go/output.go": 'package main\nfunc output() { println("paging output") }\n',
    "Java/Output.java": 'class Output { void output() { System.out.println("paging"); } }\n',
    "Ruby/output.rb": "def output\n  puts 'paging output'\nend\n",
    "Python/output.py": "def output():\n    print('paging output')\n",
}


def test_a_test_tree_of_samples_in_many_languages_is_test_data(
    tmp_path: Path, cache_dir: Path
) -> None:
    tree = {
        "src/output.rs": "pub fn output(pager: &str) {\n    run(pager);\n}\n",
        "src/main.rs": "mod output;\nfn main() {}\n",
        "tests/integration.rs": '#[test]\nfn paging_output() { output::output("less"); }\n',
        **{f"tests/syntax-tests/source/{p}": text for p, text in SAMPLES.items()},
    }
    root = write_tree(tmp_path / "repo", tree)
    doc = build_plan(
        PackRequest(repo=root, task="Paging output through the pager", cache_dir=cache_dir)
    ).plan.to_dict()
    ranked: dict[str, Any] = {}
    for c in doc["candidates"]:
        ranked.setdefault(c["path"], c)
    label = "sample files in many languages (test data)"
    samples = [p for p in ranked if p.startswith("tests/syntax-tests/")]
    assert samples and all(demotion(ranked[p]) == label for p in samples)
    assert demotion(ranked["tests/integration.rs"]) != label  # a test of the product's own
    assert next(iter(ranked)) == "src/output.rs"
