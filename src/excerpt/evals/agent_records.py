"""Records of real agent runs (``excerpt eval agent-runs FILE``) and their loader.

One record is one arm of one run: an agent (``claude-code`` or ``codex``) worked a fixture task
either as it is (``baseline``) or with excerpt (``excerpt``). The two arms of a pair share a
``pairId``. A file is JSON lines (one record per line, blank lines ignored) or one JSON array.
Keys are camelCase; every key is required except ``selectionPrecision``, ``selectionRecall``
and ``handoffDirection`` (null when left out); ``providerTokens`` must be written, as null
when the provider reported nothing. Unknown keys, wrong types and out-of-range numbers are
refused, with a message that names the line or record and the field but never the value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails, PydanticCustomError

from excerpt.errors import UsageError

__all__ = [
    "AGENTS",
    "CATEGORIES",
    "HANDOFF_CATEGORY",
    "HANDOFF_DIRECTIONS",
    "AgentRunRecord",
    "ProviderTokens",
    "ScriptedCall",
    "ScriptedSession",
    "load_records",
]

Category = Literal[
    "monorepo-bug-fix",
    "issue-triage",
    "ci-log-diagnosis",
    "multi-file-refactor",
    "json-tool-output",
    "cross-agent-handoff",
]
Agent = Literal["claude-code", "codex"]
HandoffDirection = Literal["claude-code->codex", "codex->claude-code"]
# excerpt-stop-short: a scripted pair's third arm, excerpt with ``stop_short`` (the report
# compares baseline with excerpt; the third rides along in the same pair)
Arm = Literal["baseline", "excerpt", "excerpt-stop-short"]
# scripted: a deterministic policy on the clients' tool contracts (``bench session``)
RecordClass = Literal["measured", "synthetic", "replayed", "scripted"]
OutcomeBasis = Literal["tests", "rubric", "diff-match"]
Quality = Literal["pass", "fail", "partial"]

CATEGORIES: tuple[str, ...] = get_args(Category)
AGENTS: tuple[str, ...] = get_args(Agent)
HANDOFF_DIRECTIONS: tuple[str, ...] = get_args(HandoffDirection)
HANDOFF_CATEGORY = "cross-agent-handoff"

Count = Annotated[int, Field(ge=0)]
Share = Annotated[float, Field(ge=0.0, le=1.0)]
Text = Annotated[str, Field(min_length=1, max_length=512)]

# strict: a string "3" is not a count, true is not a number; ints still pass as floats.
_RECORD = ConfigDict(
    extra="forbid", strict=True, frozen=True, alias_generator=to_camel, populate_by_name=True
)
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")


class ProviderTokens(BaseModel):
    """Token counts as the provider reported them for one run."""

    model_config = _RECORD

    input: Count
    output: Count
    cache_read: Count
    cache_write: Count

    @property
    def total(self) -> int:
        """Every token the provider billed or served: input, output and both cache kinds."""
        return self.input + self.output + self.cache_read + self.cache_write


class ScriptedCall(BaseModel):
    """One tool call of a scripted session and what its result cost."""

    model_config = _RECORD

    tool: Text
    arguments: dict[str, Any]
    bytes: Count
    tokens: Count


class ScriptedSession(BaseModel):
    """What a scripted session measured, in the tokenizer's tokens of what the model got."""

    model_config = _RECORD

    arm_name: Text
    tokenizer: Literal["o200k"]
    cap: Count
    tree_sha256: Text
    tokens_to_first_gold: Count | None
    tokens_to_all_gold: Count | None
    tool_calls: Count
    irrelevant_bytes: Count
    overhead_tokens_per_turn: Count
    calls: list[ScriptedCall]


class AgentRunRecord(BaseModel):
    """One arm of one agent run, as written by whoever ran it."""

    model_config = _RECORD

    run_id: Text
    pair_id: Text
    fixture: Text
    category: Category
    agent: Agent
    provider: Text
    model: Text
    arm: Arm
    record_class: RecordClass
    outcome_basis: OutcomeBasis
    required_evidence: Annotated[int, Field(ge=1)]
    evidence_found: Count
    provider_tokens: ProviderTokens | None
    latency_ms: Count
    selection_precision: Share | None = None
    selection_recall: Share | None = None
    quality: Quality
    cache_hot_bytes_changed: Count
    handoff_direction: HandoffDirection | None = None
    session: ScriptedSession | None = None

    @property
    def pair_terms(self) -> tuple[str, int, str] | None:
        """A scripted session's tokenizer, cap and tree: what both arms must share."""
        s = self.session
        return None if s is None else (s.tokenizer, s.cap, s.tree_sha256)

    @model_validator(mode="after")
    def _consistent(self) -> AgentRunRecord:
        if (self.record_class == "scripted") != (self.session is not None):
            raise PydanticCustomError(
                "session_required", "field session: given exactly when recordClass is scripted"
            )
        if self.session is not None and self.provider_tokens is not None:
            raise PydanticCustomError(
                "scripted_tokens", "field providerTokens: null for a scripted run (no provider)"
            )
        if self.evidence_found > self.required_evidence:
            raise PydanticCustomError(
                "evidence_range", "field evidenceFound: must not exceed requiredEvidence"
            )
        handoff = self.category == HANDOFF_CATEGORY
        if handoff and self.handoff_direction is None:
            raise PydanticCustomError(
                "handoff_required", "field handoffDirection: required for cross-agent-handoff"
            )
        if not handoff and self.handoff_direction is not None:
            raise PydanticCustomError(
                "handoff_forbidden",
                "field handoffDirection: must be null outside cross-agent-handoff",
            )
        return self

    def to_dict(self) -> dict[str, Any]:
        """The record in its wire form (camelCase keys)."""
        out = self.model_dump(by_alias=True)
        if self.session is None:
            del out["session"]  # written only by scripted runs
        return out


def load_records(path: Path) -> list[AgentRunRecord]:
    """Read and validate the agent-run records in ``path`` (JSON lines or a JSON array).

    Raises:
        UsageError: the file cannot be read, is not JSON, holds no records, or a record is
            malformed (the message names the line or record and the field, never the value).
    """
    documents = _documents(_read_text(path))
    if not documents:
        raise UsageError(f"{path.name}: no agent-run records")
    records = [_validate(where, document) for where, document in documents]
    _check_unique_run_ids(records, [where for where, _ in documents])
    return records


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path.name}: not UTF-8 text") from None
    except OSError as exc:
        raise UsageError(f"{path.name}: cannot read ({exc.strerror or 'unknown error'})") from None


def _documents(text: str) -> list[tuple[str, object]]:
    """Each record's location (``line N`` or ``record N``) beside its parsed JSON."""
    if text.lstrip().startswith("["):
        return _array_documents(text)
    found: list[tuple[str, object]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            found.append((f"line {number}", _parse(line, f"line {number}")))
    return found


def _array_documents(text: str) -> list[tuple[str, object]]:
    parsed = _parse(text, None)
    if not isinstance(parsed, list):
        raise UsageError("file: not a JSON array of records")
    return [(f"record {index}", item) for index, item in enumerate(parsed, start=1)]


def _parse(text: str, where: str | None) -> object:
    """Parse one JSON document; ``where`` None means a whole file, located by the decoder."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        # the decoder's message names the problem and position, never the offending text
        at = where or f"line {exc.lineno}"
        raise UsageError(f"{at}: not valid JSON ({exc.msg}, column {exc.colno})") from None
    except _DuplicateKey as exc:
        raise UsageError(f"{where or 'file'}: field {exc.field} appears twice") from None
    except RecursionError:
        raise UsageError(f"{where or 'file'}: JSON nested too deeply") from None


class _DuplicateKey(Exception):
    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(_field_label(key))
        out[key] = value
    return out


def _validate(where: str, document: object) -> AgentRunRecord:
    if not isinstance(document, dict):
        raise UsageError(f"{where}: a record must be a JSON object")
    try:
        return AgentRunRecord.model_validate(document)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise UsageError(f"{where}: {_describe(errors[0])}{more}") from None


def _describe(error: ErrorDetails) -> str:
    """One error as ``field X: what is wrong``; pydantic's messages never quote the input."""
    if not error["loc"]:
        return error["msg"]
    field = ".".join(_field_label(str(part)) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        return f"field {field}: not a known field"
    if error["type"] == "missing":
        return f"field {field}: required"
    return f"field {field}: {error['msg']}"


def _field_label(key: str) -> str:
    """A key as written when it looks like a field name; an unknown key may hold anything."""
    return key if _FIELD_NAME.fullmatch(key) else "(unnamed)"


def _check_unique_run_ids(records: Sequence[AgentRunRecord], wheres: Sequence[str]) -> None:
    first: dict[str, str] = {}
    for record, where in zip(records, wheres, strict=True):
        if record.run_id in first:
            raise UsageError(f"{where}: field runId: duplicates {first[record.run_id]}")
        first[record.run_id] = where
