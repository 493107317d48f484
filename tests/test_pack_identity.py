"""A pack's identity (SPEC §3, §4): the same inputs give the same bytes (warm or cold
cache, another checkout path, the CLI run again, the task from an argument, a file or stdin);
every pack validates against the shipped JSON Schema, and its id and digests recompute."""

from __future__ import annotations

import hashlib
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from excerpt.pack import pack_schema
from pack_repos import FIXTURES, TASK_CASES
from packs import cli, delivered_of, pack_of, recomputed_pack_id

# -- determinism -----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "task"), TASK_CASES)
def test_the_same_inputs_give_byte_identical_packs(
    repos: dict[str, Path],
    make_repo: Callable[..., Path],
    cache_dir: Path,
    tmp_path: Path,
    name: str,
    task: str,
) -> None:
    def dump(repo: Path, cache: Path) -> str:
        return json.dumps(pack_of(repo, task, cache, 3_000), sort_keys=True)

    first = dump(repos[name], cache_dir)
    assert dump(repos[name], cache_dir) == first  # warm cache
    assert dump(repos[name], tmp_path / "fresh-cache") == first  # cold cache
    # the same content at another absolute path: no absolute path leaks into the pack
    copy = make_repo(FIXTURES[name], name=f"elsewhere-{name}")
    assert dump(copy, tmp_path / "copy-cache") == first
    assert str(repos[name]) not in first and str(tmp_path) not in first


def test_cli_json_output_is_byte_identical_across_runs(
    repos: dict[str, Path],
    cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    argv = ["pack", "fix the refund webhook retry", "--repo", str(repos["py_shop"])]
    argv += ["--format", "json", "--budget", "1500"]
    outputs = [cli(capsys, *argv)[1], cli(capsys, *argv)[1]]
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(tmp_path / "other-cache"))
    outputs.append(cli(capsys, *argv)[1])
    assert outputs[0] == outputs[1] == outputs[2]
    assert json.loads(outputs[0])["items"]


# -- schema and identity ---------------------------------------------------------------------


@pytest.mark.parametrize(("name", "task"), TASK_CASES)
@pytest.mark.parametrize("budget", [300, 4000, 32_000], ids=lambda b: f"budget{b}")
def test_every_pack_validates_against_the_schema_and_its_id_recomputes(
    repos: dict[str, Path], cache_dir: Path, name: str, task: str, budget: int
) -> None:
    pack = delivered_of(repos[name], task, cache_dir, budget)
    Draft202012Validator(pack_schema()).validate(pack)
    assert pack["schema"] == "excerpt.pack/v1"
    assert pack["pack_id"] == recomputed_pack_id(pack)
    assert pack["task_sha256"] == hashlib.sha256(task.encode()).hexdigest()
    assert [i["rank"] for i in pack["items"]] == list(range(1, len(pack["items"]) + 1))
    for item in pack["items"]:
        source = (repos[name] / item["path"]).read_bytes()
        assert item["source_sha256"] == hashlib.sha256(source).hexdigest()
        assert item["excerpt_sha256"] == hashlib.sha256(item["text"].encode()).hexdigest()
        digest = item["source_sha256"][:16]
        assert (
            item["handle"] == f"{item['path']}#L{item['start_line']}-L{item['end_line']}@{digest}"
        )
    assert pack["graph"] is None
    assert pack["stats"]["discovery_truncated"] is False


def test_a_changed_task_changes_the_pack_id_and_task_hash_only(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    one = pack_of(repos["go_svc"], "Reserve returns out of stock", cache_dir)
    two = pack_of(repos["go_svc"], "Reserve returns out of stock ", cache_dir)
    assert one["task_sha256"] != two["task_sha256"]
    assert one["pack_id"] != two["pack_id"]
    assert one["items"] == two["items"]


# -- task sources ----------------------------------------------------------------------------


def test_the_task_from_an_argument_a_file_or_stdin_gives_the_same_pack(
    repos: dict[str, Path],
    cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo, task = repos["py_shop"], "fix the refund webhook retry"
    common = ["--repo", str(repo), "--format", "json", "--budget", "2000"]
    outputs = [cli(capsys, "pack", task, *common)[1]]
    task_file = tmp_path / "task.md"
    task_file.write_bytes(task.encode())
    outputs.append(cli(capsys, "pack", "--task-file", str(task_file), *common)[1])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(task.encode())))
    outputs.append(cli(capsys, "pack", "-", *common)[1])
    assert outputs[0] == outputs[1] == outputs[2]
    assert json.loads(outputs[0])["task_sha256"] == hashlib.sha256(task.encode()).hexdigest()
