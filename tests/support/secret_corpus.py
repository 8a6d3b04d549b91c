"""A generated corpus for the redactor: fake secrets of real formats in many syntaxes, and ordinary developer text.

Every secret is made at run time from a seeded RNG following the provider's documented shape (prefix, alphabet,
length, checksum where the format has one); nothing here is a real credential and no sample is copied from a
secret scanner. Each positive ``Sample`` records the exact span that must be replaced (the value only, for an
assignment or a connection string); ``negatives()`` is text that must come through byte-identical.

Families are the unit of the recall target: a family is one provider's token format (or one generic context such
as keyword assignments or curl credentials); recall is averaged over families so a provider with one format
counts as much as one with ten.
"""
from __future__ import annotations

import base64
import json
import random
import string
import uuid as _uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = string.ascii_letters + DIGITS
LOWNUM = LOWER + DIGITS
UPNUM = UPPER + DIGITS
HEX = "0123456789abcdef"
HEXU = "0123456789ABCDEF"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
B32 = UPPER + "234567"


@dataclass(frozen=True)
class Sample:
    family: str
    syntax: str
    text: str
    start: int  # text[start:end] is what must be replaced, exactly
    end: int
    pieces: tuple[str, ...] = ()  # the parts of a split secret ("abc" + "def"): each must be gone as well

    @property
    def secret(self) -> str:
        return self.text[self.start:self.end]


Gen = Callable[[random.Random], str]


def r(rng: random.Random, n: int, chars: str = ALNUM) -> str:
    """n characters of the alphabet; mixes letters and digits whenever the alphabet has both (real tokens do)."""
    while True:
        s = "".join(rng.choice(chars) for _ in range(n))
        has_l, has_d = any(c.isalpha() for c in chars), any(c.isdigit() for c in chars)
        if n < 10 or not (has_l and has_d) or (any(c.isalpha() for c in s) and any(c.isdigit() for c in s)):
            return s


def crc32_b62(data: str, width: int = 6) -> str:
    """GitHub-style checksum: CRC32 of the random part, base62, left-padded."""
    n = zlib.crc32(data.encode())
    out = ""
    while n:
        n, d = divmod(n, 62)
        out = (DIGITS + UPPER + LOWER)[d] + out
    return out.rjust(width, "0")


def uuid4(rng: random.Random) -> str:
    return str(_uuid.UUID(int=rng.getrandbits(128), version=4))


def b64(raw: bytes, url: bool = False, pad: bool = True) -> str:
    s = (base64.urlsafe_b64encode if url else base64.b64encode)(raw).decode()
    return s if pad else s.rstrip("=")


def rbytes(rng: random.Random, n: int) -> bytes:
    return bytes(rng.randrange(256) for _ in range(n))


def fixed(prefix: str, n: int, chars: str = ALNUM, suffix: str = "") -> Gen:
    return lambda rng: prefix + r(rng, n, chars) + suffix


def seq(*parts: object) -> Gen:
    """Concatenate literal strings and (n, alphabet) random parts, or generators."""
    def gen(rng: random.Random) -> str:
        out = []
        for p in parts:
            if isinstance(p, str):
                out.append(p)
            elif isinstance(p, tuple):
                out.append(r(rng, p[0], p[1]))
            else:
                out.append(p(rng))  # type: ignore[operator]
        return "".join(out)
    return gen


def choice(*gens: Gen) -> Gen:
    return lambda rng: rng.choice(gens)(rng)


def github(prefix: str) -> Gen:
    def gen(rng: random.Random) -> str:
        body = r(rng, 30)
        return prefix + body + crc32_b62(body)
    return gen


def jwt(rng: random.Random, claims: dict | None = None) -> str:
    header = b64(json.dumps({"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}).encode(), True, False)
    body = claims or {"sub": str(rng.randrange(10**9)), "iat": 1700000000 + rng.randrange(10**7),
                      "name": rng.choice(["Jane Roe", "ci-bot", "svc"]), "scope": "read write"}
    payload = b64(json.dumps(body).encode(), True, False)
    return f"{header}.{payload}.{b64(rbytes(rng, 32), True, False)}"


def ops_token(rng: random.Random) -> str:  # 1Password service account: ops_ + base64 JSON
    body = {"signInAddress": "my.1password.com", "userAuth": {"method": "SRPg-4096", "alg": "PBES2g-HS256"},
            "email": f"{r(rng, 12, LOWNUM)}@1passwordserviceaccounts.com", "srpX": r(rng, 64, HEX),
            "muk": {"alg": "A256GCM", "ext": True, "k": r(rng, 43, B64URL), "kty": "oct"},
            "secretKey": "A3-" + r(rng, 6, UPNUM) + "-" + r(rng, 6, UPNUM) + "-" + r(rng, 5, UPNUM),
            "deviceUuid": r(rng, 26, LOWNUM)}
    return "ops_" + b64(json.dumps(body).encode(), False, False)


def onepassword_secret_key(rng: random.Random) -> str:
    return "-".join(["A3", r(rng, 6, UPNUM), r(rng, 6, UPNUM), r(rng, 5, UPNUM), r(rng, 5, UPNUM),
                     r(rng, 5, UPNUM), r(rng, 5, UPNUM)])


def azure_tagged(tag: str, at: int) -> Gen:
    """Azure's identifiable keys: 86 base64 chars + '==' with a service signature at a fixed offset."""
    def gen(rng: random.Random) -> str:
        body = r(rng, 86, B64)
        return body[:at] + tag + body[at + len(tag):] + "=="
    return gen


def telegram(rng: random.Random) -> str:
    return f"{rng.randrange(10**8, 10**10)}:AA{r(rng, 33, B64URL)}"


def aws_secret(rng: random.Random) -> str:
    return r(rng, 40, B64)


def discord_bot(rng: random.Random) -> str:
    uid = str(rng.randrange(10**17, 10**19))
    return b64(uid.encode(), True, False) + "." + r(rng, 6, B64URL) + "." + r(rng, 38, B64URL)


def luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    digits = prefix + "".join(rng.choice(DIGITS) for _ in range(length - len(prefix) - 1))
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2 == 0:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return digits + str((10 - total % 10) % 10)


# -- provider token families: (family, identifier used in keys, generator, distinctive on its own) ----------
# "Distinctive" means the format can be found with no context (a prefix, a checksum, a fixed structure); the
# others are only findable next to a key that names them (COHERE_API_KEY=...), and are sampled that way only.
P = tuple[str, str, Gen, bool]
PROVIDERS: list[P] = [
    # AI and model providers
    ("openai", "openai", choice(fixed("sk-", 48),
                                seq("sk-proj-", (74, B64URL), "T3BlbkFJ", (74, B64URL)),
                                seq("sk-svcacct-", (74, B64URL), "T3BlbkFJ", (74, B64URL)),
                                seq("sk-admin-", (74, B64URL), "T3BlbkFJ", (74, B64URL))), True),
    ("anthropic", "anthropic", choice(seq("sk-ant-api03-", (93, B64URL), "AA"),
                                      seq("sk-ant-admin01-", (93, B64URL), "AA")), True),
    ("openrouter", "openrouter", fixed("sk-or-v1-", 64, HEX), True),
    ("google-api", "google", fixed("AIza", 35, B64URL), True),
    ("google-oauth", "google_oauth", choice(fixed("GOCSPX-", 28, B64URL), fixed("ya29.", 120, B64URL),
                                            seq("1//0", (60, B64URL))), True),
    ("huggingface", "huggingface", choice(fixed("hf_", 34, ALNUM), fixed("api_org_", 34, ALNUM)), True),
    ("groq", "groq", fixed("gsk_", 52), True),
    ("xai", "xai", fixed("xai-", 80), True),
    ("replicate", "replicate", fixed("r8_", 37), True),
    ("perplexity", "perplexity", fixed("pplx-", 48, HEX), True),
    ("langsmith", "langsmith", seq("lsv2_", choice(lambda _: "pt_", lambda _: "sk_"), (32, HEX), "_", (10, HEX)),
     True),
    ("tavily", "tavily", fixed("tvly-", 32), True),
    ("pinecone", "pinecone", seq("pcsk_", (6, ALNUM), "_", (60, ALNUM)), True),
    ("fireworks", "fireworks", fixed("fw_", 24), True),
    ("nvidia", "nvidia", fixed("nvapi-", 64, B64URL), True),
    ("cerebras", "cerebras", fixed("csk-", 48, LOWNUM), True),
    ("voyage", "voyage", fixed("pa-", 43, B64URL), True),
    ("elevenlabs", "elevenlabs", fixed("sk_", 48, HEX), True),
    ("deepseek", "deepseek", fixed("sk-", 32, HEX), True),
    ("cohere", "cohere", fixed("", 40), False),
    ("mistral", "mistral", fixed("", 32), False),
    ("azure-openai", "azure_openai", fixed("", 32, HEX), False),
    ("assemblyai", "assemblyai", fixed("", 32, HEX), False),
    ("deepgram", "deepgram", fixed("", 40, HEX), False),
    ("wandb", "wandb", fixed("", 40, HEX), False),
    # code hosting, CI, registries
    ("github", "github", choice(github("ghp_"), github("gho_"), github("ghu_"), github("ghs_"), github("ghr_"),
                                seq("github_pat_11", (22, UPNUM), "_", (59, ALNUM))), True),
    ("gitlab", "gitlab", choice(fixed("glpat-", 20, B64URL), fixed("gldt-", 20, B64URL),
                                fixed("glrt-", 20, B64URL), fixed("GR1348941", 20, B64URL),
                                fixed("glptt-", 40, HEX), fixed("glcbt-", 20, B64URL),
                                seq("glpat-", (27, B64URL), ".01.", (9, LOWNUM))), True),
    ("bitbucket", "bitbucket", fixed("ATBB", 32), True),
    ("atlassian", "atlassian", seq("ATATT3xFfGF0", (170, B64URL), "=", (8, HEXU)), True),
    ("sourcegraph", "sourcegraph", choice(fixed("sgp_", 40, HEX), seq("sgp_", (16, HEX), "_", (40, HEX)),
                                          seq("sgp_local_", (40, HEX))), True),
    ("circleci", "circleci", choice(seq("CCIPAT_", (22, ALNUM), "_", (40, HEX)), seq("CCIPRJ_", (22, ALNUM), "_", (40, HEX))), True),
    ("buildkite", "buildkite", fixed("bkua_", 40, HEX), True),
    ("harness", "harness", seq(choice(lambda _: "pat.", lambda _: "sat."), (22, B64URL), ".", (24, HEX), ".",
                               (20, ALNUM)), True),
    ("jfrog", "artifactory", choice(fixed("AKCp", 69), seq("cmVmdGtuOjAxOjE3", (48, ALNUM))), True),
    ("octopus", "octopus", fixed("API-", 26, UPNUM), True),
    ("npm", "npm", fixed("npm_", 36), True),
    ("pypi", "pypi", seq("pypi-AgEIcHlwaS5vcmc", (140, B64URL)), True),
    ("rubygems", "rubygems", fixed("rubygems_", 48, HEX), True),
    ("nuget", "nuget", fixed("oy2", 43, LOWNUM), True),
    ("clojars", "clojars", fixed("CLOJARS_", 60, HEX), True),
    ("crates", "cargo_registry", fixed("cio", 32), True),
    ("docker", "docker", choice(fixed("dckr_pat_", 27, B64URL), fixed("dckr_oat_", 32, B64URL)), True),
    ("sonarqube", "sonar", choice(fixed("squ_", 40, HEX), fixed("sqp_", 40, HEX), fixed("sqa_", 40, HEX)), True),
    ("travisci", "travis", fixed("", 22), False),
    ("droneci", "drone", fixed("", 32), False),
    ("codecov", "codecov", uuid4, False),
    ("snyk", "snyk", uuid4, False),
    ("jenkins", "jenkins", fixed("11", 32, HEX), False),
    ("azure-devops", "azure_devops", fixed("", 52, "abcdefghijklmnopqrstuvwxyz234567"), False),
    ("gitter", "gitter", fixed("", 40, HEX), False),
    # clouds and infrastructure
    ("aws", "aws", choice(fixed("AKIA", 16, UPNUM), fixed("ASIA", 16, UPNUM), fixed("AROA", 16, UPNUM)), True),
    ("aws-bedrock", "bedrock", choice(seq("ABSKQmVkcm9ja0FQSUtleS", (110, B64)),
                                      seq("bedrock-api-key-", (120, B64), "="),), True),
    ("gcp-oauth-refresh", "gcp_refresh", seq("1//0", (100, B64URL)), True),
    ("azure-ad", "azure_client", seq((3, ALNUM), "8Q~", (34, ALNUM + "_~.-")), True),
    ("azure-storage", "azure_storage", azure_tagged("+ASt", 76), True),
    ("azure-function", "azure_function", seq((44, B64URL), "AzFu", (4, B64URL), "=="), True),
    ("azure-cosmos", "cosmos", azure_tagged("ACDb", 76), True),
    ("alibaba", "alibaba", fixed("LTAI", 20), True),
    ("tencent", "tencent", fixed("AKID", 32), True),
    ("yandex", "yandex", choice(fixed("AQVN", 36, B64URL), fixed("YCAJE", 35, B64URL),
                                fixed("y0_AgAAAA", 50, B64URL), fixed("t1.", 120, B64URL + ".")), True),
    ("ibm", "ibm_cloud", fixed("", 44, B64URL), False),
    ("digitalocean", "digitalocean", choice(fixed("dop_v1_", 64, HEX), fixed("doo_v1_", 64, HEX),
                                            fixed("dor_v1_", 64, HEX)), True),
    ("linode", "linode", fixed("", 64, HEX), False),
    ("vultr", "vultr", fixed("", 36, UPNUM), False),
    ("cloudflare", "cloudflare", choice(fixed("", 40, B64URL), fixed("", 37, HEX),
                                        seq("v1.0-", (24, HEX), "-", (146, HEX))), False),
    ("fastly", "fastly", fixed("", 32, B64URL), False),
    ("heroku", "heroku", choice(uuid4, fixed("HRKU-AA", 58, B64URL)), False),
    ("fly", "fly", choice(fixed("fo1_", 43, B64URL), seq("fm2_", (300, B64), "=="),
                          seq("fm1r_", (200, B64), "=")), True),
    ("netlify", "netlify", fixed("nfp_", 36), True),
    ("render", "render", fixed("rnd_", 32), True),
    ("scalingo", "scalingo", fixed("tk-us-", 48, B64URL), True),
    ("vault", "vault", choice(fixed("hvs.", 90, B64URL), fixed("hvb.", 130, B64URL), fixed("s.", 24, ALNUM)),
     True),
    ("terraform", "terraform", seq((14, ALNUM), ".atlasv1.", (67, B64URL)), True),
    ("pulumi", "pulumi", fixed("pul-", 40, HEX), True),
    ("doppler", "doppler", choice(fixed("dp.pt.", 43), fixed("dp.st.prd.", 40), fixed("dp.sa.", 43)), True),
    ("databricks", "databricks", fixed("dapi", 32, HEX), True),
    ("tailscale", "tailscale", seq("tskey-", choice(lambda _: "api-", lambda _: "auth-"), (12, ALNUM), "-",
                                   (30, ALNUM)), True),
    ("defined-networking", "dnkey", seq("dnkey-", (26, B32), "-", (52, B32)), True),
    ("openshift", "openshift", fixed("sha256~", 43, B64URL), True),
    ("kubernetes-sa", "kube", lambda rng: jwt(rng, {"iss": "kubernetes/serviceaccount",
                                                    "kubernetes.io/serviceaccount/namespace": "default"}), True),
    ("prefect", "prefect", fixed("pnu_", 36), True),
    ("infracost", "infracost", fixed("ico-", 32), True),
    ("age", "age", fixed("AGE-SECRET-KEY-1", 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"), True),
    ("onepassword", "op", choice(ops_token, onepassword_secret_key), True),
    # databases
    ("planetscale", "planetscale", choice(fixed("pscale_tkn_", 43, B64URL), fixed("pscale_pw_", 43, B64URL),
                                          fixed("pscale_oauth_", 43, B64URL)), True),
    ("neon", "neon", fixed("napi_", 64, LOWNUM), True),
    ("supabase", "supabase", choice(fixed("sbp_", 40, HEX), fixed("sb_secret_", 31, B64URL)), True),
    ("confluent", "confluent", fixed("", 64, B64), False),
    ("mongodb-atlas", "atlas_private", uuid4, False),
    # payments and commerce
    ("stripe", "stripe", choice(fixed("sk_live_", 99), fixed("sk_test_", 24), fixed("rk_live_", 99),
                                fixed("rk_prod_", 60), fixed("whsec_", 32)), True),
    ("square", "square", choice(fixed("sq0atp-", 22, B64URL), fixed("sq0csp-", 43, B64URL),
                                fixed("EAAA", 60, B64URL)), True),
    ("paypal", "braintree", seq("access_token$production$", (16, LOWNUM), "$", (32, HEX)), True),
    ("razorpay", "razorpay", choice(fixed("rzp_live_", 14), fixed("rzp_test_", 14)), True),
    ("flutterwave", "flutterwave", choice(fixed("FLWSECK_TEST-", 32, HEX, "-X"), fixed("FLWSECK-", 32, HEX, "-X")),
     True),
    ("shopify", "shopify", choice(fixed("shpat_", 32, HEX), fixed("shpss_", 32, HEX), fixed("shpca_", 32, HEX)),
     True),
    ("easypost", "easypost", choice(fixed("EZAK", 54), fixed("EZTK", 54)), True),
    ("shippo", "shippo", choice(fixed("shippo_live_", 40, HEX), fixed("shippo_test_", 40, HEX)), True),
    ("duffel", "duffel", choice(fixed("duffel_test_", 43, B64URL), fixed("duffel_live_", 43, B64URL)), True),
    ("mollie", "mollie", choice(fixed("live_", 30), fixed("test_", 30)), True),
    ("plaid", "plaid", seq("access-production-", uuid4), True),
    ("coinbase", "coinbase", fixed("", 64, HEX), False),
    ("kraken", "kraken", seq((86, B64), "=="), False),
    ("kucoin", "kucoin", fixed("", 24, HEX), False),
    ("bittrex", "bittrex", fixed("", 32, HEX), False),
    ("finicity", "finicity", fixed("", 20), False),
    # messaging, email, collaboration
    ("slack", "slack", choice(seq("xoxb-", (12, DIGITS), "-", (13, DIGITS), "-", (24, ALNUM)),
                              seq("xoxp-", (12, DIGITS), "-", (12, DIGITS), "-", (13, DIGITS), "-", (32, HEX)),
                              seq("xapp-1-A", (10, UPNUM), "-", (13, DIGITS), "-", (64, HEX)),
                              seq("xoxe.xoxp-1-", (160, ALNUM)), seq("xoxe-1-", (140, ALNUM))), True),
    ("slack-webhook", "slack_webhook", seq("https://hooks.slack.com/services/T", (10, UPNUM), "/B", (10, UPNUM),
                                           "/", (24, ALNUM)), True),
    ("discord", "discord", choice(discord_bot, seq("https://discord.com/api/webhooks/", (19, DIGITS), "/",
                                                   (68, B64URL))), True),
    ("teams-webhook", "teams_webhook", lambda rng: (
        f"https://{r(rng, 8, LOWER)}.webhook.office.com/webhookb2/{uuid4(rng)}@{uuid4(rng)}/IncomingWebhook/"
        f"{r(rng, 32, HEX)}/{uuid4(rng)}/{r(rng, 43, B64URL)}"), True),
    ("telegram", "telegram_bot", telegram, True),
    ("twilio", "twilio", choice(fixed("SK", 32, HEX), fixed("AC", 32, HEX)), True),
    ("sendgrid", "sendgrid", seq("SG.", (22, B64URL), ".", (43, B64URL)), True),
    ("mailgun", "mailgun", choice(fixed("key-", 32, HEX), seq((32, HEX), "-", (8, HEX), "-", (8, HEX)),
                                  fixed("pubkey-", 32, HEX)), True),
    ("mailchimp", "mailchimp", seq((32, HEX), "-us", lambda rng: str(rng.randrange(1, 21))), True),
    ("brevo", "sendinblue", choice(seq("xkeysib-", (64, HEX), "-", (16, ALNUM)),
                                   seq("xsmtpsib-", (64, HEX), "-", (16, ALNUM))), True),
    ("mandrill", "mandrill", fixed("md-", 22, B64URL), True),
    ("postmark", "postmark", uuid4, False),
    ("messagebird", "messagebird", fixed("", 25), False),
    ("mattermost", "mattermost", fixed("", 26, LOWNUM), False),
    ("intercom", "intercom", seq("dG9rOj", (54, B64), "="), True),
    ("hubspot", "hubspot", seq("pat-na1-", uuid4), True),
    ("asana", "asana", seq("2/", (16, DIGITS), "/", (16, DIGITS), ":", (32, HEX)), True),
    ("airtable", "airtable", seq("pat", (14, ALNUM), ".", (64, HEX)), True),
    ("notion", "notion", choice(fixed("secret_", 43), fixed("ntn_", 46)), True),
    ("linear", "linear", choice(fixed("lin_api_", 40), fixed("lin_oauth_", 64, HEX)), True),
    ("clickup", "clickup", seq("pk_", (8, DIGITS), "_", (32, UPNUM)), True),
    ("trello", "trello", seq("ATTA", (64, HEX), (8, HEXU)), True),
    ("figma", "figma", fixed("figd_", 40, B64URL), True),
    ("typeform", "typeform", seq("tfp_", (44, ALNUM), "_", (14, ALNUM)), True),
    ("contentful", "contentful", fixed("CFPAT-", 43, B64URL), True),
    ("zendesk", "zendesk", fixed("", 40), False),
    ("twitter", "twitter", choice(seq("AAAAAAAAAAAAAAAAAAAAA", (30, ALNUM), "%3D", (50, ALNUM)),
                                  seq((19, DIGITS), "-", (40, ALNUM))), True),
    ("facebook", "facebook", fixed("EAA", 180, ALNUM), True),
    ("instagram", "instagram", fixed("IGQV", 180, B64URL), True),
    ("pinterest", "pinterest", fixed("pina_", 96, UPNUM), True),
    ("dropbox", "dropbox", choice(fixed("sl.", 140, B64URL), seq((11, ALNUM), "AAAAAAAAAA", (43, B64URL))), True),
    ("linkedin", "linkedin", fixed("", 16), False),
    ("twitch", "twitch", fixed("", 30, LOWNUM), False),
    ("discord-client", "discord_client", lambda rng: str(rng.randrange(10**17, 10**18)), False),
    ("salesforce", "salesforce", seq("00D", (15, ALNUM), "!", (96, ALNUM + ".")), True),
    ("zoom", "zoom", lambda rng: jwt(rng, {"aud": None, "iss": r(rng, 22), "exp": 1900000000}), True),
    # observability
    ("sentry", "sentry", choice(seq("sntrys_eyJpYXQiOjE3", (100, B64), "_", (43, B64)), fixed("sntryu_", 64, HEX)),
     True),
    ("grafana", "grafana", choice(seq("glc_eyJvIjoi", (100, B64), "="), seq("glsa_", (32, ALNUM), "_", (8, HEX)),
                                  seq("eyJrIjoi", (62, B64), "=")), True),
    ("newrelic", "newrelic", choice(fixed("NRAK-", 27, UPNUM), fixed("NRJS-", 19, HEX), fixed("NRII-", 32, B64URL)),
     True),
    ("dynatrace", "dynatrace", seq("dt0c01.", (24, UPNUM), ".", (64, UPNUM)), True),
    ("honeycomb", "honeycomb", choice(fixed("hcaik_", 58, LOWNUM), fixed("", 32, HEX)), False),
    ("datadog", "datadog", choice(fixed("", 32, HEX), fixed("", 40, HEX)), False),
    ("sumologic", "sumologic_access", choice(fixed("su", 12, ALNUM), fixed("", 64)), False),
    ("rollbar", "rollbar", fixed("", 32, HEX), False),
    ("bugsnag", "bugsnag", fixed("", 32, HEX), False),
    ("pagerduty", "pagerduty", fixed("u+", 18, B64URL), False),
    ("opsgenie", "opsgenie", uuid4, False),
    ("launchdarkly", "launchdarkly", choice(seq("api-", uuid4), seq("sdk-", uuid4), seq("mob-", uuid4)), True),
    ("postman", "postman", seq("PMAK-", (24, HEX), "-", (34, HEX)), True),
    ("algolia", "algolia", fixed("", 32, HEX), False),
    ("mapbox", "mapbox", seq("sk.eyJ1Ijoi", (60, B64URL), ".", (22, B64URL)), True),
    ("adafruit", "adafruit", fixed("aio_", 28), True),
    ("readme", "readme", fixed("rdme_", 70, HEX), True),
    ("settlemint", "settlemint", seq("sm_pat_", (16, HEX)), True),
    ("maxmind", "maxmind", seq((6, ALNUM), "_", (29, ALNUM), "_mmk"), True),
    ("frameio", "frameio", fixed("fio-u-", 64, B64URL), True),
    ("intra42", "intra42", fixed("s-s4t2ud-", 64, HEX), True),
    ("authress", "authress", seq("sc_", (10, LOWNUM), ".", (5, LOWNUM), ".acc_", (16, LOWNUM), ".",
                                 (60, B64URL)), True),
    ("finnhub", "finnhub", fixed("", 20, LOWNUM), False),
    ("nytimes", "nytimes", fixed("", 32), False),
    ("flickr", "flickr", fixed("", 32, HEX), False),
    ("etsy", "etsy", fixed("", 24, LOWNUM), False),
    ("freshbooks", "freshbooks", fixed("", 64, HEX), False),
    ("okta", "okta", fixed("00", 40, B64URL), False),
    ("sendbird", "sendbird", fixed("", 40, HEX), False),
    ("squarespace", "squarespace", uuid4, False),
    ("rapidapi", "rapidapi", fixed("", 50, B64URL), False),
    ("adobe", "adobe", fixed("p8e-", 32), True),
    ("zapier-webhook", "zapier_webhook", seq("https://hooks.zapier.com/hooks/catch/", (7, DIGITS), "/", (6, LOWNUM)),
     True),
    ("lob", "lob", choice(fixed("live_", 35, HEX), fixed("test_pub_", 31, HEX)), True),
    ("gocardless", "gocardless", fixed("live_", 40, B64URL), True),
]

# Key words a provider identifier is combined with (a key naming a secret), as written in many conventions.
KEY_WORDS = ["api_key", "token", "secret", "api_token", "access_token", "secret_key", "auth_token", "key",
             "client_secret", "password", "apikey", "private_key", "access_key", "credentials"]


def key_forms(ident: str, word: str, rng: random.Random) -> dict[str, str]:
    parts = ident.split("_") + word.split("_")
    snake = "_".join(parts)
    return {"snake": snake, "upper": snake.upper(), "camel": parts[0] + "".join(p.title() for p in parts[1:]),
            "kebab": "-".join(parts), "dotted": ".".join(parts), "pascal": "".join(p.title() for p in parts)}


# Syntaxes: (name, template, which key form). {k} is the key, {v} the value; the value is located by a marker.
SYNTAXES: list[tuple[str, str, str]] = [
    ("dotenv", "{k}={v}\n", "upper"),
    ("dotenv-quoted", '{k}="{v}"\n', "upper"),
    ("shell-export", "export {k}={v}\n", "upper"),
    ("shell-export-single", "export {k}='{v}'\n", "upper"),
    ("shell-inline", "{k}={v} ./deploy.sh --dry-run\n", "upper"),
    ("powershell", '$env:{k} = "{v}"\n', "upper"),
    ("yaml", "{k}: {v}\n", "snake"),
    ("yaml-quoted", 'config:\n  {k}: "{v}"\n  region: us-east-1\n', "snake"),
    ("json", '{{"{k}": "{v}"}}', "snake"),
    ("json-pretty", '{{\n  "name": "svc",\n  "{k}": "{v}",\n  "enabled": true\n}}\n', "camel"),
    ("toml", '[auth]\n{k} = "{v}"\n', "snake"),
    ("ini", "[default]\n{k} = {v}\nregion = eu-west-1\n", "snake"),
    ("properties", "{k}={v}\n", "dotted"),
    ("xml-element", "<config>\n  <{k}>{v}</{k}>\n</config>\n", "camel"),
    ("xml-own-line", "<{k}>\n    {v}\n</{k}>\n", "camel"),
    ("xml-appsettings", '<add key="{k}" value="{v}" />\n', "pascal"),
    ("xml-property", '<property name="{k}" value="{v}"/>\n', "dotted"),
    ("makefile-cond", "{k} ?= {v}\n", "upper"),
    ("makefile-simple", "{k} := {v}\n", "upper"),
    ("makefile-posix", "{k} ::= {v}\n", "upper"),
    ("php-var", '$' + '{k} = "{v}";\n', "camel"),
    ("php-concat", '$' + '{k} .= "{v}";\n', "camel"),
    ("php-array", "'{k}' => '{v}',\n", "snake"),
    ("php-define", "define('{k}', '{v}');\n", "upper"),
    ("go-short", '{k} := "{v}"\n', "camel"),
    ("go-var", 'var {k} string = "{v}"\n', "camel"),
    ("go-setenv", 'os.Setenv("{k}", "{v}")\n', "upper"),
    ("java-field", 'private static final String {k} = "{v}";\n', "upper"),
    ("java-local", 'String {k} = "{v}";\n', "camel"),
    ("java-setproperty", 'System.setProperty("{k}", "{v}");\n', "dotted"),
    ("python", '{k} = "{v}"\n', "snake"),
    ("python-environ", 'os.environ["{k}"] = "{v}"\n', "upper"),
    ("python-setdefault", 'os.environ.setdefault("{k}", "{v}")\n', "upper"),
    ("python-kwarg", 'client = Client({k}="{v}", timeout=30)\n', "snake"),
    ("python-dict", 'settings = {{"{k}": "{v}", "debug": False}}\n', "snake"),
    ("python-annotated", '{k}: str = "{v}"\n', "upper"),
    ("js-const", 'const {k} = "{v}";\n', "camel"),
    ("js-object", "module.exports = {{ {k}: '{v}' }};\n", "camel"),
    ("js-process-env", "process.env.{k} = `{v}`;\n", "upper"),
    ("ruby", "{k} = '{v}'\n", "snake"),
    ("ruby-env", 'ENV["{k}"] = "{v}"\n', "upper"),
    ("ruby-hash", ':{k} => "{v}",\n', "snake"),
    ("csharp", 'var {k} = "{v}";\n', "camel"),
    ("csharp-setenv", 'Environment.SetEnvironmentVariable("{k}", "{v}");\n', "upper"),
    ("terraform", 'resource "x" "y" {{\n  {k} = "{v}"\n}}\n', "snake"),
    ("terraform-default", 'variable "{k}" {{\n  type    = string\n  default = "{v}"\n}}\n', "snake"),
    ("dockerfile-env", "ENV {k}={v}\n", "upper"),
    ("dockerfile-env-space", "ENV {k} {v}\n", "upper"),
    ("docker-run", "docker run -e {k}={v} -p 8080:8080 app:latest\n", "upper"),
    ("compose-list", "services:\n  app:\n    environment:\n      - {k}={v}\n", "upper"),
    ("compose-map", "services:\n  app:\n    environment:\n      {k}: {v}\n", "upper"),
    ("k8s-env", "env:\n  - name: {k}\n    value: {v}\n", "upper"),
    ("k8s-env-quoted", 'env:\n  - name: {k}\n    value: "{v}"\n', "upper"),
    ("cli-flag", "tool login --{k} {v} --verbose\n", "kebab"),
    ("cli-flag-eq", "tool login --{k}={v}\n", "kebab"),
    ("query-string", "GET https://api.example.com/v1/items?page=2&{k}={v}&limit=10\n", "snake"),
    ("log-logfmt", 'time=2024-05-01T12:00:00Z level=debug msg="calling api" {k}={v}\n', "snake"),
    ("log-colon", "2024-05-01 12:00:00,123 DEBUG client: {k}: {v}\n", "snake"),
    ("http-header", "X-{k}: {v}\n", "pascal"),
    ("gh-actions", "env:\n  {k}: {v}\n", "upper"),
]

# Syntaxes that need no key at all, for distinctive tokens (prose, logs, code with neutral names).
BARE: list[tuple[str, str]] = [
    ("prose", "I rotated it; the new one is {v} and it works now.\n"),
    ("log", "2024-05-01T12:00:01Z INFO loaded credential {v} from cache\n"),
    ("json-neutral", '{{"value": "{v}", "ok": true}}'),
    ("markdown-code", "Run this:\n\n```\nexport X={v}\n```\n"),
    ("bearer-header", "Authorization: Bearer {v}\n"),
    ("quoted-call", 'client = make_client("{v}")\n'),
    ("jsonl-escaped", '{{"type":"tool_result","content":"$ cat .env\\nX={v}\\nDEBUG=1\\n"}}\n'),
    ("table", "| name | value |\n|---|---|\n| prod | {v} |\n"),
]


# Webhook URLs keep their scheme and host: the secret is the path after these markers.
_URL_SECRET_AFTER = ("/services/", "/api/webhooks/", "/webhookb2/", "/hooks/catch/")


def _embed(family: str, syntax: str, template: str, values: dict[str, str], secret: str) -> Sample:
    marker = "\x00SECRET\x00"
    text = template.format(**{**values, "v": marker})
    start = text.index(marker)
    text = text.replace(marker, secret)
    end = start + len(secret)
    if secret.startswith("https://"):
        for after in _URL_SECRET_AFTER:
            if after in secret:
                start += secret.index(after) + len(after)
                break
    return Sample(family, syntax, text, start, end)


def provider_samples(rng: random.Random, per_family: int = 24) -> list[Sample]:
    out: list[Sample] = []
    for family, ident, gen, distinctive in PROVIDERS:
        for i in range(per_family):
            secret = gen(rng)
            if distinctive and i % 3 == 0:
                name, template = BARE[(i // 3) % len(BARE)]
                if secret.startswith("https://") and name == "bearer-header":
                    name, template = BARE[0]
                if "FlyV1 " in secret and name == "bearer-header":
                    name, template = BARE[0]
                out.append(_embed(family, name, template, {}, secret))
                continue
            name, template, form = SYNTAXES[rng.randrange(len(SYNTAXES))]
            word = KEY_WORDS[rng.randrange(len(KEY_WORDS))]
            if secret.startswith("https://"):
                word = "webhook_url"
            if family == "sumologic":
                word = rng.choice(["id", "key"])
            if family == "discord-client":
                word = rng.choice(["id", "secret"])
            key = key_forms(ident, word, rng)[form]
            if name in ("cli-flag", "cli-flag-eq", "dotenv", "shell-export", "shell-inline", "yaml", "ini",
                        "properties", "makefile-cond", "makefile-simple", "makefile-posix", "dockerfile-env",
                        "dockerfile-env-space", "docker-run", "compose-list", "compose-map", "k8s-env",
                        "query-string", "log-logfmt", "log-colon", "http-header", "gh-actions") and " " in secret:
                name, template, form = "dotenv-quoted", '{k}="{v}"\n', "upper"
                key = key_forms(ident, word, rng)[form]
            out.append(_embed(family, name, template, {"k": key}, secret))
    return out


# -- context families: secrets that are found by where they sit, not by their shape ------------------------

def _pw(rng: random.Random) -> str:
    """A human-ish password: weak ones matter as much as random ones."""
    kind = rng.randrange(5)
    if kind == 0:
        return rng.choice(["hunter2", "changeme", "Summer2024!", "letmein99", "P@ssw0rd", "s3cr3t-pass"])
    if kind == 1:
        return r(rng, rng.randrange(8, 17), ALNUM + "!#%&*-_")
    if kind == 2:
        return rng.choice(["correct", "tr0ub4dor", "pr0d", "blue"]) + rng.choice(["-", "_", "."]) + r(rng, 6)
    if kind == 3:
        return str(rng.randrange(100000, 99999999))
    return r(rng, 24, ALNUM)


def _pem(rng: random.Random, label: str, nbytes: int, newline: str = "\n") -> str:
    body = b64(rbytes(rng, nbytes))
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return newline.join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


def context_samples(rng: random.Random, per_family: int = 24) -> list[Sample]:
    out: list[Sample] = []

    def add(family: str, syntax: str, template: str, secret: str, **values: str) -> None:
        out.append(_embed(family, syntax, template, values, secret))

    for i in range(per_family):
        # generic keyword assignments of a password / secret in every syntax
        pw = _pw(rng)
        name, template, form = SYNTAXES[i * 7 % len(SYNTAXES)]
        if name in ("http-header",):
            name, template, form = "yaml", "{k}: {v}\n", "snake"
        word = rng.choice(["password", "db_password", "secret", "client_secret", "passwd", "app_secret",
                           "smtp_password", "secret_key", "pwd", "admin_password", "api_key", "access_token"])
        key = key_forms("", word, rng)[form].strip("_-.")
        if name in ("dotenv", "shell-export", "yaml", "ini", "makefile-simple", "compose-map", "k8s-env", "log-colon",
                    "makefile-cond", "makefile-posix", "gh-actions") and any(c in pw for c in "#&*!%"):
            pw = pw.translate(str.maketrans("#&*!%", "xyzwq"))
        add("generic-password", name, template, pw, k=key)

        # generic API keys under generic names (no provider)
        tok = rng.choice([r(rng, 32, HEX), r(rng, 40), uuid4(rng), r(rng, 64, B64URL), str(rng.randrange(10**11, 10**16))])
        name, template, form = SYNTAXES[(i * 11 + 3) % len(SYNTAXES)]
        word = rng.choice(["api_key", "apikey", "access_token", "auth_token", "secret_token", "private_token",
                           "api_secret", "client_secret", "access_key_secret", "app_secret", "access_id",
                           "master_key", "encryption_key", "signing_secret", "session_secret", "refresh_token"])
        key = key_forms("service", word, rng)[form]
        add("generic-api-key", name, template, tok, k=key)

        # connection strings: only the password goes
        pw = r(rng, rng.randrange(8, 20), ALNUM + "-_.~")
        scheme, host = rng.choice([("postgres", "db.internal:5432/app"), ("mysql", "10.0.0.5:3306/shop"),
                                   ("mongodb+srv", "cluster0.ab1cd.mongodb.net/?retryWrites=true"),
                                   ("redis", "cache:6379/0"), ("amqp", "rabbit:5672/vhost"),
                                   ("https", "nexus.example.com/repository/pypi/simple"),
                                   ("ftp", "files.example.com/pub"), ("postgresql", "localhost/test")])
        tmpl = rng.choice(['DATABASE_URL={s}://{u}:{v}@{h}\n', 'url: "{s}://{u}:{v}@{h}"\n',
                           'engine = create_engine("{s}://{u}:{v}@{h}")\n', "connecting to {s}://{u}:{v}@{h} ...\n",
                           '<connectionString>{s}://{u}:{v}@{h}</connectionString>\n'])
        add("url-credentials", "url", tmpl, pw, s=scheme, u=rng.choice(["app", "admin", "ci", "root", "u_" + r(rng, 5, LOWER)]),
            h=host)

        # curl and other CLI credentials
        pw = rng.choice(ALNUM) + r(rng, rng.randrange(8, 20), ALNUM + "!#-_")  # a leading "-" reads as a flag
        user = rng.choice(["admin", "ci", "deploy", "jane@example.com"])
        tmpl = rng.choice(["curl -u {u}:{v} https://api.example.com/v1/me\n",
                           "curl -s -u '{u}:{v}' https://ci.example.com/job/x/build\n",
                           'curl --user "{u}:{v}" -X POST https://x.example.com\n',
                           "curl -fsSL --user {u}:{v} https://artifacts.example.com/a.tgz -o a.tgz\n",
                           "wget --password={v} --user={u} https://files.example.com/f\n",
                           "docker login -u {u} -p {v} registry.example.com\n",
                           "sshpass -p '{v}' ssh {u}@host\n",
                           "mysql -u {u} --password={v} -h db shop\n",
                           'r = requests.get(url, auth=("{u}", "{v}"))\n'])
        add("curl", "cli", tmpl, pw, u=user)

        # curl with a header
        tok = r(rng, 40, B64URL)
        tmpl = rng.choice(['curl -H "Authorization: Bearer {v}" https://api.example.com\n',
                           "curl -H 'X-API-Key: {v}' https://api.example.com\n",
                           'curl --header "Authorization: token {v}" https://api.github.com/user\n',
                           'curl -H "PRIVATE-TOKEN: {v}" https://gitlab.example.com/api/v4/projects\n',
                           "http GET api.example.com Authorization:'Bearer {v}'\n",
                           "Authorization: Basic {v}\n"])
        if tmpl.startswith("Authorization: Basic"):
            tok = b64(f"{user}:{r(rng, 16)}".encode())
        add("curl-header", "cli", tmpl, tok)

        # private keys
        label = rng.choice(["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY",
                            "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"])
        block = _pem(rng, label, rng.randrange(100, 1200))
        style = rng.randrange(5)
        if style == 4:
            add("private-key", "base64-values", "tls:\n  crt: LS0tLS1CRUdJTiBDRVJU\n  key: {v}\n", b64(block.encode()))
        elif style == 0:
            add("private-key", "pem-file", "$ cat id_rsa\n{v}\n$ ls\n", block)
        elif style == 1:
            esc = block.replace("\n", "\\n")
            add("private-key", "json", '{{"type": "service_account", "private_key": "{v}", "x": 1}}', esc + "\\n")
        elif style == 2:
            add("private-key", "yaml-block", "tls:\n  key: |\n    {v}\n  cert: cert.pem\n", block.replace("\n", "\n    "))
        else:
            add("private-key", "env", 'PRIVATE_KEY="{v}"\n', block.replace("\n", "\\n"))

        # JWTs: bare, in headers, in cookies, base64-wrapped
        token = jwt(rng)
        style = rng.randrange(6)
        if style == 0:
            add("jwt", "bare", "decoded session {v} for user 42\n", token)
        elif style == 1:
            add("jwt", "header", "Authorization: Bearer {v}\n", token)
        elif style == 2:
            add("jwt", "json", '{{"id_token": "{v}", "expires_in": 3600}}', token)
        elif style == 3:
            add("jwt", "cookie", "Cookie: theme=dark; jwt={v}\n", token)
        elif style == 4:
            add("jwt-base64", "bare", "payload: {v}\n", b64(token.encode()))
        else:
            add("jwt-base64", "yaml", "  token: {v}\n", b64(token.encode()))

        # Kubernetes Secrets: every data value is base64 of a secret
        raw = rng.choice([_pw(rng), r(rng, 32), "postgres://app:" + r(rng, 12) + "@db/app", jwt(rng)])
        enc = b64(raw.encode())
        keyname = rng.choice(["password", "DB_PASS", "config.json", "tls.key", "api-token", "username", "url", ".dockerconfigjson"])
        tmpl = rng.choice([
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:\n  {k}: {v}\n",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\n  namespace: prod\ndata:\n  {k}: {v}\ntype: Opaque\n",
            "kind: Secret\napiVersion: v1\ndata:\n  {k}: \"{v}\"\nmetadata:\n  name: s\n",
            '{{"apiVersion": "v1", "kind": "Secret", "data": {{"{k}": "{v}"}}, "metadata": {{"name": "s"}}}}',
        ])
        add("kubernetes-secret", "k8s", tmpl, enc, k=keyname)
        if i % 2 == 0:
            plain = _pw(rng)
            add("kubernetes-secret", "k8s-stringdata",
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  {k}: {v}\n", plain,
                k=rng.choice(["password", "token", "db-pass"]))

        # Bundler credentials for Sidekiq Enterprise / Pro gem servers
        u, pw = r(rng, 8, HEX), r(rng, 8, HEX)
        add("sidekiq", "env", rng.choice(["BUNDLE_ENTERPRISE__CONTRIBSYS__COM={u}:{v}\n",
                                          'export BUNDLE_GEMS__CONTRIBSYS__COM="{u}:{v}"\n',
                                          "source 'https://{u}:{v}@enterprise.contribsys.com/'\n",
                                          "bundle config --local gems.contribsys.com {u}:{v}\n"]), pw, u=u)

        # credit cards (Luhn)
        prefix, length = rng.choice([("4", 16), ("51", 16), ("37", 15), ("6011", 16), ("3530", 16), ("2221", 16)])
        card = luhn_complete(prefix, length, rng)
        if rng.random() < 0.5 and length == 16:
            card = " ".join(card[j:j + 4] for j in range(0, 16, 4))
        add("credit-card", "text", rng.choice(["card: {v} exp 12/29\n", '{{"pan": "{v}"}}', "charged {v} ok\n"]), card)

        # HTTP headers and cookies
        tok = r(rng, 32, B64URL)
        tmpl = rng.choice(["X-Api-Key: {v}\n", "x-auth-token: {v}\n", "Cookie: sessionid={v}; theme=dark\n",
                           "Set-Cookie: session={v}; HttpOnly; Path=/\n", "Proxy-Authorization: Basic {v}\n",
                           "X-Vault-Token: {v}\n", "headers = {{'X-API-KEY': '{v}'}}\n"])
        add("http-headers", "http", tmpl, tok)

        # misc config formats: netrc, pgpass, npmrc, pypirc, htpasswd-like, SQL, docker config
        pw = r(rng, 14, ALNUM)
        tmpl = rng.choice(["machine api.example.com\n  login me\n  password {v}\n",
                           "machine github.com login me password {v}\n",
                           "//registry.npmjs.org/:_authToken={v}\n",
                           "[pypi]\nusername = __token__\npassword = {v}\n",
                           "CREATE USER app WITH PASSWORD '{v}';\n",
                           "ALTER USER 'app'@'%' IDENTIFIED BY '{v}';\n",
                           'f.write("machine h login u password {v}\\n")\n'])
        add("config-files", "config", tmpl, pw)
    return out


def _tool_pw(rng: random.Random) -> str:
    """A password as typed on a command line or into a credential file: no quote, no space, no leading "-"."""
    return rng.choice(ALNUM) + r(rng, rng.randrange(7, 16), ALNUM + "!#%*_.+=@^~")


def _crypt_hash(rng: random.Random) -> str:
    """A crypt(3)-style password hash as htpasswd(1) and /etc/shadow store them (alphabet ./0-9A-Za-z)."""
    c64 = "./" + ALNUM
    kind = rng.randrange(6)
    if kind == 0:
        return f"$2{rng.choice('aby')}${rng.choice(['05', '10', '12'])}${r(rng, 53, c64)}"
    if kind == 1:
        return f"${rng.choice(['1', 'apr1'])}${r(rng, 8, c64)}${r(rng, 22, c64)}"
    if kind == 2:
        return f"${rng.choice('56')}${r(rng, 16, c64)}${r(rng, rng.choice([43, 86]), c64)}"
    if kind == 3:
        return f"$y$j9T${r(rng, 22, c64)}${r(rng, 43, c64)}"
    if kind == 4:
        return f"$argon2id$v=19$m=65536,t=3,p=4${b64(rbytes(rng, 16), pad=False)}${b64(rbytes(rng, 32), pad=False)}"
    return "{SHA}" + b64(rbytes(rng, 20))


_CLI_PASSWORD_TEMPLATES = [
    "mysql -u root -p{v} shop\n", "mysql -uroot -p'{v}' -h 127.0.0.1\n",
    "mysqldump -u admin -p{v} --all-databases > all.sql\n", 'mariadb -u app -p"{v}" app\n',
    "redis-cli -h cache -a {v} ping\n", "redis-cli -a '{v}' --no-auth-warning info\n",
    "sqlcmd -S db -U sa -P '{v}' -Q 'SELECT 1'\n",
    "ldapsearch -x -D cn=admin,dc=example,dc=org -w {v} -b dc=example,dc=org\n",
    "smbclient //files/share -U alice%{v}\n",
    "openssl pkcs12 -export -in c.pem -inkey k.pem -passout pass:{v} -out c.p12\n",
    "keytool -importkeystore -srckeystore a.p12 -srcstorepass {v} -destkeystore b.jks\n",
    "echo '{v}' | docker login --username ci --password-stdin ghcr.io\n",
    "htpasswd -b -c /etc/nginx/.htpasswd alice {v}\n", "htpasswd -nbB alice '{v}'\n",
]
_SPLIT_TEMPLATES = [
    'password = "{a}" + "{b}"\n', "const apiKey = '{a}' +\n  '{b}';\n", 'secret = ("{a}"\n          "{b}")\n',
    "$password = '{a}' . '{b}';\n", 'API_TOKEN = "{a}" \\\n    "{b}"\n',
]


def tool_samples(rng: random.Random, per_family: int = 24) -> list[Sample]:
    """Credential files and command lines pasted whole, each written from its own documentation: libpq's
    password file, netrc(5), the MySQL / Redis / SQL Server / OpenLDAP / Samba / OpenSSL / keytool / docker
    clients, htpasswd(1), curl's cookie option, crypt(3) hashes, unusual dotenv names, and secrets split into
    joined string literals."""
    out: list[Sample] = []

    def add(family: str, syntax: str, template: str, secret: str, **values: str) -> None:
        out.append(_embed(family, syntax, template, values, secret))

    for _ in range(per_family):
        host = rng.choice(["db.internal", "localhost", "10.0.4.7", "*", "pg-" + r(rng, 5, LOWNUM) + ".example.net"])
        user = rng.choice(["app", "postgres", "replicator", "u_" + r(rng, 5, LOWER), "*"])
        fields = dict(h=host, p=rng.choice(["5432", "6432", "*"]), d=rng.choice(["app", "shop", "*"]), u=user)
        add("pgpass", "pgpass", rng.choice(["{h}:{p}:{d}:{u}:{v}\n", "$ cat ~/.pgpass\n{h}:{p}:{d}:{u}:{v}\n",
                                            "echo '{h}:{p}:{d}:{u}:{v}' >> ~/.pgpass\n",
                                            '{{"content":"# ~/.pgpass\\n{h}:{p}:{d}:{u}:{v}\\n"}}']),
            _tool_pw(rng).replace(":", ""), **fields)

        add("netrc", "netrc", rng.choice(["default login anonymous password {v}\n",
                                          "machine {h} password {v} login me\n",
                                          "machine {h}\n\tlogin me\n\taccount ops\n\tpassword {v}\n",
                                          "machine {h} login me account ops password {v}\n"]),
            _tool_pw(rng), h="ftp.example.org")

        add("db-cli", "cli", rng.choice(_CLI_PASSWORD_TEMPLATES), _tool_pw(rng))

        add("password-hash", "file", rng.choice(["alice:{v}\n", "$ cat .htpasswd\nbob:{v}\n",
                                                 "root:{v}:19700:0:99999:7:::\n",
                                                 '{{"user": "ci", "hash": "{v}"}}\n']), _crypt_hash(rng))

        name = rng.choice(["session", "sid", "connect.sid", "_app_session", "PHPSESSID", "remember_token", "auth"])
        add("cookie-cli", "cli", rng.choice(["curl -b '{n}={v}' https://app.example.com/me\n",
                                             'curl --cookie "{n}={v}; lang=en" https://app.example.com\n',
                                             'document.cookie = "{n}={v}; path=/; secure";\n']),
            r(rng, 32, B64URL), n=name)

        key = rng.choice(["PW", "DB_PW", "MYSQL_ROOT_PW", "HASH_SALT", "SESSION_SALT", "JWT_SIGNING", "COOKIE_SIGNING"])
        template = rng.choice(["{k}={v}\n", "export {k}='{v}'\n", '{k}="{v}"\n'])
        if rng.random() < 0.3:  # gradle.properties
            key, template = rng.choice(["mavenPass", "nexusPass", "artifactoryPass", "ossrhPass"]), "{k}={v}\n"
        add("env-names", "env", template, _tool_pw(rng).replace("=", ""), k=key)

        a, b = r(rng, rng.randrange(8, 16)), r(rng, rng.randrange(8, 16))
        text = rng.choice(_SPLIT_TEMPLATES).replace("{b}", b)
        start = text.index("{a}")
        text = text.replace("{a}", a)
        out.append(Sample("split-string", "code", text, start, text.index(b) + len(b), (a, b)))
    return out


def positives(seed: int = 1234, per_family: int = 24) -> list[Sample]:
    rng = random.Random(seed)
    return provider_samples(rng, per_family) + context_samples(rng, per_family) + tool_samples(rng, per_family)


# -- the negative corpus: ordinary developer text ---------------------------------------------------------

def _sha(rng: random.Random, n: int = 40) -> str:
    return r(rng, n, HEX)


def negatives(seed: int = 99, count: int = 8) -> list[tuple[str, str]]:
    """(name, text) pairs of ordinary developer text that must pass byte-identical."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for i in range(count):
        sha = _sha(rng)
        out.append(("git-log", f"commit {sha}\nMerge: {sha[:7]} {_sha(rng)[:7]}\nAuthor: Jane Roe <jane@example.com>\n"
                               f"Date:   Tue May 14 10:12:0{i} 2024 +0200\n\n    Fix token refresh race (#{rng.randrange(9999)})\n\n"
                               f"    Reverts {_sha(rng)}.\n"))
        out.append(("git-diff", f"diff --git a/src/auth.py b/src/auth.py\nindex {_sha(rng)[:7]}..{_sha(rng)[:7]} 100644\n"
                                "--- a/src/auth.py\n+++ b/src/auth.py\n@@ -10,7 +10,7 @@ def login(user, password):\n"
                                "-    token = fetch_token(user, password)\n+    token = fetch_token(user, password, timeout=5)\n"))
        out.append(("git-misc", f"$ git rev-parse HEAD\n{_sha(rng)}\n$ git log --oneline -3\n{_sha(rng)[:7]} Add key rotation docs\n"
                                f"{_sha(rng)[:9]} Bump deps\n$ git stash list\nstash@{{0}}: WIP on main: {_sha(rng)[:7]} x\n"))
        u = [uuid4(rng) for _ in range(6)]
        out.append(("uuids", f'{{"id": "{u[0]}", "request_id": "{u[1]}", "session_id": "{u[2]}", "trace_id": "{u[3]}", '
                             f'"user": {{"uuid": "{u[4]}"}}, "correlationId": "{u[5]}"}}\n'
                             f"2024-05-01 INFO request {u[1]} done in 12ms (span {r(rng, 16, HEX)})\n"))
        out.append(("package-lock", '    "node_modules/lodash": {\n      "version": "4.17.21",\n'
                                    '      "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",\n'
                                    f'      "integrity": "sha512-{b64(rbytes(rng, 64))}",\n      "dev": true\n    }},\n'
                                    f'    "node_modules/x": {{ "integrity": "sha1-{b64(rbytes(rng, 20))}" }}\n'))
        out.append(("yarn-lock", f'"@babel/core@^7.0.0":\n  version "7.24.5"\n  resolved "https://registry.yarnpkg.com/@babel/core/-/core-7.24.5.tgz#{_sha(rng)}"\n'
                                 f"  integrity sha512-{b64(rbytes(rng, 64))}\n  dependencies:\n    \"@ampproject/remapping\" \"^2.2.0\"\n"))
        out.append(("poetry-lock", '[[package]]\nname = "requests"\nversion = "2.31.0"\nfiles = [\n'
                                   f'    {{file = "requests-2.31.0-py3-none-any.whl", hash = "sha256:{_sha(rng, 64)}"}},\n'
                                   f'    {{file = "requests-2.31.0.tar.gz", hash = "sha256:{_sha(rng, 64)}"}},\n]\n'
                                   f'[metadata]\ncontent-hash = "{_sha(rng, 64)}"\n'))
        out.append(("cargo-lock", f'[[package]]\nname = "serde"\nversion = "1.0.200"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n'
                                  f'checksum = "{_sha(rng, 64)}"\n'))
        out.append(("go-sum", f"github.com/stretchr/testify v1.9.0 h1:{b64(rbytes(rng, 32))}\n"
                              f"github.com/stretchr/testify v1.9.0/go.mod h1:{b64(rbytes(rng, 32))}\n"
                              f"golang.org/x/crypto v0.23.0 h1:{b64(rbytes(rng, 32))}\n"))
        out.append(("pip-hashes", f"requests==2.31.0 \\\n    --hash=sha256:{_sha(rng, 64)} \\\n    --hash=sha256:{_sha(rng, 64)}\n"))
        out.append(("docker", f"FROM python:3.12-slim@sha256:{_sha(rng, 64)}\n$ docker images\nREPOSITORY   TAG   IMAGE ID       CREATED\n"
                              f"app          dev   {_sha(rng, 12)}   2 hours ago\nDigest: sha256:{_sha(rng, 64)}\n"))
        out.append(("pytest", "============================= test session starts ==============================\n"
                              "platform linux -- Python 3.11.7, pytest-8.2.0, pluggy-1.5.0\ncollected 12 items\n\n"
                              "tests/test_auth.py::test_token_refresh PASSED                  [ 50%]\n"
                              "tests/test_auth.py::test_password_reset FAILED                 [100%]\n"
                              "E       AssertionError: assert 'expired' == 'valid'\n"
                              f"E        +  where token = Token(value='{r(rng, 8, LOWER)}')\n"
                              "FAILED tests/test_auth.py::test_password_reset - AssertionError\n"
                              f"========================= 1 failed, 11 passed in 0.{rng.randrange(10, 99)}s =========================\n"))
        out.append(("go-test", f"=== RUN   TestTokenRefresh\n--- PASS: TestTokenRefresh (0.0{i}s)\n=== RUN   TestPassword\n"
                               "=== RUN   TestPassword/empty\n--- FAIL: TestPassword (0.00s)\n    --- FAIL: TestPassword/empty (0.00s)\n"
                               "        auth_test.go:42: got \"\", want \"x\"\n--- PASS: TestKey\n--- SKIP: TestSecretRotation (0.00s)\n"
                               "PASS\nFAIL\nok  \texample.com/auth\t0.012s\nFAIL\texample.com/store\t0.340s\n"))
        out.append(("jest", " PASS  src/auth/token.test.ts (5.123 s)\n FAIL  src/auth/password.test.ts\n"
                            "  ● password › rejects short ones\n\n    expect(received).toBe(expected)\n\n"
                            "Tests:       1 failed, 23 passed, 24 total\nSnapshots:   0 total\nTime:        6.2 s\n"))
        out.append(("cargo-test", "running 3 tests\ntest auth::tests::token_roundtrip ... ok\n"
                                  "test auth::tests::password_hash ... ok\ntest key::tests::parse ... FAILED\n\n"
                                  "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n"))
        out.append(("junit", '<testsuite name="AuthTest" tests="3" failures="0" time="0.123">\n'
                             '  <testcase classname="com.example.AuthTest" name="testTokenExpiry" time="0.012"/>\n'
                             '  <testcase classname="com.example.AuthTest" name="testPasswordPolicy" time="0.004"/>\n'
                             "</testsuite>\n[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0\n"))
        out.append(("urls", f"See https://github.com/acme/rose/commit/{_sha(rng)} and https://docs.example.com/api?page=2&per_page=100#auth\n"
                            "clone git@github.com:acme/rose.git or ssh://git@github.com/acme/rose.git; health http://localhost:8080/health\n"
                            f"https://cdn.example.com/assets/main.{_sha(rng, 8)}.js https://www.youtube.com/watch?v={r(rng, 11, B64URL)}\n"))
        img = b64(rbytes(rng, 1500))
        out.append(("base64-image", f'<img src="data:image/png;base64,{img}" alt="logo">\n'))
        out.append(("base64-wrapped", "-----BEGIN CERTIFICATE-----\n" + "\n".join(
            img[j:j + 64] for j in range(0, 640, 64)) + "\n-----END CERTIFICATE-----\n"))
        out.append(("versions", f"rose 0.{i}.0 on Python 3.11.{i} with numpy>=1.26.4, pytest 8.2.0, node v20.11.1, go1.22.3, "
                                f"openssl 3.0.13, build {rng.randrange(10**6)} ({_sha(rng)[:10]})\n"))
        out.append(("timestamps", f"started 2024-05-0{i + 1}T12:34:56Z, finished 2024-05-01 12:35:07.{rng.randrange(10**6):06d}+00:00 "
                                  f"(epoch {1714566907 + i}, {1714566907123 + i} ms)\n"))
        out.append(("code-python", "def get_token(self, key: str) -> str:\n    token = self._cache.get(key)\n    if token is None:\n"
                                   "        token = self.tokenizer.next()\n    password = getpass.getpass('Password: ')\n"
                                   "    api_key = os.environ['OPENAI_API_KEY']\n    secret_name = 'prod-db'\n"
                                   "    max_tokens = 4096\n    return token\n"))
        out.append(("code-go", "func (c *Client) Token(ctx context.Context) (string, error) {\n\ttoken, err := c.src.Token()\n"
                               "\tif err != nil {\n\t\treturn \"\", fmt.Errorf(\"token: %w\", err)\n\t}\n\tkey := cacheKey(c.user)\n"
                               "\tpassword := os.Getenv(\"DB_PASSWORD\")\n\treturn token.AccessToken, nil\n}\n"))
        out.append(("code-js", "const token = await getToken({ scope: 'read' });\nexport function hashPassword(password) {\n"
                               "  return bcrypt.hash(password, 10);\n}\nconst apiKey = process.env.API_KEY;\n"
                               "headers['Authorization'] = `Bearer ${token}`;\n"))
        out.append(("k8s-configmap", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n"
                                     "  LOG_LEVEL: info\n  FEATURE_FLAGS: a,b,c\n  config.json: '{\"retries\": 3}'\n"))
        out.append(("k8s-secretref", "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: app-secrets\n"
                                     "        key: db-password\n  - name: LOG_LEVEL\n    value: info\n"))
        out.append(("source-map", f'{{"version":3,"sources":["a.ts"],"mappings":"AAAA,SAASA,{r(rng, 30, B64)};AACA,IAAI"}}\n'))
        out.append(("hashes", f"{_sha(rng, 64)}  rose-0.1.0.tar.gz\n{_sha(rng, 32)}  README.md\nsha1: {_sha(rng)}\n"
                              f"ETag: \"{_sha(rng, 32)}\"\nX-Request-Id: {uuid4(rng)}\n"))
        out.append(("identifiers", "test_ordinary_text_passes_unchanged TestTokenRefreshHandlesExpiredCredentials "
                                   "getPasswordResetTokenExpiryInSeconds KEY_VALUE_STORE_MAX_ENTRIES "
                                   f"css-{r(rng, 6, LOWNUM)} chunk-{_sha(rng, 8)}.js\n"))
        out.append(("numbers", f"order {rng.randrange(10**12)}, phone +1 (555) 123-4567, snowflake {rng.randrange(10**17, 10**18)}, "
                               f"port 5432, pi 3.14159265358979, ratio 0.30000000000000004, card-like 4111 1111 1111 1112\n"))
        out.append(("ssh-public", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{r(rng, 43, B64)} dev@laptop\n"
                                  f"github.com ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{r(rng, 200, B64)}=\n"))
        out.append(("prose", "Passwords should be rotated every 90 days. Store secrets in a vault, never in code. "
                             "The API key is read from the environment; tokens expire after one hour.\n"
                             "Password: make sure it is long enough.\nToken: see the docs.\n"))
        out.append(("config-refs", "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  DB_PASSWORD: $DB_PASSWORD\n"
                                   'password: "${POSTGRES_PASSWORD}"\napi_key: <your-api-key>\nsecret: "{{ vault_secret }}"\n'
                                   "token: !Ref ApiToken\n"))
        out.append(("usage-json", f'{{"usage": {{"input_tokens": {rng.randrange(9999)}, "output_tokens": 56}}, '
                                  f'"id": "msg_01{r(rng, 22, ALNUM)}", "stop_reason": "end_turn"}}\n'))
        out.append(("transcript", json.dumps({"type": "assistant", "uuid": uuid4(rng), "parentUuid": uuid4(rng),
                                              "sessionId": uuid4(rng), "message": {"id": "msg_" + r(rng, 24),
                                              "content": [{"type": "tool_use", "id": "toolu_" + r(rng, 24),
                                                           "input": {"command": "git log --oneline -5"}}]}}) + "\n"))
        # the same tools and files without a secret: prompts, ports, files, env references, colon-separated data
        out.append(("cli-no-password", "mysql -u root -p shop\nmysql -h db -P 3306 -p\nmysqldump --single-transaction -p app\n"
                                       "redis-cli -h localhost -p 6379 -n 2 ping\nsqlcmd -S db -E -Q 'SELECT 1'\n"
                                       "ldapsearch -x -W -b dc=example,dc=org\nhtpasswd -c .htpasswd alice\n"
                                       "openssl req -new -key key.pem -passin env:KEY_PASS -out req.csr\n"
                                       "curl -b cookies.txt -c cookies.txt https://example.com\n"
                                       "docker login --username ci --password-stdin < token.txt\nssh -p 2222 user@host\n"
                                       f"smbclient -L //files -U alice -W WORKGROUP\nuptime {i}:30:45 load 0.{i}\n"))
        out.append(("colon-fields", f"12:30:4{i} up 3 days\n2024:05:01:12:00 build ok\nlocalhost:5432:db opened\n"
                                    f"fe80::1ff:fe23:4567:890a\n00:1a:2b:3c:4d:5{i}\n10:00:00:00:00\n"
                                    "Each line of ~/.pgpass is hostname:port:database:username:password\n"
                                    "machine <host> login <user> password <password>\n"))
        out.append(("passwd-locked", "root:x:0:0:root:/root:/bin/bash\ndaemon:*:19700:0:99999:7:::\nbin:!:19700::::::\n"
                                     f"price: ${rng.randrange(10, 99)}.{i}0, then $1 off; echo $2 $5 $6\n"))
        out.append(("string-tuples", '_AZURE_KEYS = ("accountkey", "sharedaccesskey")\nKEYS = ("api_key", "token")\n'
                                     'secret_label = "Secret" + ":"\nsalt \'*\' test.ping\nSALT_VERSION=3006.1\n'
                                     "pw.Close()\ndocument.cookie = \"lang=en; path=/\";\n"))
    return out
