"""Canary secrets on every surface: credentials of every provider format the detector knows
(and a few written by hand in the shapes real code uses), planted in ordinary source files,
never reach a pack (Markdown or JSON), a plan, ``get``, any MCP tool result, stderr, or any
byte of the cache: raw files, every database row (zlib blobs inflated) and the full-text
vocabulary, where a secret's pieces would be terms.

Each file also holds ordinary lines that must be served: the control that the files were read,
ranked and packed, so an empty pack cannot pass.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import TextContent

from cache_contents import cache_surfaces
from conftest import git, git_commit_all, write_tree
from excerpt.cli import main
from excerpt.core.linear import compile_pattern
from excerpt.mcp.server import build_server

pytestmark = pytest.mark.timeout(120)

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _corpus() -> ModuleType:
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    return importlib.import_module("secret_corpus")


# Shapes the generated corpus does not write: a line of Python as code holds it, and the
# secret in it.
HAND_WRITTEN = {
    "stripe-webhook": ('STRIPE_WEBHOOK_SECRET = "{}"', "whsec_9fQ2LmXr7TbVn4KcWd8ZyA1sHgJe5RuP"),
    "aws-secret-key": ('aws_secret_access_key = "{}"', "q7Zr1XkP0bN8cVw3LmT9aYe2HsD6fGj4Ku5RoQiE"),
    "azure-account-key": (
        'CONN = "DefaultEndpointsProtocol=https;AccountName=ordersprod;AccountKey={};'
        'EndpointSuffix=core.windows.net"',
        "Zk3q9X2mPd7Lw1Rb8Tn4Vc6Hy0Gs5Jf2Ke8Ua3Qo1Wi9Zr7Xb4Nm6Cv2Lp0Ds8Fh5Jg3Tk1Yq9We7Ra4Uo2IbE==",
    ),
    "db-password": ('DB_PASSWORD = "{}"', "Vq8#rT2!mLx9pZ4w"),
    "basic-auth": ('HEADERS = {{"Authorization": "Basic {}"}}', "b3JkZXJzOlF4N3JUMm1MOXBaNHdWcTg="),
    "gcp-private-key-id": (
        'KEY = {{"private_key_id": "{}"}}',
        "3f9a2c7e1b8d4f6a0c5e9b2d7f1a4c8e6b0d3f5a",
    ),
    "datadog-api-key": ('DD_API_KEY = "{}"', "8c3f1a9e2b7d4c6f0a5e8b1d9c2f7a4e"),
}
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)


def _is_identifier(part: str) -> bool:
    """A credential's public half (a client or tenant id, an account's e-mail): the corpus
    lists it with the secret, but it is no secret."""
    return bool(_UUID.fullmatch(part)) or ("@" in part and ":" not in part and "\n" not in part)


def _jwt(seed: int, claims: dict[str, object]) -> str:
    """A JSON Web Token as an API client holds one: a real header, real claims, a signature."""
    import base64
    import random

    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    head = part(json.dumps({"alg": "RS256", "typ": "JWT", "kid": f"2024-{seed:02d}"}).encode())
    body = part(json.dumps(claims).encode())
    return f"{head}.{body}.{part(random.Random(seed).randbytes(64))}"


# JavaScript and TypeScript modules of an API client holding tokens in the forms such code
# writes them: a constant, a template literal, an object property, a constructor argument
JS_TOKENS: dict[str, tuple[str, dict[str, object]]] = {
    "orders/client/apiClient.ts": (
        'export const API_TOKEN = "{0}";\n',
        {"sub": "svc-orders", "iss": "https://auth.example.com", "exp": 1800000000},
    ),
    "orders/client/http.js": (
        "  headers: {{ Authorization: `Bearer {0}` }},\n",
        {"sub": "42", "role": "service", "iat": 1700000000},
    ),
    "orders/client/config.ts": (
        'export const config = {{ auth: {{ jwt: "{0}" }} }};\n',
        {"sub": "user-2345678", "exp": 1735689600},
    ),
    "orders/client/sdk.mjs": (
        "const client = new ApiClient('{0}');\n",
        {"aud": "orders-api", "sub": "svc-billing"},
    ),
}


def _js_files() -> tuple[dict[str, str | bytes], list[str]]:
    files: dict[str, str | bytes] = {}
    secrets: list[str] = []
    for n, (path, (line, claims)) in enumerate(sorted(JS_TOKENS.items())):
        token = _jwt(n, claims)
        name = Path(path).stem.replace(".", "_")
        files[path] = (
            f"// The orders API client ({name}).\n{line.format(token)}\n"
            f"export function load_{name}_settings(timeout = 5.0) {{\n"
            f"  console.info('loading the {name} settings');\n"
            "  return { timeout };\n}\n"
        )
        secrets.append(token)
    return files, secrets


def _pem(kind: str, seed: int) -> str:
    import base64
    import random

    rng = random.Random(seed)
    body = "\n".join(base64.b64encode(rng.randbytes(48)).decode() for _ in range(8))
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


# a module of private keys that a task names: its other lines are served, its key lines never
KEY_FILE = "orders/signing/keys.py"
_RSA, _EC = _pem("RSA PRIVATE KEY", 41), _pem("EC PRIVATE KEY", 42)
KEY_TEXT = (
    "# Keys for the signature verifier.\n"
    f'RSA_KEY = """{_RSA}"""\n'
    f'EC_KEY = """{_EC}"""\n'
    "ALL_KEYS = [RSA_KEY, EC_KEY]\n"
)
KEY_TASK = f"ALL_KEYS in {KEY_FILE} is missing the ed25519 key"
# a file whose lines hold invisible format characters: served, and flagged to the agent
INVISIBLE_FILE = "orders/client/admin_check.py"
INVISIBLE_TEXT = (
    'def is_admin(role):\n    return role == "ad\u200bmin" or role == "ro\u2060ot\ufeff"\n'
)


def _files() -> tuple[dict[str, str | bytes], list[str]]:
    """The repository (one file per provider) and every secret planted in it."""
    files, secrets = _js_files()
    files[KEY_FILE] = KEY_TEXT
    files[INVISIBLE_FILE] = INVISIBLE_TEXT
    secrets += [line for key in (_RSA, _EC) for line in key.splitlines()[1:-1]]
    for sample in _corpus().generate(15, contexts=["python"]):
        name = re.sub(r"\W", "_", sample.provider)
        files[f"orders/settings/{name}.py"] = sample.text + _loader(name)
        secrets.extend(p for p in sample.secrets if not _is_identifier(p))
    for name, (line, secret) in HAND_WRITTEN.items():
        module = name.replace("-", "_")
        files[f"orders/settings/{module}.py"] = (
            "import logging\n\nlog = logging.getLogger(__name__)\n\n"
            f"{line.format(secret)}\n" + _loader(module)
        )
        secrets.append(secret)
    return files, secrets


def _loader(name: str) -> str:
    """Ordinary code of its own in each file: what the pack must serve (no two files alike,
    or the pack would serve one copy)."""
    return (
        f"\n\ndef load_{name}_settings(timeout: float = 5.0) -> dict[str, float]:\n"
        f"    log.info('loading the {name} settings')\n"
        f"    return {{'timeout': timeout}}\n"
    )


def _pieces(secret: str) -> Iterator[str]:
    """The secret whole and lower-cased, and each long run of letters and digits in it (what
    an index would keep as a term)."""
    yield secret
    yield secret.lower()
    for run in re.findall(r"[A-Za-z0-9]{12,}", secret):
        if re.search(r"\d", run) and re.search(r"[A-Za-z]", run):  # not a word of the format
            yield run.lower()


def _leaks(surfaces: list[tuple[str, bytes]], secrets: list[str]) -> list[tuple[str, str]]:
    """(surface, masked piece) for each piece of a secret found in a surface: one linear
    pass per surface for all the pieces at once."""
    pieces = sorted({p for secret in secrets for p in _pieces(secret)}, key=len, reverse=True)
    pattern = compile_pattern("|".join(re.escape(p) for p in pieces), linear=True)
    found = []
    for where, data in surfaces:
        for match in pattern.findall(data):
            found.append((where, match[:4].decode("utf-8", "replace") + "…"))
    return found


TASK = (
    "Loading the orders settings times out\n\n"
    "Every load_*_settings function logs 'loading the settings' and then hangs past the timeout."
)


async def _mcp_surfaces(repo: Path, cache: Path, handles: list[str]) -> list[tuple[str, bytes]]:
    out: list[tuple[str, bytes]] = []
    calls: list[tuple[str, dict[str, Any]]] = [
        ("context_pack", {"task": TASK, "budget": 200_000}),
        ("context_pack", {"task": TASK, "budget": 200_000, "format": "json"}),
        ("context_plan", {"task": TASK, "budget": 200_000}),
        ("context_plan", {"task": TASK, "format": "json"}),
        ("context_retrieve", {"handles": handles[:200], "budget": 200_000}),
        ("index_status", {}),
        ("harness_infer", {}),
        ("risk_classify", {"paths": ["orders/settings/stripe_secret.py"]}),
        ("gate_check", {}),
        ("gate_check", {"format": "json"}),
    ]
    async with Client(build_server(repo, cache, tools="all")) as client:
        for name, args in calls:
            result = await client.call_tool(name, args)
            text = "".join(c.text for c in result.content if isinstance(c, TextContent))
            structured = json.dumps(result.structured_content or {}, ensure_ascii=False)
            out.append((f"mcp:{name}", (text + structured).encode("utf-8")))
    return out


@pytest.mark.reliability("T7", cases=94)
@pytest.mark.reliability("B3.25", cases=94 * 6)  # 94 canaries, each on at least 6 surfaces
def test_canary_secrets_reach_no_surface(
    tmp_path: Path,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    files, secrets = _files()
    assert len(HAND_WRITTEN) + len(_corpus().PROVIDERS) >= 30
    root = write_tree(tmp_path / "repo", files)
    git_commit_all(root)
    # the same files staged again under new names: the gate sees every credential added
    write_tree(root, {p.replace("settings/", "staged/"): t for p, t in files.items()})
    git(root, "add", "orders/staged")
    surfaces: list[tuple[str, bytes]] = []

    def cli(*argv: str) -> str:
        main([*argv, "--repo", str(root)])
        out, err = capsys.readouterr()
        surfaces.extend(
            [(f"cli:{argv[0]}:stdout", out.encode()), (f"cli:{argv[0]}:stderr", err.encode())]
        )
        return out

    cli("pack", TASK, "--budget", "200000")
    pack = json.loads(cli("pack", TASK, "--budget", "200000", "--json"))
    cli("plan", TASK)
    cli("plan", TASK, "--json")
    # the key file, named by a task: what is not a key is served, the key lines are omitted
    keys = json.loads(cli("pack", KEY_TASK, "--json"))
    kept = "".join(i["text"] for i in keys["items"] if i["path"] == KEY_FILE)
    assert "# Keys for the signature verifier.\n" in kept and "ALL_KEYS = [" in kept
    assert any(o["path"] == KEY_FILE and o["reason"] == "secret" for o in keys["omitted"])
    # invisible characters: served as they are, with a warning for the agent
    invisible = json.loads(cli("pack", "is_admin accepts a role it should not", "--json"))
    assert any(i["path"] == INVISIBLE_FILE and "\u200b" in i["text"] for i in invisible["items"])
    assert {"code": "zero-width", "path": INVISIBLE_FILE} in [
        {k: w[k] for k in ("code", "path")} for w in invisible["warnings"]
    ]
    cli("index", "--json")
    cli("gate", "--staged", "--json")
    handles = [item["handle"] for item in pack["items"]]
    served = {item["path"] for item in pack["items"]}
    for path in sorted(files):  # whole files, by handle (JavaScript and TypeScript too)
        digest = next(
            (i["handle"].rsplit("@", 1)[1] for i in pack["items"] if i["path"] == path), None
        )
        if digest is not None:
            lines = str(files[path]).count("\n")
            handles.append(f"{path}#L1-L{lines}@{digest}")
    cli("get", *handles[:400], "--json")
    surfaces.extend(anyio.run(_mcp_surfaces, root, cache_dir, handles))
    surfaces.append(("logs", "\n".join(r.getMessage() for r in caplog.records).encode()))
    surfaces.extend(cache_surfaces(cache_dir, tmp_path / "scratch"))

    # the control: the files were served, ordinary lines of them included
    assert len(served) >= 40, sorted(served)
    everything = b"\n".join(data for _, data in surfaces)
    assert all(
        f"load_{n}_settings".encode() in everything for n in ("stripe_secret", "jwt", "apiClient")
    )
    leaked = _leaks(surfaces, secrets)
    assert leaked == [], sorted({(w.rsplit("/", 1)[-1], p) for w, p in leaked})
