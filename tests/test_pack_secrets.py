"""Secrets never leave through a pack (SPEC §11): not in an item, the JSON, the Markdown or
the plan, at any budget. Secret lines are listed as omitted with their ranges and the lines
around them still served; sensitive paths are listed by name only."""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from pack_repos import (
    ENV_CANARY,
    GH_TOKEN,
    KEY_BEGIN,
    KEY_BODY,
    KEY_END,
    LOOSE_KEY_BEGIN,
    LOOSE_KEY_BODY,
    SIGNING_PY,
)
from packs import cli, line_of, pack_of, plan_of

FORBIDDEN = [KEY_BEGIN, KEY_END, *KEY_BODY, GH_TOKEN, ENV_CANARY, LOOSE_KEY_BEGIN, *LOOSE_KEY_BODY]
SECRET_TASKS = [
    pytest.param("rotate the GITHUB_TOKEN in app/integrations/signing.py", id="names-key-file"),
    pytest.param("WEBHOOK_SIGNING_KEY BEGIN RSA PRIVATE KEY leaked, rotate it", id="key-words"),
    pytest.param("DEPLOY_BOT_LOGIN GITHUB_TOKEN ghp_ token for the deploy bot", id="token-words"),
    pytest.param(f"signing key line {KEY_BODY[2][:20]} looks wrong", id="key-body-words"),
    pytest.param("sign_webhook verify_webhook_signature hmac digest", id="neighbours"),
    pytest.param("the PAYMENT_API_KEY in .env and config/.env.production", id="names-env"),
    pytest.param(
        'File "app/integrations/signing.py", line 12, in <module>\nValueError: bad key',
        id="frame-inside-key",
    ),
    pytest.param("app/integrations/signing.py:7: token rejected", id="ref-on-token-line"),
    pytest.param("docs/key-rotation.md: rotate the old deploy key yearly", id="loose-key-doc"),
    pytest.param(f"old deploy key {LOOSE_KEY_BODY[1][:24]} in the docs", id="loose-key-body"),
]


@pytest.mark.parametrize("task", SECRET_TASKS)
@pytest.mark.reliability("B3.25")
def test_secrets_never_appear_in_items_json_or_markdown(
    repos: dict[str, Path], cache_dir: Path, capsys: pytest.CaptureFixture[str], task: str
) -> None:
    repo = repos["py_shop"]
    outputs = []
    for budget in (40, 120, 400, 1_500, 32_000):
        pack = pack_of(repo, task, cache_dir, budget)
        for item in pack["items"]:
            assert not [s for s in FORBIDDEN if s in item["text"]], (item["path"], budget)
        outputs.append(json.dumps(pack, ensure_ascii=False))
    for fmt in ("json", "md"):
        code, out, err = cli(capsys, "pack", task, "--repo", str(repo), "--format", fmt)
        assert code == 0, err
        outputs += [out, err]
    code, out, _ = cli(capsys, "plan", task, "--repo", str(repo), "--json")
    outputs.append(out)
    for text in outputs:
        assert not [s for s in FORBIDDEN if s in text]
    # the key file was read and served around its secrets, not skipped wholesale
    served = json.loads(outputs[4])
    if any(i["path"] == "app/integrations/signing.py" for i in served["items"]):
        assert any(o["reason"] == "secret" for o in served["omitted"])


KEY_FILE = "app/integrations/signing.py"
SECRET_SPANS = [
    pytest.param(
        f"rotate the GITHUB_TOKEN and signing key in {KEY_FILE}\n"
        f'  File "{KEY_FILE}", line {line_of(SIGNING_PY, KEY_BODY[1])}, in <module>',
        KEY_FILE,
        [
            (line_of(SIGNING_PY, GH_TOKEN),) * 2,
            (line_of(SIGNING_PY, KEY_BEGIN), line_of(SIGNING_PY, KEY_END)),
        ],
        id="token-and-key-block",
    ),
    pytest.param(
        "docs/key-rotation.md: rotate the old deploy key",
        "docs/key-rotation.md",
        [(5, 8)],  # an unterminated block runs to the end of the file
        id="unterminated-key-block",
    ),
]


@pytest.mark.parametrize(("task", "path", "spans"), SECRET_SPANS)
def test_secret_lines_are_listed_as_omitted_with_their_line_ranges(
    repos: dict[str, Path], cache_dir: Path, task: str, path: str, spans: list[tuple[int, int]]
) -> None:
    pack = pack_of(repos["py_shop"], task, cache_dir)
    listed = [o for o in pack["omitted"] if o["reason"] == "secret" and o["path"] == path]
    assert sorted((o["start_line"], o["end_line"]) for o in listed) == spans
    for entry in listed:
        assert set(entry) == {"path", "reason", "start_line", "end_line"}
    served = [i for i in pack["items"] if i["path"] == path]
    assert served and pack["items"][0]["path"] == path
    secret_lines = {n for lo, hi in spans for n in range(lo, hi + 1)}
    covered = {n for i in served for n in range(i["start_line"], i["end_line"] + 1)}
    assert not secret_lines & covered
    # the excerpt is split around the secret, not dropped: the line before it is served,
    # or listed as too small when only a sliver of one or two lines is left there
    small = {
        n
        for o in pack["omitted"]
        if o["reason"] == "too_small" and o["path"] == path
        for n in range(o["start_line"], o["end_line"] + 1)
    }
    assert {lo - 1 for lo, _ in spans} <= covered | small
    assert covered - secret_lines


def test_a_named_file_whose_best_region_is_a_secret_line_is_still_served_first(
    make_repo: Callable[..., Path], cache_dir: Path
) -> None:
    files = {
        "app/signing.py": f"import os\n\nGITHUB_TOKEN = '{GH_TOKEN}'\n\n\n"
        "def rotate_token():\n    return os.environ.get('NEW_TOKEN')\n",
        "app/github.py": "def github_client(token):\n    return {'token': token}\n",
    }
    for name in ("orders", "payments", "users", "emails", "search", "reports"):
        files[f"app/{name}.py"] = f"def list_{name}(db):\n    return db.query('{name}')\n"
    repo = make_repo(files, name="mini")
    task = "rotate the GITHUB_TOKEN in app/signing.py"
    assert plan_of(repo, task, cache_dir)["candidates"][0]["path"] == "app/signing.py"
    pack = pack_of(repo, task, cache_dir)
    assert {"path": "app/signing.py", "reason": "secret", "start_line": 3, "end_line": 3} in pack[
        "omitted"
    ]
    assert any(i["path"] == "app/signing.py" for i in pack["items"])  # rotate_token is served
    assert pack["items"][0]["path"] == "app/signing.py"


def test_a_secret_written_between_two_packs_of_one_process_is_withheld_from_the_second(
    make_repo: Callable[..., Path], cache_dir: Path
) -> None:
    # a long-lived process remembers each file version's secret lines: the new version is
    # scanned anew, never served under the old version's verdict
    files = {
        "app/signing.py": "import os\n\n\ndef rotate_token():\n    return os.environ.get('T')\n",
        "app/github.py": "def github_client(token):\n    return {'token': token}\n",
    }
    repo = make_repo(files, name="mini")
    task = "rotate_token in app/signing.py"
    first = pack_of(repo, task, cache_dir)
    assert not [o for o in first["omitted"] if o["reason"] == "secret"]
    (repo / "app/signing.py").write_text(
        f"import os\n\nGITHUB_TOKEN = '{GH_TOKEN}'\n\ndef rotate_token():\n"
        "    return os.environ.get('T')\n"
    )
    second = pack_of(repo, task, cache_dir)
    assert {"path": "app/signing.py", "reason": "secret", "start_line": 3, "end_line": 3} in (
        second["omitted"]
    )
    assert GH_TOKEN not in json.dumps(second)


def _pem(kind: str, seed: int) -> str:
    rng = random.Random(seed)
    body = "\n".join(
        base64.b64encode(bytes(rng.randrange(256) for _ in range(48))).decode() for _ in range(8)
    )
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


@pytest.mark.parametrize("path", ["src/signer_keys.py", "tests/test_keys.py"])
def test_a_named_file_of_keys_serves_its_other_lines_and_lists_the_key_lines_as_secret(
    make_repo: Callable[..., Path], cache_dir: Path, path: str
) -> None:
    # every key block is a secret; what is left of the file is one or two lines at a time,
    # and the task names the file: those lines are served, the key lines listed as withheld
    rsa, ec = _pem("RSA PRIVATE KEY", 1), _pem("EC PRIVATE KEY", 2)
    ssh = base64.b64encode(random.Random(3).randbytes(180)).decode()
    text = (
        "# Keys for the signature verifier's tests.\n"
        f'RSA_KEY = """{rsa}"""\n'
        f'EC_KEY = """{ec}"""\n'
        f'ED25519 = "-----BEGIN OPENSSH PRIVATE KEY-----\\n{ssh}\\n'
        '-----END OPENSSH PRIVATE KEY-----\\n"\n'
        "ALL_KEYS = [RSA_KEY, EC_KEY, ED25519]\n"
    )
    repo = make_repo({path: text, "src/verify.py": "def verify(sig):\n    return sig\n"})
    pack = pack_of(repo, f"ALL_KEYS in {path} is missing the ed25519 key", cache_dir)
    served = [i for i in pack["items"] if i["path"] == path]
    lines = "".join(i["text"] for i in served)
    assert "# Keys for the signature verifier's tests.\n" in lines
    assert "ALL_KEYS = [RSA_KEY, EC_KEY, ED25519]\n" in lines
    withheld = {
        n
        for o in pack["omitted"]
        if o["path"] == path and o["reason"] == "secret"
        for n in range(o["start_line"], o["end_line"] + 1)
    }
    key_lines = {n for n, line in enumerate(text.splitlines(), 1) if "KEY" in line[:12]}
    assert key_lines - {text.count("\n")} <= withheld
    assert "PRIVATE KEY" not in lines and ssh[:40] not in json.dumps(pack)


def test_a_named_sensitive_path_is_listed_by_name_only(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    pack = pack_of(
        repos["py_shop"], "PAYMENT_API_KEY in config/.env.production is stale", cache_dir
    )
    entries = [o for o in pack["omitted"] if o["path"] == "config/.env.production"]
    assert entries == [{"path": "config/.env.production", "reason": "sensitive"}]
    assert not [i for i in pack["items"] if ".env" in i["path"]]


@pytest.mark.parametrize(
    ("name", "task", "path"),
    [
        pytest.param("py_shop", "the PAYMENT_API_KEY in .env is wrong", ".env", id="dotenv"),
        pytest.param("ts_pkg", "API_TOKEN in .env.local expired", ".env.local", id="dotenv-local"),
    ],
)
def test_a_named_root_dotenv_is_listed_as_sensitive(
    repos: dict[str, Path], cache_dir: Path, name: str, task: str, path: str
) -> None:
    pack = pack_of(repos[name], task, cache_dir)
    assert {"path": path, "reason": "sensitive"} in pack["omitted"]
