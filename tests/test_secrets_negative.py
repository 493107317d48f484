"""FAIL-level false positives on files that hold no secret: the interpreter's own standard
library (real code, docs and data, whatever its version holds) and generated files shaped like
the usual false-positive sources: lockfiles with integrity hashes, UUIDs and git ids, base64
images, minified JavaScript, a JWT marked as an example."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import sysconfig
import uuid
from pathlib import Path

import pytest

from excerpt.core.secrets import decode_for_scan, scan_text
from excerpt.gate.secret_safety import is_test_fixture

TEXT_SUFFIXES = {".py", ".txt", ".json", ".cfg", ".toml", ".html", ".rst", ".xml", ".ini", ".c"}


def _stdlib_files(limit: int) -> list[tuple[str, str]]:
    lib = Path(sysconfig.get_paths()["stdlib"])
    out: list[tuple[str, str]] = []
    for path in sorted(lib.rglob("*")):
        if len(out) >= limit:
            break
        if path.suffix not in TEXT_SUFFIXES or "site-packages" in path.parts:
            continue
        if not path.is_file() or path.stat().st_size > 1 << 20:
            continue
        text = decode_for_scan(path.read_bytes())
        if text is not None:
            out.append((path.relative_to(lib).as_posix(), text))
    return out


def _generated(count: int) -> list[tuple[str, str]]:
    rng = random.Random(27)
    out = []
    for i in range(count):
        digest = hashlib.sha512(f"pkg{i}".encode()).digest()
        kind = i % 5
        if kind == 0:
            entries = {
                f"node_modules/pkg-{i}-{j}": {
                    "version": f"{j}.{i % 7}.0",
                    "resolved": f"https://registry.npmjs.org/pkg-{j}/-/pkg-{j}-{j}.0.0.tgz",
                    "integrity": "sha512-" + base64.b64encode(digest).decode(),
                }
                for j in range(20)
            }
            out.append((f"lock/{i}/package-lock.json", json.dumps({"packages": entries}, indent=2)))
        elif kind == 1:
            rows = [
                f"{uuid.UUID(int=rng.getrandbits(128))},{rng.getrandbits(160):040x}"
                for _ in range(50)
            ]
            out.append((f"data/{i}/ids.csv", "id,commit\n" + "\n".join(rows) + "\n"))
        elif kind == 2:
            png = base64.b64encode(rng.randbytes(3000)).decode()
            out.append(
                (f"web/{i}/logo.html", f'<img alt="logo" src="data:image/png;base64,{png}">\n')
            )
        elif kind == 3:
            names = [f"{chr(97 + rng.randrange(26))}{rng.randrange(100)}" for _ in range(400)]
            js = ";".join(f"var {n}=function(e,t){{return e+t*{k}}}" for k, n in enumerate(names))
            out.append((f"dist/{i}/app.min.js", js + "\n"))
        else:
            header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
            body = base64.urlsafe_b64encode(b'{"sub":"example-user"}').decode().rstrip("=")
            out.append(
                (
                    f"docs/{i}/auth.md",
                    f"Example token (not a real one): `{header}.{body}.EXAMPLE`\n",
                )
            )
    return out


@pytest.mark.reliability("B3.27", cases=1500)
def test_fail_level_findings_stay_under_one_per_thousand_files_that_hold_no_secret() -> None:
    docs = _stdlib_files(1250) + _generated(250)
    assert len(docs) >= 1000  # the corpus is there: a small one would prove nothing
    fails = [
        (path, f.rule)
        for path, text in docs
        for f in scan_text(text)
        if f.severity == "fail" and not is_test_fixture(path)
    ]
    assert len(fails) * 1000 <= len(docs), fails
