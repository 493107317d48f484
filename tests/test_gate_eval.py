"""``excerpt eval --gate`` (SPEC §10): the gate suite meets its floors, and fails them when one
check of the gate regresses.

The suite builds every fixture repository at run time; its corpus names the change-sets the
issue asks for (a valid control and each expected block, for a named reason). A gate whose
secret or schema check passes everything, or whose ownership check misses one owned path,
must take the suite below its floor.
"""

from __future__ import annotations

import json
import random
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from excerpt.cli import main
from excerpt.core.secrets import scan_text
from excerpt.evals import gate_suite, runner
from excerpt.evals.corpus import load_corpus
from excerpt.evals.gate_suite import CANARY_KINDS, GateCase, GateCorpus, canary, run_gate_suite
from excerpt.gate import CheckResult

pytestmark = pytest.mark.timeout(120)

CORPUS: GateCorpus = load_corpus("gate.json", GateCorpus)
METRICS = {"verdict_accuracy", "block_recall", "control_pass", "check_accuracy", "case_pass_rate"}
# What the suite must hold: case id -> (overall status, the check that decides it)
REQUIRED = {
    "valid-control": ("PASS", None),
    "secret-file-env": ("FAIL", "secrets"),
    "secret-content-source": ("FAIL", "secrets"),
    "schema-without-controls": ("FAIL", "schema"),
    "version-without-changelog": ("FAIL", "version"),
    "validation-without-base-policy": ("FAIL", "validation"),
    "codeowners-owned-path": ("FAIL", "ownership"),
    "convergence-below-threshold": ("FAIL", "convergence"),
    "policy-tamper-secrets": ("FAIL", "secrets"),
    "policy-tamper-schema-off": ("FAIL", "schema"),
    "secret-staged-only": ("FAIL", "secrets"),
    "secret-worktree-only": ("PASS", "secrets"),
    "rename-into-id-rsa": ("FAIL", "secrets"),
    "secret-in-utf16": ("FAIL", "secrets"),
    "binary-file": ("WARN", "secrets"),
    "deleted-env": ("PASS", "secrets"),
    "symlink-to-ssh-key": ("FAIL", "secrets"),
    "range-with-secret": ("FAIL", "secrets"),
}


def subset(*ids: str) -> GateCorpus:
    """The corpus with only the cases ``ids`` (its floors unchanged)."""
    cases = [c for c in CORPUS.cases if c.id in ids]
    assert len(cases) == len(ids)
    return CORPUS.model_copy(update={"cases": cases})


def expected(case: GateCase, check: str) -> str | None:
    """The status ``case`` expects of ``check``, if it names one."""
    return next((s for c, s in case.expect.checks.items() if c == check), None)


def failing(result: Any) -> list[str]:
    return [d["id"] for d in result.details if not d["pass"]]


# --------------------------------------------------------------------------- the corpus


def test_the_corpus_holds_every_required_case_with_its_verdict_and_deciding_check() -> None:
    cases = {c.id: c for c in CORPUS.cases}
    for case_id, (status, check) in REQUIRED.items():
        assert case_id in cases, case_id
        case = cases[case_id]
        assert case.expect.status == status, case_id
        if check is not None:
            assert expected(case, check) == status, case_id
    assert any(c.range for c in CORPUS.cases if c.expect.status == "FAIL")
    assert any(c.validate_ for c in CORPUS.cases if c.expect.status == "FAIL")
    assert len({c.id for c in CORPUS.cases}) == len(CORPUS.cases)
    for case in CORPUS.cases:  # every block names the check that blocks and why
        if case.expect.status == "FAIL":
            assert "FAIL" in case.expect.checks.values(), case.id
        assert case.because.strip(), case.id
    assert set(CORPUS.thresholds) == METRICS
    assert all(floor == 1.0 for floor in CORPUS.thresholds.values())


def test_no_secret_value_is_stored_in_the_corpus_or_the_suite() -> None:
    data = resources.files("excerpt.evals").joinpath("data", "gate.json").read_text("utf-8")
    source = Path(gate_suite.__file__).read_text(encoding="utf-8")
    for text in (data, source):
        assert [f.rule for f in scan_text(text) if f.severity == "fail"] == []
    assert "{{secret:" in data  # the values are made at run time from these tokens


def test_every_canary_kind_is_a_secret_to_the_detector_and_is_seeded() -> None:
    for kind in CANARY_KINDS:
        value = canary(kind, random.Random(kind))
        assert value == canary(kind, random.Random(kind))  # the same seed, the same value
        assert value != canary(kind, random.Random(kind + "'"))
        line = value if "\n" in value else f'key = "{value}"'
        assert [f.severity for f in scan_text(line)] == ["fail"], kind


# --------------------------------------------------------------------------- the suite


def test_eval_gate_meets_every_floor_and_reports_each_case(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["eval", "--gate", "--json"])
    doc = json.loads(capsys.readouterr().out)
    suite = doc["suites"]["gate"]
    assert set(doc["suites"]) == {"gate"}
    assert {"cases", "passed", "metrics", "thresholds", "pass", "details"} <= suite.keys()
    assert set(suite["metrics"]) == METRICS
    assert suite["cases"] == len(CORPUS.cases)
    assert suite["tables"]["seconds"] > 0
    for detail in suite["details"]:
        assert {"id", "expected", "got", "because", "checks", "pass", "seconds"} <= detail.keys()
        assert detail["got"] in ("PASS", "WARN", "FAIL", "ERROR")
    failed = {d["id"]: d for d in suite["details"] if not d["pass"]}
    assert failed == {}, json.dumps(failed, indent=1)
    assert suite["passed"] == suite["cases"]
    assert suite["pass"] is True and doc["pass"] is True
    assert code == 0


def test_eval_gate_text_table_and_all_include_the_gate_suite(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[list[str]] = []

    def fake(names: list[str], packer: Any = None) -> runner.EvalReport:
        asked.append(list(names))
        return runner.EvalReport((run_gate_suite(subset("valid-control", "secret-file-env")),))

    monkeypatch.setattr(runner, "run_suites", fake)
    assert main(["eval", "--all"]) == 0
    assert main(["eval", "--gate"]) == 0
    out = capsys.readouterr().out
    assert asked == [["accuracy", "risk", "savings", "context", "gate"], ["gate"]]
    assert re.search(r"^\| gate \| 2 \| 2 \| block_recall \| 1\.000 \| 1\.000 \|$", out, re.M)
    assert "gate" in runner.SUITES


# --------------------------------------------------------------------------- regressions


def _passing(check_id: str) -> Any:
    def check(*_args: Any, **_kwargs: Any) -> CheckResult:
        return CheckResult(id=check_id, status="PASS", summary="broken: passes everything")

    return check


@pytest.mark.parametrize(
    ("check", "attribute", "cases"),
    [
        (
            "secrets",
            "check_secrets",
            ("valid-control", "secret-file-env", "secret-staged-only", "secret-worktree-only",
             "symlink-to-ssh-key", "range-with-secret", "binary-file"),
        ),
        (
            "schema",
            "check_schema",
            ("valid-control", "schema-without-controls", "schema-with-rollback",
             "policy-tamper-schema-off"),
        ),
    ],
)  # fmt: skip
def test_a_check_that_passes_everything_fails_the_floor(
    monkeypatch: pytest.MonkeyPatch, check: str, attribute: str, cases: tuple[str, ...]
) -> None:
    corpus = subset(*cases)
    honest = run_gate_suite(corpus)
    assert honest.ok, failing(honest)
    monkeypatch.setattr(f"excerpt.gate.run.{attribute}", _passing(check))
    broken = run_gate_suite(corpus)
    assert not broken.ok
    blocks = [c.id for c in corpus.cases if expected(c, check) == "FAIL"]
    assert set(blocks) <= set(failing(broken))
    assert broken.metrics["block_recall"] < broken.thresholds["block_recall"]
    assert broken.metrics["verdict_accuracy"] < broken.thresholds["verdict_accuracy"]


def test_one_missed_block_is_enough_to_fail_the_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = subset("valid-control", "codeowners-owned-path", "codeowners-unowned-path")
    assert run_gate_suite(corpus).ok
    from excerpt.gate.ownership import check_ownership as real

    def misses_billing(change: Any, policy: Any, codeowners: Any) -> CheckResult:
        result = real(change, policy, codeowners)
        if any(f.path == "billing/rates.yaml" for f in change.files):
            return CheckResult(id="ownership", status="PASS", summary="missed")
        return result

    monkeypatch.setattr("excerpt.gate.run.check_ownership", misses_billing)
    broken = run_gate_suite(corpus)
    assert failing(broken) == ["codeowners-owned-path"]
    assert not broken.ok
    assert broken.metrics["control_pass"] == 1.0  # the controls still pass: one regression
