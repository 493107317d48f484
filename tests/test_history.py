"""The history signal: past commits as evidence, strictly ancestors of the indexed head."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import git, write_tree
from excerpt.cli import main
from excerpt.core.settings import INDEX_DB, repo_cache_dir
from excerpt.evals.gate_suite import canary
from excerpt.index.build import index_repository
from excerpt.index.history import HistorySource, history_disabled, plan_history
from excerpt.index.store import IndexStore
from excerpt.index.tokens import terms
from excerpt.index.view import RecordingView, view_from_dict, view_to_dict
from excerpt.rank.score import rank_files
from excerpt.rank.task import analyze_task
from excerpt_bench.bench import load_tasks
from excerpt_bench.localize import run_localize

PAST = "Fix refund webhook retry when the gateway times out"
FUTURE = "Make invoice ledger export skip cancelled orders"


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    write_tree(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return _rev(repo, "HEAD")


def _rev(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "rev-parse", *args], cwd=repo, check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def _ancestors(repo: Path, head: str) -> set[str]:
    out = subprocess.run(
        ["git", "rev-list", "--no-merges", head], cwd=repo, check=True, capture_output=True,
        text=True,
    )  # fmt: skip
    return set(out.stdout.split())


@pytest.fixture
def shop(tmp_path: Path) -> tuple[Path, list[str]]:
    """A repository of four commits; the last, a descendant of the third, reads as FUTURE
    and alone touches ``shop/ledger.py``."""
    repo = tmp_path / "shop"
    repo.mkdir()
    git(repo, "init", "-q")
    base = {
        "shop/refund.py": "def refund(order):\n    return order\n",
        "shop/ledger.py": "def export(rows):\n    return rows\n",
        "shop/util.py": "def noop():\n    pass\n",
    }
    c1 = _commit(repo, base, "Start the shop")
    c2 = _commit(repo, {"shop/refund.py": "def refund(order):\n    return order.id\n"}, PAST)
    c3 = _commit(repo, {"shop/util.py": "def noop():\n    return None\n"}, "Tidy a helper")
    c4 = _commit(repo, {"shop/ledger.py": "def export(rows):\n    return list(rows)\n"}, FUTURE)
    return repo, [c1, c2, c3, c4]


def _history_reasons(candidates: list, path: str) -> list[str]:  # type: ignore[type-arg]
    return [
        r.detail for c in candidates if c.path == path for r in c.reasons if r.signal == "history"
    ]


def test_a_future_commit_never_contributes_through_the_product_path(
    shop: tuple[Path, list[str]], cache_dir: Path
) -> None:
    repo, (_, c2, c3, c4) = shop
    git(repo, "checkout", "-q", "--detach", c3)
    report = index_repository(repo, cache_dir=cache_dir)
    assert report.history_commits == 3
    with IndexStore.open(repo_cache_dir(repo, cache_dir)) as store:
        assert store.history_state().shas == _ancestors(repo, c3)
        view = store.view()
        future = rank_files(analyze_task(FUTURE), view)
        past = rank_files(analyze_task(PAST), view)
    assert _history_reasons(future, "shop/ledger.py") == []
    assert not any(c4[:12] in d for c in future for r in c.reasons for d in [r.detail])
    # the same signal does speak for an ancestor's message
    assert any(c2[:12] in d for d in _history_reasons(past, "shop/refund.py"))


def test_a_future_commit_never_contributes_through_the_bench_path(
    shop: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, (_, _, c3, c4) = shop  # the work tree is at c4: the bench reads objects only
    dataset = tmp_path / "tasks.jsonl"
    task = {"instance_id": "t1", "repo": "acme/shop", "base_commit": c3,
            "problem_statement": FUTURE, "gold_files": ["shop/ledger.py"]}  # fmt: skip
    dataset.write_text(json.dumps(task) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    rows = run_localize(load_tasks(dataset), {"acme/shop": repo / ".git"}, out, [4000],
                        ablate=True)  # fmt: skip
    assert (
        rows[0]["ablations"]["without history"]
        == rows[0]["ablations"]["all signals (ranking alone)"]
    )
    work = out / "work" / "acme__shop"
    assert not (work / ".git").exists()
    with IndexStore.open(repo_cache_dir(work.resolve(), out / "cache")) as store:
        state = store.history_state()
        assert state.head == c3
        assert state.shas == _ancestors(repo, c3)
        assert c4 not in state.shas
        assert (
            _history_reasons(rank_files(analyze_task(FUTURE), store.view()), "shop/ledger.py") == []
        )


def test_jumping_between_heads_leaves_exactly_the_ancestors(
    shop: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, (c1, c2, c3, c4) = shop
    git(repo, "checkout", "-q", "-b", "side", c1)
    x1 = _commit(repo, {"shop/side.py": "x = 1\n"}, "A side branch")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge side", "side")
    merge = _rev(repo, "HEAD")
    tree = write_tree(tmp_path / "tree", {"shop/refund.py": "def refund(order):\n    pass\n"})
    cache = tmp_path / "cache"
    for head in (c4, c1, x1, c2, merge, c3, x1, c4, merge, c1):
        index_repository(tree, cache_dir=cache, history=HistorySource(git_dir=repo / ".git",
                                                                      head=head))  # fmt: skip
        with IndexStore.open(repo_cache_dir(tree, cache)) as store:
            assert store.history_state().shas == _ancestors(repo, head), head
    assert merge not in _ancestors(repo, merge)  # merges are left out, not only unlisted


def test_a_capped_history_holds_only_the_newest_ancestors(
    shop: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, (c1, c2, c3, c4) = shop
    tree = write_tree(tmp_path / "tree", {"a.py": "x = 1\n"})
    cache = repo_cache_dir(tree, tmp_path / "cache")
    index_repository(tree, cache_dir=tmp_path / "cache", history=None)
    with IndexStore.open(cache) as store:
        steps = ((c4, {c4, c3}, True), (c2, {c2, c1}, False), (c3, {c3, c2}, True))
        for head, want, cut in steps:
            source = HistorySource(git_dir=repo / ".git", head=head)
            change = plan_history(store.history_state(), source, max_commits=2)
            assert change is not None
            store.apply_history(change)
            state = store.history_state()
            assert (state.truncated, set(state.shas)) == (cut, want)


def test_a_commit_changing_too_many_files_is_held_but_never_matched(
    shop: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, (*_, c4) = shop
    tree = write_tree(tmp_path / "tree", {"shop/refund.py": "x = 1\n"})
    index_repository(tree, cache_dir=tmp_path / "cache", history=None)
    with IndexStore.open(repo_cache_dir(tree, tmp_path / "cache")) as store:
        source = HistorySource(git_dir=repo / ".git", head=c4)
        change = plan_history(store.history_state(), source, max_files=2)
        assert change is not None
        store.apply_history(change)
        assert store.history_counts() == (4, 1)  # the first commit added three files
        assert [c.sha for c in store.view().history(["shop", "start"], 5)] == []


def test_history_is_silent_outside_git(make_repo, cache_dir: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_repo({"shop/refund.py": "def refund():\n    pass\n"}, use_git=False)
    report = index_repository(root, cache_dir=cache_dir)
    assert report.history_commits == 0
    with IndexStore.open(repo_cache_dir(root, cache_dir)) as store:
        assert store.view().history(["refund"], 5) == []
        assert rank_files(analyze_task("refund crashes"), store.view())[0].path == "shop/refund.py"


def test_an_indexed_subdirectory_holds_its_own_paths_only(
    shop: tuple[Path, list[str]], cache_dir: Path
) -> None:
    repo, _ = shop
    index_repository(repo / "shop", cache_dir=cache_dir)
    with IndexStore.open(repo_cache_dir((repo / "shop").resolve(), cache_dir)) as store:
        hits = store.view().history(["refund", "webhook"], 5)
    assert [h.files for h in hits] == [("refund.py",)]


def test_recorded_history_answers_replay_and_an_older_recording_has_none(
    shop: tuple[Path, list[str]], cache_dir: Path
) -> None:
    repo, _ = shop
    index_repository(repo, cache_dir=cache_dir)
    with IndexStore.open(repo_cache_dir(repo, cache_dir)) as store:
        recording = RecordingView(store.view())
        live = rank_files(analyze_task(PAST), recording)
        doc = view_to_dict(recording.replay())
    assert any(r.signal == "history" for c in live for r in c.reasons)
    assert rank_files(analyze_task(PAST), view_from_dict(json.loads(json.dumps(doc)))) == live
    doc.pop("history")
    older = view_from_dict(doc)
    assert older.history(["refund"], 5) == []


def test_no_history_flag_leaves_the_signal_out(
    shop: tuple[Path, list[str]], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, _ = shop
    signals = []
    for flags in ([], ["--no-history"]):
        assert main(["plan", "--repo", str(repo), PAST, "--json", *flags]) == 0
        doc = json.loads(capsys.readouterr().out)
        signals.append({r["signal"] for c in doc["candidates"] for r in c["reasons"]})
    assert "history" in signals[0]
    assert "history" not in signals[1]
    with history_disabled():
        assert index_repository(repo, cache_dir=cache_dir / "other").history_commits == 0


def test_paths_named_like_statuses_or_not_utf8_are_read_by_position(
    tmp_path: Path, cache_dir: Path
) -> None:
    repo = tmp_path / "odd"
    repo.mkdir()
    git(repo, "init", "-q")
    _commit(repo, {"M": "m\n", "D": "d\n", "src/app.py": "x = 1\n"}, "Start")
    (repo / "D").unlink()
    (repo / "caf\xe9.py".encode("latin-1").decode("utf-8", "surrogateescape")).write_text("x\n")
    _commit(repo, {"M": "mm\n", "src/app.py": "x = 2\n"}, "Refund webhook fix")
    index_repository(repo, cache_dir=cache_dir)
    with IndexStore.open(repo_cache_dir(repo, cache_dir)) as store:
        assert store.history_counts() == (2, 0)
        hits = store.view().history(["refund", "webhook"], 5)
    assert [(h.changed, h.files) for h in hits] == [(4, ("M", "src/app.py"))]


def test_a_secret_in_a_commit_message_never_reaches_the_index(
    tmp_path: Path, cache_dir: Path
) -> None:
    repo = tmp_path / "keys"
    repo.mkdir()
    git(repo, "init", "-q")
    value = canary("github-token", random.Random(7))
    _commit(repo, {"deploy.py": "TOKEN = None\n"}, f"Rotate the deploy token\n\nold {value}\n")
    index_repository(repo, cache_dir=cache_dir)
    db = repo_cache_dir(repo, cache_dir) / INDEX_DB
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, history_text, row)")
        vocabulary = {str(r[0]) for r in conn.execute("SELECT term FROM temp.v")}
    assert {"rotate", "deploy", "token"} <= vocabulary
    assert not set(terms(value)) & vocabulary
    assert value.encode() not in db.read_bytes()


def test_the_history_reason_has_a_code_of_its_own_in_markdown() -> None:
    from excerpt.render.packs import _code_of

    detail = "changed by a past commit matching the task (57993a1ab377: commit, history)"
    code, legend, specific = _code_of({"signal": "history", "detail": detail})
    assert (code, specific) == ("past", "57993a1ab377: commit, history")
    assert legend != "history"


def test_the_history_follows_a_new_commit_and_is_left_unread_when_head_stays(
    tmp_path: Path, cache_dir: Path
) -> None:
    # one git call names the top, the git directory and HEAD: before the first commit there
    # is no history, after it the commit is held, and a refresh at the same head keeps it
    root = tmp_path / "repo"
    write_tree(root, {"shop/refund.py": "def refund():\n    pass\n"})
    git(root, "init", "-q")
    assert index_repository(root, cache_dir=cache_dir).history_commits == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Refund webhook retries twice")
    assert index_repository(root, cache_dir=cache_dir).history_commits == 1
    assert index_repository(root, cache_dir=cache_dir).history_commits == 1
    (root / "shop/ledger.py").write_text("def post():\n    pass\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Ledger posts")
    assert index_repository(root, cache_dir=cache_dir).history_commits == 2
    with IndexStore.open(repo_cache_dir(root.resolve(), cache_dir)) as store:
        assert [h.files for h in store.view().history(["ledger"], 5)] == [("shop/ledger.py",)]
