"""The redactor on every write path: real secret formats go, ordinary code and prose stay byte-identical.

Fake secrets are generated from a fixed seed with the right alphabet and length, so the suite exercises real
shapes without committing anything a secret scanner would (rightly) complain about.
"""
from __future__ import annotations

import base64
import json
import random
import string
from collections import namedtuple

import pytest

from rose.redact import Finding, find_secrets, redact, redact_data

_RNG = random.Random(20240501)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
UPPER_DIGITS = string.ascii_uppercase + string.digits


def rnd(n: int, chars: str = ALNUM) -> str:
    """Random string of the given alphabet; guaranteed to mix letters and digits when the alphabet has both."""
    while True:
        s = "".join(_RNG.choice(chars) for _ in range(n))
        if n < 8 or not (set(chars) & set(string.digits)) or not (set(chars) & set(string.ascii_letters)):
            return s
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def pem(label: str, body_bytes: int = 600, newline: str = "\n") -> tuple[str, str]:
    body = b64(bytes(_RNG.randrange(256) for _ in range(body_bytes)))
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    block = newline.join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])
    return block, lines[1]


def jwt() -> str:
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    payload = base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"Jane Doe","iat":1716239022}').decode()
    return f"{header}.{payload.rstrip('=')}.{rnd(43, B64URL)}"


# -- fake secrets of real shapes ---------------------------------------------------------------------------
OPENAI_LEGACY = "sk-" + rnd(48)
OPENAI_PROJ = "sk-proj-" + rnd(74, B64URL) + "T3BlbkFJ" + rnd(74, B64URL)
ANTHROPIC = "sk-ant-api03-" + rnd(93, B64URL) + "AA"
GOOGLE = "AIza" + rnd(35, B64URL)
HF = "hf_" + rnd(34, string.ascii_letters)
GROQ = "gsk_" + rnd(52)
XAI = "xai-" + rnd(80)
REPLICATE = "r8_" + rnd(37)
STRIPE_SK = "sk_live_" + rnd(99)
STRIPE_RK = "rk_live_" + rnd(99)
STRIPE_PK = "pk_live_" + rnd(99)
SENDGRID = "SG." + rnd(22, B64URL) + "." + rnd(43, B64URL)
TWILIO = "SK" + rnd(32, HEX)
AZURE_KEY = b64(bytes(_RNG.randrange(256) for _ in range(64)))
GH_PAT = "ghp_" + rnd(36)
GH_OAUTH = "gho_" + rnd(36)
GH_SERVER = "ghs_" + rnd(36)
GH_FINE = "github_pat_11" + rnd(20, UPPER_DIGITS) + "_" + rnd(59)
GITLAB = "glpat-" + rnd(20, B64URL)
SLACK_BOT = f"xoxb-{rnd(12, string.digits)}-{rnd(13, string.digits)}-{rnd(24)}"
SLACK_USER = f"xoxp-{rnd(12, string.digits)}-{rnd(12, string.digits)}-{rnd(13, string.digits)}-{rnd(32, HEX)}"
SLACK_APP = f"xapp-1-A{rnd(10, UPPER_DIGITS)}-{rnd(13, string.digits)}-{rnd(64, HEX)}"
SLACK_HOOK_PATH = f"T{rnd(8, UPPER_DIGITS)}/B{rnd(10, UPPER_DIGITS)}/{rnd(24)}"
NPM = "npm_" + rnd(36)
PYPI = "pypi-AgEIcHlwaS5vcmc" + rnd(150, B64URL)
AWS_ID = "AKIA" + rnd(16, UPPER_DIGITS)
AWS_STS_ID = "ASIA" + rnd(16, UPPER_DIGITS)
AWS_SECRET = rnd(40, B64)
JWT = jwt()
BEARER = rnd(40, B64URL + ".")
MISTRAL = rnd(32)
COHERE = rnd(40)
DISCORD_HOOK = f"{rnd(19, string.digits)}/{rnd(68, B64URL)}"
TELEGRAM = f"{rnd(10, string.digits)}:AA{rnd(33, B64URL)}"
AZURE_AD = f"{rnd(3, ALNUM)}8Q~{rnd(34, ALNUM + '_~.-')}"
PW = "Tr0ub4dor&3"

_basic_raw = b64(b"deploy:" + rnd(16).encode())
_gcp_pem, _gcp_line = pem("PRIVATE KEY", newline="\\n")
GCP_JSON = json.dumps({
    "type": "service_account", "project_id": "demo-project-123456",
    "private_key_id": rnd(40, HEX), "private_key": _gcp_pem.replace("\\n", "\n") + "\n",
    "client_email": "rose-ci@demo-project-123456.iam.gserviceaccount.com", "client_id": rnd(21, string.digits),
    "token_uri": "https://oauth2.googleapis.com/token",
}, indent=2)
RSA_PEM, RSA_LINE = pem("RSA PRIVATE KEY", 1190)
SSH_PEM, SSH_LINE = pem("OPENSSH PRIVATE KEY", 400)
EC_PEM, EC_LINE = pem("EC PRIVATE KEY", 120)
PGP_PEM, PGP_LINE = pem("PGP PRIVATE KEY BLOCK", 900)
ENC_PEM, ENC_LINE = pem("ENCRYPTED PRIVATE KEY", 700)
GENERIC_PEM, GENERIC_LINE = pem("PRIVATE KEY", 700)
_trunc_lines = RSA_PEM.splitlines()[:6]
TRUNCATED_PEM = "\n".join(_trunc_lines)
_jsonl_pem, _jsonl_pem_line = pem("OPENSSH PRIVATE KEY", 400)
TRUNCATED_JSONL_PEM = json.dumps({"type": "tool_result",
                                  "content": "\n".join(_jsonl_pem.splitlines()[:4]) + "\n[output truncated]"})

# (id, text, secret that must disappear, substrings that must survive, expected placeholder kind)
POSITIVES: list[tuple[str, str, str, tuple[str, ...], str]] = [
    ("openai-legacy-env", f"OPENAI_API_KEY={OPENAI_LEGACY}\n", OPENAI_LEGACY, ("OPENAI_API_KEY=",), "openai-api-key"),
    ("openai-project-prose", f"I rotated it, the new key is {OPENAI_PROJ} - works now.", OPENAI_PROJ,
     ("the new key is ", " - works now."), "openai-api-key"),
    ("anthropic-export", f'export ANTHROPIC_API_KEY="{ANTHROPIC}"', ANTHROPIC, ("export ANTHROPIC_API_KEY=",),
     "anthropic-api-key"),
    ("google-in-url", f"curl https://generativelanguage.googleapis.com/v1/models?key={GOOGLE}", GOOGLE,
     ("https://generativelanguage.googleapis.com/v1/models?key=",), "google-api-key"),
    ("huggingface-cli", f"huggingface-cli login --token {HF}", HF, ("huggingface-cli login --token ",),
     "huggingface-token"),
    ("groq-python", f'client = Groq(api_key="{GROQ}")', GROQ, ("client = Groq(api_key=",), "groq-api-key"),
    ("xai-header", f"XAI_API_KEY={XAI} python run.py", XAI, ("python run.py",), "xai-api-key"),
    ("replicate", f"REPLICATE_API_TOKEN={REPLICATE}", REPLICATE, ("REPLICATE_API_TOKEN=",), "replicate-api-token"),
    ("stripe-secret", f"stripe.api_key = '{STRIPE_SK}'", STRIPE_SK, ("stripe.api_key = ",), "stripe-key"),
    ("stripe-restricted", f"key: {STRIPE_RK}", STRIPE_RK, ("key: ",), "stripe-key"),
    ("stripe-publishable", f"<script>Stripe('{STRIPE_PK}')</script>", STRIPE_PK, ("<script>Stripe(",),
     "stripe-key"),
    ("sendgrid", f"SENDGRID_API_KEY='{SENDGRID}'", SENDGRID, ("SENDGRID_API_KEY=",), "sendgrid-api-key"),
    ("twilio-api-key", f"twilio api:core:messages:create --api-key {TWILIO}", TWILIO, ("--api-key ",),
     "twilio-api-key"),
    ("azure-storage-connection-string",
     f"DefaultEndpointsProtocol=https;AccountName=roseacct;AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
     AZURE_KEY, ("AccountName=roseacct;AccountKey=", ";EndpointSuffix=core.windows.net"), "azure-storage-key"),
    ("github-classic", f"git push https://{GH_PAT}@github.com/acme/rose.git", GH_PAT,
     ("@github.com/acme/rose.git",), "github-token"),
    ("github-oauth-json", f'{{"access_token": "{GH_OAUTH}", "scope": "repo"}}', GH_OAUTH,
     ('"access_token": ', '"scope": "repo"'), "github-token"),
    ("github-app-in-url", f"https://x-access-token:{GH_SERVER}@github.com/acme/rose", GH_SERVER,
     ("https://x-access-token:", "@github.com/acme/rose"), "github-token"),
    ("github-fine-grained", f"GH_TOKEN={GH_FINE} gh pr list", GH_FINE, ("gh pr list",), "github-token"),
    ("gitlab", f"glab auth login --token {GITLAB}", GITLAB, ("glab auth login --token ",), "gitlab-token"),
    ("slack-bot", f"SLACK_BOT_TOKEN={SLACK_BOT}", SLACK_BOT, ("SLACK_BOT_TOKEN=",), "slack-token"),
    ("slack-user", f"using {SLACK_USER} for the export", SLACK_USER, ("using ", " for the export"), "slack-token"),
    ("slack-app", f"app_token: {SLACK_APP}", SLACK_APP, ("app_token: ",), "slack-token"),
    ("slack-webhook", f"curl -X POST https://hooks.slack.com/services/{SLACK_HOOK_PATH} -d @msg.json",
     SLACK_HOOK_PATH, ("https://hooks.slack.com/services/", " -d @msg.json"), "slack-webhook"),
    ("discord-webhook", f"https://discord.com/api/webhooks/{DISCORD_HOOK}", DISCORD_HOOK,
     ("https://discord.com/api/webhooks/",), "discord-webhook"),
    ("npmrc", f"//registry.npmjs.org/:_authToken={NPM}\n", NPM, ("//registry.npmjs.org/:_authToken=",),
     "npm-token"),
    ("pypirc", f"[pypi]\nusername = __token__\npassword = {PYPI}\n", PYPI, ("username = __token__", "password = "),
     "pypi-token"),
    ("aws-access-key-id", f"aws_access_key_id = {AWS_ID}", AWS_ID, ("aws_access_key_id = ",), "aws-access-key"),
    ("aws-sts-key-id", f"Credentials: {AWS_STS_ID} expired", AWS_STS_ID, ("Credentials: ", " expired"),
     "aws-access-key"),
    ("aws-secret-in-config", f"[default]\naws_secret_access_key = {AWS_SECRET}\nregion = eu-west-1", AWS_SECRET,
     ("aws_secret_access_key = ", "region = eu-west-1"), "aws-secret-key"),
    ("gcp-service-account-json", GCP_JSON, _gcp_line, ('"client_email": "rose-ci@demo-project-123456',
                                                       '"private_key": "'), "private-key"),
    ("jwt-in-log", f"decoded session {JWT} for user 42", JWT, ("decoded session ", " for user 42"), "jwt"),
    ("pem-rsa", f"key file:\n{RSA_PEM}\nend of file", RSA_LINE, ("key file:\n", "\nend of file"), "private-key"),
    ("pem-openssh", SSH_PEM, SSH_LINE, (), "private-key"),
    ("pem-ec", f"ec: {EC_PEM}", EC_LINE, ("ec: ",), "private-key"),
    ("pem-pgp", PGP_PEM, PGP_LINE, (), "private-key"),
    ("pem-encrypted", ENC_PEM, ENC_LINE, (), "private-key"),
    ("pem-generic-yaml", "tls:\n  key: |\n    " + GENERIC_PEM.replace("\n", "\n    ") + "\n  cert: cert.pem",
     GENERIC_LINE, ("tls:\n  key: |\n    ", "\n  cert: cert.pem"), "private-key"),
    ("pem-truncated", f"$ cat id_rsa\n{TRUNCATED_PEM}", _trunc_lines[3], ("$ cat id_rsa\n",), "private-key"),
    ("authorization-bearer", f"Authorization: Bearer {BEARER}\nAccept: */*", BEARER,
     ("Authorization: Bearer ", "\nAccept: */*"), "authorization"),
    # a header written without the space after its colon: curl -H "Name:value", HTTPie's Name:value
    ("header-tight-curl", 'curl -H "X-API-Token:Zk3pQ9vX2mL7aB4cD8eF1gH6" https://api.example.com',
     "Zk3pQ9vX2mL7aB4cD8eF1gH6", ('curl -H "X-API-Token:', '" https://api.example.com'), "assignment"),
    ("header-tight-httpie", "http GET api.example.com X-Api-Key:Qm8wT2rY5uI9oP3aS6dF1gH4 page==2",
     "Qm8wT2rY5uI9oP3aS6dF1gH4", ("http GET api.example.com X-Api-Key:", " page==2"), "assignment"),
    ("authorization-basic", f'curl -H "Authorization: Basic {_basic_raw}" https://api.example.com', _basic_raw,
     ('curl -H "Authorization: Basic ', '" https://api.example.com'), "authorization"),
    ("bare-bearer", f"the proxy forwarded Bearer {BEARER} upstream", BEARER,
     ("the proxy forwarded Bearer ", " upstream"), "bearer-token"),
    ("postgres-url", "DATABASE_URL=postgres://app:S3cr3tPw@db.internal:5432/rose", "S3cr3tPw",
     ("postgres://app:", "@db.internal:5432/rose"), "password"),
    ("mysql-url", "mysql://root:hunter2@127.0.0.1:3306/shop?charset=utf8", "hunter2",
     ("mysql://root:", "@127.0.0.1:3306/shop?charset=utf8"), "password"),
    ("mongodb-srv-url", "mongodb+srv://admin:p%40ssW0rd@cluster0.ab1cd.mongodb.net/?retryWrites=true",
     "p%40ssW0rd", ("mongodb+srv://admin:", "@cluster0.ab1cd.mongodb.net/"), "password"),
    ("redis-url-no-user", "REDIS_URL=redis://:r3disPass@cache:6379/0", "r3disPass",
     ("redis://:", "@cache:6379/0"), "password"),
    ("amqp-url", "broker_url = 'amqp://guest:guest123@rabbit:5672//'", "guest123",
     ("amqp://guest:", "@rabbit:5672//"), "password"),
    ("https-userinfo", "pip install --index-url https://ci:Zx9-Qw8@pypi.internal/simple pkg", "Zx9-Qw8",
     ("https://ci:", "@pypi.internal/simple pkg"), "password"),
    ("card-visa-spaced", "card: 4111 1111 1111 1111 exp 12/29", "4111 1111 1111 1111", (" exp 12/29",),
     "credit-card"),
    ("card-mastercard", "charged 5555555555554444 yesterday", "5555555555554444", ("charged ", " yesterday"),
     "credit-card"),
    ("card-amex", "amex=378282246310005;", "378282246310005", ("amex=",), "credit-card"),
    ("card-discover-dashed", "Card 6011-1111-1111-1117 declined", "6011-1111-1111-1117", ("Card ", " declined"),
     "credit-card"),
    ("ini-password", "[db]\npassword = hunter2\nhost = localhost", "hunter2",
     ("password = ", "host = localhost"), "assignment"),
    ("yaml-password", "database:\n  user: app\n  password: s3cr3t-Pa55\n  port: 5432", "s3cr3t-Pa55",
     ("  password: ", "  port: 5432"), "assignment"),
    ("json-password", '{"user": "app", "password": "hunter2!", "port": 5432}', "hunter2!",
     ('"password": "', '"port": 5432'), "assignment"),
    ("dotenv-password", "DB_PASSWORD=changeme123\nDB_HOST=db", "changeme123", ("DB_PASSWORD=", "DB_HOST=db"),
     "assignment"),
    ("export-api-key", f'export API_KEY="{MISTRAL}"', MISTRAL, ("export API_KEY=",), "assignment"),
    ("cli-password-flag", f"mysqldump --user root --password {PW} shop > dump.sql", PW,
     ("--password ", " shop > dump.sql"), "assignment"),
    ("cli-token-equals", f"terraform login --token={rnd(14)}.atlas --force", "", ("--force",), "assignment"),
    ("client-secret-yaml", f"oauth:\n  client_id: rose-app\n  client_secret: {rnd(40)}\n", "",
     ("client_id: rose-app", "client_secret: "), "assignment"),
    ("private-key-assignment", f"PRIVATE_KEY='{rnd(64, HEX)}'", "", ("PRIVATE_KEY=",), "assignment"),
    ("apikey-toml", f'apikey = "{COHERE}"', COHERE, ("apikey = ",), "assignment"),
    ("access-key-yaml", f"access_key: {rnd(20, UPPER_DIGITS)}", "", ("access_key: ",), "assignment"),
    ("passwd-equals", "ftp_user=anon passwd=letmein99 host=ftp.example.com", "letmein99",
     ("ftp_user=anon passwd=", " host=ftp.example.com"), "assignment"),
    ("pwd-yaml", "smtp:\n  pwd: Mail!2024\n", "Mail!2024", ("  pwd: ",), "assignment"),
    ("token-query-param", f"GET /api/v1/events?since=3d&token={rnd(32, HEX)} HTTP/1.1", "",
     ("GET /api/v1/events?since=3d&token=", " HTTP/1.1"), "assignment"),
    ("django-secret-key", "SECRET_KEY = 'django-insecure-7x#k2!qz@m9p$w3e'", "django-insecure-7x#k2!qz@m9p$w3e",
     ("SECRET_KEY = ",), "assignment"),
    ("high-entropy-custom-key", f'"webhook_signing_credential": "{rnd(48, B64)}"', "",
     ('"webhook_signing_credential": "',), "assignment"),
    ("mistral-env", f"MISTRAL_API_KEY={MISTRAL}", MISTRAL, ("MISTRAL_API_KEY=",), "assignment"),
    ("cohere-python", f'co = cohere.Client(api_key="{COHERE}")', COHERE, ("cohere.Client(api_key=",), "assignment"),
    ("k8s-env-pair", "env:\n  - name: DB_PASSWORD\n    value: pr0d-Pa55word\n  - name: LOG_LEVEL\n    value: info",
     "pr0d-Pa55word", ("name: DB_PASSWORD", "value: info"), "assignment"),
    ("curl-user", "curl -u admin:Adm1nPass! https://jenkins.local/api/json", "Adm1nPass!",
     ("curl -u admin:", " https://jenkins.local/api/json"), "password"),
    ("xml-password", "<server><id>nexus</id><password>N3xusPw</password></server>", "N3xusPw",
     ("<password>", "</password>", "<id>nexus</id>"), "assignment"),
    ("cookie-header", f"Cookie: sessionid={rnd(32, HEX)}; csrftoken={rnd(32)}", "", ("Cookie: sessionid=",), "cookie"),
    ("libpq-conninfo", 'psql "host=db user=app password=pgS3cret dbname=rose"', "pgS3cret",
     ("host=db user=app password=", " dbname=rose"), "assignment"),
    ("sql-create-user", "CREATE USER app WITH PASSWORD 'Sql$ecret1';", "Sql$ecret1",
     ("CREATE USER app WITH PASSWORD '", "';"), "password"),
    ("docker-login", "docker login -u ci -p Dkr-Pa55 registry.example.com", "Dkr-Pa55",
     ("docker login -u ci -p ", " registry.example.com"), "password"),
    ("azure-sas", f"https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig={rnd(43, ALNUM)}%3D", "",
     ("https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig=",), "azure-sas-signature"),
    ("azure-ad-client-secret", f'"clientSecret": "{AZURE_AD}"', AZURE_AD, ('"clientSecret": "',),
     "azure-client-secret"),
    ("telegram-bot", f"curl https://api.telegram.org/bot{TELEGRAM}/getMe", TELEGRAM.split(":")[1],
     ("curl https://api.telegram.org/bot", "/getMe"), "telegram-bot-token"),
    ("key-glued-to-output", "x" * 40 + ANTHROPIC + " done", ANTHROPIC, ("x" * 40, " done"), "anthropic-api-key"),
    ("netrc", f"machine api.heroku.com\n  login me@example.com\n  password {rnd(36, HEX)}\n", "",
     ("machine api.heroku.com", "login me@example.com", "password "), "password"),
    ("pem-truncated-in-jsonl", TRUNCATED_JSONL_PEM, _jsonl_pem_line, ('"type": "tool_result"', "[output truncated]"),
     "private-key"),
    ("authorization-digest", 'Authorization: Digest username="bob", realm="api", '
     'nonce="dcd98b7102dd2f0e8b11d0f600bfb0c0", response="6629fae49393a05397450978507c4ef1"',
     "6629fae49393a05397450978507c4ef1", ("Authorization: Digest ",), "authorization"),
    ("ecs-name-value-json", '{"environment": [{"name": "STRIPE_WEBHOOK_SECRET", "value": "wh-prod-2024"}]}',
     "wh-prod-2024", ('"name": "STRIPE_WEBHOOK_SECRET", "value": "',), "assignment"),
    ("set-cookie-session",
     f"< Set-Cookie: sessionid={rnd(32, string.ascii_lowercase + string.digits)}; HttpOnly; Path=/", "",
     ("< Set-Cookie: sessionid=", "; HttpOnly; Path=/"), "cookie"),
    ("annotated-python", 'DB_PASSWORD: str = "pr0d-db-pass"', "pr0d-db-pass", ("DB_PASSWORD: str = ",), "assignment"),
    ("gitlab-url-userinfo", f"git clone https://oauth2:{GITLAB}@gitlab.com/acme/rose.git", GITLAB,
     ("https://oauth2:", "@gitlab.com/acme/rose.git"), "gitlab-token"),
]

# cases whose secret is generated inline: recover it from the text for the "gone" assertion
_INLINE = {
    "cli-token-equals": lambda t: t.split("--token=")[1].split(" ")[0],
    "client-secret-yaml": lambda t: t.split("client_secret: ")[1].strip(),
    "private-key-assignment": lambda t: t.split("'")[1],
    "access-key-yaml": lambda t: t.split(": ")[1],
    "token-query-param": lambda t: t.split("token=")[1].split(" ")[0],
    "high-entropy-custom-key": lambda t: t.split('": "')[1].rstrip('"'),
    "cookie-header": lambda t: t.split("sessionid=")[1].split(";")[0],
    "azure-sas": lambda t: t.split("sig=")[1],
    "netrc": lambda t: t.split("password ")[1].strip(),
    "set-cookie-session": lambda t: t.split("sessionid=")[1].split(";")[0],
}

NEGATIVES: list[tuple[str, str]] = [
    ("fetch-credentials-option", "const r = await fetch(url, {credentials: 'include', mode: 'cors'});\n"),
    ("actions-id-token-permission", "permissions:\n  id-token: write\n  contents: read\n"),
    ("def-get-token", "class Client:\n    def get_token(self):\n        return self._token\n"),
    ("token-from-tokenizer", "token = self.tokenizer.next()\nwhile token:\n    token = self.tokenizer.next()\n"),
    ("password-hash-call", "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())\n"),
    ("key-comparison", 'if key == "enter":\n    submit()\nelif key != "escape":\n    pass\n'),
    ("git-log", "commit 3f2a9c8e1b7d4f6a0c5e2d9b8a7f6e5d4c3b2a19\nAuthor: Jane Roe <jane@example.com>\n"
                "Date:   Tue May 14 10:12:01 2024 +0200\n\n    Fix flaky test (see 9b8a7f6)\n"),
    ("uuids", "request 550e8400-e29b-41d4-a716-446655440000 retried as 123e4567-e89b-12d3-a456-426614174000"),
    ("plain-urls", "Docs: https://docs.python.org/3/library/re.html, health: http://localhost:8080/health, "
                   "clone git@github.com:acme/rose.git or ssh://git@github.com/acme/rose"),
    ("timestamps", "started 2024-05-01T12:34:56Z, finished 2024-05-01 12:35:07.123456+00:00 (epoch 1714566907)"),
    ("phones-and-non-luhn", "Call +1 (555) 123-4567 or 555-867-5309; card 4111 1111 1111 1112 was rejected; "
                            "ref 1234 5678 9012 3456; order 1700000000000"),
    ("versions", "rose 0.1.0 on Python 3.11.7 with numpy>=1.26.4, pytest 8.2.0, node v20.11.1, go1.22.3"),
    ("max-tokens", 'response = client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, '
                   'temperature=0.2)\nmax_tokens=512\n'),
    ("token-limit-const", "TOKEN_LIMIT = 4096\nMAX_KEY_LENGTH = 64\nnum_tokens: 12000\n"),
    ("markdown", "# Setup\n\n1. Create an API key in the dashboard.\n2. Put it in your environment, **never** in "
                 "code.\n\n| Setting | Default |\n|---|---|\n| `timeout` | 30 |\n\n> Tokens expire after 1 hour.\n"),
    ("traceback", 'Traceback (most recent call last):\n  File "/usr/lib/python3.11/site-packages/requests/auth.py",'
                  ' line 94, in get_token\n    token = self._fetch(url)\n  File "/app/client.py", line 12, in '
                  "_fetch\n    raise KeyError('token')\nKeyError: 'token'\n"),
    ("pytest-output", "============================= test session starts ==============================\n"
                      "platform linux -- Python 3.11.7, pytest-8.2.0, pluggy-1.5.0\n"
                      "collected 12 items\n\ntests/test_auth.py::test_token_refresh PASSED              [ 50%]\n"
                      "tests/test_auth.py::test_password_reset FAILED           [100%]\n\n"
                      "E       assert 'expired' == 'valid'\nFAILED tests/test_auth.py::test_password_reset - "
                      "AssertionError\n========================= 1 failed, 11 passed in 0.42s =====\n"),
    ("webapp-yaml", "server:\n  host: 0.0.0.0\n  port: 8080\ndatabase:\n  host: db\n  name: app\n  pool_size: 10\n"
                    "auth:\n  enabled: true\n  provider: oidc\n  session_timeout: 3600\n  password_min_length: 12\n"
                    "  token_type: Bearer\n  secret_name: app-secrets\nlogging:\n  level: info\n"),
    ("password-prose", "Passwords should be rotated every 90 days. A password manager helps; never reuse a "
                       "password, and store secrets in a vault rather than in the repository. Tokens and keys "
                       "follow the same rule.\nPassword: make sure it is long enough.\n"),
    ("usage-json", '{"usage": {"input_tokens": 1234, "output_tokens": 56, "cache_read_input_tokens": 0}, '
                   '"stop_reason": "end_turn", "id": "msg_01XFDUDYJgAACzvnptvVoYEL"}'),
    ("sort-key-lambda", "rows = sorted(rows, key=lambda kv: kv[1])\nkeyboard.press(key='enter')\n"),
    ("getpass", 'password = getpass.getpass("Password: ")\napi_key = os.environ["OPENAI_API_KEY"]\n'
                "token = os.getenv('GITHUB_TOKEN')\n"),
    ("references", "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  DB_PASSWORD: $DB_PASSWORD\n"
                   'password: "${POSTGRES_PASSWORD}"\napi_key: <your-api-key>\nsecret: "{{ vault_secret }}"\n'),
    ("annotations", "@dataclass\nclass Settings:\n    password: str\n    api_key: str | None = None\n"
                    "    token: Optional[str] = None\n"),
    ("typescript", "interface Login {\n  username: string;\n  password: string;\n}\n"
                   "const creds = { password: form.password, token };\n"),
    ("env-dump", "HOME=/home/dev\nPWD=/home/dev/project\nOLDPWD=/home/dev\nSSH_AUTH_SOCK=/tmp/ssh-XXXXk2/agent.4121\n"
                 "XDG_SESSION_ID=3\nXDG_SESSION_TYPE=wayland\nSHELL=/bin/bash\n"),
    ("tokens-loop", "for token in tokens:\n    if token.kind == 'NAME':\n        names.append(token)\n"),
    ("non-ascii", "Les mots de passe doivent être changés. 密码应该定期更换。パスワードを変更してください 🔑✨ — ok"),
    ("sql", "SELECT id, name, created_at FROM users WHERE id = 42 AND deleted_at IS NULL;\n"),
    ("git-diff", "diff --git a/src/auth.py b/src/auth.py\nindex 3f2a9c8..9b8a7f6 100644\n--- a/src/auth.py\n"
                 "+++ b/src/auth.py\n@@ -10,7 +10,7 @@ def login(user, password):\n-    return check(password)\n"
                 "+    return verify(user, password)\n"),
    ("shell-commands", "ls -la /etc/ssl/private\nssh-keygen -t ed25519 -C \"me@example.com\"\n"
                       "git commit -m 'rotate keys'\nkubectl get secret app-secrets -o yaml\n"),
    ("log-line", "2024-01-01 12:00:00 INFO auth: login ok user=alice request_id=9f1c2b3a duration_ms=42\n"),
    ("cache-key", 'cache_key = f"user:{user_id}:profile"\nkey = "user:123:profile"\nsort_key: created_at\n'),
    ("ids-and-snowflakes", "tweet 1234567890123456789, discord 981234567890123456, pr #4521, run 9876543210"),
    ("auth-prose", "The Authorization header must be set. Use Bearer tokens for auth. Bearer authentication "
                   "is described in RFC 6750.\n"),
    ("secrets-module", "import secrets\nnode_id = secrets.token_hex(16)\nsalt = secrets.token_bytes(16)\n"),
    ("k8s-secret-ref", "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: app-secrets\n"
                       "        key: db-password\n"),
    ("decimal-and-float", "pi = 3.14159265358979323846\nratio 0.30000000000000004\n"),
    ("windows-path", r"C:\Users\dev\AppData\Local\rose\config.yaml"),
    ("kwarg-identifier", "conn = connect(host=host, user=user, password=password)\n"),
    # regressions from a scan of 160 MB of site-packages and /usr/share/doc
    ("html-accesskey", '<a href="Types.html" accesskey="n" rel="next">Types</a>, <a accesskey="p" href="i.html">'),
    ("key-name-constants", 'STATS_KEY = "_hypothesis_stats"\nROOT_KEY = \'__root__\'\nPASS = "pass"\nFAIL = "fail"\n'
                           "PASSWORD = 'password'\nTOKEN = \"token\"\n"),
    ("authorization-from-code", 'authorization = self._get_param("authorization")\n'
                                'self.authorization = kwargs.get("authorization")\n'),
    ("key-inside-string", 'return Choice(c.id, "second pass: " + reason(c), "search")\nprint("token: " + token)\n'),
    ("tuple-unpacking", "self.user, self.password = user, password\nusername, password = split\n"),
    ("config-flags", "'HAVE_STRUCT_PASSWD_PW_GECOS': 1,\nCLIENT_KEY_EXCHANGE = 16\nClientToken = str\n"),
    ("pem-marker-prose", "Your file must have '-----BEGIN RSA PRIVATE KEY-----' and\n"
                         "'-----END RSA PRIVATE KEY-----' markers; the text before BEGIN is ignored.\n"),
    ("identified-by-prose", '"""Load and return a dynamic library identified by \'name\'."""\n'),
    ("public-key-token", '<assemblyIdentity name="Microsoft.VC90.CRT" publicKeyToken="1fc8b3b9a1e18e3b"/>\n'
                         "public_key: AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"),
    ("makefile-rule", "git-credential-osxkeychain: git-credential-osxkeychain.o\n\t$(CC) -o $@ $<\n"),
    ("seeds-and-hashes", "rng = np.random.default_rng(59846294526092468)\n"
                         '{"key_sha256": "bb1636883c2707b51c5b7fc26c6927af4430f2e0785a8c7bc886337f919f9edf"}\n'),
    ("sk-inside-word", "tasksk-abcdefghij1234567890abcdefgh and risk-assessment-2024-q3-final-report-v12\n"),
    ("ssh-public-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl dev@laptop\n"),
    ("f-string-key", 'key = f"Fn::{tag[1:]}"\nnew_token = f"{group}@{stream}"\n'),
    ("header-tight-plain-values", "X-Api-Key:required\ncache-key:v1\nhttp :8080 X-Auth-Token:$TOKEN\n"
     "at 12:30:45 token-refresh:started\nstd::token_key:value\n"),
    ("number-table", "ports: 5432 5433 5434 5435 5436 5437 5438 5439\n[[4111 1111 1111 1111 1111 1111 1111 1111]]\n"),
]


def _secret_for(case_id: str, text: str, secret: str) -> str:
    return _INLINE[case_id](text) if case_id in _INLINE else secret


@pytest.mark.parametrize(("text", "secret", "keep", "kind"),
                         [pytest.param(t, s, k, kd, id=i) for i, t, s, k, kd in POSITIVES])
def test_secret_is_redacted(request, text, secret, keep, kind):
    secret = _secret_for(request.node.callspec.id, text, secret)
    assert secret, "test case has no secret to look for"
    out = redact(text)
    assert secret not in out
    assert "[REDACTED:" in out
    assert f"[REDACTED:{kind}]" in out, out
    for survivor in keep:
        assert survivor in out, (survivor, out)


def test_enough_samples():
    assert len(POSITIVES) >= 40
    assert len(NEGATIVES) >= 25


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in NEGATIVES])
def test_ordinary_text_passes_unchanged(text):
    assert find_secrets(text) == []
    assert redact(text) == text


def test_spec_examples():
    assert redact("password = hunter2") == "password = [REDACTED:assignment]"
    assert redact("postgres://user:pw123@host/db") == "postgres://user:[REDACTED:password]@host/db"
    assert redact(f"id {AWS_ID} end") == "id [REDACTED:aws-access-key] end"


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t, *_ in POSITIVES]
                         + [pytest.param(t, id="neg-" + i) for i, t in NEGATIVES])
def test_idempotent(text):
    once = redact(text)
    assert redact(once) == once
    assert find_secrets(once) == []


def test_placeholders_never_match():
    from rose.redact import KINDS
    text = " ".join(f"[REDACTED:{k}]" for k in KINDS)
    text += "\npassword = [REDACTED:assignment]\n\"token\": \"[REDACTED:jwt]\"\npostgres://u:[REDACTED:password]@h/db"
    text += "\nAuthorization: Bearer [REDACTED:authorization]\nCookie: a=[REDACTED:cookie]; b=[REDACTED:cookie]"
    assert find_secrets(text) == []


def test_find_secrets_spans():
    text = f"a={AWS_ID} and Bearer {BEARER}\npassword: hunter2"
    found = find_secrets(text)
    assert [f.kind for f in found] == ["aws-access-key", "bearer-token", "assignment"]
    assert all(isinstance(f, Finding) for f in found)
    assert [text[f.start:f.end] for f in found] == [AWS_ID, BEARER, "hunter2"]
    assert found == sorted(found, key=lambda f: f.start)
    with pytest.raises(AttributeError):
        found[0].kind = "x"  # type: ignore[misc]


def test_overlapping_rules_merge_into_one_placeholder():
    out = redact(f'"api_key": "{OPENAI_PROJ}"')
    assert out == '"api_key": "[REDACTED:openai-api-key]"'


def test_redact_data_nested():
    Pair = namedtuple("Pair", "left right")
    data = {
        "title": "Use the staging DB",
        "password": "hunter2",
        "nested": [{"cmd": f"export GITHUB_TOKEN={GH_PAT}"}, ("plain", f"Bearer {BEARER}")],
        "count": 3, "ratio": 0.5, "flag": True, "none": None, "raw": b"bytes stay",
        "env": [{"name": "STRIPE_SECRET", "value": "not-random-but-secret"}, {"name": "LOG_LEVEL", "value": "info"}],
        f"cache:{AWS_ID}": "key holding a secret",
        "tags": {"a", f"jwt {JWT}"},
        "pair": Pair("x", "postgres://u:pw9@h/db"),
        "tokens": 1234, "max_tokens": 512, "session": "550e8400-e29b-41d4-a716-446655440000",
    }
    out = redact_data(data)
    assert out is not data
    assert out["title"] == "Use the staging DB"
    assert out["password"] == "[REDACTED:assignment]"
    assert out["nested"][0]["cmd"] == "export GITHUB_TOKEN=[REDACTED:github-token]"
    assert out["nested"][1] == ("plain", "Bearer [REDACTED:bearer-token]")
    assert isinstance(out["nested"][1], tuple)
    assert (out["count"], out["ratio"], out["flag"], out["none"], out["raw"]) == (3, 0.5, True, None, b"bytes stay")
    assert out["env"][0] == {"name": "STRIPE_SECRET", "value": "[REDACTED:assignment]"}
    assert out["env"][1] == {"name": "LOG_LEVEL", "value": "info"}
    assert "cache:[REDACTED:aws-access-key]" in out
    assert out["tags"] == {"a", "jwt [REDACTED:jwt]"}
    assert out["pair"] == Pair("x", "postgres://u:[REDACTED:password]@h/db") and isinstance(out["pair"], Pair)
    assert (out["tokens"], out["max_tokens"], out["session"]) == (1234, 512, "550e8400-e29b-41d4-a716-446655440000")
    assert data["password"] == "hunter2"  # input untouched
    assert redact_data(out) == out
    assert json.loads(json.dumps({k: v for k, v in out.items() if k not in ("raw", "tags")}))


def test_redact_data_key_collision_keeps_both_values():
    other = "AKIA" + rnd(16, UPPER_DIGITS)
    out = redact_data({AWS_ID: 1, other: 2})
    assert sorted(out.values()) == [1, 2]
    assert all(AWS_ID not in k and other not in k for k in out)


def test_secret_mid_line_in_json():
    doc = json.dumps({"service": "billing", "config": {"retries": 3, "stripe_key": STRIPE_SK, "mode": "live"}})
    out = redact(doc)
    assert STRIPE_SK not in out
    assert json.loads(out)["config"] == {"retries": 3, "stripe_key": "[REDACTED:stripe-key]", "mode": "live"}


def test_secret_in_transcript_jsonl_line():
    tool_output = (f"$ cat .env\nDB_PASSWORD=pr0d-Secret!\nOPENAI_API_KEY={OPENAI_LEGACY}\nDEBUG=false\n"
                   f'$ cat creds.json\n{{"password": "Hunter22", "token": "{GH_PAT}"}}')
    line = json.dumps({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01A2B3C4D5", "content": tool_output}]},
        "sessionId": "550e8400-e29b-41d4-a716-446655440000", "cwd": "/home/dev/rose"})
    out = redact(line)
    for secret in ("pr0d-Secret!", OPENAI_LEGACY, "Hunter22", GH_PAT):
        assert secret not in out
    parsed = json.loads(out)  # still one valid JSON line
    content = parsed["message"]["content"][0]["content"]
    assert "DB_PASSWORD=[REDACTED:assignment]\n" in content
    assert "OPENAI_API_KEY=[REDACTED:openai-api-key]\nDEBUG=false" in content
    assert '"password": "[REDACTED:assignment]"' in content
    assert parsed["sessionId"] == "550e8400-e29b-41d4-a716-446655440000"
    assert parsed["cwd"] == "/home/dev/rose"


def test_non_ascii_untouched_around_secret():
    text = f"密钥是 {GH_PAT} ，请勿泄露 🔒. Ключ: {AWS_ID}."
    out = redact(text)
    assert out == "密钥是 [REDACTED:github-token] ，请勿泄露 🔒. Ключ: [REDACTED:aws-access-key]."


def test_luhn_is_required():
    assert redact("4111 1111 1111 1111") == "[REDACTED:credit-card]"
    assert redact("4111 1111 1111 1112") == "4111 1111 1111 1112"
    assert redact("3530111333300000 30569309025904 2223003122003222") == " ".join(["[REDACTED:credit-card]"] * 3)


def test_large_mixed_text():
    block_pos = [t for _, t, *_ in POSITIVES]
    block_neg = [t for _, t in NEGATIVES]
    pieces: list[str] = []
    expected: list[str] = []
    i = 0
    while sum(map(len, pieces)) < 1_500_000:
        neg = block_neg[i % len(block_neg)]
        pos = block_pos[i % len(block_pos)]
        pieces += [neg, pos]
        expected += [neg, redact(pos)]
        i += 1
    sep = "\n\n----\n\n"
    big = sep.join(pieces)
    out = redact(big)
    assert out == sep.join(expected)
    for _, _text, secret, _, _ in POSITIVES[:10]:
        assert secret not in out
    assert len(big) > 1_000_000


def test_long_pathological_inputs_finish():
    inputs = [
        "a" * 200_000, "1" * 200_000, "-----BEGIN PRIVATE KEY-----" * 2_000, "eyJ" * 50_000,
        "password=" * 20_000, "key: " * 40_000, "://a:" * 40_000, "4111 " * 40_000, "sk-" * 50_000,
        '"' * 100_000, "\\n" * 100_000, "x" * 100_000 + "@" * 10,
    ]
    for text in inputs:
        assert isinstance(redact(text), str)


def test_type_errors():
    with pytest.raises(TypeError):
        redact(b"bytes")  # type: ignore[arg-type]
