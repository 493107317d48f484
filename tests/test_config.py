"""Settings: ``excerpt.toml`` and ``[tool.excerpt]``, validated, layered, shown by ``config``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import tree_snapshot
from excerpt.cli import main
from excerpt.core.limits import MAX_BUDGET, MIN_BUDGET
from excerpt.core.settings import Settings, parse_settings
from excerpt.errors import UsageError

CODE = {"app/refund.py": "def refund(order):\n    return order\n"}
# The machine contract of `excerpt config --json`.
CONFIG_KEYS = {"schema", "settings", "files", "excerptignore"}
SETTING_KEYS = {"budget", "include", "exclude"}


def config_json(capsys: pytest.CaptureFixture[str], repo: Path, *flags: str) -> dict[str, Any]:
    assert main(["config", "--repo", str(repo), "--json", *flags]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def sources(doc: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    return {k: (v["value"], v["source"]) for k, v in doc["settings"].items()}


def test_config_json_has_the_contract_keys_and_defaults_without_settings_files(
    make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = config_json(capsys, make_repo(CODE))
    assert doc.keys() == CONFIG_KEYS
    assert doc["schema"] == "excerpt.config/v1"
    assert doc["settings"].keys() == SETTING_KEYS
    assert all(entry.keys() == {"value", "source"} for entry in doc["settings"].values())
    assert sources(doc) == {
        "budget": (32000, "default"),
        "include": ([], "default"),
        "exclude": ([], "default"),
    }
    assert doc["files"] == [] and doc["excerptignore"] is None


def test_excerpt_toml_wins_over_pyproject_key_by_key(
    make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(
        {
            **CODE,
            "pyproject.toml": "[project]\nname = 'x'\n\n[tool.excerpt]\nbudget = 9000\n"
            "include = ['app/']\n",
            "excerpt.toml": "budget = 5000\nexclude = ['vendor/**']\n",
        }
    )
    doc = config_json(capsys, repo)
    assert sources(doc) == {
        "budget": (5000, "excerpt.toml"),
        "include": (["app/"], "pyproject.toml"),
        "exclude": (["vendor/**"], "excerpt.toml"),
    }
    assert doc["files"] == ["excerpt.toml", "pyproject.toml"]


def test_a_flag_wins_over_every_file(make_repo: Any, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo({**CODE, "excerpt.toml": "budget = 5000\nexclude = ['vendor/**']\n"})
    doc = config_json(capsys, repo, "--budget", "7000", "--exclude", "docs/", "--exclude", "*.md")
    assert sources(doc)["budget"] == (7000, "cli")
    assert sources(doc)["exclude"] == (["docs/", "*.md"], "cli")
    assert sources(doc)["include"] == ([], "default")


def test_config_lists_the_excerptignore_patterns(
    make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({**CODE, ".excerptignore": "# generated\n\nbuild/\n!build/keep.py\n"})
    assert config_json(capsys, repo)["excerptignore"] == ["build/", "!build/keep.py"]


def test_config_prints_a_readable_table_by_default(
    make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({**CODE, "excerpt.toml": "budget = 5000\n"})
    assert main(["config", "--repo", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "| budget | 5000 | excerpt.toml |" in out
    assert "| include | (every path) | default |" in out
    assert "Settings files: excerpt.toml" in out


def test_the_budget_setting_is_the_pack_default_and_the_flag_overrides_it(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({**CODE, "pyproject.toml": "[tool.excerpt]\nbudget = 4000\n"})
    base = ["pack", "--repo", str(repo), "fix the refund", "--format", "json"]
    assert main(base) == 0
    assert json.loads(capsys.readouterr().out)["budget"]["bytes"] == 4000
    assert main([*base, "--budget", "6000"]) == 0
    assert json.loads(capsys.readouterr().out)["budget"]["bytes"] == 6000


INVALID = [
    pytest.param("excerpt.toml", "budget = '8000'\n", "excerpt.toml: budget:", id="string-budget"),
    pytest.param("excerpt.toml", "budget = true\n", "budget: Input should be", id="bool-budget"),
    pytest.param("excerpt.toml", "budget = 100\n", "greater than or equal to 300", id="tiny"),
    pytest.param("excerpt.toml", "budget = 20000000\n", "less than or equal to", id="huge"),
    pytest.param("excerpt.toml", "budgit = 8000\n", "unknown key 'budgit'", id="unknown-key"),
    pytest.param("excerpt.toml", "languages = ['py']\n", "unknown key 'languages'", id="languages"),
    pytest.param("excerpt.toml", "include = 'app/'\n", "include: Input should be", id="not-a-list"),
    pytest.param("excerpt.toml", "exclude = ['ok', '']\n", "exclude[1]: a glob", id="empty-glob"),
    pytest.param("excerpt.toml", "exclude = ['#x']\n", "exclude[0]: '#x' is a comment", id="hash"),
    pytest.param(
        "excerpt.toml", "exclude = ['a\\']\n", "not a valid gitignore-style glob", id="bad-glob"
    ),
    pytest.param("excerpt.toml", "budget = \n", "excerpt.toml is not valid TOML", id="toml"),
    pytest.param(
        "excerpt.toml", "[tool.excerpt]\nbudget = 8000\n", "at the top level", id="table-form"
    ),
    pytest.param(
        "pyproject.toml",
        "[tool.excerpt]\nbudget = 'x'\n",
        "pyproject.toml [tool.excerpt]: budget:",
        id="pyproject-type",
    ),
    pytest.param(
        "pyproject.toml", "[tool]\nexcerpt = 3\n", "tool.excerpt must be a table", id="scalar"
    ),
    pytest.param(
        "pyproject.toml",
        "[tool.excerpt]\nbudget = \n",
        "pyproject.toml is not valid TOML",
        id="pyproject-broken-with-table",
    ),
]


@pytest.mark.parametrize(("name", "text", "message"), INVALID)
@pytest.mark.parametrize("command", ["config", "index", "pack"])
def test_invalid_settings_exit_2_with_one_line_naming_the_file_and_key(
    make_repo: Any,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    text: str,
    message: str,
    command: str,
) -> None:
    repo = make_repo({**CODE, name: text})
    argv = [command, "--repo", str(repo), *(["fix the refund"] if command == "pack" else [])]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert message in err


def test_a_pyproject_that_is_not_toml_and_has_no_excerpt_table_is_not_excerpts_business(
    make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({**CODE, "pyproject.toml": "[project\nname = 'broken'\n"})
    doc = config_json(capsys, repo)
    assert doc["files"] == [] and sources(doc)["budget"] == (32000, "default")


@pytest.mark.reliability("B1.1")
def test_an_excerpt_toml_symlinked_out_of_the_repository_is_refused_unread(
    make_repo: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("budget = 5000\n", encoding="utf-8")
    repo = make_repo(CODE)
    (repo / "excerpt.toml").symlink_to(outside)
    assert main(["config", "--repo", str(repo)]) == 2
    err = capsys.readouterr().err
    assert "excerpt.toml is not read (symlink_outside_root)" in err


@pytest.mark.reliability("B1.1")
def test_a_pyproject_symlinked_out_of_the_repository_is_not_used(
    make_repo: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("[tool.excerpt]\nbudget = 5000\n", encoding="utf-8")
    repo = make_repo(CODE)
    (repo / "pyproject.toml").symlink_to(outside)
    doc = config_json(capsys, repo)
    assert sources(doc)["budget"] == (32000, "default") and doc["files"] == []


def test_a_settings_file_symlinked_inside_the_repository_is_read(
    make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({**CODE, "conf/excerpt.toml": "budget = 5000\n"})
    (repo / "excerpt.toml").symlink_to(repo / "conf/excerpt.toml")
    assert sources(config_json(capsys, repo))["budget"] == (5000, "excerpt.toml")


@pytest.mark.reliability("B6.43")
def test_config_never_writes_inside_the_repository(
    make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({**CODE, "excerpt.toml": "budget = 5000\n", ".excerptignore": "x/\n"})
    before = tree_snapshot(repo)
    config_json(capsys, repo)
    assert tree_snapshot(repo) == before


def test_config_on_a_missing_repository_is_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["config", "--repo", str(tmp_path / "nope")]) == 3


def test_the_settings_budget_bounds_are_the_packs_own() -> None:
    from excerpt.deliver import MIN_BUDGET as deliver_min
    from excerpt.pack.prepare import MAX_BUDGET as pack_max

    assert (deliver_min, pack_max) == (MIN_BUDGET, MAX_BUDGET)


LAYERS = [
    pytest.param(None, None, {}, id="nothing"),
    pytest.param("budget = 1000\n", None, {"budget": (1000, "excerpt.toml")}, id="own-file"),
    pytest.param(
        None,
        "[tool.excerpt]\nexclude = ['a/']\n",
        {"exclude": (("a/",), "pyproject.toml")},
        id="pyproject",
    ),
    pytest.param(
        "exclude = []\n",
        "[tool.excerpt]\nexclude = ['a/']\n",
        {"exclude": ((), "excerpt.toml")},
        id="an-empty-list-still-overrides",
    ),
    pytest.param(None, "[tool.other]\nx = 1\n", {}, id="other-tools-table"),
    pytest.param(None, "[tool.excerpt]\n", {}, id="empty-table"),
]


@pytest.mark.parametrize(("own", "pyproject", "expected"), LAYERS)
def test_settings_are_layered_key_by_key(
    own: str | None, pyproject: str | None, expected: dict[str, tuple[Any, str]]
) -> None:
    settings = parse_settings(excerpt_toml=own, pyproject=pyproject)
    defaults = {"budget": (32000, "default"), "include": ((), "default")}
    defaults["exclude"] = ((), "default")
    want = {**defaults, **expected}
    got = {k: (getattr(settings, k), settings.source(k)) for k in want}
    assert got == want


def test_cli_values_layer_over_file_values_and_none_means_not_given() -> None:
    base = parse_settings(excerpt_toml="budget = 1000\ninclude = ['src/']\n", pyproject=None)
    layered = base.layered("cli", budget=None, include=None, exclude=["x/"])
    assert (layered.budget, layered.source("budget")) == (1000, "excerpt.toml")
    assert (layered.include, layered.source("include")) == (("src/",), "excerpt.toml")
    assert (layered.exclude, layered.source("exclude")) == (("x/",), "cli")
    assert base.layered("cli") is base


def test_settings_refuse_a_source_table_without_every_key() -> None:
    with pytest.raises(ValueError):
        Settings(sources=(("budget", "default"),))


def test_a_usage_error_message_never_holds_more_than_one_line() -> None:
    with pytest.raises(UsageError) as caught:
        parse_settings(excerpt_toml="a = 1\nb = 2\nbudget = 'x'\n", pyproject=None)
    assert "\n" not in caught.value.message
    assert "'a'" in caught.value.message and "'b'" in caught.value.message


@pytest.mark.reliability("T2")
def test_a_settings_file_nested_past_the_parsers_depth_is_a_usage_error_not_a_crash() -> None:
    with pytest.raises(UsageError, match=r"excerpt\.toml is not valid TOML: nested too deeply"):
        parse_settings(excerpt_toml="x = " + "[" * 3000, pyproject=None)
    # the project's own pyproject.toml, without an excerpt table: not excerpt's to judge
    assert parse_settings(excerpt_toml=None, pyproject="x = " + "[" * 3000) == Settings()


def test_an_unknown_key_is_named_but_never_at_length() -> None:
    with pytest.raises(UsageError) as caught:
        parse_settings(excerpt_toml=f"{'k' * 500} = 1\n", pyproject=None)
    assert "'" + "k" * 57 + "...'" in caught.value.message
    assert len(caught.value.message) < 200
