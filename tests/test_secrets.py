"""The rule table: every rule finds a generated secret in its format and passes over its
placeholders (a run of one character, a sequential alphabet, ``EXAMPLE``, ``${VAR}``, prose),
on RE2 and on the bounded ``re`` fallback alike.

True positives are generated at test time from seeded random bodies, and each token is
assembled from its pieces, so this file holds no credential-shaped string."""

from __future__ import annotations

import base64
import json
import random
import re
import string
from collections.abc import Iterator

import pytest

from excerpt.core.linear import compile_pattern
from excerpt.core.secrets import RULES, scan_text, secret_lines
from excerpt.core.secrets.filters import approximate_tokens
from excerpt.core.secrets.scan import scan

_RNG = random.Random(15)
ALPHABETS = {
    "B62": string.ascii_letters + string.digits,
    "B64": string.ascii_letters + string.digits + "+/",
    "URL": string.ascii_letters + string.digits + "_-",
    "AZT": string.ascii_letters + string.digits + "_~.-",
    "U32": string.ascii_uppercase + "234567",
    "UPN": string.ascii_uppercase + string.digits,
    "HEX": "0123456789abcdef",
    "HEXU": "0123456789ABCDEF",
    "DIG": string.digits,
    "LET": string.ascii_letters,
    "L36": string.ascii_lowercase + string.digits,
    "BECH": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
}
_MARK = re.compile(r"\{([A-Z0-9]+)\*(\d+)\}")
BEGIN, END = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _special(name: str) -> str:
    """Pieces a template cannot spell: a Discord bot id, a JWT, a Basic credential."""
    if name == "DISCORD":
        return _b64url(str(_RNG.randrange(10**17, 10**18)).encode())
    if name == "JWT":
        head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        sub = "".join(_RNG.choices(ALPHABETS["L36"], k=12))
        claims = _b64url(json.dumps({"sub": sub, "iat": _RNG.randrange(10**9)}).encode())
        return f"{head}.{claims}.{''.join(_RNG.choices(ALPHABETS['URL'], k=43))}"
    if name == "BASIC":
        password = "".join(_RNG.choices(ALPHABETS["B62"], k=14))
        return base64.b64encode(f"deploy:{password}".encode()).decode()
    raise KeyError(name)


def fill(template: str, how: str = "random") -> str:
    """``template`` with each ``{ALPHABET*n}`` filled: random, one repeated character, a
    sequential run of its alphabet, or random ending in ``EXAMPLE``."""

    def body(match: re.Match[str]) -> str:
        alphabet, n = ALPHABETS[match.group(1)], int(match.group(2))
        if how == "run":
            return "x" * n
        if how == "sequential":
            ordered = "".join(sorted(alphabet))
            return (ordered * (n // len(ordered) + 1))[:n]
        text = "".join(_RNG.choices(alphabet, k=n))
        if how == "example" and n >= 12:
            return text[:-7] + "EXAMPLE"
        return text

    out = _MARK.sub(body, template)
    special = (lambda m: _special(m.group(1))) if how in ("random", "example") else "x" * 24
    return re.sub(r"\{(DISCORD|JWT|BASIC)\}", special, out)


# rule id -> (a line or block holding the secret, further false positives)
CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "aws-access-key-id": ('aws_access_key_id = "AKIA{U32*16}"', ("AKIA" + "I" * 16,)),
    "aws-secret-access-key": (
        'aws_secret_access_key = "{B64*40}"', ("aws_secret_access_key = ${AWS_SECRET}",),
    ),
    "aws-mws-key": ("mws = amzn.mws.{HEX*8}-{HEX*4}-{HEX*4}-{HEX*4}-{HEX*12}", ()),
    "github-pat": ('token = "ghp_{B62*36}"', ('token = "ghp_${GITHUB_TOKEN}"',)),
    "github-oauth": ("GITHUB_OAUTH=gho_{B62*36}", ()),
    "github-app-token": ("installation: ghs_{B62*36}", ()),
    "github-refresh-token": ("refresh = ghr_{B62*76}", ()),
    "github-fine-grained-pat": ("GH_PAT=github_pat_{B62*22}_{B62*59}", ()),
    "gitlab-pat": ('private_token="glpat-{URL*20}"', ('private_token="glpat-<your-token>"',)),
    "gitlab-token": ("runner: glrt-{URL*20}", ()),
    "slack-bot-token": ("SLACK_BOT=xoxb-{DIG*12}-{DIG*13}-{B62*24}", ()),
    "slack-user-token": ("slack = xoxp-{DIG*12}-{DIG*12}-{DIG*13}-{HEX*32}", ()),
    "slack-app-token": ("app = xapp-1-{UPN*11}-{DIG*13}-{HEX*64}", ()),
    "slack-config-token": ("cfg = xoxe.xoxp-1-{B62*163}", ()),
    "slack-webhook-url": ("hook = https://hooks.slack.com/services/T{UPN*8}/B{UPN*10}/{B62*24}",
                          ("hook = https://hooks.slack.com/services/{{ slack_path }}",)),
    "stripe-secret-key": ('stripe.api_key = "sk_live_{B62*24}"', ()),
    "stripe-restricted-key": ("STRIPE=rk_live_{B62*24}", ()),
    "stripe-webhook-secret": ("endpoint_secret = 'whsec_{B62*32}'", ()),
    "openai-api-key": ("OPENAI=sk-{B62*20}T3BlbkFJ{B62*20}", ()),
    "openai-project-key": ('client = OpenAI(api_key="sk-proj-{URL*48}")', ()),
    "anthropic-api-key": ("ANTHROPIC=sk-ant-api03-{URL*93}AA", ()),
    "google-api-key": ('"apiKey": "AIza{URL*35}"', ()),
    "google-oauth-client-secret": ('"client_secret": "GOCSPX-{URL*28}"', ()),
    "google-oauth-access-token": ("bearer ya29.{URL*60}", ()),
    "gcp-private-key-id": ('"private_key_id": "{HEX*40}",', ()),
    "azure-storage-account-key": (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={B64*86}==;"
        "EndpointSuffix=core.windows.net", (),
    ),
    "azure-shared-access-key": (
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;"
        "SharedAccessKey={B64*43}=", (),
    ),
    "azure-sas-token": (
        "url = https://acct.blob.core.windows.net/c?sv=2022-11-02&ss=b&sp=rl&sig={B64*43}%3D",
        (),
    ),
    "azure-ad-client-secret": ("AZURE_CLIENT_SECRET={AZT*3}{DIG*1}Q~{AZT*34}", ()),
    "huggingface-token": ("HF_TOKEN=hf_{LET*34}", ()),
    "huggingface-org-token": ("org = api_org_{LET*34}", ()),
    "npm-token": ("//registry.npmjs.org/:_authToken=npm_{B62*36}", ()),
    "pypi-token": ("password = pypi-AgEIcHlwaS5vcmc{URL*70}", ()),
    "sendgrid-api-key": ("SENDGRID=SG.{URL*22}.{URL*43}", ()),
    "twilio-api-key": ("twilio_key = SK{HEX*32}", ()),
    "mailgun-api-key": ("MAILGUN=key-{HEX*32}", ()),
    "mailchimp-api-key": ("mailchimp = {HEX*32}-us6", ()),
    "datadog-api-key": ("DD_API_KEY={HEX*32}", ("DD_API_KEY=${DD_API_KEY}",)),
    "vault-service-token": ("VAULT_TOKEN=hvs.{URL*90}", ()),
    "vault-batch-token": ("batch = hvb.{URL*138}", ()),
    "databricks-token": ("DATABRICKS=dapi{HEX*32}", ()),
    "digitalocean-token": ("DO=dop_v1_{HEX*64}", ()),
    "shopify-token": ("SHOPIFY=shpat_{HEX*32}", ()),
    "square-access-token": ("SQUARE=EAAA{URL*60}", ()),
    "square-oauth-secret": ("SQUARE_SECRET=sq0csp-{URL*43}", ()),
    "braintree-access-token": ("BT=access_token$production${L36*16}${HEX*32}", ()),
    "discord-bot-token": (
        "client.run('{DISCORD}.{URL*6}.{URL*38}')",
        ("client.run('M{B62*23}.{URL*6}.{URL*38}')",),  # not the base64 of an id
    ),
    "discord-webhook-url": ("https://discord.com/api/webhooks/{DIG*18}/{URL*68}", ()),
    "telegram-bot-token": ("TELEGRAM_BOT_TOKEN={DIG*10}:AA{URL*33}", ()),
    "heroku-api-key": ("HEROKU_API_KEY=HRKU-AA{URL*58}", ()),
    "heroku-api-key-legacy": ("heroku_api_key = {HEX*8}-{HEX*4}-{HEX*4}-{HEX*4}-{HEX*12}", ()),
    "linear-api-key": ("LINEAR=lin_api_{B62*40}", ()),
    "notion-token": ("NOTION=ntn_{DIG*11}{B62*35}", ()),
    "atlassian-api-token": ("JIRA=ATATT3xFfGF0{URL*180}={UPN*8}", ()),
    "doppler-token": ("DOPPLER=dp.pt.{B62*43}", ()),
    "dynatrace-api-token": ("DT_API_TOKEN=dt0c01.{UPN*24}.{UPN*64}", ()),
    "nuget-api-key": ("NUGET_API_KEY=oy2{L36*43}", ()),
    "clojars-deploy-token": ("CLOJARS_TOKEN=CLOJARS_{L36*60}", ()),
    "bitbucket-app-password": ("BITBUCKET_APP_PASSWORD=ATBB{B62*32}{HEXU*8}", ()),
    "facebook-access-token": ("FB_ACCESS_TOKEN=EAAG{B62*180}", ()),
    "postman-api-key": ("POSTMAN=PMAK-{HEX*24}-{HEX*34}", ()),
    "pulumi-access-token": ("PULUMI=pul-{HEX*40}", ()),
    "grafana-cloud-token": ("GRAFANA=glc_{B64*80}", ()),
    "grafana-service-account-token": ("GRAFANA=glsa_{B62*32}_{HEX*8}", ()),
    "grafana-api-key": ("GRAFANA=eyJrIjoi{B62*70}", ()),
    "new-relic-key": ("NEW_RELIC=NRAK-{UPN*27}", ()),
    "sentry-token": ("SENTRY=sntrys_{B64*80}", ()),
    "cloudflare-api-key": (
        "CLOUDFLARE_API_TOKEN={URL*40}", ("CLOUDFLARE_API_TOKEN=readTheTokenFromTheVaultPlease",),
    ),
    "cloudflare-origin-ca-key": ("ORIGIN=v1.0-{HEX*24}-{HEX*146}", ()),
    "alibaba-access-key-id": ("ALIYUN=LTAI{B62*20}", ()),
    "tencent-secret-id": ("TENCENT=AKID{B62*32}", ()),
    "age-secret-key": ("AGE-SECRET-KEY-1{BECH*58}", ()),
    "planetscale-token": ("PSCALE=pscale_tkn_{URL*43}", ()),
    "supabase-token": ("SUPABASE=sbp_{HEX*40}", ()),
    "replicate-token": ("REPLICATE=r8_{B62*37}", ()),
    "groq-api-key": ("GROQ=gsk_{B62*52}", ()),
    "xai-api-key": ("XAI=xai-{B62*80}", ()),
    "perplexity-api-key": ("PPLX=pplx-{B62*48}", ()),
    "mapbox-secret-token": ("MAPBOX=sk.eyJ{URL*60}.{URL*22}", ()),
    "rubygems-api-key": ("GEM=rubygems_{HEX*48}", ()),
    "dockerhub-pat": ("DOCKER=dckr_pat_{URL*27}", ()),
    "terraform-cloud-token": ("TFC={B62*14}.atlasv1.{URL*67}", ()),
    "airtable-pat": ("AIRTABLE=pat{B62*14}.{HEX*64}", ()),
    "sourcegraph-token": ("SRC=sgp_{HEX*16}_{HEX*40}", ()),
    "private-key": (
        "\n".join([BEGIN, "{B64*64}", "{B64*64}", "{B64*64}", "{B64*20}", END]),
        (f"{BEGIN}\n...\n{END}", f"{BEGIN}\n<your private key here>\n{END}"),
    ),
    "jwt": (
        "session = {JWT}",
        (  # the documentation sample's claims; a header that names no algorithm
            "session = " + ".".join(
                [_b64url(b'{"alg":"HS256","typ":"JWT"}'),
                 _b64url(b'{"sub":"1234567890","name":"John Doe","iat":1516239022}'),
                 "{URL*43}"]),
            "session = " + ".".join(
                [_b64url(b'{"typ":"JWT","kid":"k1"}'), _b64url(b'{"sub":"s1"}'), "{URL*43}"]),
        ),
    ),
    "url-credentials": (
        'DATABASE_URL = "postgres://app:{B62*16}@db.internal:5432/app"',
        ("postgres://app:${DB_PASSWORD}@db/app", "postgres://postgres:postgres@localhost/db",
         "https://user:password@example.com/", "Url('https://foo.com:123,foo:bar@bar.com/path')"),
    ),
    "connection-string-password": (
        "Server=db.internal;Database=app;User Id=app;Password={B62*16};",
        ("Server=db;Database=app;Password=${DB_PASSWORD};", "Server=db;Password=changeme;"),
    ),
    "basic-auth-header": (
        "Authorization: Basic {BASIC}",
        ("Authorization: Basic ${CREDENTIALS}",
         "Authorization: Basic " + base64.b64encode(b"username").decode()),
    ),
    "authorization-bearer": (
        'headers = {"Authorization": "Bearer {URL*40}"}',
        ('headers = {"Authorization": "Bearer ${TOKEN}"}',
         "Authorization: Bearer your-access-token-goes-here"),
    ),
    "generic-password": (
        "DB_PASSWORD={B62*16}",
        ('password = "${DB_PASSWORD}"', 'password = os.environ["DB_PASSWORD"]',
         'password = "correct-horse-battery-staple"', "password: changeme"),
    ),
    "generic-secret": (
        'client_secret: "{B62*32}"',
        ('SECRET_KEY = "django-insecure-change-this-in-production"',
         'secret = "{{ vault_secret }}"', "secret = self.config.secret_value"),
    ),
    "generic-token": (
        'auth_token = "{B62*32}"',
        ('token_type = "refresh_token_expired"', 'token = "<your-token>"',
         "token = m.group(1)", 'author = "Georg Brandl"', "_TOKEN_REF = r'[A-Z]\\w*'"),
    ),
    "generic-api-key": (
        "API_KEY={B62*32}",
        ('api_key = "YOUR_API_KEY_HERE"', 'apiKey: "getApiKeyFromSettings"'),
    ),
    # passwords written out, judged by their alphabet: short, in prose, in other languages
    "password-written": (
        "ID:master PW:{B62*12}",
        ("password: str", "passwd = _raw_input(prompt, stream, input=input)",
         "counting handles most cleanup, so 1 pass is sufficient.", "password is required",
         "bypass :meth:`__getattr__`, as Python resolves them", "Пароль: Пароль"),
    ),
    "password-literal": (
        'pwd = "{B62*7}"',
        ('password = "correct-horse-battery-staple"', "password = self.config.password",
         'password = "${DB_PASSWORD}"', 'if password != "":', 'password = "secret"'),
    ),
    "password-argument": (
        "define( 'PASSWORD' , '{B62*7}' );",
        ("('User:Pass', 'www.python.org:080')", '"EXPASS", "*EXPORT", "EXPROFILE",',
         "check('password', 'required')"),
    ),
    "password-element": (
        '<password name="db">{B62*7}</password>',
        ("<password>${DB_PASSWORD}</password>", "<password>password</password>"),
    ),
}  # fmt: skip


def _cases() -> Iterator[object]:
    for rule in RULES:
        if rule.id in CASES:
            yield pytest.param(rule.id, id=rule.id)


def test_every_rule_has_a_true_positive_and_false_positives() -> None:
    assert set(CASES) == {rule.id for rule in RULES}


def test_every_pattern_compiles_on_both_engines() -> None:
    for rule in RULES:
        compile_pattern(rule.pattern, linear=True)
        compile_pattern(rule.pattern, linear=False)


@pytest.mark.parametrize("rule_id", list(_cases()))
@pytest.mark.reliability("B3.26", cases=3)
def test_a_rule_finds_its_secret_and_not_its_placeholders(rule_id: str) -> None:
    # each case draws its own values, whichever tests ran before it in this process
    _RNG.seed(f"{rule_id}:15")
    rule = next(r for r in RULES if r.id == rule_id)
    template, extra = CASES[rule_id]
    positive = fill(template)
    for linear in (True, False):
        found = scan(positive, tokens=approximate_tokens, salt=None, linear=linear)
        assert [(f.rule, f.severity) for f in found] == [(rule_id, rule.severity)], linear
    assert [f.rule for f in scan_text(positive)] == [rule_id]  # exact token counts
    assert [f.rule for f in secret_lines(positive)] == [rule_id]
    negatives = [fill(template, "run"), fill(template, "sequential"), *map(fill, extra)]
    if re.search(r"\{(?:B62|B64|URL|AZT|UPN|LET|U32)\*(?:1[2-9]|[2-9]\d|\d{3})\}", template):
        negatives.append(fill(template, "example"))
    assert len(negatives) >= 2
    for negative in negatives:
        for linear in (True, False):
            found = scan(negative, tokens=approximate_tokens, salt=None, linear=linear)
            assert not [f for f in found if f.rule == rule_id], (negative, linear)
        assert not scan_text(negative), negative
        assert not secret_lines(negative), negative


_JS_JWT_LINES = (
    'const API_TOKEN = "{}";',
    "  headers: {{ Authorization: `Bearer {}` }},",
    'export const config = {{ auth: {{ jwt: "{}" }} }};',
    "const client = new ApiClient('{}');",
    "  token: `{}`,",
)
# claims as real tokens hold them: round timestamps, sequential ids, an issuer URL
_REAL_CLAIMS = (
    {"sub": "42", "role": "service", "iat": 1700000000, "exp": 1800000000},
    {"sub": "user-2345678", "exp": 1735689600},
    {"iss": "https://auth.example.com", "aud": "orders-api", "sub": "svc-orders"},
)


@pytest.mark.parametrize("claims", _REAL_CLAIMS, ids=["round-times", "sequential-id", "issuer"])
@pytest.mark.parametrize("line", _JS_JWT_LINES)
def test_a_jwt_in_a_javascript_line_is_a_fail_whatever_its_claims(
    claims: dict[str, object], line: str
) -> None:
    head = _b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": "2024-01"}).encode())
    body = _b64url(json.dumps(claims).encode())
    signature = _b64url(bytes(_RNG.randrange(256) for _ in range(64)))
    text = line.format(f"{head}.{body}.{signature}") + "\n"
    found = [(f.rule, f.severity) for f in secret_lines(text)]
    assert found == [("jwt", "fail")], text


@pytest.mark.parametrize(
    "claims",
    [{"sub": "1234567890", "name": "John Doe", "iat": 1516239022}, {"sub": "${USER_ID}"}],
    ids=["jwt.io-sample", "template"],
)
def test_a_documentation_or_template_jwt_is_no_fail(claims: dict[str, object]) -> None:
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    text = f"  headers: {{ Authorization: `Bearer {head}.{_b64url(json.dumps(claims).encode())}."
    text += "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c` },\n"
    assert not [f for f in secret_lines(text) if f.severity == "fail"], text
