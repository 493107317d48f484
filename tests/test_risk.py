"""Risk concepts (SPEC §7): token matching, path and query rules, the gate and secret flags,
the vocabulary as validated data, ``excerpt risk`` and the risk eval suite."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import excerpt
from excerpt.cli import main
from excerpt.core.hashing import sha256_hex
from excerpt.errors import EnvironmentFault, UsageError
from excerpt.evals import risk_suite
from excerpt.evals.corpus import RiskCase, RiskCorpus, load_corpus
from excerpt.risk import (
    classify_path,
    concept_names,
    concepts_from_query,
    is_gate_risk_path,
    is_secret_path,
    risk_report,
    vocabulary_schema,
)
from excerpt.risk import vocabulary as vocab_module

MONEY, AUTH, SECRETS, SCHEMA = "money flow", "auth/security", "secrets", "schema/migration"
INFRA, CI, DEPS, PRIVACY = "infra/deploy", "ci/merge-gate", "dependencies", "privacy/pii"
ALL = (MONEY, AUTH, SECRETS, SCHEMA, INFRA, CI, DEPS, PRIVACY)


def test_the_vocabulary_holds_the_eight_concepts_of_the_spec_in_order() -> None:
    assert concept_names() == ALL


# --- the SPEC's own examples -------------------------------------------------------------


def test_payload_is_not_money() -> None:
    assert MONEY not in concepts_from_query("fix payload parsing")
    assert concepts_from_query("fix payload parsing") == ()


def test_roles_guard_is_auth_and_not_money() -> None:
    assert classify_path("roles.guard.ts") == (AUTH,)


def test_a_checkout_test_file_is_money_flow_but_never_a_merge_gate() -> None:
    assert classify_path("tests/checkout.spec.ts") == (MONEY,)


def test_dev_environments_config_is_not_a_secret() -> None:
    assert classify_path("config/dev.environments.ts") == ()
    assert not is_secret_path("config/dev.environments.ts")


def test_env_example_is_not_a_secret() -> None:
    assert classify_path(".env.example") == ()
    assert not is_secret_path(".env.example")


def test_a_sql_migration_is_schema_migration() -> None:
    assert classify_path("db/migrations/0042_add_index.sql") == (SCHEMA,)


# --- each concept, on paths and on text --------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("app/payments/stripe_webhook.py", (MONEY,), id="money-dir"),
        pytest.param("src/server/paymentsTable.ts", (MONEY,), id="money-camel"),
        pytest.param("src/auth/jwt.strategy.ts", (AUTH,), id="auth-dir"),
        pytest.param("app/Http/Middleware/Authenticate.php", (AUTH,), id="auth-title-case"),
        pytest.param(".env", (SECRETS,), id="secrets-dotenv"),
        pytest.param("app/core/secrets.py", (SECRETS,), id="secrets-management-code"),
        pytest.param("db/migrate/20240101120000_create_orders.rb", (SCHEMA,), id="schema-rails"),
        pytest.param("prisma/schema.prisma", (SCHEMA,), id="schema-prisma"),
        pytest.param("Dockerfile", (INFRA,), id="infra-dockerfile"),
        pytest.param("terraform/modules/vpc/main.tf", (INFRA,), id="infra-terraform"),
        pytest.param(".github/workflows/ci.yml", (CI,), id="ci-workflow"),
        pytest.param("CODEOWNERS", (CI,), id="ci-codeowners"),
        pytest.param("excerpt.toml", (CI,), id="ci-gate-policy"),
        pytest.param("package.json", (DEPS,), id="deps-package-json"),
        pytest.param("requirements-dev.txt", (DEPS,), id="deps-requirements"),
        pytest.param("go.sum", (DEPS,), id="deps-go-sum"),
        pytest.param("app/privacy/consent_banner.tsx", (PRIVACY,), id="privacy"),
        pytest.param("infra/terraform.tfvars", (SECRETS, INFRA), id="two-concepts"),
        pytest.param(".github/workflows/deploy.yml", (INFRA, CI), id="deploy-workflow"),
    ],
)
def test_paths_carry_their_concepts(path: str, expected: tuple[str, ...]) -> None:
    assert classify_path(path) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "Refund is issued twice when the Stripe webhook retries", (MONEY,), id="money"
        ),
        pytest.param("JWT refresh token is accepted after it expires", (AUTH,), id="auth"),
        pytest.param("AWS secret access key was committed", (SECRETS,), id="secrets"),
        pytest.param("Alembic migration fails on ALTER COLUMN", (SCHEMA,), id="schema"),
        pytest.param("Helm chart is missing a value", (INFRA,), id="infra"),
        pytest.param("CI is red on main since the lint job was added", (CI,), id="ci"),
        pytest.param("Dependabot PR breaks the lockfile", (DEPS,), id="deps"),
        pytest.param("Anonymize IP addresses in analytics events", (PRIVACY,), id="privacy"),
        pytest.param("Rotate the Stripe API key", (MONEY, SECRETS), id="two-concepts"),
    ],
)
def test_task_texts_carry_their_concepts(text: str, expected: tuple[str, ...]) -> None:
    assert concepts_from_query(text) == expected


# --- tokens, never substrings ------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "src/http/payload.ts",
        "docs/authors.md",
        "blog/models/author.py",
        "src/lexer/tokenizer.py",
        "src/excerpt/index/tokens.py",
        "src/ui/keyboard.ts",
        "hr/secretary.py",
        "src/cache/keys.py",
        "src/config/environment.ts",
        "src/types/guards.ts",
        "app/db/session.py",
        "app/api/dependencies.py",
        "docs/migration-guide.md",
        "src/containers/App.tsx",
    ],
)
def test_near_misses_are_not_concepts(path: str) -> None:
    assert classify_path(path) == ()


@pytest.mark.parametrize(
    "text",
    [
        "Tokenizer splits unicode identifiers incorrectly",
        "Count tokens with the o200k encoding before packing",
        "Show the author's avatar on blog posts",
        "Cache keys collide for tenants with the same slug",
        "Migrate the frontend from webpack to Vite",
        "Update the dependency injection container",
        "Bump version to 2.1.0 for the release",
        "ARIA role is missing on the dropdown menu",
    ],
)
def test_near_misses_in_text_are_not_concepts(text: str) -> None:
    assert concepts_from_query(text) == ()


@pytest.mark.parametrize(
    "spelling", ["apiKey", "api_key", "API_KEY", "ApiKey", "api-key", "apikey"]
)
def test_a_sequence_matches_every_spelling_of_an_identifier(spelling: str) -> None:
    assert concepts_from_query(f"store the {spelling} elsewhere") == (SECRETS,)


def test_a_masked_phrase_does_not_count_but_the_word_elsewhere_does() -> None:
    assert concepts_from_query("who is in charge of the docs") == ()
    assert concepts_from_query("git checkout fails on the runner") == ()
    assert concepts_from_query("checkout fails for guest users") == (MONEY,)
    assert concepts_from_query("who is in charge of the refund flow") == (MONEY,)


def test_a_joined_word_reads_as_its_parts_in_a_sequence() -> None:
    assert concepts_from_query("GitHub Actions skip forks") == (CI,)


def test_paths_named_in_text_meet_the_structural_path_rules_only() -> None:
    assert concepts_from_query("the Dockerfile copies .env into the image") == (SECRETS, INFRA)
    assert concepts_from_query("see `.github/workflows/test.yml`.") == (CI,)
    assert concepts_from_query("cp .env.example .env.local") == (SECRETS,)
    assert concepts_from_query("self.session.commit() is slow") == ()


# --- order, determinism, flags -----------------------------------------------------------


@given(st.text(alphabet="abcdefgimnoprstuvwyz._-/ABCDEKPRST0123456789", max_size=60))
def test_classification_is_deterministic_and_in_vocabulary_order(path: str) -> None:
    first = classify_path(path)
    assert first == classify_path(path)
    assert list(first) == [c for c in ALL if c in first]
    assert concepts_from_query(path) == concepts_from_query(path)


@pytest.mark.parametrize(
    ("path", "gate", "secret"),
    [
        pytest.param(".env", True, True, id="dotenv"),
        pytest.param("certs/server.pem", True, True, id="pem"),
        pytest.param("keys/alice.pub", False, False, id="public-key"),
        pytest.param("config/credentials.yml.enc", True, False, id="encrypted-store"),
        pytest.param("app/core/secrets.py", True, False, id="secret-management-code"),
        pytest.param("package.json", True, False, id="manifest"),
        pytest.param("src/auth/login.ts", True, False, id="auth"),
        pytest.param(".gitlab-ci.yml", True, False, id="ci"),
        pytest.param("src/billing/invoice.ts", False, False, id="money-is-no-gate-risk"),
        pytest.param("app/privacy/consent.tsx", False, False, id="privacy-is-no-gate-risk"),
        pytest.param("README.md", False, False, id="plain"),
        pytest.param("", False, False, id="empty"),
        pytest.param("./.env", True, True, id="dot-slash"),
    ],
)
def test_gate_risk_and_secret_flags(path: str, gate: bool, secret: bool) -> None:
    assert is_gate_risk_path(path) is gate
    assert is_secret_path(path) is secret


def test_the_four_functions_are_public_api() -> None:
    for name in ("classify_path", "concepts_from_query", "is_gate_risk_path", "is_secret_path"):
        assert name in excerpt.__all__
        assert getattr(excerpt, name) is globals()[name]


def test_report_takes_paths_or_a_query_not_both_nor_neither() -> None:
    with pytest.raises(UsageError):
        risk_report(paths=["a.py"], query="x")
    with pytest.raises(UsageError):
        risk_report()
    assert risk_report(query="") == {"query": {"concepts": []}}


# --- the vocabulary is validated data ----------------------------------------------------


@pytest.fixture
def fresh_vocabulary() -> Iterator[None]:
    vocab_module.packaged_vocabulary.cache_clear()
    yield
    vocab_module.packaged_vocabulary.cache_clear()


def _packaged() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(vocab_module._read_vocabulary())
    return doc


def _broken(change: str) -> str:
    doc = _packaged()
    concept = doc["concepts"][0]
    if change == "unknown-key":
        concept["synonyms"] = ["cash"]
    elif change == "not-a-token":
        concept["tokens"].append("api_key")
    elif change == "never-a-token":
        concept["tokens"].append("x")
    elif change == "short-sequence":
        concept["sequences"].append(["credit"])
    elif change == "duplicate-name":
        doc["concepts"][1]["name"] = concept["name"]
    elif change == "glob-with-slash":
        concept["path"]["basenames"] = ["a/b.txt"]
    elif change == "wrong-type":
        concept["gate_risk"] = "yes"
    return json.dumps(doc)


@pytest.mark.parametrize(
    "change",
    [
        "unknown-key",
        "not-a-token",
        "never-a-token",
        "short-sequence",
        "duplicate-name",
        "glob-with-slash",
        "wrong-type",
    ],
)
def test_a_malformed_vocabulary_is_refused_with_the_place_named(change: str) -> None:
    with pytest.raises(EnvironmentFault, match="risk vocabulary is malformed: "):
        vocab_module.load_vocabulary(_broken(change))


def test_the_packaged_vocabulary_conforms_and_its_digest_is_the_one_pinned() -> None:
    text = vocab_module._read_vocabulary()
    vocabulary_schema.check_vocabulary(text)  # the file as shipped conforms to the schema
    assert sha256_hex(text.encode("utf-8")) == vocab_module.PACKAGED_SHA256
    assert vocab_module.load_vocabulary(text).concepts


def test_the_packaged_vocabulary_compiles_as_the_schema_checked_path_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = vocab_module._read_vocabulary()
    trusted = vocab_module.load_vocabulary(text)
    checked: list[str] = []
    monkeypatch.setattr(vocab_module, "PACKAGED_SHA256", "")
    monkeypatch.setattr(vocabulary_schema, "check_vocabulary", checked.append)
    again = vocab_module.load_vocabulary(text)
    assert checked == [text] and again.concepts == trusted.concepts
    assert again.path_rules.first == trusted.path_rules.first
    assert again.query_rules.first == trusted.query_rules.first


def test_a_broken_installed_vocabulary_is_a_one_line_error_not_a_traceback(
    fresh_vocabulary: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(vocab_module, "_read_vocabulary", lambda: '{"version": 1, "concepts": [')
    with pytest.raises(EnvironmentFault):
        classify_path("package.json")
    assert main(["risk", "package.json"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("Error: risk vocabulary is malformed") and err.count("\n") == 1
    assert "Traceback" not in err


# --- excerpt risk ------------------------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_risk_json_for_paths_has_the_contract_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "risk", "--json", ".env", "src/billing/invoice.ts", "README.md")
    assert code == 0
    assert json.loads(out) == {
        "paths": {
            ".env": {"concepts": [SECRETS], "gate_risk": True, "secret": True},
            "src/billing/invoice.ts": {"concepts": [MONEY], "gate_risk": False, "secret": False},
            "README.md": {"concepts": [], "gate_risk": False, "secret": False},
        }
    }


def test_risk_json_for_a_query_has_the_contract_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "risk", "--query", "Rotate the Stripe API key", "--json")
    assert code == 0
    assert json.loads(out) == {"query": {"concepts": [MONEY, SECRETS]}}


def test_risk_reads_the_query_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"Bump lodash to 4.17.21\n")))
    code, out, _ = _run(capsys, "risk", "--query", "-", "--json")
    assert (code, json.loads(out)) == (0, {"query": {"concepts": [DEPS]}})


def test_risk_human_output_names_concepts_and_flags(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "risk", "--repo", "/nonexistent", ".env", "README.md")
    assert code == 0
    assert out == ".env: secrets [gate risk, secret]\nREADME.md: (no risk concepts)\n"
    code, out, _ = _run(capsys, "risk", "--query", "fix payload parsing")
    assert (code, out) == (0, "query: (no risk concepts)\n")


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["risk"], id="neither"),
        pytest.param(["risk", "a.py", "--query", "refunds"], id="both"),
        pytest.param(["risk", "--json"], id="neither-json"),
    ],
)
def test_risk_usage_errors_exit_2_with_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, *argv)
    assert code == 2
    if "--json" in argv:  # one JSON line on stdout, and the same on stderr (SPEC §11)
        assert err == out and out.count("\n") == 1
        assert json.loads(out)["code"] == "usage_error"
    else:
        assert out == ""
        assert err.startswith("Error: ") and err.count("\n") == 1


# --- the risk suite ----------------------------------------------------------------------


def test_the_risk_suite_meets_its_floors() -> None:
    result = risk_suite.run_risk()
    assert result.cases >= 70
    assert result.metrics["accuracy"] >= 0.96
    assert result.metrics["guards_passed"] == 1.0
    assert result.thresholds == {"accuracy": 0.96, "guards_passed": 1.0}
    assert result.ok
    guards = [d for d in result.details if d["guard"]]
    assert len(guards) == 6 and all(d["pass"] for d in guards)


def test_the_corpus_covers_every_concept_on_paths_and_queries() -> None:
    corpus = load_corpus("risk.json", RiskCorpus)
    for concept in ALL:
        assert any(concept in c.expected and c.path for c in corpus.cases), concept
        assert any(concept in c.expected and c.query for c in corpus.cases), concept
    assert sum(not c.expected for c in corpus.cases) >= 20


def test_a_substring_classifier_fails_the_risk_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    def substrings(text: str) -> tuple[str, ...]:
        low = text.lower()
        hits = {MONEY: "pay", AUTH: "auth", SECRETS: "env", CI: "check"}
        return tuple(c for c, s in hits.items() if s in low)

    monkeypatch.setattr(risk_suite, "classify_path", substrings)
    monkeypatch.setattr(risk_suite, "concepts_from_query", substrings)
    result = risk_suite.run_risk()
    assert not result.ok
    assert result.metrics["guards_passed"] < 1.0


def test_eval_accuracy_includes_the_risk_suite(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from excerpt.evals import suites

    monkeypatch.setattr(suites, "default_packer", lambda request: {"items": []})
    code, out, _ = _run(capsys, "eval", "--accuracy", "--json")
    doc = json.loads(out)
    assert set(doc["suites"]) == {"accuracy", "risk"}
    assert doc["suites"]["risk"]["pass"] is True
    assert code == 1  # the empty packer fails retrieval; risk is unaffected


@pytest.mark.parametrize(
    "case",
    [
        pytest.param({"id": "x", "expected": []}, id="neither"),
        pytest.param({"id": "x", "path": "a", "query": "b", "expected": []}, id="both"),
        pytest.param({"id": "x", "path": "a", "expected": ["money"]}, id="unknown-concept"),
        pytest.param({"id": "x", "path": "a", "expected": [], "note": ""}, id="extra-key"),
    ],
)
def test_a_malformed_risk_case_is_refused(case: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        RiskCase.model_validate(case)
