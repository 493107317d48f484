"""``excerpt graph export`` and ``pack --graph``: the exported graph carries a digest of its
canonical content; a pack built on a graph file says its integrity is valid and its freshness
unverified; a tampered graph file is refused."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from excerpt.pack import pack_schema
from excerpt.pipeline import export_graph
from packs import Doc, canonical, cli, recomputed_pack_id


def _export(capsys: pytest.CaptureFixture[str], repo: Path, target: Path) -> Doc:
    code, out, err = cli(capsys, "graph", "export", "--repo", str(repo), "-o", str(target))
    assert code == 0, err
    assert out == ""
    return dict(json.loads(target.read_text(encoding="utf-8")))


def test_graph_export_carries_a_digest_of_its_canonical_content(
    repos: dict[str, Path], cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repos["py_shop"]
    doc = _export(capsys, repo, tmp_path / "graph.json")
    body = {k: v for k, v in doc.items() if k != "sha256"}
    assert doc["sha256"] == hashlib.sha256(canonical(body)).hexdigest()
    assert doc["schema"] == "excerpt.graph/v1"
    edge = {"src": "app/services/refund.py", "dst": "app/models.py", "kind": "imports"}
    assert edge in doc["edges"]
    assert "app/services/refund.py" in doc["nodes"] and ".env" not in doc["nodes"]
    code, out, _ = cli(capsys, "graph", "export", "--repo", str(repo))
    assert code == 0 and json.loads(out) == doc
    assert export_graph(repo, cache_dir=tmp_path / "other") == doc


def test_pack_with_a_graph_file_reports_integrity_valid_freshness_unverified(
    repos: dict[str, Path], cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repos["py_shop"]
    target = tmp_path / "graph.json"
    doc = _export(capsys, repo, target)
    argv = ["pack", "fix the refund webhook retry", "--repo", str(repo), "--graph", str(target)]
    code, out, err = cli(capsys, *argv, "--format", "json")
    assert code == 0, err
    pack = json.loads(out)
    assert pack["graph"] == {
        "source": "file",
        "integrity": "valid",
        "note": "integrity valid, freshness unverified",
        "sha256": doc["sha256"],
    }
    Draft202012Validator(pack_schema()).validate(pack)
    assert pack["pack_id"] == recomputed_pack_id(pack)
    code, md, _ = cli(capsys, *argv, "--format", "md")
    assert "integrity valid, freshness unverified" in md and doc["sha256"] in md


def _alter_edge(doc: Doc) -> None:
    doc["edges"][0]["dst"] = "app/settings.py"


def _alter_kind(doc: Doc) -> None:
    doc["edges"][0]["kind"] = "tests" if doc["edges"][0]["kind"] == "imports" else "imports"


def _drop_edge(doc: Doc) -> None:
    doc["edges"].pop()


def _drop_digest(doc: Doc) -> None:
    del doc["sha256"]


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(_alter_edge, id="edge-dst-altered"),
        pytest.param(_alter_kind, id="edge-kind-altered"),
        pytest.param(_drop_edge, id="edge-removed"),
        pytest.param(_drop_digest, id="digest-removed"),
    ],
)
def test_a_tampered_graph_file_is_refused(
    repos: dict[str, Path],
    cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tamper: Callable[[Doc], None],
) -> None:
    repo = repos["py_shop"]
    target = tmp_path / "graph.json"
    doc = _export(capsys, repo, target)
    tamper(doc)
    target.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    argv = ["pack", "fix the refund webhook retry", "--repo", str(repo), "--graph", str(target)]
    code, out, err = cli(capsys, *argv, "--format", "json")
    assert code == 2
    # under --format json the error is one JSON line on stdout, and the same on stderr
    assert err == out and out.count("\n") == 1 and "Traceback" not in err
    doc = json.loads(out)
    assert (doc["code"], doc["exit"]) == ("usage_error", 2) and "graph" in doc["error"]
