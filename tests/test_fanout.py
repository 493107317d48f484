"""``--scheduler``: ``bench localize`` fanned out by (repository, base commit) and
``index --many`` give what the serial runs give (SPEC §10, §11).

Two fixture repositories with a few commits; five tasks over three (repository, commit)
groups, one group of two tasks. The serial run is the reference: a LocalCluster of two worker
processes, the process pool used without Dask, and a running scheduler given by address must
write the same ``predictions.jsonl`` byte for byte and the same ``report.json`` and
``details.jsonl`` but for latencies.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import GIT_ENV, git_commit_all, write_tree
from excerpt.batch.scheduler import Scheduler, parse_scheduler
from excerpt.cli import main
from excerpt.errors import UsageError
from excerpt_bench.bench import BenchTask
from excerpt_bench.fanout import batches, group_tasks

BUDGETS = "2000,8000"

SHOP_1 = {
    "README.md": "# Shop\n",
    "shop/__init__.py": '"""Shop."""\n',
    "shop/cart.py": "def merge_duplicate_lines(lines):\n    return sorted(set(lines))\n",
    "shop/legacy.py": "def old_invoice_formatter(invoice):\n    return invoice['header']\n",
}
SHOP_2 = {
    "shop/shipping.py": "def estimate_parcel_weight(items):\n    return sum(items) * 1000\n",
    "shop/tax.py": "RATES = {'de': 19}\n\n\ndef vat_rate_for(c):\n    return RATES[c]\n",
}
MILL_1 = {
    "mill/__init__.py": "",
    "mill/grind.py": "def grind_coarse_grain(sack):\n    return sack // 2\n",
    "mill/flour.py": "from mill.grind import grind_coarse_grain\n\n\ndef sift_flour(x):\n"
    "    return grind_coarse_grain(x)\n",
}


def _head(repo: Path) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, env={**os.environ, **GIT_ENV},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def _commit(repo: Path, files: dict[str, str]) -> str:
    write_tree(repo, files)
    git_commit_all(repo)
    return _head(repo)


@dataclass(frozen=True)
class Fixture:
    root: Path
    shop: Path
    mill: Path
    dataset: Path
    tasks: list[dict[str, Any]]

    def git_dirs(self) -> list[str]:
        return [
            "--git-dir",
            f"acme/shop={self.shop}/.git",
            "--git-dir",
            f"acme/mill={self.mill}/.git",
        ]


@pytest.fixture(scope="module", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EXCERPT_CACHE_DIR", str(tmp_path_factory.mktemp("excerpt-cache")))
        yield


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    root = tmp_path_factory.mktemp("fanout")
    shop, mill = root / "shop", root / "mill"
    s1 = _commit(shop, SHOP_1)
    s2 = _commit(shop, SHOP_2)
    m1 = _commit(mill, MILL_1)
    _commit(mill, {"mill/bake.py": "def bake_bread(flour):\n    return flour\n"})

    def task(n: str, repo: str, commit: str, text: str, gold: str) -> dict[str, Any]:
        return {
            "instance_id": n, "repo": repo, "base_commit": commit, "problem_statement": text,
            "gold_files": [gold], "gold_changed_lines": {gold: [[1, 2]]},
        }  # fmt: skip

    tasks = [  # the groups interleaved: rows come back in this order, not the groups'
        task("shop-1", "acme/shop", s1, "old_invoice_formatter drops the header", "shop/legacy.py"),
        task("mill-1", "acme/mill", m1, "grind_coarse_grain halves too much", "mill/grind.py"),
        task("shop-2", "acme/shop", s2, "estimate_parcel_weight returns grams", "shop/shipping.py"),
        task("mill-2", "acme/mill", m1, "sift_flour is wrong for big sacks", "mill/flour.py"),
        task("shop-3", "acme/shop", s2, "vat_rate_for should return a share", "shop/tax.py"),
    ]
    dataset = root / "tasks.jsonl"
    dataset.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return Fixture(root=root, shop=shop, mill=mill, dataset=dataset, tasks=tasks)


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    out: Path


def _cli(argv: list[str], out: Path | None = None) -> Run:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    return Run(code=code, stdout=stdout.getvalue(), stderr=stderr.getvalue(), out=out or Path())


def _bench(fx: Fixture, name: str, *extra: str) -> Run:
    out = fx.root / name
    argv = ["bench", "localize", "--dataset", str(fx.dataset), *fx.git_dirs(), "--out", str(out)]
    return _cli([*argv, "--budgets", BUDGETS, "--json", *extra], out)


def _without_latency(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _without_latency(v) for k, v in doc.items() if not k.startswith("latency")}
    if isinstance(doc, list):
        return [_without_latency(v) for v in doc]
    return doc


def _outputs(run: Run) -> tuple[bytes, Any, Any]:
    """predictions.jsonl's bytes; report.json and details.jsonl without latencies."""
    report = json.loads((run.out / "report.json").read_text(encoding="utf-8"))
    details = [json.loads(x) for x in (run.out / "details.jsonl").read_text("utf-8").splitlines()]
    predictions = (run.out / "predictions.jsonl").read_bytes()
    return predictions, _without_latency(report), _without_latency(details)


@pytest.fixture
def no_dask(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the excerpt[dask] extra were not installed: importing distributed fails."""
    monkeypatch.setitem(sys.modules, "distributed", None)


@pytest.fixture(scope="module")
def serial(fx: Fixture) -> Run:
    run = _bench(fx, "out-serial")
    assert run.code == 0, run.stderr
    return run


@pytest.fixture(scope="module")
def scheduler_address() -> Iterator[str]:
    """A running scheduler, as another machine's would be (one worker thread, in this
    process: cheap to start; its jobs keep their directories in the worker's own)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:  # fmt: skip
        yield cluster.scheduler_address


# -- the same outputs, whatever runs them --------------------------------------------------


def test_the_serial_run_ranks_every_gold_file_first(fx: Fixture, serial: Run) -> None:
    predictions = [
        json.loads(x) for x in (serial.out / "predictions.jsonl").read_text("utf-8").splitlines()
    ]
    assert [p["instance_id"] for p in predictions] == [t["instance_id"] for t in fx.tasks]
    assert [p["files"][0] for p in predictions] == [t["gold_files"][0] for t in fx.tasks]


def test_a_local_cluster_of_two_workers_writes_the_serial_outputs(fx: Fixture, serial: Run) -> None:
    pytest.importorskip("distributed")
    run = _bench(fx, "out-dask", "--scheduler", "local:2")
    assert run.code == 0, run.stderr
    assert _outputs(run) == _outputs(serial)
    assert json.loads(run.stdout)["n"] == len(fx.tasks)
    # each worker process exported and indexed in a directory of its own
    homes = sorted(p.name for p in (run.out / "workers").iterdir())
    assert 1 <= len(homes) <= 2, homes


def test_without_dask_local_runs_on_a_process_pool_with_the_serial_outputs(
    fx: Fixture, serial: Run, no_dask: None
) -> None:
    run = _bench(fx, "out-pool", "--scheduler", "local:2")
    assert run.code == 0, run.stderr
    assert _outputs(run) == _outputs(serial)


def test_a_running_scheduler_given_by_address_writes_the_serial_outputs(
    fx: Fixture, serial: Run, scheduler_address: str
) -> None:
    run = _bench(fx, "out-address", "--scheduler", scheduler_address)
    assert run.code == 0, run.stderr
    assert _outputs(run) == _outputs(serial)
    # neither the serial run's tree nor local workers' directories: the Dask workers' own
    assert not (run.out / "work").exists() and not (run.out / "workers").exists()


def test_tasks_are_grouped_by_repository_and_commit_in_dataset_order(fx: Fixture) -> None:
    tasks = [
        BenchTask(
            instance_id=t["instance_id"],
            repo=t["repo"],
            base_commit=t["base_commit"],
            problem_statement=t["problem_statement"],
            gold_files=tuple(t["gold_files"]),
        )
        for t in fx.tasks
    ]
    groups = group_tasks(tasks)
    assert [g.positions for g in groups] == [(0,), (1, 3), (2, 4)]
    assert all(len({(t.repo, t.base_commit) for t in g.tasks}) == 1 for g in groups)


def test_jobs_hold_trees_of_one_repository_split_evenly_in_dataset_order() -> None:
    def task(n: int, repo: str, commit: str) -> BenchTask:
        return BenchTask(instance_id=f"t{n}", repo=repo, base_commit=commit,
                         problem_statement="x", gold_files=())  # fmt: skip

    tasks = [task(n, "a/a" if n % 3 else "b/b", f"c{n}") for n in range(20)]
    jobs = batches(group_tasks(tasks), size=4)
    repos = [{g.tasks[0].repo for g in job} for job in jobs]
    assert all(len(r) == 1 for r in repos)  # a job: one repository's trees
    sizes: dict[str, list[int]] = {"a/a": [], "b/b": []}
    for job in jobs:
        sizes[job[0].tasks[0].repo].append(len(job))
    # 13 trees of a/a in 4 jobs (4, 3, 3, 3 in some order), 7 of b/b in 2
    assert sorted(sizes["a/a"]) == [3, 3, 3, 4] and sorted(sizes["b/b"]) == [3, 4]
    firsts = [job[0].positions[0] for job in jobs]
    assert firsts == sorted(firsts)
    assert sorted(p for job in jobs for g in job for p in g.positions) == list(range(20))
    for job in jobs:  # a job's trees in dataset order
        flat = [p for g in job for p in g.positions]
        assert flat == sorted(flat)


# -- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["local:0", "local:x", "local:", "local:-1", "local:1.5", "local:1025", "garbage", "",
     "tcp://", "tcp://host", "tcp://host:0", "tcp://host:99999", "http://host:8786", "local"],
)  # fmt: skip
def test_a_malformed_scheduler_is_a_usage_error(value: str) -> None:
    with pytest.raises(UsageError, match="--scheduler"):
        parse_scheduler(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, Scheduler(kind="serial")),
        ("local:1", Scheduler(kind="local", workers=1)),
        ("local:16", Scheduler(kind="local", workers=16)),
        ("tcp://10.0.0.5:8786", Scheduler(kind="address", address="tcp://10.0.0.5:8786")),
        ("tcp://[::1]:8786", Scheduler(kind="address", address="tcp://[::1]:8786")),
    ],
)
def test_well_formed_schedulers_parse(value: str | None, expected: Scheduler) -> None:
    assert parse_scheduler(value) == expected


def _one_json_error(run: Run, code: str = "usage_error", exit_code: int = 2) -> str:
    assert run.code == exit_code, (run.stdout, run.stderr)
    doc = json.loads(run.stdout)
    assert doc["code"] == code
    assert len(run.stderr.strip().splitlines()) == 1
    message: str = doc["error"]
    return message


@pytest.mark.parametrize("value", ["local:0", "local:x", "nonsense"])
def test_bench_with_a_malformed_scheduler_exits_2(fx: Fixture, value: str) -> None:
    message = _one_json_error(_bench(fx, "out-bad", "--scheduler", value))
    assert "--scheduler" in message


def test_an_address_without_the_dask_extra_exits_2_naming_it(fx: Fixture, no_dask: None) -> None:
    message = _one_json_error(_bench(fx, "out-nodask", "--scheduler", "tcp://127.0.0.1:8786"))
    assert "excerpt[dask]" in message
    assert not (fx.root / "out-nodask").exists()


@pytest.mark.parametrize(
    ("extra", "word"),
    [
        (["--record", "REC"], "--record"),
        (["--replay", "REC"], "--replay"),
        (["--jobs", "2"], "--jobs"),
    ],
)
def test_scheduler_refuses_record_replay_and_jobs(fx: Fixture, extra: list[str], word: str) -> None:
    extra = [str(fx.root / e) if e == "REC" else e for e in extra]
    message = _one_json_error(_bench(fx, "out-refused", "--scheduler", "local:2", *extra))
    assert word in message


# -- index --many ----------------------------------------------------------------------------


def _repo_list(fx: Fixture) -> Path:
    listing = fx.root / "repos.txt"
    listing.write_text(
        f"# the fixture repositories\n{fx.shop}\n\n{fx.root / 'missing'}\n  {fx.mill}  \n"
        f"{fx.shop}\n",  # listed twice: indexed once
        encoding="utf-8",
    )
    return listing


def _check_many(fx: Fixture, run: Run) -> None:
    assert run.code == 1, run.stderr  # one repository failed, the others were indexed
    results = json.loads(run.stdout)
    assert [r["repo"] for r in results] == [str(fx.shop), str(fx.root / "missing"), str(fx.mill)]
    shop, missing, mill = results
    assert shop["ok"] and mill["ok"]
    assert shop["files_indexed"] == len(SHOP_1) + len(SHOP_2)
    assert mill["files_indexed"] == len(MILL_1) + 1
    assert missing == {
        "repo": str(fx.root / "missing"), "ok": False, "code": "repo_unavailable", "exit": 3,
        "error": missing["error"],
    }  # fmt: skip
    # into the cache `index --repo` uses: the same repository again reads nothing
    again = _cli(["index", "--repo", str(fx.mill), "--json"])
    assert again.code == 0 and json.loads(again.stdout)["files_read"] == 0


def test_index_many_reports_the_missing_repository_and_indexes_the_others(fx: Fixture) -> None:
    _check_many(fx, _cli(["index", "--many", str(_repo_list(fx)), "--json"]))


def test_index_many_on_a_scheduler_gives_the_same_list(fx: Fixture, scheduler_address: str) -> None:
    argv = ["index", "--many", str(_repo_list(fx)), "--scheduler", scheduler_address, "--json"]
    _check_many(fx, _cli(argv))


def test_index_many_prints_a_line_per_repository_and_a_total(fx: Fixture) -> None:
    run = _cli(["index", "--many", str(_repo_list(fx))])
    assert run.code == 1
    lines = run.stdout.splitlines()
    assert len(lines) == 4
    assert lines[0].startswith(f"{fx.shop}: {len(SHOP_1) + len(SHOP_2)} files indexed in ")
    assert lines[1].startswith(f"{fx.root / 'missing'}: failed (repo_unavailable): ")
    assert lines[3].startswith("Total: 2 of 3 repositories indexed, 10 files, in ")
    assert lines[3].endswith("; 1 failed")


@pytest.mark.parametrize(
    ("argv", "word"),
    [
        (["--scheduler", "local:2"], "--scheduler"),  # without --many
        (["--many", "LIST", "--repo", "."], "--repo"),
        (["--many", "LIST", "--stats"], "--stats"),
        (["--many", "LIST", "--scheduler", "local:0"], "--scheduler"),
        (["--many", "EMPTY"], "no repository"),
        (["--many", "NOWHERE"], "cannot read"),
    ],
)
def test_index_many_usage_errors_exit_2(fx: Fixture, argv: list[str], word: str) -> None:
    empty = fx.root / "empty.txt"
    empty.write_text("# nothing\n\n", encoding="utf-8")
    names = {"LIST": _repo_list(fx), "EMPTY": empty, "NOWHERE": fx.root / "nowhere.txt"}
    argv = [str(names[a]) if a in names else a for a in argv]
    assert word in _one_json_error(_cli(["index", *argv, "--json"]))
