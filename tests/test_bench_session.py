"""``excerpt bench session``: scripted sessions on a fixture repository, checked call by call.

The fixture ``acme/bill`` is one commit of four files. The task names ``apply_late_fee`` (in
``billing/fees.py``, whose lines 6-7 are the gold changed lines), so the sessions are known in
advance: which searches each client's script makes, which files it reads, and when it stops.
The hook arms are checked with seeds written here (a pack, a map, none) and live on the CLI.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import itertools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import GIT_ENV, git, git_commit_all, write_tree
from excerpt.cli import main
from excerpt.core.tokens import TokenCounter
from excerpt.evals.agent_records import AgentRunRecord, load_records
from excerpt.mcp.clients import ClientProfile
from excerpt_bench.session.arms import ARMS, run_sessions
from excerpt_bench.session.excerpt_arm import PackAnswer, Region, RetrieveAnswer, SeedAnswer
from excerpt_bench.session.hooks_arm import HOOK_SEED
from excerpt_bench.session.ledger import Evidence
from excerpt_bench.session.report import pair_problems, render_report, summarise
from excerpt_bench.session.terms import search_plan
from excerpt_bench.session.workspace import Corpus

REPO = "acme/bill"
FEES = '''"""Late fees."""


def apply_late_fee(invoice, days):
    """Add the late fee to an overdue invoice."""
    if days > 30:
        invoice.total += 5
    return invoice
'''
FILES = {
    "billing/fees.py": FEES,
    "billing/invoice.py": "class Invoice:\n    def __init__(self):\n        self.total = 0\n",
    "tests/test_fees.py": "from billing.fees import apply_late_fee\n\n\ndef test_fee():\n"
    "    assert apply_late_fee\n",
    "README.md": "Billing.\n",
}
TASK = "apply_late_fee charges the fee after 30 days\n\nThe fee should start on day 31."
GOLD = {"billing/fees.py": [[6, 7]]}


class NoPacks:
    """A baseline never asks for a pack."""

    def pack(self, profile: ClientProfile, *, fill: bool, exclude: tuple[str, ...]) -> PackAnswer:
        raise AssertionError("a baseline asked for a pack")

    def retrieve(self, profile: ClientProfile, handles: tuple[str, ...]) -> RetrieveAnswer:
        raise AssertionError("a baseline asked for a retrieval")

    def seed(self, client: str, *, shape: str, max_tokens: int) -> SeedAnswer:
        raise AssertionError("a baseline asked for a seed")


class OnePack:
    """A pack that serves the gold function whole."""

    text = "# Context pack\n```python\n" + FEES + "```\n"

    def pack(self, profile: ClientProfile, *, fill: bool, exclude: tuple[str, ...]) -> PackAnswer:
        region = Region(handle="billing/fees.py#L1-L8@00", path="billing/fees.py",
                        start_line=1, end_line=8)  # fmt: skip
        return PackAnswer(text=self.text, served=(region,), offered=())

    def retrieve(self, profile: ClientProfile, handles: tuple[str, ...]) -> RetrieveAnswer:
        raise AssertionError("nothing was offered")


def sessions(packs: Any, arms: tuple[str, ...], overhead: int = 0) -> dict[str, Any]:
    corpus = Corpus({p: t.encode() for p, t in FILES.items()})
    evidence = Evidence.of(GOLD, corpus.paths)
    chosen = tuple(a for a in ARMS if a.name in arms)
    return run_sessions(
        TASK, corpus, evidence, packs, arms=chosen, cap=150_000,
        overhead={"claude": overhead, "codex": overhead}, count=TokenCounter(),
    )  # fmt: skip


def test_task_identifiers_are_searched_before_keywords() -> None:
    plan = search_plan("<!-- template -->`Cart.add_item` fails in cart.py:12\n\nmerge_lines breaks")
    assert [(t.text, t.kind) for t in plan.terms][:3] == [
        ("add_item", "identifier"), ("merge_lines", "identifier"), ("fails", "keyword"),
    ]  # fmt: skip
    assert [(p.path, p.line) for p in plan.places] == [("cart.py", 12)]
    assert "template" not in [t.text for t in plan.terms]


def test_claude_baseline_runs_rg_through_bash_then_reads_the_matching_files() -> None:
    s = sessions(NoPacks(), ("claude-baseline",))["claude-baseline"]
    calls = [(c.tool, c.arguments) for c in s.calls]
    assert calls == [
        ("Bash", {"command": "rg -l --sort path apply_late_fee"}),
        ("Bash", {"command": "rg -n -C 2 --sort path apply_late_fee"}),
        ("Read", {"file_path": "billing/fees.py"}),
    ]
    # the content search already shows line 6; the Read shows line 7 and ends the session
    assert [c.new_gold_lines for c in s.calls] == [0, 1, 1]
    count = TokenCounter()
    listing = "billing/fees.py\ntests/test_fees.py"
    assert s.calls[0].tokens == count(listing)
    assert s.tokens_to_first_gold == s.calls[0].tokens + s.calls[1].tokens
    assert s.tokens_to_all_gold == sum(c.tokens for c in s.calls)
    assert s.recall == 1.0


def test_codex_baseline_runs_rg_then_sed_windows() -> None:
    s = sessions(NoPacks(), ("codex-baseline",))["codex-baseline"]
    assert [c.arguments["cmd"] for c in s.calls] == [
        "rg -n apply_late_fee",
        "sed -n '1,8p' billing/fees.py",
    ]
    assert s.tokens_to_first_gold == s.tokens_to_all_gold == sum(c.tokens for c in s.calls)
    # the rg output shows only lines 1 and 4 of fees.py (no gold) and the test file
    assert s.calls[0].new_gold_lines == 0
    assert s.irrelevant_bytes == sum(c.bytes - c.gold_bytes for c in s.calls) > 0


def test_excerpt_arm_pays_its_tool_definitions_every_turn() -> None:
    s = sessions(OnePack(), ("claude-excerpt",), overhead=100)["claude-excerpt"]
    assert [c.tool for c in s.calls] == ["mcp__excerpt__context_pack"]
    # the request that asked for the pack and the one that carried it, each with the list
    assert s.tokens_to_all_gold == TokenCounter()(OnePack.text) + 2 * 100
    assert s.overhead_tokens_per_turn == 100


FEES_REGION = Region(handle="billing/fees.py#L1-L8@00", path="billing/fees.py",
                     start_line=1, end_line=8)  # fmt: skip
TEST_REGION = Region(handle="tests/test_fees.py#L4-L5@01", path="tests/test_fees.py",
                     start_line=4, end_line=5)  # fmt: skip
MAP_REGION = Region(handle="billing/fees.py#L4-L8@00", path="billing/fees.py",
                    start_line=4, end_line=8)  # fmt: skip
HEAD = "excerpt prepared this context\n```python\n"
PACK_SEED = SeedAnswer(text=HEAD + FEES + "```\n", shape="pack", regions=(FEES_REGION,),
                       confidence=0.9, why="pack")  # fmt: skip
MISS_SEED = SeedAnswer(text=HEAD + "def test_fee():\n```\n", shape="pack",
                       regions=(TEST_REGION,), confidence=0.6, why="pack")  # fmt: skip
MAP_SEED = SeedAnswer(text=f"excerpt prepared this map\n1. `billing/fees.py`\n  - L4-8 "
                      f"`{MAP_REGION.handle}`\n", shape="map", regions=(MAP_REGION,),
                      confidence=0.3, why="map")  # fmt: skip
NO_SEED = SeedAnswer(text="", shape="none", regions=(), confidence=0.0, why="not a task prompt")
HOOK_ARMS = tuple(a.name for a in ARMS if a.hook is not None)


class Seeded:
    """The hook's seed written here; packs that serve nothing new; retrievals of the
    seed's regions. Remembers what it was asked."""

    def __init__(self, answer: SeedAnswer) -> None:
        self.answer = answer
        self.shapes: list[tuple[str, str, int]] = []
        self.excluded: list[tuple[str, ...]] = []

    def seed(self, client: str, *, shape: str, max_tokens: int) -> SeedAnswer:
        self.shapes.append((client, shape, max_tokens))
        return self.answer

    def pack(self, profile: ClientProfile, *, fill: bool, exclude: tuple[str, ...]) -> PackAnswer:
        self.excluded.append(exclude)
        return PackAnswer(text="# Context pack: nothing new\n", served=(), offered=())

    def retrieve(self, profile: ClientProfile, handles: tuple[str, ...]) -> RetrieveAnswer:
        regions = tuple(r for r in self.answer.regions if r.handle in handles)
        return RetrieveAnswer(text=f"## `{handles[0]}` (fresh)\n" + FEES, served=regions)


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_hook_arm_charges_its_seed_first_and_no_tool_definitions(client: str) -> None:
    arm = f"{client}-hooks"
    s = sessions(Seeded(PACK_SEED), (arm,), overhead=100)[arm]
    assert [c.tool for c in s.calls] == [HOOK_SEED]  # the seed showed every gold line
    assert s.tokens_to_first_gold == s.tokens_to_all_gold == TokenCounter()(PACK_SEED.text)
    assert s.overhead_tokens_per_turn == 0
    assert s.tool_calls == 0  # a hook's context is no tool call
    assert s.seed is not None
    assert s.seed["shape"] == "pack" and s.seed["gold_lines_in_regions"] == 2


@pytest.mark.parametrize(
    ("client", "read"),
    [
        ("claude", ("Read", {"file_path": "billing/fees.py", "offset": 4, "limit": 5})),
        ("codex", ("exec_command", {"cmd": "sed -n '4,8p' billing/fees.py"})),
    ],
    ids=["claude-read", "codex-sed"],
)
def test_a_map_seed_has_its_regions_read_with_the_clients_own_tool(
    client: str, read: tuple[str, dict[str, Any]]
) -> None:
    arm = f"{client}-hooks-map"
    s = sessions(Seeded(MAP_SEED), (arm,), overhead=100)[arm]
    assert s.calls[0].tool == HOOK_SEED and s.calls[0].new_gold_lines == 0  # no source
    assert (s.calls[1].tool, s.calls[1].arguments) == read
    assert len(s.calls) == 2 and s.reached_all
    assert s.tokens_to_all_gold == s.calls[0].tokens + s.calls[1].tokens


def test_a_seed_that_misses_has_its_files_read_first() -> None:
    s = sessions(Seeded(MISS_SEED), ("claude-hooks",))["claude-hooks"]
    assert s.calls[0].tool == HOOK_SEED
    assert (s.calls[1].tool, s.calls[1].arguments) == ("Read", {"file_path": "tests/test_fees.py"})
    assert s.reached_all


def test_without_a_seed_a_hook_arm_is_its_baseline() -> None:
    got = sessions(Seeded(NO_SEED), ("codex-baseline", "codex-hooks"))
    base, hooked = got["codex-baseline"], got["codex-hooks"]
    assert [(c.tool, c.arguments, c.tokens) for c in hooked.calls] == [
        (c.tool, c.arguments, c.tokens) for c in base.calls
    ]
    assert hooked.tokens_to_all_gold == base.tokens_to_all_gold
    assert hooked.seed is not None and hooked.seed["shape"] == "none"


@pytest.mark.parametrize("arm", HOOK_ARMS)
def test_each_hook_arm_asks_for_its_seed_shape_at_the_default_cap(arm: str) -> None:
    packs = Seeded(NO_SEED)
    sessions(packs, (arm,))
    client, shape = arm.split("-")[0], arm.rsplit("-", 1)[1]
    assert packs.shapes == [(client, shape if shape in ("pack", "map") else "auto", 2000)]


def test_the_mcp_hook_arm_packs_around_what_the_seed_served() -> None:
    packs = Seeded(MISS_SEED)
    s = sessions(packs, ("claude-hooks-mcp",), overhead=100)["claude-hooks-mcp"]
    seed, first = s.calls[0], s.calls[1]
    assert seed.tool == HOOK_SEED
    # the seed rides in the request that asks for the first call: one list of tools
    assert seed.charged_after == 100 + seed.tokens
    assert first.tool == "mcp__excerpt__context_pack"
    assert first.arguments["exclude"] == [TEST_REGION.handle]
    assert first.charged_after == seed.charged_after + first.tokens + 100
    assert packs.excluded[0] == (TEST_REGION.handle,)
    assert s.overhead_tokens_per_turn == 100


def test_the_mcp_hook_arm_retrieves_a_maps_regions_before_it_packs() -> None:
    packs = Seeded(MAP_SEED)
    s = sessions(packs, ("codex-hooks-mcp",), overhead=100)["codex-hooks-mcp"]
    assert [c.tool for c in s.calls] == [HOOK_SEED, "excerpt.context_retrieve"]
    assert s.calls[1].arguments == {"handles": [MAP_REGION.handle]}
    assert s.reached_all and packs.excluded == []


def test_a_session_stops_at_the_cap() -> None:
    corpus = Corpus({p: t.encode() for p, t in FILES.items()})
    arm = next(a for a in ARMS if a.name == "claude-baseline")
    s = run_sessions(
        TASK, corpus, Evidence.of(GOLD, corpus.paths), NoPacks(), arms=(arm,), cap=5,
        overhead={"claude": 0, "codex": 0}, count=TokenCounter(),
    )["claude-baseline"]  # fmt: skip
    assert len(s.calls) == 1 and not s.reached_all
    assert s.censored(s.tokens_to_all_gold) == max(s.charged, 5)


def _row(**changes: Any) -> dict[str, Any]:
    base = {"task": "t1", "tree_sha256": "a" * 64, "tokenizer": "o200k", "cap": 10, "evidence": 2,
            "tokens_to_first_gold_censored": 1, "tokens_to_all_gold_censored": 2,
            "recall_at_cap": 1.0, "irrelevant_bytes": 3, "tool_calls": 1, "reached_all": True,
            "overhead_tokens_per_turn": 0}  # fmt: skip
    arms = {"claude-baseline": base, "claude-excerpt": {**base, **changes}}
    return {"instance_id": "t1", "repo": REPO, "language": "python", "sessions": arms}


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"tree_sha256": "b" * 64}, "arms differ in tree_sha256"),
        ({"cap": 11}, "arms differ in cap"),
        ({"evidence": 3}, "arms differ in evidence"),
        ({"tokenizer": "cl100k"}, "arms differ in tokenizer"),
    ],
    ids=["tree", "cap", "denominator", "tokenizer"],
)
def test_a_pair_that_breaks_integrity_is_excluded(changes: dict[str, Any], reason: str) -> None:
    row = _row(**changes)
    assert pair_problems(row) == [reason]
    report = summarise([row, {**_row(), "instance_id": "t2"}], ["claude-baseline"], 10)
    assert report["n"] == 1
    assert report["pairs_excluded"] == [{"instance_id": "t1", "reasons": [reason]}]


def test_a_pair_without_gold_lines_in_the_tree_is_excluded() -> None:
    row = _row()
    for s in row["sessions"].values():
        s["evidence"] = 0
    assert pair_problems(row) == ["the tree holds none of the gold changed lines"]


def test_a_scripted_record_needs_its_session() -> None:
    doc = json.loads(Path(__file__).parent.joinpath("data", "scripted_record.json").read_text(
        encoding="utf-8"))  # fmt: skip
    AgentRunRecord.model_validate(doc)
    with pytest.raises(ValueError, match="session"):
        AgentRunRecord.model_validate({**doc, "session": None})


# -- the CLI on a git fixture: live, recorded, replayed ----------------------------------------


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("bill")
    repo = write_tree(root / "repo", FILES)
    git(repo, "init", "-q", "-b", "main")
    git_commit_all(repo)
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, check=True,
        env=GIT_ENV, text=True,
    ).stdout.strip()  # fmt: skip
    task = {"instance_id": "bill-1", "repo": REPO, "base_commit": head,
            "problem_statement": TASK, "gold_files": ["billing/fees.py"],
            "gold_changed_lines": GOLD}  # fmt: skip
    data = root / "tasks.jsonl"
    data.write_text(json.dumps(task) + "\n", encoding="utf-8")
    return data, repo / ".git"


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_replay_equals_live(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    data, git_dir = dataset
    live, rec, again = tmp_path / "live", tmp_path / "rec", tmp_path / "again"
    spec = f"{REPO}={git_dir}"
    code, _, err = run_cli("bench", "session", "--dataset", str(data), "--git-dir", spec,
                           "--out", str(live), "--record", str(rec))  # fmt: skip
    assert code == 0, err
    code, _, err = run_cli("bench", "session", "--dataset", str(data), "--replay", str(rec),
                           "--out", str(again))  # fmt: skip
    assert code == 0, err
    for name in ("report.json", "sessions.jsonl", "report.md", "details.jsonl"):
        assert (live / name).read_bytes() == (again / name).read_bytes(), name
    report = json.loads((live / "report.json").read_text(encoding="utf-8"))
    assert set(report["arms"]) == {a.name for a in ARMS}
    assert report["arms"]["claude-excerpt"]["overhead_tokens_per_turn"] > 0
    assert report["arms"]["claude-baseline"]["overhead_tokens_per_turn"] == 0
    records = load_records(live / "sessions.jsonl")
    assert len(records) == len([a for a in ARMS if a.hook is None])  # no record for hook arms
    assert {r.record_class for r in records} == {"scripted"}


def test_hook_arms_run_live_and_report_what_other_arms_do(
    dataset: tuple[Path, Path], tmp_path: Path
) -> None:
    data, git_dir = dataset
    spec = f"{REPO}={git_dir}"
    old_arms = ",".join(a.name for a in ARMS if a.hook is None)
    for out, arms in (("all", "all"), ("old", old_arms)):
        code, _, err = run_cli("bench", "session", "--dataset", str(data), "--git-dir", spec,
                               "--out", str(tmp_path / out), "--arms", arms)  # fmt: skip
        assert code == 0, err
    report = json.loads((tmp_path / "all" / "report.json").read_text(encoding="utf-8"))
    markdown = (tmp_path / "all" / "report.md").read_text(encoding="utf-8")
    baseline = report["arms"]["claude-baseline"]
    for arm in HOOK_ARMS:
        figures = report["arms"][arm]
        assert set(baseline) <= set(figures) and figures["n"] == 1
        assert arm in report["against_better_baseline"]
        assert f"| {arm} |" in markdown
        assert figures["seed"]["shape"]["none"] == 0  # the task reads as one
    assert report["arms"]["claude-hooks"]["overhead_tokens_per_turn"] == 0
    assert report["arms"]["claude-hooks-mcp"]["overhead_tokens_per_turn"] > 0
    row = json.loads((tmp_path / "all" / "details.jsonl").read_text(encoding="utf-8"))
    for arm in HOOK_ARMS:
        session = row["sessions"][arm]
        assert session["calls"][0]["tool"] == HOOK_SEED
        assert session["tool_calls"] == len(session["calls"]) - 1
    auto = row["sessions"]["codex-hooks"]
    forced = row["sessions"][f"codex-hooks-{auto['seed']['shape']}"]
    assert auto["calls"] == forced["calls"]  # auto is one of the two shapes
    # the old arms: the same sessions whether the hook arms ran beside them or not
    old = json.loads((tmp_path / "old" / "details.jsonl").read_text(encoding="utf-8"))
    assert old["sessions"] == {k: v for k, v in row["sessions"].items() if k in old["sessions"]}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--arms", "claude-nothing"), "no arm named"),
        (("--cap", "0"), "--cap"),
        (("--replay", "/nonexistent-recording"), "no recording"),
    ],
    ids=["unknown-arm", "zero-cap", "missing-recording"],
)
def test_bad_input_is_a_usage_error(
    dataset: tuple[Path, Path], tmp_path: Path, extra: tuple[str, ...], message: str
) -> None:
    data, _ = dataset
    code, _, err = run_cli("bench", "session", "--dataset", str(data), "--out",
                           str(tmp_path / "o"), *extra)  # fmt: skip
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_a_recording_cut_off_at_its_task_file_s_rename_leaves_whole_blobs_and_no_task_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from excerpt_bench.bench import BenchTask
    from excerpt_bench.session import run

    task = BenchTask(instance_id="bill-1", repo=REPO, base_commit="0" * 40,
                     problem_statement=TASK, gold_files=())  # fmt: skip
    real_replace = os.replace

    def refuse_the_task_file(src: str, dst: str) -> None:
        if Path(dst).parent.name == "tasks":
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", refuse_the_task_file)
    with pytest.raises(OSError, match="No space left on device"):
        run._write_recording(tmp_path, task, Corpus({"billing/fees.py": FEES.encode()}), {})
    monkeypatch.undo()
    assert not list((tmp_path / "tasks").iterdir())
    (blob,) = (p for p in tmp_path.rglob("*") if p.is_file())  # no temporary beside it
    assert gzip.decompress(blob.read_bytes()) == FEES.encode()


def test_a_claude_read_over_the_token_cap_pages_on_as_its_partial_view_says() -> None:
    from excerpt_bench.session.agents import ClaudeTools
    from excerpt_bench.session.ledger import Ledger, Stop

    big = "".join(f"ENTRY_{i} = {i}  # ledger entry, amount and refund\n" for i in range(4000))
    corpus = Corpus({"ledger.py": big.encode()})
    count = TokenCounter()
    ledger = Ledger(
        arm="claude-baseline", evidence=Evidence.of({"ledger.py": [[3990, 3990]]}, corpus.paths),
        cap=10_000_000, count=count,
    )  # fmt: skip
    with pytest.raises(Stop):  # the session ends on the page that shows line 3990
        ClaudeTools(corpus, ledger).read("ledger.py", 1, None)
    reads = [c.arguments for c in ledger.calls]
    assert reads[0] == {"file_path": "ledger.py"} and len(reads) > 2
    # the partial view's note: the next page starts after the lines shown, of their length
    assert reads[1]["offset"] == reads[1]["limit"] + 1
    for before, after in itertools.pairwise(reads[1:]):
        assert after["offset"] == before["offset"] + before["limit"]
    assert all(c.tokens <= 25_000 + 200 for c in ledger.calls)  # a page, and its note
    assert ledger.all_gold is not None


def test_the_report_leads_with_each_arm_s_gold_reach_shares() -> None:
    rows = []
    for n, (tokens, reached) in enumerate([(400, True), (1_500, True), (9_000, True), (50, False)]):
        row = _row(tokens_to_all_gold_censored=tokens, reached_all=reached)
        rows.append({**row, "instance_id": f"t{n}"})
    report = summarise(rows, ["claude-baseline", "claude-excerpt"], 10)
    reach = report["arms"]["claude-excerpt"]["reach"]
    # the unreached session never counts, however few tokens it was charged
    assert reach == {"500": 0.25, "1000": 0.25, "2000": 0.5, "4000": 0.5, "8000": 0.5}
    assert report["arms"]["claude-baseline"]["reach"]["500"] == 1.0
    text = render_report(report)
    assert text.index("Gold reach") < text.index("to first gold (median")
    assert "| claude-excerpt | 25% | 25% | 50% | 50% | 50% |" in text
    assert "much weaker than a real one" in report["note"]
