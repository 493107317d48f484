"""``excerpt bench localize`` on a fixture repository built at test time (SPEC §10, §11).

The fixture ``acme/shop`` has three commits: a package is deleted, a file modified, files added.
Four tasks point at those commits; each problem statement is designed so the ranking is known
in advance (a unique function name ranks its file first; a vague statement finds nothing), so
the metrics can be recomputed by hand from ``predictions.jsonl`` and the fixture's bytes.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import GIT_ENV, git, git_commit_all, write_tree
from excerpt.cli import main
from excerpt.core.tokens import o200k_count
from excerpt.rank.score import SIGNALS
from excerpt_bench.bench import ALL_SIGNALS, summarise
from excerpt_bench.reach import Shown, reach_tokens

REPO = "acme/shop"
BUDGETS = ("2000", "8000")
FILE_METRICS = ("acc@1", "acc@3", "acc@5", "acc@10", "hit@5", "mrr")
SENTINEL_NS = 1_000_000_000 * 1_000_000_000  # 2001-09-09: a rewrite cannot keep this mtime

# -- the fixture repository -------------------------------------------------------------------

CART_V1 = '''"""Cart lines."""


class Cart:
    def __init__(self):
        self.lines = []

    def add_item(self, sku, quantity):
        self.lines.append((sku, quantity))


def merge_duplicate_lines(lines):
    merged = {}
    for sku, quantity in lines:
        merged[sku] = quantity
    return sorted(merged.items())
'''
CART_V3 = CART_V1.replace("merged[sku] = quantity", "merged[sku] = merged.get(sku, 0) + quantity")
PRICING_V1 = '''"""Discounts."""


def compute_discount_tiers(amount):
    if amount > 100:
        return 0.1
    return 0.0
'''
PRICING_V2 = PRICING_V1.replace("amount > 100", "amount >= 100").replace("0.1\n", "0.15\n")
INVOICES = '''"""Old invoices."""


def old_invoice_formatter(invoice):
    header = invoice["header"]
    return header.upper()
'''
TAX = '''"""Levies."""

RATES = {"de": 19, "fr": 20}


def vat_rate_for(country):
    return RATES[country] / 100
'''
# Bigger than the 2000-byte budget: its last line lies beyond the first 2000 bytes.
SHIPPING = (
    '"""Parcels."""\n\nPACKAGING = 40\n\n\ndef estimate_parcel_weight(items):\n    table = {\n'
    + "".join(f'        "sku-{i:03d}": {100 + i},\n' for i in range(90))
    + "    }\n    total = PACKAGING\n    for sku, quantity in items:\n"
    + "        total += table[sku] * quantity\n    return total\n"
)
REFUNDS = '''"""Refunds."""


def issue_store_credit(order_total):
    return round(order_total * 0.9, 2)
'''

COMMIT_1 = {
    "README.md": "# Shop\n\nA tiny storefront.\n",
    "shop/__init__.py": '"""Shop package."""\n',
    "shop/cart.py": CART_V1,
    "shop/pricing.py": PRICING_V1,
    "shop/legacy/__init__.py": '"""Legacy code."""\n',
    "shop/legacy/invoices.py": INVOICES,
    "shop/tax.py": TAX,
}
COMMIT_2_CHANGES = {"shop/pricing.py": PRICING_V2, "shop/shipping.py": SHIPPING}
COMMIT_3_CHANGES = {"shop/cart.py": CART_V3, "shop/refunds.py": REFUNDS}


def _line_of(text: str, needle: str) -> int:
    """1-based number of the only line of ``text`` holding ``needle``."""
    found = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(found) == 1, (needle, found)
    return found[0]


def _head(repo: Path) -> str:
    proc = subprocess.run(
        ["git", "rev-parse", "HEAD"],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


def _commits(repo: Path, *trees: Mapping[str, str], deletions: Sequence[str] = ()) -> list[str]:
    """Commit each of ``trees`` in turn (the second after deleting ``deletions``)."""
    commits = []
    for number, files in enumerate(trees):
        if number == 1:
            for path in deletions:
                git(repo, "rm", "-r", "-q", path)
        write_tree(repo, files)
        git_commit_all(repo)
        commits.append(_head(repo))
    return commits


def _archive(git_dir: Path, commit: str) -> dict[str, bytes]:
    """``{path: bytes}`` of every file of ``commit``, read through ``git archive``."""
    proc = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit],
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        check=True,
    )
    out = {}
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as archive:
        for member in archive:
            if member.isfile():
                source = archive.extractfile(member)
                assert source is not None
                out[member.name] = source.read()
    return out


def _disk(root: Path) -> tuple[dict[str, bytes], set[str]]:
    """``({path: bytes}, {directory})`` of everything under ``root``."""
    files, dirs = {}, set()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            dirs.add((Path(dirpath) / name).relative_to(root).as_posix())
        for name in filenames:
            path = Path(dirpath) / name
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files, dirs


def _parents(paths: Sequence[str]) -> set[str]:
    """Every directory that holds one of ``paths``."""
    return {p.rsplit("/", i)[0] for p in paths for i in range(1, p.count("/") + 1)}


@dataclass(frozen=True)
class Shop:
    root: Path
    repo: Path
    commits: list[str]
    tasks: list[dict[str, Any]]
    dataset: Path

    @property
    def git_dir(self) -> str:
        return f"{REPO}={self.repo}/.git"


@pytest.fixture(scope="module", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EXCERPT_CACHE_DIR", str(tmp_path_factory.mktemp("excerpt-cache")))
        yield


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Shop:
    root = tmp_path_factory.mktemp("bench")
    repo = root / "shop"
    c1, c2, c3 = _commits(
        repo, COMMIT_1, COMMIT_2_CHANGES, COMMIT_3_CHANGES, deletions=["shop/legacy"]
    )
    shipping_end = SHIPPING.count("\n")
    tasks = [
        {
            "instance_id": "shop-1",
            "base_commit": c1,
            "problem_statement": "old_invoice_formatter crashes when the header is missing",
            "gold_files": ["shop/legacy/invoices.py"],
            "gold_changed_lines": {
                "shop/legacy/invoices.py": [[_line_of(INVOICES, "header = ")] * 2]
            },
        },
        {
            "instance_id": "shop-2",
            "base_commit": c2,
            "problem_statement": "estimate_parcel_weight returns grams, callers expect kilograms",
            "gold_files": ["shop/shipping.py"],
            "gold_changed_lines": {"shop/shipping.py": [[shipping_end, shipping_end]]},
        },
        {  # two gold files: the named one is found, the other (unmentioned) is not
            "instance_id": "shop-3",
            "base_commit": c3,
            "problem_statement": "merge_duplicate_lines loses quantities of repeated lines",
            "gold_files": ["shop/cart.py", "shop/tax.py"],
            "gold_changed_lines": {
                "shop/cart.py": [[_line_of(CART_V3, "merged.get")] * 2],
                "shop/tax.py": [[_line_of(TAX, "return RATES")] * 2],
            },
        },
        {  # vague: no word of it is in the gold file, which nothing imports
            "instance_id": "shop-4",
            "base_commit": c3,
            "problem_statement": "Something looks wrong with the numbers sometimes",
            "gold_files": ["shop/tax.py"],
            "gold_changed_lines": {"shop/tax.py": [[_line_of(TAX, "RATES = ")] * 2]},
        },
    ]
    tasks = [{**t, "repo": REPO} for t in tasks]
    dataset = root / "tasks.jsonl"
    dataset.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return Shop(root=root, repo=repo, commits=[c1, c2, c3], tasks=tasks, dataset=dataset)


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    out: Path

    def report(self) -> dict[str, Any]:
        report: dict[str, Any] = json.loads((self.out / "report.json").read_text(encoding="utf-8"))
        return report

    def predictions(self) -> list[dict[str, Any]]:
        return _jsonl(self.out / "predictions.jsonl")

    def details(self) -> dict[str, dict[str, Any]]:
        return {row["instance_id"]: row for row in _jsonl(self.out / "details.jsonl")}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _bench(shop: Shop, out: Path, *extra: str, dataset: Path | None = None) -> Run:
    argv = ["bench", "localize", "--dataset", str(dataset or shop.dataset)]
    argv += ["--git-dir", shop.git_dir, "--out", str(out), "--budgets", ",".join(BUDGETS)]
    return _cli([*argv, "--json", *extra], out)


def _cli(argv: list[str], out: Path) -> Run:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    return Run(code=code, stdout=stdout.getvalue(), stderr=stderr.getvalue(), out=out)


@pytest.fixture(scope="module")
def full(shop: Shop) -> Run:
    """All four tasks, in dataset order (commit 1, 2, 3, 3)."""
    run = _bench(shop, shop.root / "out-full")
    assert run.code == 0, run.stderr
    return run


# -- a reference for the published metrics, independent of excerpt.evals.metrics -----------


def _ref_file_metrics(ranked: list[str], gold: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in (1, 3, 5, 10):
        out[f"acc@{k}"] = 1.0 if gold and all(g in ranked[:k] for g in gold) else 0.0
    out["hit@5"] = 1.0 if any(g in ranked[:5] for g in gold) else 0.0
    ranks = [ranked.index(g) + 1 for g in gold if g in ranked]
    out["mrr"] = 1.0 / min(ranks) if ranks else 0.0
    return out


def _ref_coverage(
    gold_lines: Mapping[str, list[list[int]]], served: list[tuple[str, int, int]]
) -> float:
    wanted = [(p, n) for p, spans in gold_lines.items() for a, b in spans for n in range(a, b + 1)]
    inside = [(p, n) for p, n in wanted if any(q == p and s <= n <= e for q, s, e in served)]
    return len(inside) / len(wanted)


def _lines_within(data: bytes, budget: int) -> int:
    """How many whole lines from the top of ``data`` fit in ``budget`` bytes."""
    used = count = 0
    for line in data.splitlines(keepends=True):
        if used + len(line) > budget:
            break
        used += len(line)
        count += 1
    return count


def _means(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {m: round(sum(r[m] for r in rows) / len(rows), 4) for m in FILE_METRICS}
    out["line_coverage"] = {
        b: round(sum(r["line_coverage"][b] for r in rows) / len(rows), 4) for b in BUDGETS
    }
    return out


def _without_latency(metrics: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metrics.items() if not k.startswith("latency")}


# -- the run and its files --------------------------------------------------------------------


def test_a_run_writes_predictions_report_details_and_markdown(shop: Shop, full: Run) -> None:
    report = full.report()
    assert json.loads(full.stdout) == report
    assert report["n"] == 4

    predictions = full.predictions()
    assert [p["instance_id"] for p in predictions] == [t["instance_id"] for t in shop.tasks]
    for p in predictions:
        assert set(p) == {"instance_id", "files"}
        assert len(p["files"]) <= 50
        assert len(set(p["files"])) == len(p["files"])
        assert all(isinstance(f, str) and not f.startswith("/") for f in p["files"])

    for system in ("excerpt", "bm25"):
        metrics = report[system]
        for m in FILE_METRICS:
            assert 0.0 <= metrics[m] <= 1.0, (system, m)
        assert set(metrics["line_coverage"]) == set(BUDGETS)
        assert all(0.0 <= v <= 1.0 for v in metrics["line_coverage"].values())
        latency = metrics["latency_ms"]
        assert set(latency) >= {"p50", "p95"}
        assert latency["p50"] >= 0.0
        assert latency["p95"] >= 0.0

    details = full.details()
    assert list(details) == [t["instance_id"] for t in shop.tasks]
    for task in shop.tasks:
        row = details[task["instance_id"]]
        assert row["gold"] == sorted(task["gold_files"])  # every gold file exists at its commit
        for system in ("excerpt", "bm25"):
            assert set(row[system]) >= {*FILE_METRICS, "line_coverage", "latency_s"}

    markdown = (full.out / "report.md").read_text(encoding="utf-8")
    assert "| metric | excerpt | BM25 |" in markdown
    for label in (*FILE_METRICS, "line coverage @ 2000 B", "line coverage @ 8000 B", "p95"):
        assert label in markdown
    assert f"| {REPO} | 4 |" in markdown


def test_rankings_follow_the_designed_problem_statements(full: Run) -> None:
    files = {p["instance_id"]: p["files"] for p in full.predictions()}
    assert files["shop-1"][0] == "shop/legacy/invoices.py"
    assert files["shop-2"][0] == "shop/shipping.py"
    assert "shop/legacy/invoices.py" not in files["shop-2"]  # deleted at commit 2
    assert files["shop-3"][0] == "shop/cart.py"
    assert "shop/tax.py" not in files["shop-3"][:10]
    assert "shop/tax.py" not in files["shop-4"][:10]


def test_excerpt_metrics_equal_a_hand_computation_from_predictions(shop: Shop, full: Run) -> None:
    gold = {t["instance_id"]: t["gold_files"] for t in shop.tasks}
    details = full.details()
    by_hand = {
        p["instance_id"]: _ref_file_metrics(p["files"], gold[p["instance_id"]])
        for p in full.predictions()
    }
    for instance_id, expected in by_hand.items():
        got = {m: details[instance_id]["excerpt"][m] for m in FILE_METRICS}
        assert got == pytest.approx(expected), instance_id
    report = full.report()["excerpt"]
    for m in FILE_METRICS:
        assert report[m] == pytest.approx(sum(r[m] for r in by_hand.values()) / 4, abs=1e-4)
    # Designed: two single-file tasks at rank 1, one of two gold files at rank 1, one miss.
    assert report["acc@1"] == report["acc@10"] == 0.5
    assert report["hit@5"] == 0.75
    assert report["mrr"] == 0.75


def test_bm25_metrics_equal_the_per_task_values_designed_into_the_fixture(full: Run) -> None:
    details = full.details()
    found_first = dict.fromkeys(FILE_METRICS, 1.0)
    expected = {
        "shop-1": found_first,
        "shop-2": found_first,
        "shop-3": {**dict.fromkeys(FILE_METRICS, 0.0), "hit@5": 1.0, "mrr": 1.0},
        "shop-4": dict.fromkeys(FILE_METRICS, 0.0),
    }
    for instance_id, want in expected.items():
        bm25 = details[instance_id]["bm25"]
        assert {m: bm25[m] for m in FILE_METRICS} == want, instance_id
    report = full.report()
    rows = [row["bm25"] for row in details.values()]
    assert _without_latency(report["bm25"]) == _means(rows)
    means = _means([r["excerpt"] for r in details.values()])
    assert {k: report["excerpt"][k] for k in means} == means


def test_bm25_line_coverage_equals_whole_files_served_in_rank_order(full: Run) -> None:
    # BM25 ranks each single-file task's gold file first (checked above) and never ranks
    # shop/tax.py, so its pack's coverage of the gold lines follows from the files' bytes.
    shipping_end = SHIPPING.count("\n")
    fits = {b: _lines_within(SHIPPING.encode(), int(b)) >= shipping_end for b in BUDGETS}
    assert fits == {"2000": False, "8000": True}
    expected = {
        "shop-1": {b: 1.0 for b in BUDGETS},
        "shop-2": {b: float(fits[b]) for b in BUDGETS},
        "shop-3": {b: 0.5 for b in BUDGETS},  # the cart line, not the tax line
        "shop-4": {b: 0.0 for b in BUDGETS},
    }
    details = full.details()
    for instance_id, want in expected.items():
        assert details[instance_id]["bm25"]["line_coverage"] == want, instance_id


def _task_tree(shop: Shop, task: dict[str, Any], into: Path) -> Path:
    """A task's tree at its base commit, as the benchmark exported it."""
    tree = into / str(task["instance_id"])
    write_tree(tree, _archive(shop.repo / ".git", task["base_commit"]))
    return tree


def test_excerpt_line_coverage_equals_the_packs_excerpt_pack_builds(
    shop: Shop, full: Run, tmp_path: Path
) -> None:
    details = full.details()
    for task in shop.tasks:
        tree = _task_tree(shop, task, tmp_path)
        for budget in BUDGETS:
            argv = ["pack", task["problem_statement"], "--repo", str(tree), "--budget", budget]
            run = _cli([*argv, "--json"], tree)
            assert run.code == 0, run.stderr
            served = [
                (i["path"], i["start_line"], i["end_line"]) for i in json.loads(run.stdout)["items"]
            ]
            by_hand = _ref_coverage(task["gold_changed_lines"], served)
            got = details[task["instance_id"]]["excerpt"]["line_coverage"][budget]
            assert got == pytest.approx(by_hand), (task["instance_id"], budget)
    # The budgets are told apart: shop-2's gold line lies past the first 2000 bytes of its file.
    assert details["shop-2"]["excerpt"]["line_coverage"] == {"2000": 0.0, "8000": 1.0}


def test_gold_reach_counts_the_32_kb_pack_the_cli_delivers_up_to_the_last_gold_line(
    shop: Shop, full: Run, tmp_path: Path
) -> None:
    details = full.details()
    for task in shop.tasks:
        tree = _task_tree(shop, task, tmp_path)
        argv = ["pack", task["problem_statement"], "--repo", str(tree), "--budget", "32000"]
        text = _cli(argv, tree).stdout
        items = json.loads(_cli([*argv, "--json"], tree).stdout)["items"]
        shown = [Shown(i["path"], i["start_line"], i["text"]) for i in items]
        gold = {p: r for p, r in task["gold_changed_lines"].items() if p in task["gold_files"]}
        by_hand = reach_tokens(text.rstrip("\n"), shown, gold, o200k_count)
        reach = details[task["instance_id"]]["excerpt"]["reach"]
        assert reach["tokens"] == by_hand, task["instance_id"]
        assert reach["pack_tokens"] == o200k_count(text)
    # shop-4's gold file ranks nowhere: never reached, by either pack
    assert details["shop-4"]["excerpt"]["reach"]["tokens"] is None
    assert details["shop-4"]["bm25"]["reach"]["tokens"] is None
    assert details["shop-1"]["excerpt"]["reach"]["tokens"] is not None
    report = full.report()["reach"]
    assert report["excerpt"]["within"]["8000"] == pytest.approx(
        sum(d["excerpt"]["reach"]["tokens"] is not None for d in details.values()) / 4
    )
    markdown = (full.out / "report.md").read_text(encoding="utf-8")
    assert "Gold reach: tokens of the 32,000-byte pack" in markdown


# -- the export -------------------------------------------------------------------------------


def test_the_export_is_exact_and_rewrites_only_changed_files(shop: Shop, tmp_path: Path) -> None:
    out = tmp_path / "out"
    work = out / "work" / "acme__shop"
    first = _bench(shop, out, "--limit", "1")
    assert first.code == 0, first.stderr
    assert _disk(work)[0] == _archive(shop.repo / ".git", shop.commits[0])
    for name in ("shop/tax.py", "shop/pricing.py"):
        os.utime(work / name, ns=(SENTINEL_NS, SENTINEL_NS))

    second = _bench(shop, out, "--limit", "2")  # commit 1 again (nothing to do), then commit 2
    assert second.code == 0, second.stderr
    files, dirs = _disk(work)
    assert files == _archive(shop.repo / ".git", shop.commits[1])
    assert dirs == _parents(list(files))  # the deleted package left no empty directory
    assert not (work / "shop" / "legacy").exists()
    assert (work / "shop/tax.py").stat().st_mtime_ns == SENTINEL_NS  # same bytes: untouched
    assert (work / "shop/pricing.py").stat().st_mtime_ns != SENTINEL_NS  # changed: rewritten
    assert (work / "shop/pricing.py").read_text(encoding="utf-8") == PRICING_V2
    files_of = {p["instance_id"]: p["files"] for p in second.predictions()}
    assert files_of["shop-2"][0] == "shop/shipping.py"  # the refreshed index sees the new file


def test_after_a_full_run_the_work_tree_is_the_last_tasks_commit(shop: Shop, full: Run) -> None:
    files, dirs = _disk(full.out / "work" / "acme__shop")
    assert files == _archive(shop.repo / ".git", shop.tasks[-1]["base_commit"])
    assert dirs == _parents(list(files))


# -- determinism ------------------------------------------------------------------------------


def test_two_runs_give_identical_bm25_metrics_and_excerpt_predictions(
    shop: Shop, full: Run, tmp_path: Path
) -> None:
    again = _bench(shop, tmp_path / "again")
    assert again.code == 0, again.stderr
    assert again.predictions() == full.predictions()
    assert _without_latency(again.report()["bm25"]) == _without_latency(full.report()["bm25"])
    first, second = full.details(), again.details()
    assert list(first) == list(second)
    for instance_id in first:
        assert _without_latency(first[instance_id]["bm25"]) == _without_latency(
            second[instance_id]["bm25"]
        )
        assert _without_latency(first[instance_id]["excerpt"]) == _without_latency(
            second[instance_id]["excerpt"]
        )


# -- selection and usage errors ---------------------------------------------------------------


def test_limit_one_runs_only_the_first_task(shop: Shop, tmp_path: Path) -> None:
    run = _bench(shop, tmp_path / "out", "--limit", "1")
    assert run.code == 0, run.stderr
    assert run.report()["n"] == 1
    assert [p["instance_id"] for p in run.predictions()] == ["shop-1"]
    assert list(run.details()) == ["shop-1"]


def test_repos_naming_another_repository_runs_nothing(shop: Shop, tmp_path: Path) -> None:
    run = _bench(shop, tmp_path / "out", "--repos", "other/repo")
    assert run.code == 0, run.stderr
    report = run.report()
    assert report["n"] == 0
    assert json.loads(run.stdout) == report
    for system in ("excerpt", "bm25"):
        assert all(report[system][m] == 0.0 for m in FILE_METRICS)
        assert report[system]["latency_ms"] == {"p50": 0.0, "p95": 0.0}
    assert run.predictions() == []
    assert run.details() == {}
    assert (
        (run.out / "report.md")
        .read_text(encoding="utf-8")
        .startswith("# Localization benchmark (0 tasks)")
    )


def _dataset_without_problem_statement(shop: Shop, path: Path) -> Path:
    broken = {k: v for k, v in shop.tasks[1].items() if k != "problem_statement"}
    lines = [json.dumps(shop.tasks[0]), json.dumps(broken)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        pytest.param("no-git-dir", "no --git-dir given for repository acme/shop", id="no-git-dir"),
        pytest.param("git-dir-without-equals", "OWNER/NAME=GITDIR", id="git-dir-without-equals"),
        pytest.param("no-problem-statement", ":2: malformed task", id="no-problem-statement"),
        pytest.param("budgets-not-numbers", "--budgets", id="budgets-not-numbers"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    shop: Shop, tmp_path: Path, case: str, needle: str
) -> None:
    dataset, git_dirs, budgets = str(shop.dataset), ["--git-dir", shop.git_dir], "2000,8000"
    if case == "no-git-dir":
        git_dirs = []
    elif case == "git-dir-without-equals":
        git_dirs = ["--git-dir", f"{shop.repo}/.git"]
    elif case == "no-problem-statement":
        dataset = str(_dataset_without_problem_statement(shop, tmp_path / "broken.jsonl"))
    else:
        budgets = "x"
    argv = ["bench", "localize", "--dataset", dataset, *git_dirs, "--out", str(tmp_path / "o")]
    run = _cli([*argv, "--budgets", budgets, "--json"], tmp_path / "o")
    assert run.code == 2
    # under --json the error is one JSON line on stdout, and the same on stderr (SPEC §11)
    assert run.stderr == run.stdout and run.stdout.count("\n") == 1, run.stderr
    doc = json.loads(run.stdout)
    assert (doc["code"], doc["exit"]) == ("usage_error", 2)
    assert needle in doc["error"]


# -- regressions: bugs found while writing these tests --------------------------------------


@pytest.mark.parametrize("order", ["file-then-directory", "directory-then-file"])
def test_a_path_that_turns_from_file_into_directory_exports(tmp_path: Path, order: str) -> None:
    repo = tmp_path / "tools"
    c1, c2 = _commits(
        repo,
        {
            "bin/deploy": "#!/bin/sh\necho deploy\n",
            "tools.py": "def deploy_everything():\n    pass\n",
        },
        {"bin/deploy/__init__.py": "def deploy_everything():\n    pass\n"},
        deletions=["bin/deploy"],
    )
    commits = [c1, c2] if order == "file-then-directory" else [c2, c1]
    tasks = [
        {
            "instance_id": f"t{n}",
            "repo": "acme/tools",
            "base_commit": commit,
            "problem_statement": "deploy_everything does nothing",
            "gold_files": ["tools.py"],
        }
        for n, commit in enumerate(commits)
    ]
    dataset = tmp_path / "tasks.jsonl"
    dataset.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["bench", "localize", "--dataset", str(dataset), "--out", str(out), "--json"]
    run = _cli([*argv, "--git-dir", f"acme/tools={repo}/.git", "--budgets", "2000"], out)
    assert run.code == 0, run.stderr
    assert _disk(out / "work" / "acme__tools")[0] == _archive(repo / ".git", commits[-1])


def test_out_inside_a_git_repository_that_ignores_it_ranks_the_same(
    shop: Shop, full: Run, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    write_tree(project, {".gitignore": "bench-out/\n", "main.py": "print('hi')\n"})
    git_commit_all(project)
    run = _bench(shop, project / "bench-out")
    assert run.code == 0, run.stderr
    assert run.predictions() == full.predictions()


def test_bm25_of_a_task_does_not_depend_on_the_tasks_before_it(tmp_path: Path) -> None:
    repo = tmp_path / "tie"
    body = "def frobnicate_widget(w):\n    return w\n"
    c1, c2 = _commits(repo, {"zeta_copy.py": body, "other.py": "x = 1\n"}, {"alpha_copy.py": body})
    task = {
        "repo": "acme/tie",
        "problem_statement": "frobnicate_widget is broken",
        "gold_files": ["alpha_copy.py"],
    }
    history = {"after-commit-1": [{**task, "instance_id": "a", "base_commit": c1}], "alone": []}
    metrics = {}
    for name, before in history.items():
        rows = [*before, {**task, "instance_id": "b", "base_commit": c2}]
        dataset = tmp_path / f"{name}.jsonl"
        dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        out = tmp_path / name
        argv = ["bench", "localize", "--dataset", str(dataset), "--out", str(out), "--json"]
        run = _cli([*argv, "--git-dir", f"acme/tie={repo}/.git", "--budgets", "2000"], out)
        assert run.code == 0, run.stderr
        metrics[name] = _without_latency(run.details()["b"]["bm25"])
    assert metrics["after-commit-1"] == metrics["alone"]


def test_an_empty_budget_list_is_a_usage_error(shop: Shop, tmp_path: Path) -> None:
    argv = ["bench", "localize", "--dataset", str(shop.dataset), "--git-dir", shop.git_dir]
    run = _cli([*argv, "--out", str(tmp_path / "o"), "--budgets", ","], tmp_path / "o")
    assert run.code == 2, run.stderr


def test_latency_p95_is_never_below_p50() -> None:
    zero = dict.fromkeys(FILE_METRICS, 0.0)
    reach = {
        "tokens": None, "pack_tokens": 0, "all_lines": {"2000": False},
        "outside_gold_files": 0.0, "outside_gold_functions": 0.0,
    }  # fmt: skip
    rows = [
        {
            "repo": REPO,
            "excerpt": {
                **zero,
                "line_coverage": {"2000": 0.0},
                "latency_s": seconds,
                "reach": reach,
                "default": reach,
            },
            "bm25": {**zero, "line_coverage": {"2000": 0.0}, "latency_s": seconds, "reach": reach},
        }
        for seconds in (0.010, 0.030)
    ]
    latency = summarise(rows, [2000])["excerpt"]["latency_ms"]
    assert latency["p95"] >= latency["p50"]


def test_ablations_leave_out_each_signal_beside_all_signals_ranked_the_same_way(
    shop: Shop,
) -> None:
    run = _bench(shop, shop.root / "out-ablations", "--ablations")
    assert run.code == 0, run.stderr
    report = run.report()
    assert list(report["ablations"]) == [ALL_SIGNALS, *(f"without {s}" for s in sorted(SIGNALS))]
    # the fixture has no file the pack leaves out: the ranking alone is the engine's ranking
    engine = {m: report["excerpt"][m] for m in ("acc@1", "acc@5", "mrr")}
    assert report["ablations"][ALL_SIGNALS] == engine
    assert all(set(m) == {"acc@1", "acc@5", "mrr"} for m in report["ablations"].values())
    markdown = (run.out / "report.md").read_text(encoding="utf-8")
    assert f"| {ALL_SIGNALS} |" in markdown and "| without lexical |" in markdown


# -- record and replay ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recorded(shop: Shop) -> tuple[Run, Path]:
    record = shop.root / "recording"
    run = _bench(shop, shop.root / "out-recorded", "--record", str(record), "--ablations")
    assert run.code == 0, run.stderr
    return run, record


def _replay(shop: Shop, record: Path, out: Path, *extra: str) -> Run:
    argv = ["bench", "localize", "--dataset", str(shop.dataset), "--replay", str(record)]
    return _cli([*argv, "--out", str(out), "--budgets", ",".join(BUDGETS), "--json", *extra], out)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_replay_gives_the_recorded_run_s_predictions_and_metrics_without_git(
    shop: Shop, recorded: tuple[Run, Path], full: Run, tmp_path: Path, jobs: str
) -> None:
    live, record = recorded
    assert live.predictions() == full.predictions()  # recording changes nothing
    again = _replay(shop, record, tmp_path / "replay", "--ablations", "--jobs", jobs)
    assert again.code == 0, again.stderr
    assert again.predictions() == live.predictions()
    first, second = live.details(), again.details()
    assert list(first) == list(second)
    for instance_id, row in first.items():
        for system in ("excerpt", "bm25"):
            assert _without_latency(second[instance_id][system]) == _without_latency(row[system])
        assert second[instance_id]["ablations"] == row["ablations"]
    assert not (tmp_path / "replay" / "work").exists()  # no tree was exported


def test_a_recording_stores_each_file_s_bytes_once(recorded: tuple[Run, Path]) -> None:
    _, record = recorded
    blobs = sorted((record / "blobs").iterdir())
    assert blobs and len({b.name for b in blobs}) == len(blobs)
    assert len(list((record / "tasks").iterdir())) == 4


def test_a_recording_file_cut_off_at_its_rename_is_not_left_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from excerpt_bench.recording import start_recording

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space left on device"):
        start_recording(tmp_path / "recording")
    monkeypatch.undo()
    left = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    assert left == ["recording", "recording/blobs", "recording/tasks"]  # no marker, no temporary


def test_a_replay_of_a_task_never_recorded_or_recorded_for_another_text_is_refused(
    shop: Shop, recorded: tuple[Run, Path], tmp_path: Path
) -> None:
    _, record = recorded
    changed = [dict(t) for t in shop.tasks]
    changed[0]["problem_statement"] += " and more"
    dataset = tmp_path / "changed.jsonl"
    dataset.write_text("".join(json.dumps(t) + "\n" for t in changed), encoding="utf-8")
    argv = ["bench", "localize", "--dataset", str(dataset), "--replay", str(record), "--json"]
    run = _cli([*argv, "--out", str(tmp_path / "a"), "--jobs", "1"], tmp_path / "a")
    assert run.code == 2 and "recorded with another task text" in run.stderr
    extra = [{**shop.tasks[0], "instance_id": "shop-unknown"}]
    dataset.write_text("".join(json.dumps(t) + "\n" for t in extra), encoding="utf-8")
    run = _cli([*argv, "--out", str(tmp_path / "b"), "--jobs", "1"], tmp_path / "b")
    assert run.code == 2 and "has no recording of shop-unknown" in run.stderr


def test_a_replay_of_a_directory_that_is_not_a_recording_is_a_usage_error(
    shop: Shop, tmp_path: Path
) -> None:
    run = _replay(shop, tmp_path, tmp_path / "out", "--jobs", "1")
    assert run.code == 2 and "is not a recording" in run.stderr


def test_record_and_replay_together_is_a_usage_error(shop: Shop, tmp_path: Path) -> None:
    run = _bench(shop, tmp_path / "o", "--record", str(tmp_path / "r"), "--replay", str(tmp_path))
    assert run.code == 2 and "cannot be used together" in run.stderr


def test_a_weights_variant_changes_the_ranking_and_replays_the_same(
    shop: Shop, recorded: tuple[Run, Path], full: Run, tmp_path: Path
) -> None:
    _, record = recorded
    variant = tmp_path / "variant.toml"
    # nothing but names and paths: the vague task matches nothing, the others still rank
    variant.write_text("lexical_gain = 0\ntitle_gain = 0\n", encoding="utf-8")
    live = _bench(shop, tmp_path / "live", "--weights", str(variant))
    replayed = _replay(shop, record, tmp_path / "replayed", "--weights", str(variant))
    assert live.code == 0 and replayed.code == 0, (live.stderr, replayed.stderr)
    assert replayed.predictions() == live.predictions()
    assert live.predictions() != full.predictions()


def _older_copy(recorded: tuple[Run, Path], tmp_path: Path) -> Path:
    """A copy of the recording, for a test to age by hand."""
    copy = tmp_path / "older"
    shutil.copytree(recorded[1], copy)
    return copy


def test_a_recording_made_by_a_build_parsing_other_languages_is_refused(
    shop: Shop, recorded: tuple[Run, Path], tmp_path: Path
) -> None:
    copy = _older_copy(recorded, tmp_path)
    marker = copy / "recording.json"
    doc = json.loads(marker.read_text(encoding="utf-8"))
    doc["parsed_languages"] = doc["parsed_languages"][:-1]
    marker.write_text(json.dumps(doc), encoding="utf-8")
    run = _replay(shop, copy, tmp_path / "out", "--jobs", "1")
    assert run.code == 2 and "parses other languages" in run.stderr
    assert "record it again" in run.stderr


def test_a_recording_keeps_every_candidate_and_the_graph_neighbours_of_the_first_ones(
    make_repo: Any, cache_dir: Path
) -> None:
    """A variant that reorders the candidates, or lifts a neighbour into the pack, replays
    instead of stopping at a file the recorded run never served."""
    from excerpt.core.settings import repo_cache_dir
    from excerpt.index.build import index_repository
    from excerpt.index.store import IndexStore
    from excerpt.index.view import RecordingView
    from excerpt.pack.prepare import WorkspaceFiles
    from excerpt_bench.bench import _widen
    from excerpt_bench.recording import RecordingSource

    files = {
        "pkg/core.py": "from pkg.util import helper\n\n\ndef run():\n    return helper()\n",
        "pkg/util.py": "def helper():\n    return 1\n",
        "pkg/cli.py": "from pkg.core import run\n\n\ndef main():\n    run()\n",
        "pkg/far.py": "def unrelated():\n    return 2\n",
    }
    root = make_repo(files)
    index_repository(root, cache_dir=cache_dir)
    with IndexStore.open(repo_cache_dir(root.resolve(), cache_dir)) as store:
        view = RecordingView(store.view())
        source = RecordingSource(WorkspaceFiles(root))
        _widen(view, source, ["pkg/core.py"])
        replay = view.replay()
    assert replay.covered is not None
    assert {"pkg/core.py", "pkg/util.py", "pkg/cli.py"} <= replay.covered
    assert "pkg/far.py" not in replay.covered
    assert {"pkg/util.py", "pkg/cli.py"} <= set(source.seen)


def test_a_replay_meeting_a_file_never_recorded_names_it_and_a_lenient_one_counts_it(
    shop: Shop, recorded: tuple[Run, Path], tmp_path: Path
) -> None:
    import gzip

    copy = _older_copy(recorded, tmp_path)
    task_file = sorted((copy / "tasks").iterdir())[0]
    doc = json.loads(gzip.decompress(task_file.read_bytes()))
    dropped = sorted(doc["files"])[0]
    del doc["files"][dropped]  # as if an older ranking had never read it
    task_file.write_bytes(gzip.compress(json.dumps(doc).encode("utf-8")))
    strict = _replay(shop, copy, tmp_path / "strict", "--jobs", "1")
    assert strict.code == 2
    assert doc["instance_id"] in strict.stderr and dropped in strict.stderr
    lenient = _replay(shop, copy, tmp_path / "lenient", "--jobs", "1", "--lenient")
    assert lenient.code == 0, lenient.stderr
    assert lenient.report()["replay_unrecorded"] == {"files": 1, "tasks": 1}
    assert lenient.details()[doc["instance_id"]]["replay_unrecorded"] == [dropped]
    live = _bench(shop, tmp_path / "l", "--lenient")
    assert live.code == 2 and "--lenient is for --replay" in live.stderr
