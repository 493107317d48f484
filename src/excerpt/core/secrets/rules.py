"""The rule table: one rule per credential format, the secret in the pattern's first group
that took part in the match.

``keywords`` are lower-case strings of which one occurs in every match (a line is only
checked for a rule when one occurs in it, lower-cased); ``prefilter`` narrows the combined
keyword pass where a keyword alone is too common (``sk`` of a Twilio key). A fragment there
starts with a literal: one starting with a character class makes the combined pass several
times slower. Provider formats with a fixed prefix, private keys, credentials in URLs and
connection strings and JWTs are ``fail``; keyword assignments (``password = "..."``) are
``warn``. Formats follow the providers' published token shapes. Rules that fire on the same
span yield to the earlier one, so specific rules come first and the generic ones last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from excerpt.core.secrets.filters import (
    basic_credential,
    discord_token,
    jwt_token,
    password_literal,
    password_written,
    url_password,
)

__all__ = ["RULES", "Rule", "Severity"]

Severity = Literal["fail", "warn"]

_B62 = "A-Za-z0-9"
_URL = r"A-Za-z0-9_\-"
_END = r"(?:[^A-Za-z0-9_-]|$)"  # a token's end (RE2 has no lookahead: consume one char)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One credential format."""

    id: str
    severity: Severity
    keywords: tuple[str, ...]
    pattern: str
    description: str
    entropy: float = 3.0  # Shannon floor of the secret, bits per character
    prose: bool = False  # apply the natural-language filter (no fixed prefix to trust)
    stopwords: bool = False  # a bare word naming the value (``password``) is no secret
    decode: bool = False  # a long base64 value is decoded once and scanned for the others
    check: Callable[[str, str], bool] | None = None  # (secret, whole match): a structural test
    prefilter: tuple[str, ...] = ()  # regex fragments for the keyword pass (lower-cased text)

    def __post_init__(self) -> None:
        if not self.keywords or any(k != k.lower() for k in self.keywords):
            raise ValueError(f"{self.id}: keywords must be given, in lower case")


def _p(
    rule_id: str, keywords: str, pattern: str, description: str, entropy: float = 3.0, **kw: object
) -> Rule:
    return Rule(
        id=rule_id, severity="fail", keywords=tuple(keywords.split()), pattern=pattern,
        description=description, entropy=entropy, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def _generic(
    rule_id: str, keywords: str, names: str, description: str, prefilter: str, env_names: str
) -> Rule:
    """``NAME = "value"`` (any quote, ``:``, ``=>``, ``:=``) or an unquoted
    ``NAME=value`` / ``name: value`` line, where NAME contains one of ``names``."""
    quoted = (
        rf"(?:{names})[\w.-]{{0,40}}[\"']?\s*(?::=|=>|==|=|:)\s*[a-z]?[\"'\x60]"
        rf"([^\"'\x60\s]{{8,200}})[\"'\x60]"
    )
    # a line of its own (a diff's +/- marker allowed); a # inside the value is part of it,
    # one after a space starts a comment
    bare = (
        rf"^[+-]?\s*(?:export\s+|set\s+)?[\w.-]{{0,40}}(?:{names})[\w.-]{{0,40}}\s*[=:]\s*"
        rf"([^\s\"'\x60;,()\[\]{{}}<>]{{8,200}})\s*(?:\s#.*)?$"
    )
    # an environment variable anywhere on a line (a log's ``resolved DB_PASSWORD=…``)
    env = (
        rf"(?:^|[\s\[(])[A-Z0-9_]{{0,40}}(?-i:{env_names})[A-Z0-9_]{{0,40}}="
        rf"([^\s\"'\x60;,()\[\]{{}}<>]{{8,200}})"
    )
    return Rule(
        id=rule_id, severity="warn", keywords=tuple(keywords.split()),
        pattern=rf"(?i){quoted}|{bare}|{env}", description=description, entropy=3.0, prose=True,
        stopwords=True, decode=True, prefilter=(prefilter,),
    )  # fmt: skip


_PROVIDERS: tuple[Rule, ...] = (
    _p("aws-access-key-id", "akia asia abia acca",
       r"\b((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b", "AWS access key id"),
    _p("aws-secret-access-key", "aws secretaccesskey secret_access_key secret-access-key",
       r"(?i)(?:aws.{0,32}?(?:secret|sk\b|private)|secret[_-]?access[_-]?key).{0,32}?[=:>,(]"
       r"\s*[\"'\x60]?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)",
       "AWS secret access key beside an AWS keyword", 4.0, prose=True),
    _p("aws-mws-key", "amzn.mws.",
       r"\b(amzn\.mws\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
       "Amazon MWS auth token"),
    _p("github-pat", "ghp_", rf"\b(ghp_[{_B62}]{{36,255}})\b", "GitHub personal access token"),
    _p("github-oauth", "gho_", rf"\b(gho_[{_B62}]{{36,255}})\b", "GitHub OAuth access token"),
    _p("github-app-token", "ghu_ ghs_", rf"\b((?:ghu|ghs)_[{_B62}]{{36,255}})\b",
       "GitHub App user-to-server or server-to-server token"),
    _p("github-refresh-token", "ghr_", rf"\b(ghr_[{_B62}]{{36,255}})\b",
       "GitHub refresh token"),
    _p("github-fine-grained-pat", "github_pat_", rf"\b(github_pat_[{_B62}_]{{60,255}})\b",
       "GitHub fine-grained personal access token"),
    _p("gitlab-pat", "glpat-", rf"\b(glpat-[{_URL}.]{{20,300}}){_END}",
       "GitLab personal access token"),
    _p("gitlab-token", "gldt- glptt- glrt- glcbt- glimt- glft- glsoat- glagent- gloas- gr1348941",
       rf"\b((?:(?:gldt|glptt|glrt|glcbt|glimt|glft|glsoat|glagent|gloas)-|GR1348941)"
       rf"[{_URL}]{{20,64}}){_END}", "GitLab deploy, runner, trigger or other token"),
    _p("slack-bot-token", "xoxb-", r"\b(xoxb-[0-9]{8,16}-[0-9]{8,16}-[A-Za-z0-9]{20,40})\b",
       "Slack bot token"),
    _p("slack-user-token", "xoxp- xoxa- xoxo- xoxr- xoxs-",
       r"\b(xox[aoprs]-[0-9]{8,16}-[0-9]{8,16}(?:-[0-9]{6,16})?-[A-Za-z0-9]{20,64})\b",
       "Slack user or workspace token"),
    _p("slack-app-token", "xapp-", r"\b(xapp-[0-9]-[A-Z0-9]{8,16}-[0-9]{8,16}-[a-f0-9]{32,80})\b",
       "Slack app-level token"),
    _p("slack-config-token", "xoxe.xox xoxe-",
       r"\b(xoxe(?:\.xox[bp])?-[0-9]-[A-Za-z0-9]{140,400})\b",
       "Slack configuration or refresh token"),
    _p("slack-webhook-url", "hooks.slack.com",
       r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_-]{30,200})",
       "Slack incoming webhook URL"),
    _p("stripe-secret-key", "sk_live_ sk_test_ sk_prod_",
       rf"\b(sk_(?:live|test|prod)_[{_B62}]{{20,247}})\b", "Stripe secret key"),
    _p("stripe-restricted-key", "rk_live_ rk_test_ rk_prod_",
       rf"\b(rk_(?:live|test|prod)_[{_B62}]{{20,247}})\b", "Stripe restricted key"),
    _p("stripe-webhook-secret", "whsec_", rf"\b(whsec_[{_B62}]{{32,64}})\b",
       "Stripe webhook signing secret"),
    _p("openai-api-key", "t3blbkfj",
       rf"\b(sk-[{_URL}]{{16,200}}T3BlbkFJ[{_URL}]{{16,200}}){_END}", "OpenAI API key"),
    _p("openai-project-key", "sk-proj- sk-svcacct- sk-admin-",
       rf"\b(sk-(?:proj|svcacct|admin)-[{_URL}]{{40,300}}){_END}",
       "OpenAI project, service-account or admin key"),
    _p("anthropic-api-key", "sk-ant-", rf"\b(sk-ant-[{_URL}]{{32,300}}){_END}",
       "Anthropic API key"),
    _p("google-api-key", "aiza", rf"\b(AIza[{_URL}]{{35}}){_END}", "Google API key"),
    _p("google-oauth-client-secret", "gocspx-", rf"\b(GOCSPX-[{_URL}]{{28}}){_END}",
       "Google OAuth client secret"),
    _p("google-oauth-access-token", "ya29.", rf"\b(ya29\.[{_URL}]{{30,400}}){_END}",
       "Google OAuth access token"),
    _p("gcp-private-key-id", "private_key_id",
       r"(?i)private_key_id[\"']?\s*[:=]\s*[\"']?([0-9a-f]{40})\b",
       "GCP service-account private_key_id"),
    _p("azure-storage-account-key", "accountkey=",
       r"(?i)AccountKey=([A-Za-z0-9+/]{86}==)", "Azure storage account key", 4.0),
    _p("azure-shared-access-key", "sharedaccesskey=",
       r"(?i)SharedAccessKey=([A-Za-z0-9+/]{43}=)",
       "Azure Service Bus / Event Hubs / IoT shared access key", 4.0),
    _p("azure-sas-token", "sig=",
       r"(?i)(?:^|[?&;\"'\s])sv=20[0-9]{2}-[0-9]{2}-[0-9]{2}&[^\s\"'<>]{0,400}?[?&]sig="
       r"([A-Za-z0-9%+/]{40,120})", "Azure shared access signature", 3.5),
    _p("azure-ad-client-secret", "q~",
       r"(?:^|[^A-Za-z0-9_~.-])([A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})"
       r"(?:[^A-Za-z0-9_~.-]|$)", "Azure AD (Entra ID) client secret", 3.5),
    _p("huggingface-token", "hf_", r"\b(hf_[A-Za-z]{34,40})\b", "Hugging Face access token",
       3.5),
    _p("huggingface-org-token", "api_org_", r"\b(api_org_[A-Za-z]{34})\b",
       "Hugging Face organization token", 3.5),
    _p("npm-token", "npm_", rf"\b(npm_[{_B62}]{{36}})\b", "npm access token"),
    _p("pypi-token", "pypi-age", rf"\b(pypi-AgE[{_URL}]{{50,400}}){_END}", "PyPI upload token"),
    _p("sendgrid-api-key", "sg.", rf"\b(SG\.[{_URL}]{{22}}\.[{_URL}]{{43}}){_END}",
       "SendGrid API key"),
    _p("twilio-api-key", "sk", r"\b(SK[0-9a-fA-F]{32})\b", "Twilio API key SID with secret",
       prefilter=("sk[0-9a-f]{32}",)),
    _p("mailgun-api-key", "key-", r"\b(key-[0-9a-f]{32})\b", "Mailgun API key",
       prefilter=("key-[0-9a-f]{32}",)),
    _p("mailchimp-api-key", "-us", r"\b([0-9a-f]{32}-us[0-9]{1,2})\b", "Mailchimp API key"),
    _p("datadog-api-key", "datadog dd_api dd_app dd-api dd-app ddapi ddapp",
       r"(?i)(?:datadog|\bdd)[_-]?(?:api|app|application)[_-]?key[\"']?\s*[:=]\s*[\"']?"
       r"([0-9a-f]{40}|[0-9a-f]{32})\b", "Datadog API or application key"),
    _p("vault-service-token", "hvs. hvr.", rf"\b(hv[sr]\.[{_URL}]{{24,300}}){_END}",
       "HashiCorp Vault service or recovery token"),
    _p("vault-batch-token", "hvb.", rf"\b(hvb\.[{_URL}]{{100,400}}){_END}",
       "HashiCorp Vault batch token"),
    _p("databricks-token", "dapi", r"\b(dapi[0-9a-f]{32}(?:-[0-9])?)\b",
       "Databricks personal access token", prefilter=("dapi[0-9a-f]{32}",)),
    _p("digitalocean-token", "dop_v1_ doo_v1_ dor_v1_", r"\b(do[opr]_v1_[0-9a-f]{64})\b",
       "DigitalOcean personal, OAuth or refresh token"),
    _p("shopify-token", "shpat_ shpss_ shpca_ shppa_",
       r"\b(shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32})\b", "Shopify access token or shared secret"),
    _p("square-access-token", "sq0atp- eaaa",
       rf"\b(sq0atp-[{_URL}]{{22}}|EAAA[{_URL}]{{60}}){_END}", "Square access token",
       prefilter=("sq0atp-", "eaaa[a-z0-9_-]{60}")),
    _p("square-oauth-secret", "sq0csp-", rf"\b(sq0csp-[{_URL}]{{43}}){_END}",
       "Square OAuth application secret"),
    _p("braintree-access-token", "access_token$production$ access_token$sandbox$",
       r"\b(access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32})\b",
       "PayPal Braintree access token"),
    _p("discord-bot-token", "discord bot token client.run",
       rf"\b([MNO][{_URL}]{{23,27}}\.[{_URL}]{{6}}\.[{_URL}]{{27,40}}){_END}",
       "Discord bot token (on a line naming Discord, a bot or a token)", 3.5,
       check=discord_token),
    _p("discord-webhook-url", "discord",
       rf"discord(?:app)?\.com/api/webhooks/([0-9]{{17,20}}/[{_URL}]{{60,80}})",
       "Discord webhook URL"),
    _p("telegram-bot-token", ":aa", rf"\b([0-9]{{8,10}}:AA[{_URL}]{{33}}){_END}",
       "Telegram bot token"),
    _p("heroku-api-key", "hrku-", rf"\b(HRKU-[{_URL}]{{58,60}}){_END}", "Heroku API key"),
    _p("heroku-api-key-legacy", "heroku",
       r"(?i)heroku.{0,40}?\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
       "Heroku API key (UUID) beside a Heroku keyword"),
    _p("linear-api-key", "lin_api_ lin_oauth_", rf"\b(lin_(?:api|oauth)_[{_B62}]{{40}})\b",
       "Linear API key"),
    _p("notion-token", "secret_ ntn_",
       rf"\b(secret_[{_B62}]{{43}}|ntn_[0-9]{{11}}[{_B62}]{{35}})\b",
       "Notion integration token", 3.5, prose=True),
    _p("atlassian-api-token", "atatt3 atctt3", r"\b(AT[AC]TT3[A-Za-z0-9_=-]{150,250})",
       "Atlassian API token"),
    _p("doppler-token", "dp.pt. dp.st. dp.sa. dp.ct. dp.scim. dp.audit.",
       rf"\b(dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{{1,40}}\.)?[{_B62}]{{40,44}})\b",
       "Doppler token (a service token names its environment)"),
    _p("dynatrace-api-token", "dt0c01.", r"\b(dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64})\b",
       "Dynatrace API token"),
    _p("nuget-api-key", "oy2", r"\b(oy2[a-z0-9]{43})\b", "NuGet API key", 3.5),
    _p("clojars-deploy-token", "clojars_", r"\b(CLOJARS_[a-z0-9]{60})\b", "Clojars deploy token"),
    _p("bitbucket-app-password", "atbb", rf"\b(ATBB[{_B62}]{{32}}[A-F0-9]{{8}})\b",
       "Bitbucket app password"),
    _p("facebook-access-token", "eaa", r"\b(EAA[A-Za-z0-9]{100,400})",
       "Facebook (Meta) access token", 3.5),
    _p("postman-api-key", "pmak-", r"\b(PMAK-[0-9a-f]{24}-[0-9a-f]{34})\b", "Postman API key"),
    _p("pulumi-access-token", "pul-", r"\b(pul-[0-9a-f]{40})\b", "Pulumi access token"),
    _p("grafana-cloud-token", "glc_", r"\b(glc_[A-Za-z0-9+/]{32,400}={0,2})",
       "Grafana Cloud access policy token"),
    _p("grafana-service-account-token", "glsa_", rf"\b(glsa_[{_B62}]{{32}}_[0-9a-f]{{8}})\b",
       "Grafana service account token"),
    _p("grafana-api-key", "eyjrijoi", r"\b(eyJrIjoi[A-Za-z0-9]{60,400}={0,2})",
       "Grafana API key"),
    _p("new-relic-key", "nrak- nrii-", r"\b(NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9_-]{32})\b",
       "New Relic user API or insert key"),
    _p("sentry-token", "sntrys_ sntryu_", r"\b(sntry[su]_[A-Za-z0-9+/=_-]{40,400})",
       "Sentry auth token"),
    _p("cloudflare-api-key", "cloudflare cf_api cf-api cf_key cf_token cf-token",
       r"(?i)(?:cloudflare|\bcf)[_-]?(?:api[_-]?)?(?:key|token)[\"']?\s*[:=]\s*[\"']?"
       rf"([{_URL}]{{40}}|[0-9a-f]{{37}}){_END}", "Cloudflare API key or token beside a "
       "Cloudflare keyword", 3.5, prose=True),
    _p("cloudflare-origin-ca-key", "v1.0-", r"\b(v1\.0-[0-9a-f]{24}-[0-9a-f]{146})\b",
       "Cloudflare origin CA key"),
    _p("alibaba-access-key-id", "ltai", rf"\b(LTAI[{_B62}]{{12,20}})\b",
       "Alibaba Cloud access key id"),
    _p("tencent-secret-id", "akid", rf"\b(AKID[{_B62}]{{32}})\b", "Tencent Cloud SecretId"),
    _p("age-secret-key", "age-secret-key-1",
       r"\b(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})\b", "age secret key"),
    _p("planetscale-token", "pscale_tkn_ pscale_pw_ pscale_oauth_",
       r"\b(pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64})", "PlanetScale token or password"),
    _p("supabase-token", "sbp_ sb_secret_",
       rf"\b(sbp_[0-9a-f]{{40}}|sb_secret_[{_URL}]{{31,64}}){_END}",
       "Supabase access token or secret key"),
    _p("replicate-token", "r8_", rf"\b(r8_[{_B62}]{{37}})\b", "Replicate API token"),
    _p("groq-api-key", "gsk_", rf"\b(gsk_[{_B62}]{{52}})\b", "Groq API key"),
    _p("xai-api-key", "xai-", rf"\b(xai-[{_B62}]{{80}})\b", "xAI API key"),
    _p("perplexity-api-key", "pplx-", rf"\b(pplx-[{_B62}]{{48}})\b", "Perplexity API key"),
    _p("mapbox-secret-token", "sk.eyj", rf"\b(sk\.eyJ[{_URL}]{{50,400}}\.[{_URL}]{{20,100}})",
       "Mapbox secret token"),
    _p("rubygems-api-key", "rubygems_", r"\b(rubygems_[0-9a-f]{48})\b", "RubyGems API key"),
    _p("dockerhub-pat", "dckr_pat_", rf"\b(dckr_pat_[{_URL}]{{27,64}}){_END}",
       "Docker Hub personal access token"),
    _p("terraform-cloud-token", "atlasv1",
       rf"\b([{_B62}]{{14}}\.atlasv1\.[{_URL}=]{{60,70}}){_END}", "Terraform Cloud API token"),
    _p("airtable-pat", "pat", rf"\b(pat[{_B62}]{{14}}\.[0-9a-f]{{64}})\b",
       "Airtable personal access token", prefilter=(r"pat[a-z0-9]{14}\.[0-9a-f]{64}",)),
    _p("sourcegraph-token", "sgp_", r"\b(sgp_(?:[0-9a-f]{16}_)?[0-9a-f]{40})\b",
       "Sourcegraph access token"),
)  # fmt: skip

_STRUCTURAL: tuple[Rule, ...] = (
    _p("private-key", "private key",
       r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----[A-Za-z0-9 ,:\\-]{0,200}?"
       r"((?:[A-Za-z0-9+/=]{16,}(?:\\[nr]|\s)*){2,})",
       "Private key block (RSA, EC, DSA, OpenSSH, PGP, encrypted or PKCS#8)", 4.0),
    _p("jwt", "eyj", rf"\b(eyJ[{_URL}]{{10,}}\.eyJ[{_URL}]{{10,}}\.[{_URL}]{{16,}}){_END}",
       "JSON Web Token", check=jwt_token),
    _p("url-credentials", "://",
       r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://([^\s/:@'\"\x60<>]{0,64}):([^\s/:@'\"\x60<>]{3,128})@"
       r"[A-Za-z0-9\[][A-Za-z0-9.:\]-]{0,253}",
       "Credentials inside a URL (scheme://user:password@host)", 2.0,
       stopwords=True, check=url_password),
    _p("connection-string-password", "password pwd",
       r"(?i)(?:(?:server|data source|host|user id|uid|database|initial catalog)\s*="
       r"|jdbc:[a-z0-9]+:)"
       r"[^\n]{0,300}?[;?&\s](?:password|pwd)\s*=\s*([^;&\"'\s<>,()]{3,128})"
       r"|(?:^|[;\"'\s])(?:password|pwd)\s*=\s*([^;&\"'\s<>,()]{3,128});[^\n]{0,300}?"
       r"(?:server|data source|host|user id|uid|database)\s*=",
       "Password in an ADO.NET, ODBC or JDBC connection string", 2.0, stopwords=True),
    _p("basic-auth-header", "basic",
       r"(?i)authorization[\"'\x60]?\s*[:=]\s*[\"'\x60]?basic\s+([A-Za-z0-9+/]{8,}={0,2})",
       "HTTP Basic credentials in an Authorization header", 2.5, check=basic_credential),
)  # fmt: skip

# Names a password goes by, as the end of a key or a word of prose: English and the languages
# whose password words real documents hold. Letters outside ASCII are written in each case
# (Python's ``re`` over bytes folds ASCII alone); the keyword pass sees the text with ASCII
# lower-cased, so a keyword outside ASCII is the part every case shares (``ароль``)
_PW_NAMES = (
    r"passwords?|passwd|passphrase|pwd|pw|pass|passwort|kennwort|senha|wachtwoord|"
    r"mot de passe|contrase(?:ñ|Ñ|n)a|l(?:ö|Ö|o)senord|has(?:ł|Ł|l)o|"
    r"пароль|Пароль|ПАРОЛЬ|密码|密碼|パスワード|비밀번호|암호"
)
_PW_KEYWORDS = (
    "pass pwd pw passwort kennwort senha wachtwoord contrase senord asło haslo ароль"
    " 密码 密碼 パスワード 비밀번호 암호"
)


def _password(rule_id: str, pattern: str, description: str, check: Callable[[str, str], bool],
              keywords: str = _PW_KEYWORDS, *, prose: bool = True) -> Rule:  # fmt: skip
    """A password rule: a value judged by ``check`` (its alphabet and shape), not entropy."""
    return Rule(id=rule_id, severity="warn", keywords=tuple(keywords.split()), pattern=pattern,
                description=description, entropy=0.0, prose=prose, stopwords=True,
                check=check)  # fmt: skip


# A line is reported by the first of its rules: the most specific shape first
_PASSWORDS: tuple[Rule, ...] = (
    # a password element of a markup document: ``<password name="…">cackle!</password>``
    _password(
        "password-element",
        r"(?i)<(?:password|passwd|pwd)\b[^>]{0,80}>([^<\s]{6,64})</",
        "A password element of a markup document",
        password_literal,
        "<pass <pwd",
        prose=False,
    ),
    # the value beside a password name opening a call: ``define('PASSWORD', '…')``
    _password(
        "password-argument",
        rf"(?i)\(\s*[\"'][\w-]{{0,30}}(?:{_PW_NAMES})[\"']\s*,\s*"
        r"[\"']([^\"'\s]{6,64})[\"']",
        "A string literal passed beside a password name",
        password_literal,
    ),
    # a string literal given to a password-named target: assigned (typed or not), compared,
    # or the fallback of a lookup (``PASSWORD = os.environ.get("PASSWORD") or "…"``)
    _password(
        "password-literal",
        rf"(?i)(?:^|[^\w])[\w-]{{0,30}}(?:{_PW_NAMES})[\"'\x60]?"
        r"(?:\s*:\s*[\w.<>\[\]?]{1,40})?\s*(?:=>|:=|===|!==|==|!=|=|:)\s*"
        r"(?:[\w.]{1,60}\([^)]{0,80}\)\s*(?:or|\|\||\?\?|\?:)\s*)?"
        r"[a-z]?[\"'\x60]([^\"'\x60\s]{6,64})[\"'\x60]",
        "A string literal assigned to or compared with a password-named target",
        password_literal,
    ),
    # a value after a password word in prose or a document: ``PW:dipPr10Gg!``,
    # ``password is NsIdksKJdj``, ``MYSQLPASS: Ce7s…``, ``Your password: &quot;…&quot;``
    _password(
        "password-written",
        rf"(?i)(?:^|[^\w])[\w-]{{0,30}}(?:{_PW_NAMES})(?:\s+is|\s*(?:[:=]|=>))"
        rf"\s*(?:&quot;|[\"'\x60])?([^\s\"'\x60<>&;,(){{}}\[\]|]{{6,64}})"
        r"(?:[\s\"'\x60<>&;,)}\]|]|$)",
        "A password written after its name in prose or a document",
        password_written,
    ),
)

_GENERIC: tuple[Rule, ...] = (
    Rule(id="authorization-bearer", severity="warn", keywords=("bearer",),
         pattern=r"(?i)authorization[\"'\x60]?\s*[:=]\s*[\"'\x60]?bearer\s+"
                 r"([A-Za-z0-9_.~+/=-]{20,500})",
         description="Bearer token in an Authorization header", entropy=3.0, prose=True),
    _generic("generic-password", "pass pwd",
             r"password|passwd|passphrase|pwd|(?:\b|_)pass(?:\b|_)",
             "A password assigned to a password-named key",
             r"passw|passphrase|pwd|[_.-]pass\b|\bpass[_.-]",
             "PASSWORD|PASSWD|PASSPHRASE|PWD|_PASS|PASS_"),
    _generic("generic-secret", "secret credential", r"secret|credential",
             "A value assigned to a secret- or credential-named key", "secret|credential",
             "SECRET|CREDENTIAL"),
    _generic("generic-token", "token auth",
             r"token|auth(?:[_.-]|key|orization|entication|\b)",
             "A value assigned to a token- or auth-named key",
             r"token|auth(?:[_.-]|key|orization|entication|\b)", "TOKEN|AUTH"),
    _generic("generic-api-key", "key",
             r"api[_.-]?key|access[_.-]?key|private[_.-]?key|app[_.-]?key|client[_.-]?key",
             "A value assigned to an API-key-named key",
             r"(?:api|access|private|app|client)[_.-]?key",
             "API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|APP_?KEY|CLIENT_?KEY"),
)  # fmt: skip

RULES: tuple[Rule, ...] = (*_PROVIDERS, *_STRUCTURAL, *_GENERIC, *_PASSWORDS)
