"""The gate suite (SPEC §10 ``--gate``): change-sets on fixture repositories, gated, compared
with the verdict and the named checks a reviewer expects.

Each case of ``data/gate.json`` is a base tree committed in a fresh temporary repository, then
change operations applied to git's index and to the work tree (written and staged, staged only,
in the work tree only, deleted, renamed, a symlink, a binary, UTF-16, a gitlink, one long
line), optionally committed and checked as a range. Secret values are made at run time by a
seeded generator (``canary``), in the providers' published formats; none is stored whole in
the corpus or in this module. git runs only on the suite's own temporary fixtures, without a
shell, with a fixed environment (dates, no system or global configuration, hooks disabled).

Metrics: ``verdict_accuracy`` (the overall status right), ``block_recall`` (an expected FAIL
caught, by every check named as failing and with the details named), ``control_pass`` (a case
expected to pass or warn is not blocked), ``check_accuracy`` (every named check's status) and
``case_pass_rate``. The floors are data; at 1.0 a single regression fails the suite.
"""

from __future__ import annotations

import os
import random
import re
import string
import tempfile
import time
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from excerpt.errors import EnvironmentFault, UsageError
from excerpt.evals.corpus import load_corpus
from excerpt.evals.harness_exec import run_argv
from excerpt.evals.metrics import mean
from excerpt.evals.suites import SuiteResult
from excerpt.gate import GateReport, GateRequest, run_gate

__all__ = [
    "CANARY_KINDS",
    "GateCase",
    "GateCorpus",
    "build_fixture",
    "canary",
    "fixture_git",
    "run_gate_suite",
]

_STRICT = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)
Status = Literal["PASS", "WARN", "FAIL"]
CheckId = Literal["secrets", "schema", "version", "validation", "ownership", "convergence"]

# --------------------------------------------------------------------------- secret values

_ALNUM = string.ascii_letters + string.digits
_UPPER_DIGITS = string.ascii_uppercase + string.digits
_URLSAFE = _ALNUM + "-_"
_B64 = _ALNUM + "+/"
# A generated value holding one of these could pass for a placeholder: draw again.
_PLACEHOLDERISH = re.compile(
    r"example|sample|test|dummy|fake|xxx|placeholder|changeme|your|0000|1234|abcd", re.I
)


def _draw(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _base62(number: int) -> str:
    out = ""
    while number:
        number, digit = divmod(number, 62)
        out = (string.digits + string.ascii_uppercase + string.ascii_lowercase)[digit] + out
    return out or "0"


def _github_classic(rng: random.Random) -> str:
    body = _draw(rng, _ALNUM, 30)  # 30 random characters and their CRC32 in base62
    return "gh" + "p_" + body + _base62(zlib.crc32(body.encode())).rjust(6, "0")


def _private_key(rng: random.Random) -> str:
    kind = "RSA " + "PRIVATE" + " KEY"
    body = "\n".join("MIIE" + _draw(rng, _B64, 60) if i == 0 else _draw(rng, _B64, 64)
                     for i in range(6))  # fmt: skip
    return f"-----BEGIN {kind}-----\n{body}\n{_draw(rng, _B64, 20)}==\n-----END {kind}-----"


_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "aws-access-key": lambda r: "AK" + "IA" + _draw(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
    "github-token": _github_classic,
    "github-fine-grained": lambda r: (
        "github" + "_pat_" + "11" + _draw(r, _UPPER_DIGITS, 20) + "_" + _draw(r, _ALNUM, 59)
    ),
    "gitlab-token": lambda r: "gl" + "pat-" + _draw(r, _URLSAFE, 20),
    "slack-token": lambda r: (
        "xo"
        + "xb-"
        + "-".join((_draw(r, string.digits, 12), _draw(r, string.digits, 13), _draw(r, _ALNUM, 24)))
    ),
    "stripe-key": lambda r: "sk" + "_live_" + _draw(r, _ALNUM, 24),
    "openai-key": lambda r: (
        "sk" + "-proj-" + _draw(r, _URLSAFE, 74) + "T3Blbk" + "FJ" + _draw(r, _URLSAFE, 74)
    ),
    "anthropic-key": lambda r: "sk" + "-ant-api03-" + _draw(r, _URLSAFE, 93) + "AA",
    "google-api-key": lambda r: "AI" + "za" + _draw(r, _URLSAFE, 35),
    "npm-token": lambda r: "np" + "m_" + _draw(r, _ALNUM, 36),
    "pypi-token": lambda r: "py" + "pi-AgEIcHlwaS5vcmc" + _draw(r, _URLSAFE, 120),
    "sendgrid-key": lambda r: "S" + "G." + _draw(r, _URLSAFE, 22) + "." + _draw(r, _URLSAFE, 43),
    "url-password": lambda r: "postgres" + "://shop:" + _draw(r, _ALNUM, 20) + "@db.internal/shop",
    "private-key": _private_key,
}
CANARY_KINDS: tuple[str, ...] = tuple(_MAKERS)


def canary(kind: str, rng: random.Random) -> str:
    """A fresh value in ``kind``'s published format (one of ``CANARY_KINDS``), from ``rng``;
    never one that a placeholder allowlist could take for an example."""
    make = _MAKERS[kind]
    while True:
        value = make(rng)
        if not _PLACEHOLDERISH.search(value.replace("-proj-", "").replace("api03", "")):
            return value


_TOKEN = re.compile(r"\{\{secret:([a-z0-9-]+)\}\}")


def _expand(text: str, values: dict[str, str], rng: random.Random) -> str:
    def one(match: re.Match[str]) -> str:
        kind = match.group(1)
        if kind not in _MAKERS:
            raise UsageError(f"gate corpus names an unknown secret kind {kind!r}")
        if kind not in values:
            values[kind] = canary(kind, rng)
        return values[kind]

    return _TOKEN.sub(one, text)


# --------------------------------------------------------------------------- the corpus


class GateOp(BaseModel):
    """One change operation. ``write`` stages the text (and leaves it in the work tree),
    ``stage-only`` stages it and puts the work tree back, ``worktree-only`` writes without
    staging; ``utf16`` stages the text encoded as UTF-16 (``bom``), ``binary`` stages bytes
    (``hex``), ``long-line`` stages ``size`` bytes of prose on one line ending in ``text``,
    ``symlink`` a link to ``target``, ``gitlink`` a submodule entry at ``commit``."""

    model_config = _STRICT
    op: Literal[
        "write", "stage-only", "worktree-only", "delete", "rename", "symlink", "binary",
        "utf16", "long-line", "gitlink",
    ]  # fmt: skip
    path: str = Field(min_length=1)
    text: str = ""
    to: str | None = None
    target: str | None = None
    hex: str | None = None
    bom: bool = True
    size: int = Field(default=0, ge=0, le=8_000_000)
    commit: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}$")

    @model_validator(mode="after")
    def _fields(self) -> GateOp:
        need = {"rename": ("to", self.to), "symlink": ("target", self.target),
                "gitlink": ("commit", self.commit)}  # fmt: skip
        if self.op in need and need[self.op][1] is None:
            raise ValueError(f"{self.op} needs {need[self.op][0]}")
        for rel in (self.path, self.to or ""):
            if rel.startswith("/") or ".." in rel.split("/"):
                raise ValueError("paths stay inside the fixture")
        return self


class GateExpect(BaseModel):
    """The verdict, named checks' statuses, and details a named check must hold (each a
    partial detail: every key given must be equal)."""

    model_config = _STRICT
    status: Status
    checks: dict[CheckId, Status] = Field(default_factory=dict)
    details: dict[CheckId, list[dict[str, Any]]] = Field(default_factory=dict)


class GateCase(BaseModel):
    model_config = _STRICT
    id: str
    base: str | None = None  # a shared base tree of the corpus
    files: dict[str, str] = Field(default_factory=dict)  # base files beside (or over) it
    policy: str | None = None  # excerpt.toml at the base commit
    codeowners: str | None = None  # .github/CODEOWNERS at the base commit
    change: list[GateOp] = Field(min_length=1)
    commit: bool = False  # commit the change and check it as a range
    range: str | None = None
    gate_base: str | None = Field(default=None, alias="gateBase")
    validate_: list[str] = Field(default_factory=list, alias="validate")
    min_convergence: float | None = Field(default=None, alias="minConvergence", ge=0, le=1)
    expect: GateExpect
    because: str = Field(min_length=1)

    @model_validator(mode="after")
    def _range_needs_commit(self) -> GateCase:
        if self.range is not None and not self.commit:
            raise ValueError("a range case commits its change")
        return self


class GateCorpus(BaseModel):
    model_config = _STRICT
    suite: str
    description: str = ""
    thresholds: dict[str, float]
    bases: dict[str, dict[str, str]] = Field(default_factory=dict)
    cases: list[GateCase] = Field(min_length=1)


# --------------------------------------------------------------------------- fixtures

_FIXTURE_GIT_ENV = {
    "GIT_AUTHOR_NAME": "fixture",
    "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "fixture",
    "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}


def fixture_git(root: Path, *args: str) -> None:
    """Run ``git args`` in the suite's own temporary fixture ``root``: no shell, a fixed
    environment (no system or global configuration, fixed dates), hooks disabled.

    Raises:
        EnvironmentFault: git is missing or failed.
    """
    argv = ["git", "-c", "init.defaultBranch=main", "-c", "core.hooksPath=/dev/null",
            "-c", "commit.gpgSign=false", "-c", "core.autocrlf=false", *args]  # fmt: skip
    home = root.parent / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), **_FIXTURE_GIT_ENV}
    code, _seconds, reason, tail = run_argv(argv, cwd=root, env=env, timeout=60)
    if code != 0:
        said = reason or (tail[-1] if tail else f"exit {code}")
        raise EnvironmentFault(f"fixture git {args[0]} failed: {said}")


def _write(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()
    path.write_bytes(data)


def _prose(size: int, tail: str) -> bytes:
    filler = b"the quick brown fox jumps over the lazy dog; "
    body = (filler * (size // len(filler) + 1))[: max(0, size - len(tail))]
    return body + tail.encode("utf-8") + b"\n"


class _Stager:
    """Applies operations, batching ``git add`` until an operation needs the index current."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pending: list[str] = []

    def flush(self) -> None:
        if self.pending:
            fixture_git(self.root, "add", "-f", "--", *dict.fromkeys(self.pending))
            self.pending = []

    def apply(self, op: GateOp, text: str) -> None:
        root, rel = self.root, op.path
        if op.op in ("write", "worktree-only"):
            if op.op == "worktree-only":
                self.flush()  # what was staged before stays staged as it was
            _write(root, rel, text.encode("utf-8"))
            if op.op == "write":
                self.pending.append(rel)
        elif op.op == "stage-only":
            path = root / rel
            before = path.read_bytes() if path.is_file() else None
            _write(root, rel, text.encode("utf-8"))
            self.pending.append(rel)
            self.flush()
            if before is None:
                path.unlink()
            else:
                path.write_bytes(before)
        elif op.op in ("utf16", "binary", "long-line"):
            if op.op == "utf16":
                data = text.encode("utf-16" if op.bom else "utf-16-le")
            elif op.op == "binary":
                data = bytes.fromhex(op.hex or "89504e470d0a1a0a0000000d49484452")
            else:
                data = _prose(op.size, text)
            _write(root, rel, data)
            self.pending.append(rel)
        elif op.op == "symlink":
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(op.target or "", path)
            self.pending.append(rel)
        else:
            self.flush()
            if op.op == "delete":
                fixture_git(root, "rm", "-q", "--", rel)
            elif op.op == "rename":
                fixture_git(root, "mv", "--", rel, op.to or "")
            else:  # gitlink
                fixture_git(root, "update-index", "--add", "--cacheinfo",
                            f"160000,{op.commit},{rel}")  # fmt: skip


def build_fixture(case: GateCase, corpus: GateCorpus, into: Path) -> Path:
    """The case's repository under ``into``: the base committed, the change applied (and,
    for a range case, committed). Secret tokens are expanded with values seeded by the id.

    Raises:
        UsageError: the case names an unknown base or secret kind.
        EnvironmentFault: git is missing or failed.
    """
    rng = random.Random(f"excerpt-gate-suite:{case.id}")
    values: dict[str, str] = {}
    if case.base is not None and case.base not in corpus.bases:
        raise UsageError(f"gate case {case.id} names an unknown base {case.base!r}")
    files = {**(corpus.bases.get(case.base or "", {})), **case.files}
    if case.policy is not None:
        files["excerpt.toml"] = case.policy
    if case.codeowners is not None:
        files[".github/CODEOWNERS"] = case.codeowners
    root = into / "repo"
    root.mkdir(parents=True)
    for rel, text in sorted(files.items()):
        if rel.startswith("/") or ".." in rel.split("/"):
            raise UsageError(f"gate case {case.id} has a path outside its tree")
        _write(root, rel, _expand(text, values, rng).encode("utf-8"))
    fixture_git(root, "init", "-q")
    fixture_git(root, "add", "-A", "-f")
    fixture_git(root, "commit", "-q", "--allow-empty", "-m", "base")
    stager = _Stager(root)
    for op in case.change:
        stager.apply(op, _expand(op.text, values, rng))
    stager.flush()
    if case.commit:
        fixture_git(root, "commit", "-q", "-m", "change")
    return root


# --------------------------------------------------------------------------- scoring


def _has(details: list[dict[str, Any]], want: Mapping[str, Any]) -> bool:
    return any(all(d.get(k) == v for k, v in want.items()) for d in details)


def _score(case: GateCase, report: GateReport | None, error: str | None) -> dict[str, Any]:
    got = {c.id: c for c in report.checks} if report is not None else {}
    status = report.status if report is not None else "ERROR"
    checks = {
        cid: {"expected": want, "got": got[cid].status if cid in got else "ERROR"}
        for cid, want in case.expect.checks.items()
    }
    missing_details = [
        {"check": cid, "detail": want}
        for cid, wants in case.expect.details.items()
        for want in wants
        if cid not in got or not _has([dict(d) for d in got[cid].details], want)
    ]
    checks_ok = all(c["expected"] == c["got"] for c in checks.values())
    doc: dict[str, Any] = {
        "id": case.id,
        "expected": case.expect.status,
        "got": status,
        "because": case.because,
        "checks": checks,
        "pass": status == case.expect.status and checks_ok and not missing_details,
        "verdict_ok": status == case.expect.status,
        "checks_ok": checks_ok,
    }
    if missing_details:
        doc["missing_details"] = missing_details
    if error is not None:
        doc["error"] = error
    if report is not None and not doc["pass"]:
        doc["summaries"] = {c.id: f"{c.status} {c.summary}" for c in report.checks}
    return doc


def _blocked_as_named(case: GateCase, doc: dict[str, Any]) -> bool:
    named = [cid for cid, s in case.expect.checks.items() if s == "FAIL"]
    return (
        doc["got"] == "FAIL"
        and all(doc["checks"][cid]["got"] == "FAIL" for cid in named)
        and not doc.get("missing_details")
    )


def run_case(case: GateCase, corpus: GateCorpus) -> dict[str, Any]:
    """Build the case's fixture in a temporary directory, gate it, score it."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="excerpt-gate-eval-") as tmp:
        root = build_fixture(case, corpus, Path(tmp))
        request = GateRequest(
            repo=root, base=case.gate_base, range=case.range,
            min_convergence=case.min_convergence, validate=tuple(case.validate_),
            cache_dir=Path(tmp) / "cache",
        )  # fmt: skip
        report: GateReport | None = None
        error = None
        try:
            report = run_gate(request)
        except (UsageError, EnvironmentFault) as exc:
            error = f"{type(exc).__name__}: {exc}"
    doc = _score(case, report, error)
    doc["seconds"] = round(time.monotonic() - start, 3)
    return doc


def run_gate_suite(corpus: GateCorpus | None = None) -> SuiteResult:
    """Every case of the gate corpus, and its metrics against the corpus's floors.

    Raises:
        UsageError: the corpus is missing or malformed.
        EnvironmentFault: git is missing or a fixture could not be built.
    """
    corpus = corpus or load_corpus("gate.json", GateCorpus)
    pairs = [(case, run_case(case, corpus)) for case in corpus.cases]
    details = [doc for _case, doc in pairs]
    blocks = [(c, d) for c, d in pairs if c.expect.status == "FAIL"]
    controls = [d for c, d in pairs if c.expect.status != "FAIL"]
    named = [c["expected"] == c["got"] for d in details for c in d["checks"].values()]
    metrics = {
        "verdict_accuracy": mean(float(d["verdict_ok"]) for d in details),
        # 0.0 without cases of a kind: a corpus cannot lose its blocks or controls quietly
        "block_recall": mean(float(_blocked_as_named(c, d)) for c, d in blocks),
        "control_pass": mean(float(d["got"] in ("PASS", "WARN")) for d in controls),
        "check_accuracy": mean(float(x) for x in named),
        "case_pass_rate": mean(float(d["pass"]) for d in details),
    }
    return SuiteResult(
        name="gate", cases=len(details), passed=sum(d["pass"] for d in details),
        metrics=metrics, thresholds=dict(corpus.thresholds), details=details,
        tables={"seconds": round(sum(d["seconds"] for d in details), 2)},
    )  # fmt: skip
