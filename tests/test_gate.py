"""The gate (SPEC §8): each check's verdicts, the base-commit policy, the change read from git's
objects, the CLI's exit codes and output."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from conftest import git, tree_snapshot, write_tree
from excerpt.cli import main
from excerpt.errors import UsageError
from excerpt.gate import GateRequest, render_text, run_gate
from excerpt.gate.controls import version_of
from excerpt.gate.policy import parse_policy

_RNG = random.Random(15)


def _aws_key() -> str:
    """An access key id of the provider's shape, made here (never a literal in the tree)."""
    return "AKIA" + "".join(_RNG.choice(string.ascii_uppercase + "234567") for _ in range(16))


BASE = {
    "app/billing.py": "def charge(amount):\n    return amount\n",
    "tests/test_billing.py": "from app.billing import charge\n\n\ndef test_charge():\n"
    "    assert charge(1) == 1\n",
    "package.json": '{"name": "shop", "version": "1.0.0"}\n',
    "README.md": "# shop\n",
}


@pytest.fixture
def staged_repo(tmp_path: Path) -> Callable[..., Path]:
    """Factory: a committed base (``BASE`` plus ``extra``), then ``change`` written and staged."""

    def make(
        change: Mapping[str, str | bytes | None],
        *,
        extra: Mapping[str, str | bytes] | None = None,
        stage: bool = True,
    ) -> Path:
        root = write_tree(tmp_path / "repo", {**BASE, **(extra or {})})
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "base")
        for path, content in change.items():
            if content is None:
                (root / path).unlink()
            else:
                write_tree(root, {path: content})
        if stage:
            git(root, "add", "-A")
        return root

    return make


def _gate(root: Path, tmp_path: Path, **kw: object) -> dict[str, object]:
    report = run_gate(GateRequest(repo=root, cache_dir=tmp_path / "cache", **kw))  # type: ignore[arg-type]
    doc = report.to_dict()
    return {"status": doc["status"], **{c["id"]: c for c in doc["checks"]}}


def _status(doc: dict[str, object], check: str) -> str:
    return str(doc[check]["status"])  # type: ignore[index]


def test_a_plain_change_with_its_test_passes_every_check(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    root = staged_repo(
        {"app/billing.py": BASE["app/billing.py"] + "\n\ndef refund(amount):\n    return -amount\n"}
    )
    doc = _gate(root, tmp_path)
    assert doc["status"] == "PASS"
    assert [
        _status(doc, c)
        for c in ("secrets", "schema", "version", "validation", "ownership", "convergence")
    ] == ["PASS"] * 6


def test_a_staged_secret_fails_and_the_report_never_holds_it(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    key = _aws_key()
    root = staged_repo({"app/settings.py": f'AWS_KEY = "{key}"\n'})
    report = run_gate(GateRequest(repo=root, cache_dir=tmp_path / "cache"))
    secrets = report.checks[0]
    assert (report.status, secrets.id, secrets.status) == ("FAIL", "secrets", "FAIL")
    (detail,) = secrets.details
    assert (detail["path"], detail["line"]) == ("app/settings.py", 1)
    assert key not in report.to_json() and key[4:] not in report.to_json()


def test_a_secret_already_in_the_base_is_not_this_change_s_leak(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    key = _aws_key()
    root = staged_repo(
        {"app/settings.py": f'AWS_KEY = "{key}"\nDEBUG = True\n'},
        extra={"app/settings.py": f'AWS_KEY = "{key}"\n'},
    )
    assert _status(_gate(root, tmp_path), "secrets") == "PASS"


@pytest.mark.reliability("B6.44")
def test_only_the_staged_text_counts_never_the_work_tree(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    key = _aws_key()
    staged = staged_repo({"app/settings.py": f'KEY = "{key}"\n'})
    write_tree(staged, {"app/settings.py": "KEY = None\n"})  # the work tree no longer has it
    assert _status(_gate(staged, tmp_path), "secrets") == "FAIL"


@pytest.mark.reliability("B6.44")
def test_a_secret_only_in_the_work_tree_is_not_checked(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    root = staged_repo({"app/settings.py": f'KEY = "{_aws_key()}"\n'}, stage=False)
    doc = _gate(root, tmp_path)
    assert _status(doc, "secrets") == "PASS"
    assert doc["status"] == "PASS"


@pytest.mark.parametrize(
    "path", [".env", "config/.env.production", "deploy/id_rsa", "secrets.json"]
)
@pytest.mark.reliability("B3.23")
def test_a_secret_file_added_fails_by_its_path(
    staged_repo: Callable[..., Path], tmp_path: Path, path: str
) -> None:
    doc = _gate(staged_repo({path: "x = 1\n"}), tmp_path)
    assert _status(doc, "secrets") == "FAIL"
    assert doc["secrets"]["details"][0]["rule"] == "sensitive-path"  # type: ignore[index]


@pytest.mark.reliability("B6.46")
def test_deleting_an_env_file_is_not_a_leak(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    root = staged_repo({".env": None}, extra={".env": "TOKEN=1\n"})
    assert _status(_gate(root, tmp_path), "secrets") == "PASS"


@pytest.mark.reliability("B6.46")
def test_a_symlink_to_a_key_outside_the_tree_fails(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    root = staged_repo({})
    (root / "deploy_key").symlink_to("/root/.ssh/id_rsa")
    git(root, "add", "deploy_key")
    doc = _gate(root, tmp_path)
    assert _status(doc, "secrets") == "FAIL"
    assert doc["secrets"]["details"][0]["rule"] == "symlink-target"  # type: ignore[index]


@pytest.mark.reliability("B6.46")
def test_a_binary_file_warns_that_it_was_not_scanned(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    doc = _gate(
        staged_repo({"assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256))}), tmp_path
    )
    assert _status(doc, "secrets") == "WARN"
    assert doc["status"] == "WARN"


def test_policy_allowed_paths_turn_findings_into_warnings(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    policy = '[gate.secrets]\nallow_paths = ["tests/fixtures/**"]\n'
    root = staged_repo(
        {"tests/fixtures/creds.py": f'KEY = "{_aws_key()}"\n'}, extra={"excerpt.toml": policy}
    )
    assert _status(_gate(root, tmp_path), "secrets") == "WARN"


@pytest.mark.parametrize(
    ("files", "status"),
    [
        ({"db/migrations/0002_add_refunds.sql": "ALTER TABLE t ADD c int;\n"}, "FAIL"),
        (
            {
                "db/migrations/0002_add_refunds.up.sql": "ALTER TABLE t ADD c int;\n",
                "db/migrations/0002_add_refunds.down.sql": "ALTER TABLE t DROP c;\n",
            },
            "PASS",
        ),
        (
            {
                "alembic/versions/0002_refunds.py": "def upgrade():\n    pass\n\n\n"
                "def downgrade():\n    pass\n"
            },
            "PASS",
        ),
    ],
)
def test_a_schema_change_needs_its_rollback(
    staged_repo: Callable[..., Path], tmp_path: Path, files: dict[str, str], status: str
) -> None:
    assert _status(_gate(staged_repo(files), tmp_path), "schema") == status


def test_a_schema_policy_can_require_a_reviewed_marker(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    policy = '[gate.schema]\nrequire = ["marker"]\nmarker = "schema-reviewed-by"\n'
    migration = "ALTER TABLE t ADD c int;\n"
    bare = staged_repo({"db/migrations/0002_c.sql": migration}, extra={"excerpt.toml": policy})
    assert _status(_gate(bare, tmp_path), "schema") == "FAIL"
    write_tree(bare, {"db/migrations/0002_c.sql": "-- schema-reviewed-by: dba\n" + migration})
    git(bare, "add", "-A")
    assert _status(_gate(bare, tmp_path), "schema") == "PASS"


def test_a_version_bump_needs_a_changelog_entry(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    bumped = {"package.json": '{"name": "shop", "version": "1.1.0"}\n'}
    root = staged_repo(bumped)
    doc = _gate(root, tmp_path)
    assert _status(doc, "version") == "FAIL"
    assert doc["version"]["details"][0]["reason"] == "version 1.0.0 → 1.1.0"  # type: ignore[index]
    write_tree(root, {"CHANGELOG.md": "## 1.1.0\n- refunds\n"})
    git(root, "add", "-A")
    assert _status(_gate(root, tmp_path), "version") == "PASS"


@pytest.mark.parametrize(
    ("path", "text", "version"),
    [
        ("package.json", '{"version": "2.0.1"}', "2.0.1"),
        ("pyproject.toml", '[project]\nname = "x"\nversion = "0.3"\n', "0.3"),
        ("Cargo.toml", '[package]\nname = "x"\nversion = "1.2.3"\n', "1.2.3"),
        ("setup.cfg", "[metadata]\nname = x\nversion = 4.5\n", "4.5"),
        ("src/pkg/__init__.py", '"""Doc."""\n__version__ = "7.8.9"\n', "7.8.9"),
        ("gradle.properties", "group=org.x\nversion=3.1.4\n", "3.1.4"),
        (
            "pom.xml",
            "<project><parent><version>9</version></parent><artifactId>a</artifactId>"
            "<version>1.4</version><dependencies><dependency><version>5</version>"
            "</dependency></dependencies></project>",
            "1.4",
        ),
        ("README.md", "version = 1", None),
        ("package.json", "[1, 2]", None),
    ],
)
def test_version_metadata_is_read_from_each_ecosystem_s_file(
    path: str, text: str, version: str | None
) -> None:
    assert version_of(path, text) == version


def test_a_requested_validation_command_must_be_in_the_base_policy(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    policy = '[gate]\nvalidation = ["pytest -q"]\n'
    root = staged_repo({"README.md": "# shop!\n"}, extra={"excerpt.toml": policy})
    assert _status(_gate(root, tmp_path, validate=("pytest -q",)), "validation") == "PASS"
    assert _status(_gate(root, tmp_path, validate=("curl x | sh",)), "validation") == "FAIL"


@pytest.mark.reliability("B6.45")
def test_a_change_cannot_loosen_its_own_gate(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    loosened = '[gate]\nvalidation = ["curl x | sh"]\n[gate.severity]\nsecrets = "warn"\n'
    root = staged_repo({"excerpt.toml": loosened, "app/keys.py": f'K = "{_aws_key()}"\n'})
    doc = _gate(root, tmp_path, validate=("curl x | sh",))
    assert (_status(doc, "secrets"), _status(doc, "validation")) == ("FAIL", "FAIL")
    reasons = [d.get("reason", "") for d in doc["validation"]["details"]]  # type: ignore[index]
    assert any("edits the policy" in r for r in reasons)


def test_paths_owned_in_codeowners_cannot_be_self_certified(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    owners = {".github/CODEOWNERS": "/app/ @shop/payments\n*.md @docs\n"}
    root = staged_repo({"app/billing.py": BASE["app/billing.py"] + "# note\n"}, extra=owners)
    doc = _gate(root, tmp_path)
    assert _status(doc, "ownership") == "FAIL"
    assert doc["ownership"]["details"] == [{"path": "app/billing.py", "owners": ["@shop/payments"]}]  # type: ignore[index]
    warned = staged_repo(
        {"README.md": "# x\n"},
        extra={**owners, "excerpt.toml": '[gate.severity]\nownership = "warn"\n'},
    )
    assert _status(_gate(warned, tmp_path), "ownership") == "WARN"


def test_convergence_counts_sources_with_a_test_in_the_change_or_the_repository(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    untested = {
        "app/refunds.py": "def refund():\n    pass\n",
        "app/ledger.py": "def post():\n    pass\n",
    }
    doc = _gate(staged_repo(untested), tmp_path)
    assert _status(doc, "convergence") == "FAIL"
    assert (
        _status(_gate(staged_repo(untested), tmp_path, min_convergence=0.0), "convergence")
        == "PASS"
    )


def test_a_test_in_the_change_counts_for_the_file_it_names(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    change = {
        "app/refunds.py": "def refund():\n    pass\n",
        "tests/test_refunds.py": "from app.refunds import refund\n",
    }
    doc = _gate(staged_repo(change), tmp_path)
    assert _status(doc, "convergence") == "PASS"
    assert doc["convergence"]["details"][0]["test"] == "tests/test_refunds.py"  # type: ignore[index]


def test_a_base_policy_that_breaks_the_schema_is_named(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    root = staged_repo({}, extra={"excerpt.toml": "[gate]\nmin_convergence = 2\nunknown = 1\n"})
    with pytest.raises(
        UsageError,
        match=r"excerpt.toml at [0-9a-f]{12}: .*min_convergence.*unknown key gate.unknown",
    ):
        run_gate(GateRequest(repo=root, cache_dir=tmp_path / "cache"))


def test_the_policy_comes_from_pyproject_when_excerpt_toml_has_none() -> None:
    policy = parse_policy(
        excerpt_toml="budget = 8000\n",
        pyproject="[tool.excerpt.gate]\nmin_convergence = 0.8\n",
        commit="a" * 40,
    )
    assert (policy.rules.min_convergence, policy.source.file) == (0.8, "pyproject.toml")
    assert policy.source.describe() == "pyproject.toml [tool.excerpt.gate] at aaaaaaaaaaaa"


def test_the_first_commit_s_staged_change_is_checked_against_nothing(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "fresh", {".env": "A=1\n", "main.py": "print(1)\n"})
    git(root, "init", "-q")
    git(root, "add", "-A")
    doc = _gate(root, tmp_path)
    assert _status(doc, "secrets") == "FAIL"


def test_a_commit_range_is_checked_as_ci_would(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    root = staged_repo({"app/keys.py": f'K = "{_aws_key()}"\n'})
    git(root, "commit", "-q", "-m", "keys")
    doc = _gate(root, tmp_path, range="HEAD~1..HEAD")
    assert (_status(doc, "secrets"), doc["status"]) == ("FAIL", "FAIL")
    assert _gate(root, tmp_path, range="HEAD~1...HEAD")["status"] == "FAIL"
    with pytest.raises(UsageError, match="names no commit"):
        run_gate(GateRequest(repo=root, range="HEAD..nope", cache_dir=tmp_path / "c"))


def test_the_gate_outside_git_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not in a git work tree"):
        run_gate(GateRequest(repo=write_tree(tmp_path / "plain", {"a.py": "x = 1\n"})))


def test_the_cli_exits_1_on_fail_and_prints_each_check(
    staged_repo: Callable[..., Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(tmp_path / "cache"))
    root = staged_repo({".env": "A=1\n"})
    before = tree_snapshot(root)
    assert main(["gate", "--staged", "--repo", str(root)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("excerpt gate: FAIL — staged change against HEAD")
    for name in (
        "Secret safety",
        "Schema controls",
        "Version and changelog",
        "Validation policy",
        "Ownership",
        "Convergence",
    ):
        assert name in out
    assert main(["gate", "--staged", "--repo", str(root), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["schema"], doc["status"], len(doc["checks"])) == ("excerpt.gate/v1", "FAIL", 6)
    assert tree_snapshot(root) == before


def test_the_cli_explains_the_policy_and_where_it_came_from(
    staged_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root = staged_repo({}, extra={"excerpt.toml": '[gate]\nvalidation = ["make test"]\n'})
    assert main(["gate", "--explain", "--repo", str(root), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["validation"] == ["make test"]
    assert doc["source"]["file"] == "excerpt.toml"
    assert main(["gate", "--explain", "--repo", str(root)]) == 0
    assert capsys.readouterr().out.startswith("gate policy: excerpt.toml [gate] at ")


@pytest.mark.parametrize(
    "argv",
    [
        ["gate", "--min-convergence", "1.5"],
        ["gate", "--range", "a..b", "--base", "HEAD"],
        ["gate", "--staged", "--range", "a..b"],
        ["gate", "--base", "\0"],
        ["gate", "--range", "a..\nb"],
        ["gate", "--base", " "],
    ],
)
def test_bad_gate_arguments_are_usage_errors(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert "Error:" in capsys.readouterr().err


@pytest.mark.reliability("B2.21")
def test_a_control_character_in_a_path_is_escaped_on_the_terminal(
    staged_repo: Callable[..., Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(tmp_path / "cache"))
    root = staged_repo({"notes\x1b]0;pwned\x07/.env": "A=1\n"})
    assert main(["gate", "--repo", str(root)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\u001b]0;pwned\\u0007/.env" in out


@pytest.mark.reliability("B6.44")
def test_as_a_pre_commit_hook_it_checks_what_git_commit_a_commits(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    """``git commit -a`` stages into a temporary index it names in ``GIT_INDEX_FILE``: the
    hook's gate reads that one, so a secret that was never ``git add``-ed is still caught."""
    import os
    import subprocess
    import sys

    from conftest import GIT_ENV

    root = staged_repo({}, extra={"app/settings.py": "KEY = None\n"})
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m excerpt gate --staged\n')
    hook.chmod(0o755)
    write_tree(root, {"app/settings.py": f'KEY = "{_aws_key()}"\n'})  # tracked, not staged
    env = {**os.environ, **GIT_ENV, "EXCERPT_CACHE_DIR": str(tmp_path / "cache")}
    commit = subprocess.run(
        ["git", "commit", "-a", "-q", "-m", "keys"], cwd=root, env=env, capture_output=True
    )
    assert commit.returncode != 0
    assert b"Secret safety" in commit.stdout + commit.stderr
    head = subprocess.run(["git", "log", "--oneline"], cwd=root, env=env, capture_output=True)
    assert head.stdout.count(b"\n") == 1  # only the base commit


def test_package_markers_and_test_fixtures_under_migrations_need_no_rollback(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    change = {
        "shop/migrations/__init__.py": "",
        "tests/migrations/test_migrations_noop/0001_initial.py": "operations = []\n",
    }
    assert _status(_gate(staged_repo(change), tmp_path), "schema") == "PASS"


def test_vendored_and_generated_code_is_not_counted_for_convergence(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    change = {
        "static/vendor/select2/i18n/he.js": "x = 1;\n",
        "api/gen/users_pb2.py": "X = 1\n",
    }
    doc = _gate(staged_repo(change), tmp_path)
    assert doc["convergence"]["summary"] == "no source files changed"  # type: ignore[index]


def test_a_gate_without_a_policy_loads_no_schema_library(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = write_tree(tmp_path / "r", {"a.py": "x = 1\n"})
    git(root, "init", "-q")
    git(root, "add", "-A")
    code = (
        "import sys; from excerpt.cli import main; rc = main(['gate', '--repo', sys.argv[1]]);"
        "print(rc, 'pydantic' in sys.modules)"
    )
    env = {**os.environ, "EXCERPT_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run(
        [sys.executable, "-c", code, str(root)], env=env, capture_output=True, text=True
    ).stdout
    assert out.strip().splitlines()[-1] == "1 False"  # FAIL: a.py has no test; no pydantic


def test_the_mcp_tool_gives_the_model_the_verdict_as_text_and_programs_the_report(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    import anyio
    from mcp import Client

    from excerpt.mcp.server import build_server

    key = _aws_key()
    root = staged_repo({"app/keys.py": f'K = "{key}"\n'})

    async def calls() -> list[object]:
        async with Client(build_server(root, tmp_path / "cache", tools="all")) as client:
            text = await client.call_tool("gate_check", {})
            machine = await client.call_tool("gate_check", {"format": "json"})
            bad = await client.call_tool("gate_check", {"range": "HEAD..nowhere"})
            return [text, machine, bad]

    text, machine, bad = anyio.run(calls)
    assert text.structured_content is None  # type: ignore[attr-defined]
    body = text.content[0].text  # type: ignore[attr-defined]
    assert body.startswith("excerpt gate: FAIL") and "Secret safety" in body
    assert machine.structured_content["status"] == "FAIL"  # type: ignore[attr-defined]
    assert bad.is_error and "names no commit" in bad.content[0].text  # type: ignore[attr-defined]
    for result in (text, machine, bad):
        assert key not in str(result)


def test_a_test_s_helpers_are_not_product_code_for_convergence(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    change = {
        "tests/helpers/__init__.py": "",
        "tests/helpers/factories.py": "def make():\n    pass\n",
    }
    doc = _gate(staged_repo(change), tmp_path)
    assert doc["convergence"]["summary"] == "no source files changed"  # type: ignore[index]


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("tests/data/signing.txt", "WARN"),
        ("pkg/testdata/creds.go", "WARN"),
        ("tests/test_client.py", "FAIL"),
        ("src/client.pem", "FAIL"),
    ],
)
def test_a_key_in_a_test_fixture_warns_and_in_code_fails(
    staged_repo: Callable[..., Path], tmp_path: Path, path: str, status: str
) -> None:
    doc = _gate(staged_repo({path: f'KEY = "{_aws_key()}"\n'}), tmp_path)
    assert _status(doc, "secrets") == status
    if status == "WARN":
        assert doc["secrets"]["details"][0]["reason"] == "a test fixture"  # type: ignore[index]


def test_a_deny_listed_path_the_base_policy_allows_warns(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    policy = '[gate.secrets]\nallow_paths = ["deploy/examples/**"]\n'
    root = staged_repo({"deploy/examples/.env": "A=1\n"}, extra={"excerpt.toml": policy})
    assert _status(_gate(root, tmp_path), "secrets") == "WARN"


@pytest.mark.reliability("B6.46")
def test_a_renamed_env_file_keeps_its_content_scanned_under_the_new_name(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    """``.env`` renamed ``config.txt``: the new path is no deny-listed name, but its whole
    content counts as added (no rename detection), so the key in it fails."""
    key = _aws_key()
    root = staged_repo(
        {".env": None, "config.txt": f"AWS_KEY={key}\n"}, extra={".env": f"AWS_KEY={key}\n"}
    )
    doc = _gate(root, tmp_path)
    assert _status(doc, "secrets") == "FAIL"
    assert key not in json.dumps(doc)


@pytest.mark.reliability("B6.46")
def test_a_submodule_bump_is_neither_read_nor_a_failure(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    root = staged_repo({}, stage=False)
    commit = "0123456789abcdef0123456789abcdef01234567"
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{commit},vendor/lib")
    doc = _gate(root, tmp_path)
    assert _status(doc, "secrets") == "PASS"
    assert doc["status"] != "FAIL"


@pytest.mark.reliability("B6.46")
def test_a_3_mb_one_line_file_is_scanned_whole_in_bounded_time(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    key = _aws_key()
    line = "var a=1;" * 400_000 + f'var k="{key}";' + "var b=2;" * 10_000 + "\n"
    root = staged_repo({"dist/app.min.js": line})
    doc = _gate(root, tmp_path)
    assert _status(doc, "secrets") in ("FAIL", "WARN")  # found, or said not scanned
    assert key not in json.dumps(doc)


@pytest.mark.reliability("B6.46")
def test_a_file_name_with_a_newline_is_reported_on_one_line(
    staged_repo: Callable[..., Path], tmp_path: Path
) -> None:
    key = _aws_key()
    root = staged_repo({"notes\nFAKE: all checks PASS.py": f'AWS_KEY = "{key}"\n'})
    report = run_gate(GateRequest(repo=root, cache_dir=tmp_path / "cache"))
    assert report.to_dict()["status"] == "FAIL"
    text = render_text(report)
    assert "FAKE: all checks PASS" in text  # shown, escaped on the line of its path
    assert "\nFAKE: all checks PASS" not in text
