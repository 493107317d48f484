"""The Markdown rendering of a pack: each item under its file's header with its handle,
kind and reasons, its exact text in a fence longer than any run of backticks it holds, and a
size line that is the rendering's true size."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from excerpt.core.tokens import o200k_count
from packs import Doc, cli

FENCE_LANG = {".py": "python", ".ts": "typescript", ".go": "go", ".md": "markdown"}


def _check_markdown(md: str, pack: Doc) -> None:
    """Items in the pack's order, each run of one file's items under a header: the file's
    first with its number, path and reason codes, a later one (the reading came back to the
    file) with the same number and ``again``; each item a handle + kind line, then a fenced
    block holding the exact text."""
    cursor = 0
    number = {p: n for n, p in enumerate(dict.fromkeys(i["path"] for i in pack["items"]), 1)}
    previous = None
    seen: set[str] = set()
    for item in pack["items"]:
        path = item["path"]
        if path != previous:
            header = f"\n## {number[path]}. `{path}`" + (", again\n" if path in seen else "")
            cursor = md.index(header, cursor)
            seen.add(path)
            previous = path
        at = md.index(f"\n`{item['handle']}` {item['kind']}", cursor) + 1
        lines = md[at:].split("\n", 2)
        opening = lines[1]
        fence = opening[: len(opening) - len(opening.lstrip("`"))]
        longest = max((len(run) for run in re.findall(r"`+", item["text"])), default=0)
        assert len(fence) >= 3 and len(fence) > longest, (fence, longest)
        suffix = Path(item["path"]).suffix
        assert opening[len(fence) :] == FENCE_LANG.get(suffix, opening[len(fence) :])
        body_start = at + len(lines[0]) + 1 + len(opening) + 1
        body_end = md.index("\n" + fence + "\n", body_start - 1) + 1
        expected = item["text"] if item["text"].endswith("\n") else item["text"] + "\n"
        assert md[body_start:body_end] == expected, item["path"]
        cursor = body_end


MD_CASES = [
    pytest.param("py_shop", "fix the refund webhook retry", id="python"),
    pytest.param("ts_pkg", "export Cart and checkout from src/index.ts", id="ts-no-final-eol"),
    pytest.param("go_svc", "reserve then restock, see docs/notes.md", id="go-crlf"),
]


@pytest.mark.parametrize(("name", "task"), MD_CASES)
def test_markdown_shows_each_item_with_header_handle_reasons_and_exact_fenced_text(
    repos: dict[str, Path],
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    task: str,
) -> None:
    repo = repos[name]
    code, out, _ = cli(capsys, "pack", task, "--repo", str(repo), "--format", "json")
    assert code == 0
    pack = json.loads(out)
    code, md, _ = cli(capsys, "pack", task, "--repo", str(repo), "--format", "md")
    assert code == 0
    assert md.startswith(f"# Context pack: {len(pack['items'])} excerpts from ")
    size, tokens = len(md.encode()), o200k_count(md)
    assert pack["budget"]["rendered_bytes"] == size <= pack["budget"]["bytes"]
    assert pack["budget"]["tokens"] == {"o200k": tokens}
    assert f"this text {size:,} bytes, {tokens:,} o200k tokens." in md
    assert pack["items"]
    _check_markdown(md, pack)
    if name != "py_shop":  # the odd line endings are served byte-exact
        odd = [i for i in pack["items"] if i["path"] in ("src/index.ts", "docs/notes.md")]
        assert odd and all(i["text"] in md for i in odd)


@pytest.mark.reliability("B5.40")
def test_text_holding_a_backtick_fence_gets_a_longer_fence(
    repos: dict[str, Path], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, task = repos["ts_pkg"], "receiptMarkdown renders the receipt total"
    code, out, _ = cli(capsys, "pack", task, "--repo", str(repo), "--format", "json")
    pack = json.loads(out)
    fenced = [i for i in pack["items"] if "```" in i["text"]]
    assert fenced and fenced[0]["path"] == "src/receipt.ts"
    code, md, _ = cli(capsys, "pack", task, "--repo", str(repo), "--format", "md")
    assert code == 0
    assert "\n````typescript\n" in md
    _check_markdown(md, pack)
