"""The CLI grammar: options never swallow the task, every --help teaches, completion scripts."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from excerpt.cli import build_parser, main
from trees import SHOP


def _subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[Any]:
    """Every (command path, parser) pair under ``parser``, nested ones included."""
    out: list[Any] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                out.append(((*path, name), child))
                out += _subcommands(child, (*path, name))
    return out


COMMANDS = _subcommands(build_parser())


def pack_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["pack", *argv, "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def changed_paths(pack: dict[str, Any]) -> set[str]:
    return {i["path"] for i in pack["items"] if any(r["signal"] == "changed" for r in i["reasons"])}


def test_a_task_after_changed_is_the_task_not_a_second_path(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(SHOP)
    code, pack = pack_json(
        capsys, "--repo", str(repo), "--changed", "app/shipping.py", "fix the refund retry"
    )
    assert code == 0
    assert changed_paths(pack) == {"app/shipping.py"}
    assert pack["items"][0]["path"] == "app/shipping.py"


def test_changed_is_repeatable_one_path_per_flag(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(SHOP)
    argv = ["--repo", str(repo), "--changed", "app/shipping.py", "--changed", "app/ledger.py"]
    code, pack = pack_json(capsys, *argv, "fix the refund retry")
    assert code == 0
    assert changed_paths(pack) == {"app/shipping.py", "app/ledger.py"}


def test_two_paths_after_one_changed_flag_are_a_usage_error(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(SHOP)
    argv = ["pack", "fix it", "--repo", str(repo), "--changed", "app/shipping.py", "app/ledger.py"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "app/ledger.py" in err and "Traceback" not in err


@pytest.mark.parametrize(("path", "parser"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_no_option_takes_a_variable_number_of_values(
    path: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    # an option with nargs + or * would swallow the positional that follows it
    for action in parser._actions:
        if action.option_strings:
            assert action.nargs not in ("+", "*", argparse.REMAINDER), action.option_strings


@pytest.mark.parametrize(("path", "parser"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_help_shows_two_examples_and_its_defaults(
    path: tuple[str, ...], parser: argparse.ArgumentParser, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*path, "--help"]) == 0
    text = capsys.readouterr().out
    lines = text.split("\nexamples:\n", 1)[1].splitlines()
    # each example: a comment saying what it does, then the command line; then its page
    assert lines[-2:] == ["", lines[-1]] and lines[-1].startswith("docs: docs/"), lines
    lines = lines[:-2]
    assert len(lines) == 4, lines
    assert all(line.startswith("  # ") for line in lines[::2])
    assert all(line.startswith("  ") and " excerpt " in f" {line}" for line in lines[1::2])
    flat = " ".join(text.split())
    for action in parser._actions:
        unset = action.default is None or action.default is False or action.default == []
        if action.option_strings and not unset and action.default != argparse.SUPPRESS:
            assert f"(default: {action.default})" in flat, action.dest


def test_top_level_help_names_every_command_and_shows_examples(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "examples:" in text
    for path, _ in COMMANDS:
        if len(path) == 1:
            assert path[0] in text


def test_pack_help_says_changed_takes_one_path_per_flag_and_where_the_budget_comes_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["pack", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "one path per flag" in text and "--changed a.py --changed b.py" in text
    assert "default: 32000, or budget from excerpt.toml or [tool.excerpt]" in text


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_a_script_that_knows_the_commands_and_options(
    shell: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    for word in ("pack", "config", "completion", "--changed", "--exclude", "--output"):
        assert word in script, word


@pytest.mark.parametrize(("shell", "check"), [("bash", ["-n"]), ("zsh", ["-n"]), ("fish", ["-n"])])
def test_completion_script_is_valid_for_its_shell(
    shell: str, check: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    assert main(["completion", shell]) == 0
    script = tmp_path / f"excerpt.{shell}"
    script.write_text(capsys.readouterr().out, encoding="utf-8")
    proc = subprocess.run([shell, *check, str(script)], capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_bash_completion_completes_a_command_and_its_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    assert main(["completion", "bash"]) == 0
    script = tmp_path / "excerpt.bash"
    script.write_text(capsys.readouterr().out, encoding="utf-8")
    probe = (
        f"source {script}; "
        'COMP_WORDS=(excerpt pa); COMP_CWORD=1; _shtab_excerpt; echo "${COMPREPLY[@]}"; '
        'COMP_WORDS=(excerpt pack --chan); COMP_CWORD=2; _shtab_excerpt; echo "${COMPREPLY[@]}"'
    )
    proc = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["pack", "--changed --changed-from-git"]


def test_completion_for_another_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "powershell"]) == 2
    assert "Error:" in capsys.readouterr().err


def test_repository_and_file_options_are_marked_to_complete_paths() -> None:
    parser = dict(COMMANDS)[("pack",)]
    kinds = {
        a.dest: getattr(a, "excerpt_complete", None) for a in parser._actions if a.option_strings
    }
    assert kinds["repo"] == "directory"
    assert kinds["output"] == kinds["task_file"] == kinds["graph"] == "file"


def test_the_zsh_script_completes_directories_for_repo_and_files_for_output(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["completion", "zsh"]) == 0
    lines = capsys.readouterr().out.splitlines()
    repo = next(line for line in lines if '"--repo[' in line)
    output = next(line for line in lines if line.lstrip().startswith("{-o,--output}"))
    assert repo.rstrip().endswith(':_files -/"') and output.rstrip().endswith(':_files"')


def test_an_ordinary_run_never_imports_the_completion_library() -> None:
    probe = "import sys; from excerpt.cli import main; main(['risk', 'a.py']); "
    probe += "assert 'shtab' not in sys.modules"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr


def _modules_after(code: str) -> set[str]:
    probe = f"import sys, json; {code}; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.decode().splitlines()[-1]))


def test_the_parser_loads_no_command_s_library() -> None:
    loaded = _modules_after("from excerpt.cli import build_parser; build_parser()")
    heavy = {"pydantic", "mcp", "regex", "sqlite3", "pathspec", "multiprocessing"}
    assert not loaded & heavy
    assert not {m for m in loaded if m.startswith(("excerpt.index", "excerpt.harness"))}


def test_a_warm_pack_loads_neither_pydantic_nor_worker_processes(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "refund.py").write_text("def refund():\n    return 1\n")
    env = f"import os; os.environ['EXCERPT_CACHE_DIR'] = {str(tmp_path / 'cache')!r}"
    run = "from excerpt.cli import main; main(['pack', '--repo', {0!r}, 'refund'])"
    _modules_after(f"{env}; {run.format(str(tmp_path / 'repo'))}")  # the cold index
    loaded = _modules_after(f"{env}; {run.format(str(tmp_path / 'repo'))}")
    assert "excerpt.deliver" in loaded  # the pack ran
    assert not loaded & {"pydantic", "multiprocessing", "concurrent.futures", "mcp"}
