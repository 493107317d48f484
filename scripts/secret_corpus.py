"""A generated positive corpus: provider-format credentials embedded in code, config, logs, diffs.

Every credential is random (seeded, so the corpus is the same on every run) and follows the
provider's published token format: prefix, alphabet, length, separators, checksum where the
format has one. Each sample is a small document in one of eight contexts with the credential on
known lines, so a detector's recall can be read per provider and per context.

Usage as a module: ``generate(seed=15)`` returns the samples; ``python scripts/secret_corpus.py``
prints a count per provider and context (never the credentials).
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["CONTEXTS", "PROVIDERS", "Sample", "generate"]

DIGITS = string.digits
HEX = "0123456789abcdef"
UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
URLSAFE = ALNUM + "-_"
BASE32 = UPPER + "234567"
B64 = ALNUM + "+/"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

Pairs = tuple[tuple[str, str], ...]  # (setting name, value) lines of one credential


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    """One document with one credential on lines ``start_line..end_line`` (1-based)."""

    id: str
    provider: str
    context: str
    text: str
    start_line: int
    end_line: int
    secrets: tuple[str, ...]  # the credential's parts, for masking checks only


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _base62(number: int, width: int) -> str:
    chars = DIGITS + string.ascii_uppercase + string.ascii_lowercase
    out = ""
    while number:
        number, rem = divmod(number, 62)
        out = chars[rem] + out
    return out.rjust(width, "0")


def _github(prefix: str) -> Callable[[random.Random], Pairs]:
    # 30 random base62 characters and a CRC32 checksum of them in 6 base62 digits
    def make(rng: random.Random) -> Pairs:
        body = _pick(rng, ALNUM, 30)
        token = prefix + body + _base62(zlib.crc32(body.encode()), 6)
        return (("GITHUB_TOKEN", token),)

    return make


def _pem(kind: str, first: bytes, size: int) -> Callable[[random.Random], Pairs]:
    # DER-looking body: the ASN.1 header of the key type, then random bytes, 64 columns
    def make(rng: random.Random) -> Pairs:
        der = first + bytes(rng.getrandbits(8) for _ in range(size))
        body = base64.b64encode(der).decode("ascii")
        rows = [body[i : i + 64] for i in range(0, len(body), 64)]
        block = "\n".join([f"-----BEGIN {kind}-----", *rows, f"-----END {kind}-----"])
        return (("PRIVATE_KEY", block),)

    return make


def _aws(rng: random.Random) -> Pairs:
    return (
        ("AWS_ACCESS_KEY_ID", "AKIA" + _pick(rng, BASE32, 16)),
        ("AWS_SECRET_ACCESS_KEY", _pick(rng, B64, 40)),
    )


def _aws_session(rng: random.Random) -> Pairs:
    return (
        ("AWS_ACCESS_KEY_ID", "ASIA" + _pick(rng, BASE32, 16)),
        ("AWS_SECRET_ACCESS_KEY", _pick(rng, B64, 40)),
    )


def _jwt(rng: random.Random) -> Pairs:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {
        "sub": str(rng.randrange(10**6, 10**7)),
        "name": rng.choice(["Ada Byron", "Lin Chen", "Omar Haddad", "Priya Nair"]),
        "iat": 1_700_000_000 + rng.randrange(10**7),
        "exp": 1_800_000_000 + rng.randrange(10**7),
    }
    payload = _b64url(json.dumps(claims).encode())
    signature = _b64url(bytes(rng.getrandbits(8) for _ in range(32)))
    return (("AUTH_TOKEN", f"{header}.{payload}.{signature}"),)


def _password(rng: random.Random) -> str:
    return _pick(rng, ALNUM, rng.randrange(10, 14)) + rng.choice("!#%*+") + _pick(rng, ALNUM, 3)


def _user(rng: random.Random) -> str:
    return rng.choice(["app", "svc_orders", "billing", "deploy", "reporting", "etl_user"])


def _host(rng: random.Random) -> str:
    return rng.choice(["db.internal.acme.io", "10.20.4.17", "pg-prod-2.corp.net", "rds.eu1.co"])


def _url(scheme: str, port: int, path: str, name: str) -> Callable[[random.Random], Pairs]:
    def make(rng: random.Random) -> Pairs:
        url = f"{scheme}://{_user(rng)}:{_password(rng)}@{_host(rng)}:{port}{path}"
        return ((name, url),)

    return make


def _mongo_srv(rng: random.Random) -> Pairs:
    cluster = f"cluster{rng.randrange(9)}.{_pick(rng, LOWER_ALNUM, 5)}.mongodb.net"
    return (("MONGODB_URI", f"mongodb+srv://{_user(rng)}:{_password(rng)}@{cluster}/orders"),)


def _https_basic(rng: random.Random) -> Pairs:
    url = f"https://{_user(rng)}:{_password(rng)}@artifacts.acme.io/repository/pypi/simple"
    return (("PIP_INDEX_URL", url),)


def _jdbc(rng: random.Random) -> Pairs:
    url = f"jdbc:postgresql://{_host(rng)}:5432/orders?user={_user(rng)}&password={_password(rng)}"
    return (("JDBC_URL", url),)


def _azure_storage(rng: random.Random) -> Pairs:
    key = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(64))).decode()
    account = "acme" + _pick(rng, LOWER_ALNUM, 8)
    conn = (
        f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};"
        "EndpointSuffix=core.windows.net"
    )
    return (("AZURE_STORAGE_CONNECTION_STRING", conn),)


def _azure_sas(rng: random.Random) -> Pairs:
    sig = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(32))).decode()
    sig = sig.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    account = "acme" + _pick(rng, LOWER_ALNUM, 6)
    url = (
        f"https://{account}.blob.core.windows.net/exports?sv=2022-11-02&ss=b&srt=co&sp=rl"
        f"&se=2031-01-01T00:00:00Z&st=2024-01-01T00:00:00Z&spr=https&sig={sig}"
    )
    return (("AZURE_SAS_URL", url),)


def _uuid(rng: random.Random) -> str:
    return "-".join(_pick(rng, HEX, n) for n in (8, 4, 4, 4, 12))


def _azure_client_secret(rng: random.Random) -> Pairs:
    # a service principal as an app's settings carry it: tenant, client id, client secret
    secret = _pick(rng, ALNUM, 3) + rng.choice(DIGITS) + "Q~" + _pick(rng, ALNUM + "_~.-", 34)
    return (
        ("AZURE_TENANT_ID", _uuid(rng)),
        ("AZURE_CLIENT_ID", _uuid(rng)),
        ("AZURE_CLIENT_SECRET", secret),
    )


def _alibaba(rng: random.Random) -> Pairs:
    return (
        ("ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAI" + _pick(rng, ALNUM, 20)),
        ("ALIBABA_CLOUD_ACCESS_KEY_SECRET", _pick(rng, ALNUM, 30)),
    )


def _gcp_service_account(rng: random.Random) -> Pairs:
    # the "private_key" field of a service-account key file: a PKCS#8 block
    ((_, block),) = _pem("PRIVATE KEY", PKCS8_DER, 1150)(rng)
    email = f"deploy@acme-{_pick(rng, LOWER_ALNUM, 6)}.iam.gserviceaccount.com"
    return (("private_key", block), ("client_email", email))


def _slack_webhook(rng: random.Random) -> Pairs:
    url = (
        f"https://hooks.slack.com/services/T{_pick(rng, UPPER_ALNUM, 10)}"
        f"/B{_pick(rng, UPPER_ALNUM, 10)}/{_pick(rng, ALNUM, 24)}"
    )
    return (("SLACK_WEBHOOK_URL", url),)


def _discord_bot(rng: random.Random) -> Pairs:
    user_id = str(rng.randrange(10**17, 10**18 * 9)).encode()
    first = base64.b64encode(user_id).decode().rstrip("=")
    return (("DISCORD_BOT_TOKEN", f"{first}.{_pick(rng, URLSAFE, 6)}.{_pick(rng, URLSAFE, 38)}"),)


def _discord_webhook(rng: random.Random) -> Pairs:
    channel = rng.randrange(10**17, 10**18)
    url = f"https://discord.com/api/webhooks/{channel}/{_pick(rng, URLSAFE, 68)}"
    return (("DISCORD_WEBHOOK", url),)


def _telegram(rng: random.Random) -> Pairs:
    return (("TELEGRAM_BOT_TOKEN", f"{rng.randrange(10**8, 10**10)}:AA{_pick(rng, URLSAFE, 33)}"),)


def _mapbox(rng: random.Random) -> Pairs:
    claims = _b64url(json.dumps({"u": "acme-maps", "a": _pick(rng, LOWER_ALNUM, 25)}).encode())
    return (("MAPBOX_SECRET_TOKEN", f"sk.{claims}.{_pick(rng, URLSAFE, 22)}"),)


def _simple(name: str, *parts: tuple[str, str, int]) -> Callable[[random.Random], Pairs]:
    """A token made of literal prefixes and random runs: (literal, alphabet, length) triples."""

    def make(rng: random.Random) -> Pairs:
        return ((name, "".join(lit + _pick(rng, alpha, n) for lit, alpha, n in parts)),)

    return make


def _pypi(rng: random.Random) -> Pairs:
    # a macaroon: a fixed base64 header naming pypi.org, then the serialized caveats
    macaroon = b"\x02\x01\x08pypi.org\x02" + bytes(rng.getrandbits(8) for _ in range(120))
    return (("PYPI_TOKEN", "pypi-" + _b64url(macaroon)),)


def _openai_legacy(rng: random.Random) -> Pairs:
    return (("OPENAI_API_KEY", f"sk-{_pick(rng, ALNUM, 20)}T3BlbkFJ{_pick(rng, ALNUM, 20)}"),)


def _openai_project(rng: random.Random) -> Pairs:
    key = f"sk-proj-{_pick(rng, URLSAFE, 74)}T3BlbkFJ{_pick(rng, URLSAFE, 74)}"
    return (("OPENAI_API_KEY", key),)


def _anthropic(kind: str) -> Callable[[random.Random], Pairs]:
    def make(rng: random.Random) -> Pairs:
        return (("ANTHROPIC_API_KEY", f"sk-ant-{kind}-{_pick(rng, URLSAFE, 93)}AA"),)

    return make


def _age(rng: random.Random) -> Pairs:
    return (("AGE_IDENTITY", "AGE-SECRET-KEY-1" + _pick(rng, BECH32, 58).upper()),)


def _basic_header(rng: random.Random) -> Pairs:
    pair = f"{_user(rng)}:{_password(rng)}".encode()
    return (("Authorization", "Basic " + base64.b64encode(pair).decode()),)


def _generic_password(rng: random.Random) -> Pairs:
    return (("DB_PASSWORD", _password(rng)),)


RSA_DER = b"0\x82\x04\xa4\x02\x01\x00\x02\x82\x01\x01\x00"
EC_DER = b"0w\x02\x01\x01\x04 "
PKCS8_DER = b"0\x82\x04\xbe\x02\x01\x000\r\x06\t*\x86H\x86\xf7\r\x01\x01\x01\x05\x00"
OPENSSH = b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none\x00"

PROVIDERS: dict[str, Callable[[random.Random], Pairs]] = {
    "aws-access-key": _aws,
    "aws-session-key": _aws_session,
    "github-classic-pat": _github("ghp_"),
    "github-oauth": _github("gho_"),
    "github-app-server": _github("ghs_"),
    "github-refresh": _github("ghr_"),
    "github-fine-grained": _simple("GITHUB_TOKEN", ("github_pat_11", UPPER_ALNUM, 20),
                                   ("_", ALNUM, 59)),
    "gitlab-pat": _simple("GITLAB_TOKEN", ("glpat-", URLSAFE, 20)),
    "slack-bot": _simple("SLACK_BOT_TOKEN", ("xoxb-", DIGITS, 12), ("-", DIGITS, 13),
                         ("-", ALNUM, 24)),
    "slack-user": _simple("SLACK_TOKEN", ("xoxp-", DIGITS, 12), ("-", DIGITS, 12),
                          ("-", DIGITS, 13), ("-", HEX, 32)),
    "slack-webhook": _slack_webhook,
    "stripe-secret": _simple("STRIPE_SECRET_KEY", ("sk_live_51", ALNUM, 97)),
    "stripe-restricted": _simple("STRIPE_KEY", ("rk_live_51", ALNUM, 97)),
    "openai-legacy": _openai_legacy,
    "openai-project": _openai_project,
    "anthropic-api": _anthropic("api03"),
    "anthropic-admin": _anthropic("admin01"),
    "google-api-key": _simple("GOOGLE_API_KEY", ("AIza", URLSAFE, 35)),
    "google-oauth-secret": _simple("GOOGLE_CLIENT_SECRET", ("GOCSPX-", URLSAFE, 28)),
    "gcp-service-account": _gcp_service_account,
    "jwt": _jwt,
    "rsa-private-key": _pem("RSA PRIVATE KEY", RSA_DER, 1100),
    "ec-private-key": _pem("EC PRIVATE KEY", EC_DER, 100),
    "pkcs8-private-key": _pem("PRIVATE KEY", PKCS8_DER, 1150),
    "openssh-private-key": _pem("OPENSSH PRIVATE KEY", OPENSSH, 360),
    "postgres-url": _url("postgres", 5432, "/orders", "DATABASE_URL"),
    "mysql-url": _url("mysql", 3306, "/shop", "DATABASE_URL"),
    "redis-url": _url("redis", 6379, "/0", "REDIS_URL"),
    "amqp-url": _url("amqp", 5672, "/jobs", "BROKER_URL"),
    "mongodb-srv-url": _mongo_srv,
    "https-basic-url": _https_basic,
    "jdbc-password": _jdbc,
    "azure-storage-key": _azure_storage,
    "azure-sas-token": _azure_sas,
    "azure-client-secret": _azure_client_secret,
    "twilio-api-key": _simple("TWILIO_API_KEY", ("SK", HEX, 32)),
    "sendgrid": _simple("SENDGRID_API_KEY", ("SG.", URLSAFE, 22), (".", URLSAFE, 43)),
    "npm": _simple("NPM_TOKEN", ("npm_", ALNUM, 36)),
    "pypi": _pypi,
    "huggingface": _simple("HF_TOKEN", ("hf_", string.ascii_letters, 34)),
    "digitalocean-pat": _simple("DIGITALOCEAN_TOKEN", ("dop_v1_", HEX, 64)),
    "shopify-access": _simple("SHOPIFY_ACCESS_TOKEN", ("shpat_", HEX, 32)),
    "shopify-shared-secret": _simple("SHOPIFY_SECRET", ("shpss_", HEX, 32)),
    "mailgun": _simple("MAILGUN_API_KEY", ("key-", HEX, 32)),
    "mailchimp": _simple("MAILCHIMP_API_KEY", ("", HEX, 32), ("-us", "123456789", 1)),
    "discord-bot": _discord_bot,
    "discord-webhook": _discord_webhook,
    "telegram-bot": _telegram,
    "square-access": _simple("SQUARE_ACCESS_TOKEN", ("EAAA", URLSAFE, 60)),
    "square-oauth-secret": _simple("SQUARE_SECRET", ("sq0csp-", URLSAFE, 43)),
    "databricks": _simple("DATABRICKS_TOKEN", ("dapi", HEX, 32)),
    "atlassian-api": _simple("JIRA_API_TOKEN", ("ATATT3xFfGF0", URLSAFE, 170),
                             ("=", HEX.upper(), 8)),
    "linear": _simple("LINEAR_API_KEY", ("lin_api_", ALNUM, 40)),
    "notion": _simple("NOTION_TOKEN", ("ntn_", DIGITS, 11), ("", ALNUM, 35)),
    "notion-legacy": _simple("NOTION_TOKEN", ("secret_", ALNUM, 43)),
    "doppler": _simple("DOPPLER_TOKEN", ("dp.st.prd.", ALNUM, 40)),
    "vault": _simple("VAULT_TOKEN", ("hvs.CAESI", URLSAFE, 86)),
    "terraform-cloud": _simple("TFE_TOKEN", ("", ALNUM, 14), (".atlasv1.", ALNUM, 67)),
    "grafana-service-account": _simple("GRAFANA_TOKEN", ("glsa_", ALNUM, 32), ("_", HEX, 8)),
    "newrelic-user": _simple("NEW_RELIC_API_KEY", ("NRAK-", UPPER_ALNUM, 27)),
    "sentry-user": _simple("SENTRY_AUTH_TOKEN", ("sntryu_", HEX, 64)),
    "dynatrace": _simple("DT_API_TOKEN", ("dt0c01.", UPPER_ALNUM, 24), (".", UPPER_ALNUM, 64)),
    "age-secret-key": _age,
    "postman": _simple("POSTMAN_API_KEY", ("PMAK-", HEX, 24), ("-", HEX, 34)),
    "pulumi": _simple("PULUMI_ACCESS_TOKEN", ("pul-", HEX, 40)),
    "groq": _simple("GROQ_API_KEY", ("gsk_", ALNUM, 52)),
    "xai": _simple("XAI_API_KEY", ("xai-", ALNUM, 80)),
    "perplexity": _simple("PERPLEXITY_API_KEY", ("pplx-", ALNUM, 48)),
    "replicate": _simple("REPLICATE_API_TOKEN", ("r8_", ALNUM, 37)),
    "supabase": _simple("SUPABASE_ACCESS_TOKEN", ("sbp_", HEX, 40)),
    "alibaba": _alibaba,
    "rubygems": _simple("GEM_HOST_API_KEY", ("rubygems_", HEX, 48)),
    "nuget": _simple("NUGET_API_KEY", ("oy2", LOWER_ALNUM, 43)),
    "clojars": _simple("CLOJARS_TOKEN", ("CLOJARS_", LOWER_ALNUM, 60)),
    "bitbucket-app": _simple("BITBUCKET_APP_PASSWORD", ("ATBB", ALNUM, 32), ("", HEX.upper(), 8)),
    "dockerhub-pat": _simple("DOCKER_PAT", ("dckr_pat_", URLSAFE, 27)),
    "airtable-pat": _simple("AIRTABLE_TOKEN", ("pat", ALNUM, 14), (".", HEX, 64)),
    "facebook-access": _simple("FB_ACCESS_TOKEN", ("EAAG", ALNUM, 180)),
    "mapbox-secret": _mapbox,
    "basic-auth-header": _basic_header,
    "generic-password": _generic_password,
}  # fmt: skip

# -- contexts: each renders the credential's lines inside a plausible document -----------------


def _snake(name: str) -> str:
    return name.lower() if name.isupper() or "_" in name else name


def _render_python(pairs: Pairs) -> tuple[list[str], list[str], list[str]]:
    head = ["import os", "import logging", "", "log = logging.getLogger(__name__)", "", ""]
    body: list[str] = []
    for name, value in pairs:
        if "\n" in value:
            body.append(f'{name} = """{value}"""')
        else:
            body.append(f'{name} = "{value}"')
    tail = ["", "", "def connect(timeout: float = 5.0) -> None:", '    log.info("connecting")']
    return head, body, tail


def _render_js(pairs: Pairs) -> tuple[list[str], list[str], list[str]]:
    head = ["'use strict';", "", "const axios = require('axios');", "", "const config = {"]
    body = []
    for name, value in pairs:
        key = _camel(name)
        body.append(f"  {key}: `{value}`," if "\n" in value else f"  {key}: '{value}',")
    tail = ["  timeout: 5000,", "};", "", "module.exports = config;"]
    return head, body, tail


def _camel(name: str) -> str:
    words = name.lower().split("_")
    return words[0] + "".join(w.title() for w in words[1:])


def _render_yaml(pairs: Pairs) -> tuple[list[str], list[str], list[str]]:
    head = ["service:", "  name: orders", "  replicas: 3", "  env:"]
    body = []
    for name, value in pairs:
        if "\n" in value:
            body.append(f"    {_snake(name)}: |")
            body.extend("      " + row for row in value.split("\n"))
        else:
            body.append(f'    {_snake(name)}: "{value}"')
    tail = ["  resources:", "    limits:", "      memory: 512Mi"]
    return head, body, tail


def _render_env(pairs: Pairs) -> tuple[list[str], list[str], list[str]]:
    head = ["# orders service", "APP_ENV=production", "LOG_LEVEL=info"]
    body = []
    for name, value in pairs:
        shown = value.replace("\n", "\\n")
        quoted = "\n" in value or " " in value
        body.append(f'{name.upper()}="{shown}"' if quoted else f"{name.upper()}={value}")
    tail = ["PORT=8080", "WORKERS=4"]
    return head, body, tail


def _render_json(pairs: Pairs) -> tuple[list[str], list[str], list[str]]:
    head = ["{", '  "name": "orders",', '  "region": "eu-west-1",', '  "credentials": {']
    body = []
    for i, (name, value) in enumerate(pairs):
        comma = "," if i < len(pairs) - 1 else ""
        body.append(f'    "{_snake(name)}": {json.dumps(value)}{comma}')
    tail = ["  },", '  "retries": 3', "}"]
    return head, body, tail


def _render_ini(pairs: Pairs) -> tuple[list[str], list[str], list[str]]:
    head = ["[server]", "host = 0.0.0.0", "port = 8080", "", "[credentials]"]
    body = []
    for name, value in pairs:
        rows = value.split("\n")
        body.append(f"{_snake(name)} = {rows[0]}")
        body.extend("    " + row for row in rows[1:])
    tail = ["", "[logging]", "level = info"]
    return head, body, tail


def _render_log(pairs: Pairs) -> tuple[list[str], list[str], list[str]]:
    head = [
        "2024-05-14T09:12:01.114Z INFO  [main] orders starting, version 4.2.1",
        "2024-05-14T09:12:01.380Z INFO  [main] loaded 14 routes",
    ]
    body = []
    for name, value in pairs:
        shown = value.replace("\n", "\\n")
        body.append(f"2024-05-14T09:12:01.402Z DEBUG [config] resolved {name}={shown}")
    tail = ["2024-05-14T09:12:01.517Z INFO  [http] listening on :8080"]
    return head, body, tail


def _render_diff(pairs: Pairs) -> tuple[list[str], list[str], list[str]]:
    head = [
        "diff --git a/deploy/settings.env b/deploy/settings.env",
        "index 3f2a1c9..8b7d4e0 100644",
        "--- a/deploy/settings.env",
        "+++ b/deploy/settings.env",
        "@@ -1,4 +1,6 @@",
        " APP_ENV=production",
        " LOG_LEVEL=info",
    ]
    body = []
    for name, value in pairs:
        rows = value.split("\n")
        body.append(f"+{name.upper()}={rows[0]}")
        body.extend("+" + row for row in rows[1:])
    tail = [" PORT=8080", " WORKERS=4"]
    return head, body, tail


Renderer = Callable[[Pairs], tuple[list[str], list[str], list[str]]]
CONTEXTS: dict[str, Renderer] = {
    "python": _render_python,
    "js": _render_js,
    "yaml": _render_yaml,
    "env": _render_env,
    "json": _render_json,
    "ini": _render_ini,
    "log": _render_log,
    "diff": _render_diff,
}


def generate(
    seed: int = 15,
    *,
    providers: Sequence[str] | None = None,
    contexts: Sequence[str] | None = None,
) -> list[Sample]:
    """Every provider in every context, one credential each; the same list for the same seed."""
    rng = random.Random(seed)
    samples: list[Sample] = []
    for provider in providers or sorted(PROVIDERS):
        for context in contexts or list(CONTEXTS):
            pairs = PROVIDERS[provider](rng)
            head, body, tail = CONTEXTS[context](pairs)
            body_lines = "\n".join(body).split("\n")  # a value may span lines
            start = len(head) + 1
            samples.append(
                Sample(
                    id=f"{provider}/{context}",
                    provider=provider,
                    context=context,
                    text="\n".join([*head, *body_lines, *tail]) + "\n",
                    start_line=start,
                    end_line=start + len(body_lines) - 1,
                    secrets=_secret_parts(pairs),
                )
            )
    return samples


_URL_PASSWORD = re.compile(r"://[^:/@\s]+:([^@\s]+)@|[?&]password=([^&\s]+)")


def _secret_parts(pairs: Pairs) -> tuple[str, ...]:
    """The values, and the password alone of a URL (what must never be printed)."""
    parts: list[str] = []
    for _, value in pairs:
        parts.append(value)
        parts.extend(g for m in _URL_PASSWORD.finditer(value) for g in m.groups() if g)
    return tuple(parts)


def main() -> None:
    samples = generate()
    by_provider = Counter(s.provider for s in samples)
    print(f"{len(samples)} samples, {len(by_provider)} providers, {len(CONTEXTS)} contexts")
    for provider, count in sorted(by_provider.items()):
        print(f"  {provider:28} {count}")


if __name__ == "__main__":
    main()
