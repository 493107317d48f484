"""Verify an excerpt pack against the files it came from. Standard library only.

Usage: python verify_pack.py PACK.json [--repo DIR]   (exit 0: verified, 1: not)
Checks every item's source_sha256, line range, excerpt_sha256, bytes and text, the budget's
used_bytes (and used_bytes <= rendered_bytes <= bytes), and pack_id (sha256 of the
canonical JSON of every other field).
"""

import hashlib
import json
import sys
from pathlib import Path


def lines_of(data):
    parts = data.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def problems(pack, repo):
    body = {k: v for k, v in pack.items() if k != "pack_id"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if pack.get("pack_id") != "sha256:" + hashlib.sha256(canonical.encode()).hexdigest():
        yield "pack_id does not match the pack's content"
    used = 0
    for item in pack["items"]:
        where = f"item {item['rank']} ({item['path']})"
        path = (repo / item["path"]).resolve()
        if not path.is_relative_to(repo.resolve()) or not path.is_file():
            yield f"{where}: not a file inside the repository"
            continue
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != item["source_sha256"]:
            yield f"{where}: source_sha256 differs (the file changed?)"
        lines = lines_of(data)
        start, end = item["start_line"], item["end_line"]
        if not 1 <= start <= end <= len(lines):
            yield f"{where}: lines {start}-{end} outside 1-{len(lines)}"
            continue
        excerpt = b"".join(lines[start - 1 : end])
        if hashlib.sha256(excerpt).hexdigest() != item["excerpt_sha256"]:
            yield f"{where}: excerpt_sha256 differs from the file's lines"
        if item["text"].encode("utf-8") != excerpt or item["bytes"] != len(excerpt):
            yield f"{where}: text or bytes differ from the file's lines"
        used += item["bytes"]
    if used != pack["budget"]["used_bytes"] or used > pack["budget"]["bytes"]:
        yield f"used_bytes {pack['budget']['used_bytes']} is not the sum {used} within budget"
    rendered = pack["budget"].get("rendered_bytes")
    if rendered is not None and not used <= rendered <= pack["budget"]["bytes"]:
        yield f"rendered_bytes {rendered} is not between used_bytes and the budget"


def main(argv):
    repo = Path(argv[argv.index("--repo") + 1]) if "--repo" in argv else Path(".")
    pack = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    found = list(problems(pack, repo))
    for problem in found:
        print(f"FAIL {problem}")
    print("FAIL" if found else f"OK {len(pack['items'])} items verified")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
