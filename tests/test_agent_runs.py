"""Agent-run records and their report (SPEC §10, ``excerpt eval agent-runs FILE``).

Every record here is synthetic: built from one valid template and changed one field at a time,
so each test shows exactly which difference breaks a pair, a file or the evidence matrix.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from excerpt.errors import UsageError
from excerpt.evals.agent_records import (
    AGENTS,
    CATEGORIES,
    HANDOFF_DIRECTIONS,
    AgentRunRecord,
    load_records,
)
from excerpt.evals.agent_report import REPORT_SCHEMA, report

SECRET = "zq-secret-7731"  # planted in bad values; must never reach an error message
SECRET_NUMBER = 987654321
HANDOFF = "cross-agent-handoff"


def _tokens(total_input: int, **extra: Any) -> dict[str, Any]:
    return {"input": total_input, "output": 0, "cacheRead": 0, "cacheWrite": 0, **extra}


def _raw(**changes: Any) -> dict[str, Any]:
    """A valid record in wire form (camelCase), with ``changes`` applied."""
    raw: dict[str, Any] = {
        "runId": "r1-b",
        "pairId": "r1",
        "fixture": "py-monorepo",
        "category": "monorepo-bug-fix",
        "agent": "claude-code",
        "provider": "anthropic",
        "model": "model-a",
        "arm": "baseline",
        "recordClass": "measured",
        "outcomeBasis": "tests",
        "requiredEvidence": 4,
        "evidenceFound": 3,
        "providerTokens": {"input": 1000, "output": 100, "cacheRead": 800, "cacheWrite": 100},
        "latencyMs": 60_000,
        "selectionPrecision": None,
        "selectionRecall": None,
        "quality": "pass",
        "cacheHotBytesChanged": 0,
        "handoffDirection": None,
    }
    raw.update(changes)
    return raw


def _record(**changes: Any) -> AgentRunRecord:
    return AgentRunRecord.model_validate(_raw(**changes))


def _pair(pair_id: str, **shared: Any) -> list[AgentRunRecord]:
    """A valid baseline/excerpt pair; the excerpt arm spends half the baseline's tokens."""
    if shared.get("category") == HANDOFF and "handoffDirection" not in shared:
        shared["handoffDirection"] = "claude-code->codex"
    half = {"input": 500, "output": 50, "cacheRead": 400, "cacheWrite": 50}
    return [
        _record(runId=f"{pair_id}-b", pairId=pair_id, arm="baseline", **shared),
        _record(runId=f"{pair_id}-e", pairId=pair_id, arm="excerpt", providerTokens=half, **shared),
    ]


def _with(record: AgentRunRecord, **changes: Any) -> AgentRunRecord:
    return AgentRunRecord.model_validate({**record.to_dict(), **changes})


def _complete() -> list[AgentRunRecord]:
    """Measured pairs with tokens for every agent and category; handoffs in both directions."""
    records: list[AgentRunRecord] = []
    for agent in AGENTS:
        for category in CATEGORIES:
            directions = HANDOFF_DIRECTIONS if category == HANDOFF else (None,)
            for direction in directions:
                pair_id = f"{agent}/{category}/{direction or '-'}"
                records += _pair(
                    pair_id, agent=agent, category=category, handoffDirection=direction
                )
    return records


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "runs.jsonl"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _lines(*documents: Any) -> str:
    return "".join(json.dumps(d) + "\n" for d in documents)


# -- loading -------------------------------------------------------------------------------


def test_json_lines_and_a_json_array_load_the_same_records(tmp_path: Path) -> None:
    documents = [r.to_dict() for r in _pair("p1")]
    as_lines = load_records(_write(tmp_path, "\n" + _lines(*documents) + "\n  \n"))
    as_array = load_records(_write(tmp_path, json.dumps(documents, indent=2)))
    assert as_lines == as_array == _pair("p1")


def test_selection_and_handoff_direction_may_be_left_out_but_tokens_may_not() -> None:
    optional = ("selectionPrecision", "selectionRecall", "handoffDirection")
    record = AgentRunRecord.model_validate({k: v for k, v in _raw().items() if k not in optional})
    assert record == _record()
    with pytest.raises(ValidationError, match="providerTokens"):
        AgentRunRecord.model_validate({k: v for k, v in _raw().items() if k != "providerTokens"})


def test_records_accept_python_field_names_too() -> None:
    by_alias = _record()
    by_name = AgentRunRecord.model_validate(
        {"run_id" if k == "runId" else k: v for k, v in by_alias.to_dict().items()}
    )
    assert by_name == by_alias


def test_the_shipped_example_loads_and_is_not_benchmark_evidence() -> None:
    example = resources.files("excerpt.evals").joinpath("data/agent_runs.example.jsonl")
    with resources.as_file(example) as path:
        records = load_records(path)
    assert records and {r.record_class for r in records} == {"synthetic"}
    result = report(records)
    assert not result.invalid_pairs
    assert result.pairs and not result.benchmark_evidence_complete
    assert set(result.to_dict()["gaps"].values()) <= {"no valid pair", "no measured pair"}


_MALFORMED: list[tuple[str, str | bytes, str]] = [
    ("bad-json-line", _lines(_raw()) + '{"runId": "' + SECRET + '", \n', "line 2: not valid JSON"),
    ("bad-json-array", "[" + json.dumps(_raw()) + ", " + SECRET + "]", "line 1: not valid JSON"),
    ("array-of-non-objects", json.dumps([_raw(), SECRET]), "record 2: a record must be a JSON"),
    ("line-not-an-object", _lines(_raw(), SECRET), "line 2: a record must be a JSON object"),
    ("unknown-field", _lines(_raw(tokensUsed=SECRET)), "line 1: field tokensUsed: not a known"),
    ("unknown-odd-key", _lines(_raw(**{SECRET + " key": 1})), "field (unnamed): not a known"),
    ("missing-field", _lines({k: v for k, v in _raw().items() if k != "quality"}), "quality"),
    (
        "missing-tokens",
        _lines({k: v for k, v in _raw().items() if k != "providerTokens"}),
        "field providerTokens: required",
    ),
    ("duplicate-key", '{"runId": "a", "runId": "' + SECRET + '"}\n', "field runId appears twice"),
    ("string-for-int", _lines(_raw(latencyMs=str(SECRET_NUMBER))), "field latencyMs"),
    ("bool-for-int", _lines(_raw(evidenceFound=True)), "field evidenceFound"),
    ("int-for-str", _lines(_raw(model=SECRET_NUMBER)), "field model"),
    ("tokens-not-object", _lines(_raw(providerTokens=[SECRET])), "field providerTokens"),
    ("unknown-agent", _lines(_raw(agent=SECRET)), "field agent: Input should be 'claude-code'"),
    ("unknown-category", _lines(_raw(category=SECRET)), "field category"),
    ("unknown-arm", _lines(_raw(arm=SECRET)), "field arm"),
    ("unknown-record-class", _lines(_raw(recordClass=SECRET)), "field recordClass"),
    ("unknown-outcome-basis", _lines(_raw(outcomeBasis=SECRET)), "field outcomeBasis"),
    ("unknown-quality", _lines(_raw(quality=SECRET)), "field quality"),
    ("empty-run-id", _lines(_raw(runId="")), "field runId"),
    ("negative-latency", _lines(_raw(latencyMs=-SECRET_NUMBER)), "field latencyMs"),
    ("negative-hot-bytes", _lines(_raw(cacheHotBytesChanged=-SECRET_NUMBER)), "cacheHotBytes"),
    ("zero-denominator", _lines(_raw(requiredEvidence=0, evidenceFound=0)), "requiredEvidence"),
    ("negative-found", _lines(_raw(evidenceFound=-1)), "field evidenceFound"),
    (
        "found-over-denominator",
        _lines(_raw(requiredEvidence=2, evidenceFound=SECRET_NUMBER)),
        "field evidenceFound: must not exceed requiredEvidence",
    ),
    (
        "negative-token-count",
        _lines(_raw(providerTokens=_tokens(-SECRET_NUMBER))),
        "field providerTokens.input",
    ),
    (
        "unknown-token-field",
        _lines(_raw(providerTokens=_tokens(1, reasoning=SECRET_NUMBER))),
        "field providerTokens.reasoning: not a known field",
    ),
    ("precision-over-one", _lines(_raw(selectionPrecision=1.5)), "field selectionPrecision"),
    ("recall-below-zero", _lines(_raw(selectionRecall=-0.25)), "field selectionRecall"),
    ("recall-nan", _lines(_raw(selectionRecall=float("nan"))), "field selectionRecall"),
    (
        "handoff-without-direction",
        _lines(_raw(category=HANDOFF)),
        "field handoffDirection: required for cross-agent-handoff",
    ),
    (
        "direction-outside-handoff",
        _lines(_raw(handoffDirection="codex->claude-code")),
        "field handoffDirection: must be null outside cross-agent-handoff",
    ),
    ("unknown-direction", _lines(_raw(category=HANDOFF, handoffDirection=SECRET)), "handoffDir"),
    ("duplicate-run-id", _lines(_raw(), _raw(arm="excerpt")), "line 2: field runId: duplicates"),
    ("second-array-record", json.dumps([_raw(), _raw(runId="x", quality=SECRET)]), "record 2"),
    ("empty-file", "\n\n", "no agent-run records"),
    ("empty-array", "[]", "no agent-run records"),
    ("array-not-array", "[1] " + SECRET, "not valid JSON"),
    ("not-utf8", b'{"runId": "\xff\xfe' + SECRET.encode() + b'"}\n', "not UTF-8"),
    ("deeply-nested", "[" * 100_000, "file"),
]


@pytest.mark.parametrize(
    ("content", "expected"), [m[1:] for m in _MALFORMED], ids=[m[0] for m in _MALFORMED]
)
def test_malformed_file_is_a_usage_error_naming_the_place_but_not_the_value(
    tmp_path: Path, content: str | bytes, expected: str
) -> None:
    with pytest.raises(UsageError) as caught:
        load_records(_write(tmp_path, content))
    message = caught.value.message
    assert expected in message
    assert caught.value.exit_code == 2
    assert "\n" not in message
    assert SECRET not in message and str(SECRET_NUMBER) not in message


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read"):
        load_records(tmp_path / "absent.jsonl")


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"category": HANDOFF}, id="handoff-without-direction"),
        pytest.param({"handoffDirection": "claude-code->codex"}, id="direction-elsewhere"),
        pytest.param({"evidenceFound": 5}, id="found-over-denominator"),
    ],
)
def test_inconsistent_record_cannot_be_built(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        _record(**changes)


_FIELD_VALUES = {
    "runId": st.text(min_size=1, max_size=20),
    "pairId": st.text(min_size=1, max_size=20),
    "fixture": st.text(min_size=1, max_size=20),
    "category": st.sampled_from([c for c in CATEGORIES if c != HANDOFF]),
    "agent": st.sampled_from(AGENTS),
    "provider": st.text(min_size=1, max_size=10),
    "model": st.text(min_size=1, max_size=10),
    "arm": st.sampled_from(["baseline", "excerpt"]),
    "recordClass": st.sampled_from(["measured", "synthetic", "replayed"]),
    "outcomeBasis": st.sampled_from(["tests", "rubric", "diff-match"]),
    "requiredEvidence": st.just(50),
    "evidenceFound": st.integers(0, 50),
    "providerTokens": st.none()
    | st.fixed_dictionaries(
        {k: st.integers(0, 10**9) for k in ("input", "output", "cacheRead", "cacheWrite")}
    ),
    "latencyMs": st.integers(0, 10**9),
    "selectionPrecision": st.none() | st.floats(0.0, 1.0),
    "selectionRecall": st.none() | st.floats(0.0, 1.0),
    "quality": st.sampled_from(["pass", "fail", "partial"]),
    "cacheHotBytesChanged": st.integers(0, 10**9),
    "handoffDirection": st.none(),
}


@given(st.fixed_dictionaries(_FIELD_VALUES))
def test_a_record_survives_the_round_trip_through_its_wire_form(raw: dict[str, Any]) -> None:
    record = AgentRunRecord.model_validate(json.loads(json.dumps(raw)))
    assert record.to_dict() == raw
    assert AgentRunRecord.model_validate(record.to_dict()) == record


# -- pair integrity ------------------------------------------------------------------------


def _mismatch(field: str, value: Any) -> Callable[[], list[AgentRunRecord]]:
    def build() -> list[AgentRunRecord]:
        baseline, excerpt = _pair("p")
        return [baseline, _with(excerpt, **{field: value})]

    return build


def _handoff_pair(**excerpt_changes: Any) -> list[AgentRunRecord]:
    baseline, excerpt = _pair("p", category=HANDOFF, handoffDirection="claude-code->codex")
    return [baseline, _with(excerpt, **excerpt_changes)]


def _arms(*arms: str, **last_changes: Any) -> Callable[[], list[AgentRunRecord]]:
    def build() -> list[AgentRunRecord]:
        records = [_record(runId=f"p-{i}", pairId="p", arm=arm) for i, arm in enumerate(arms)]
        records[-1] = _with(records[-1], **last_changes)
        return records

    return build


_INVALID_PAIRS: list[tuple[str, Callable[[], list[AgentRunRecord]], tuple[str, ...]]] = [
    ("fixture", _mismatch("fixture", "ts-lib"), ("fixture mismatch",)),
    ("category", _mismatch("category", "issue-triage"), ("category mismatch",)),
    ("agent", _mismatch("agent", "codex"), ("agent mismatch",)),
    ("provider", _mismatch("provider", "openai"), ("provider mismatch",)),
    ("model", _mismatch("model", "model-b"), ("model mismatch",)),
    ("record-class", _mismatch("recordClass", "replayed"), ("record class mismatch",)),
    ("outcome-basis", _mismatch("outcomeBasis", "rubric"), ("outcome basis mismatch",)),
    ("denominator", _mismatch("requiredEvidence", 5), ("denominator mismatch",)),
    (
        "handoff-direction",
        lambda: _handoff_pair(handoffDirection="codex->claude-code"),
        ("handoff direction mismatch",),
    ),
    (
        "handoff-beside-other-category",
        lambda: _handoff_pair(category="issue-triage", handoffDirection=None),
        ("category mismatch", "handoff direction mismatch"),
    ),
    (
        "several-fields",
        lambda: [_pair("p")[0], _with(_pair("p")[1], model="m2", provider="x", fixture="f")],
        ("fixture mismatch", "provider mismatch", "model mismatch"),
    ),
    ("missing-baseline", _arms("excerpt"), ("missing baseline arm",)),
    ("missing-excerpt", _arms("baseline"), ("missing excerpt arm",)),
    (
        "two-baselines",
        _arms("baseline", "baseline"),
        ("duplicate baseline arm", "missing excerpt arm"),
    ),
    (
        "two-excerpts",
        _arms("excerpt", "excerpt"),
        ("missing baseline arm", "duplicate excerpt arm"),
    ),
    (
        "three-records-extra-baseline",
        _arms("baseline", "excerpt", "baseline"),
        ("duplicate baseline arm",),
    ),
    (
        "three-records-extra-excerpt",
        _arms("baseline", "excerpt", "excerpt"),
        ("duplicate excerpt arm",),
    ),
    (
        "three-records-extra-differs",
        _arms("baseline", "excerpt", "excerpt", model="model-b"),
        ("duplicate excerpt arm", "model mismatch"),
    ),
]


@pytest.mark.parametrize(
    ("build", "reasons"), [c[1:] for c in _INVALID_PAIRS], ids=[c[0] for c in _INVALID_PAIRS]
)
def test_invalid_pair_is_listed_with_every_reason_and_left_out_of_the_results(
    build: Callable[[], list[AgentRunRecord]], reasons: tuple[str, ...]
) -> None:
    records = build()
    result = report([*records, *_pair("ok")])
    assert [p.baseline.pair_id for p in result.pairs] == ["ok"]
    (invalid,) = result.invalid_pairs
    assert invalid.pair_id == "p"
    assert invalid.reasons == reasons
    assert invalid.run_ids == tuple(r.run_id for r in records)
    assert result.to_dict()["invalidPairs"] == [
        {"pairId": "p", "runIds": list(invalid.run_ids), "reasons": list(reasons)}
    ]


def test_arms_of_a_pair_may_differ_in_what_they_measured() -> None:
    baseline, excerpt = _pair("p")
    measured = {
        "latencyMs": 1,
        "quality": "partial",
        "evidenceFound": 4,
        "selectionPrecision": 0.5,
        "selectionRecall": 1.0,
        "cacheHotBytesChanged": 300,
        "providerTokens": None,
    }
    excerpt = _with(excerpt, **measured)
    result = report([baseline, excerpt])
    assert not result.invalid_pairs and len(result.pairs) == 1


def test_pairs_are_reported_in_pair_id_order_whatever_the_file_order() -> None:
    records = _pair("b") + _pair("c") + _pair("a")
    assert [p.baseline.pair_id for p in report(records).pairs] == ["a", "b", "c"]
    assert report(records) == report(list(reversed(records)))


# -- per-pair results ----------------------------------------------------------------------


def test_valid_pair_reports_token_latency_quality_and_selection_per_arm() -> None:
    baseline, excerpt = _pair("p")
    excerpt = _with(excerpt, latencyMs=45_000, selectionPrecision=0.75, selectionRecall=1.0)
    (pair,) = report([baseline, excerpt]).to_dict()["pairs"]
    assert pair["tokens"] == {"baseline": 2000, "excerpt": 1000, "delta": -1000, "ratio": 0.5}
    assert pair["latencyMs"] == {"baseline": 60_000, "excerpt": 45_000, "delta": -15_000}
    assert pair["quality"] == {"baseline": "pass", "excerpt": "pass", "regression": False}
    assert pair["selectionPrecision"] == {"baseline": None, "excerpt": 0.75}
    assert pair["runIds"] == {"baseline": "p-b", "excerpt": "p-e"}
    assert pair["requiredEvidence"] == 4 and pair["countsAsEvidence"] is True


@pytest.mark.parametrize(
    ("baseline", "excerpt", "regression"),
    [
        ("pass", "partial", True),
        ("pass", "fail", True),
        ("partial", "fail", True),
        ("pass", "pass", False),
        ("partial", "partial", False),
        ("fail", "fail", False),
        ("fail", "partial", False),
        ("partial", "pass", False),
    ],
    ids=lambda v: str(v),
)
def test_quality_regression_means_the_excerpt_arm_did_worse(
    baseline: str, excerpt: str, regression: bool
) -> None:
    b, e = _pair("p")
    (pair,) = report([_with(b, quality=baseline), _with(e, quality=excerpt)]).pairs
    assert pair.quality_regression is regression


@pytest.mark.parametrize(
    ("arm", "tokens"),
    [
        pytest.param(0, None, id="baseline-unreported"),
        pytest.param(1, None, id="excerpt-unreported"),
        pytest.param(0, _tokens(0), id="zero-baseline"),
    ],
)
def test_token_ratio_is_absent_when_it_cannot_be_computed(arm: int, tokens: Any) -> None:
    records = _pair("p")
    records[arm] = _with(records[arm], providerTokens=tokens)
    (pair,) = report(records).pairs
    assert pair.token_ratio is None
    assert (pair.token_delta is None) is (tokens is None)


# -- summaries -----------------------------------------------------------------------------


def test_summaries_count_pairs_measured_pairs_median_ratio_and_regressions() -> None:
    cheap = _pair("a")
    dear_b, dear_e = _pair("b")
    dear_e = _with(dear_e, providerTokens=_tokens(3000), quality="fail")
    synthetic = [_with(r, recordClass="synthetic") for r in _pair("c")]
    unreported = [_with(r, providerTokens=None) for r in _pair("d")]
    other = _pair("e", agent="codex", category="issue-triage")
    result = report([*cheap, dear_b, dear_e, *synthetic, *unreported, *other]).to_dict()
    assert result["byCategory"]["monorepo-bug-fix"] == {
        "pairs": 4,
        "measuredPairsWithTokens": 2,
        "evidencePairs": 1,
        "medianTokenRatio": 1.0,  # median of 0.5 and 1.5; synthetic pairs do not count
        "regressions": 1,
    }
    assert result["byAgent"]["codex"]["pairs"] == 1
    assert result["byAgent"]["claude-code"]["pairs"] == 4
    assert result["byCategory"]["json-tool-output"]["medianTokenRatio"] is None
    assert list(result["byCategory"]) == list(CATEGORIES)
    assert list(result["byHandoffDirection"]) == list(HANDOFF_DIRECTIONS)


def test_report_dict_has_the_documented_keys() -> None:
    assert list(report(_pair("p")).to_dict()) == [
        "schema",
        "records",
        "validPairs",
        "pairs",
        "invalidPairs",
        "byCategory",
        "byAgent",
        "byHandoffDirection",
        "benchmarkEvidenceComplete",
        "missing",
        "gaps",
    ]
    assert report(_pair("p")).to_dict()["schema"] == REPORT_SCHEMA


def test_report_dict_is_plain_json() -> None:
    document = report(_complete()).to_dict()
    assert json.loads(json.dumps(document, allow_nan=False)) == document


# -- benchmark evidence --------------------------------------------------------------------


def test_complete_measured_evidence_makes_the_benchmark_evidence_complete() -> None:
    result = report(_complete())
    assert not result.invalid_pairs
    assert result.benchmark_evidence_complete is True
    assert result.to_dict()["benchmarkEvidenceComplete"] is True
    assert result.missing == ()
    assert result.to_dict()["missing"] == [] and result.to_dict()["gaps"] == {}


def test_no_records_leave_every_cell_of_the_matrix_missing() -> None:
    result = report([])
    assert result.benchmark_evidence_complete is False
    assert len(result.missing) == len(AGENTS) * len(CATEGORIES) + len(HANDOFF_DIRECTIONS)
    assert result.missing[0] == "claude-code: monorepo-bug-fix"
    assert result.missing[-1] == "handoff codex->claude-code"


Mutation = Callable[[list[AgentRunRecord]], list[AgentRunRecord]]


def _drop(predicate: Callable[[AgentRunRecord], bool]) -> Mutation:
    return lambda records: [r for r in records if not predicate(r)]


def _change(pair_id: str, arm: str | None = None, **changes: Any) -> Mutation:
    def apply(records: list[AgentRunRecord]) -> list[AgentRunRecord]:
        return [
            _with(r, **changes) if r.pair_id == pair_id and arm in (None, r.arm) else r
            for r in records
        ]

    return apply


_GAPS: list[tuple[str, Mutation, str, str]] = [
    (
        "one-category-for-one-agent",
        _drop(lambda r: (r.agent, r.category) == ("codex", "json-tool-output")),
        "codex: json-tool-output",
        "no valid pair",
    ),
    (
        "one-handoff-direction",
        _drop(lambda r: r.handoff_direction == "codex->claude-code"),
        "handoff codex->claude-code",
        "no valid pair",
    ),
    (
        "tokens-unreported-on-baseline",
        _change("claude-code/issue-triage/-", "baseline", providerTokens=None),
        "claude-code: issue-triage",
        "provider tokens not reported",
    ),
    (
        "tokens-unreported-on-excerpt",
        _change("codex/monorepo-bug-fix/-", "excerpt", providerTokens=None),
        "codex: monorepo-bug-fix",
        "provider tokens not reported",
    ),
    (
        "quality-regression",
        _change("codex/ci-log-diagnosis/-", "excerpt", quality="partial"),
        "codex: ci-log-diagnosis",
        "quality regression",
    ),
    (
        "synthetic-pair",
        _change("claude-code/multi-file-refactor/-", recordClass="synthetic"),
        "claude-code: multi-file-refactor",
        "no measured pair",
    ),
    (
        "replayed-pair",
        _change("codex/issue-triage/-", recordClass="replayed"),
        "codex: issue-triage",
        "no measured pair",
    ),
    (
        "invalid-pair",
        _change("claude-code/ci-log-diagnosis/-", "excerpt", model="model-b"),
        "claude-code: ci-log-diagnosis",
        "no valid pair",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "item", "why"), [g[1:] for g in _GAPS], ids=[g[0] for g in _GAPS]
)
def test_each_single_missing_piece_keeps_the_evidence_incomplete_and_is_named(
    mutate: Mutation, item: str, why: str
) -> None:
    result = report(mutate(_complete()))
    assert result.benchmark_evidence_complete is False
    assert result.missing == (item,)
    assert result.to_dict()["gaps"] == {item: why}


def test_handoff_direction_is_covered_only_by_evidence_pairs() -> None:
    regress = _change(
        "claude-code/cross-agent-handoff/codex->claude-code", "excerpt", quality="fail"
    )
    synthetic = _change("codex/cross-agent-handoff/codex->claude-code", recordClass="synthetic")
    records = synthetic(regress(_complete()))
    assert report(records).missing == ("handoff codex->claude-code",)


def test_a_regressing_pair_beside_a_good_one_leaves_the_cell_covered() -> None:
    extra = [_with(r, runId=r.run_id + "2", pairId="extra") for r in _pair("x", agent="codex")]
    extra[1] = _with(extra[1], quality="fail")
    result = report([*_complete(), *extra])
    assert result.benchmark_evidence_complete is True
    assert result.to_dict()["byAgent"]["codex"]["regressions"] == 1
