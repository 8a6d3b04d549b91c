"""Secret redaction: the filter on every path to disk (lessons, transcript digests, events, judge cache).

Secrets never touch disk. The bias is to over-redact: a mangled lesson is recoverable, a leaked key is not.
Each secret is replaced by ``[REDACTED:<kind>]``; for assignments and connection strings only the value is
replaced, so the key name / scheme / user / host survive and the text stays readable::

    password = hunter2                   ->  password = [REDACTED:assignment]
    postgres://app:s3cret@db:5432/app    ->  postgres://app:[REDACTED:password]@db:5432/app
    Authorization: Bearer abc123...      ->  Authorization: Bearer [REDACTED:authorization]

Public API: ``redact(text)``, ``redact_data(obj)``, ``find_secrets(text) -> list[Finding]``, ``KINDS``.
``redact`` is idempotent and placeholders never match a rule. Stdlib only; every pattern is compiled at import,
anchored on a literal where possible and free of nested unbounded quantifiers, so a megabyte redacts in well
under a second.

What is detected (the ``kind`` in the placeholder):

* Provider tokens with a recognisable shape (see ``_TOKEN_SPECS``): model providers (OpenAI ``sk-``/
  ``sk-proj-``, Anthropic ``sk-ant-``, OpenRouter, Google ``AIza``/``ya29.``/``GOCSPX-``, Hugging Face
  ``hf_``, Groq ``gsk_``, xAI ``xai-``, Replicate ``r8_``, Perplexity, LangSmith, Tavily, Pinecone, Fireworks,
  Together), clouds and SaaS (AWS access key ids, Stripe, SendGrid, Twilio, Azure, GitHub, GitLab, Slack,
  npm, PyPI, Docker Hub, DigitalOcean, Databricks, Linear, Notion, Atlassian, Bitbucket, Postman, Sentry,
  Supabase, Heroku, Pulumi, Grafana, New Relic, Shopify, Square, Mailgun, Mailchimp, Vault, Terraform Cloud,
  Doppler, Firebase, age, Mapbox, Telegram), Slack and Discord webhook URLs (path only).
  Providers whose keys have no prefix (Cohere, Mistral, Azure OpenAI, Twilio auth tokens, ...) are caught
  through their context: ``COHERE_API_KEY=...``, ``api-key: ...``.
* ``private-key``: PEM blocks (RSA, EC, DSA, OPENSSH, PGP, ENCRYPTED, PKCS#8, SSH2), BEGIN through END, also
  with JSON-escaped ``\\n`` (GCP service-account files); a block cut off before END is redacted through its
  last key-material line. PuTTY ``Private-Lines``.
* ``jwt`` (``eyJ<b64url>.<b64url>.<sig>``, JWE too); ``authorization`` (the credential of an
  ``Authorization:`` / ``Proxy-Authorization:`` header: Bearer, Basic, Token, Digest, AWS4, ...);
  ``bearer-token`` (a bare ``Bearer <token>``); ``cookie`` (values in ``Cookie:`` / ``Set-Cookie:``).
* ``password``: the password of ``scheme://user:password@host`` (any scheme: postgres, mysql, mongodb+srv,
  redis, amqp, https, ...), ``curl -u user:pass``, ``docker login -p``, ``sshpass -p``, ``.netrc``, SQL
  ``PASSWORD '...'`` / ``IDENTIFIED BY '...'``.
* ``aws-secret-key``, ``azure-storage-key`` (``AccountKey=`` / ``SharedAccessKey=``), ``azure-sas-signature``.
* ``credit-card``: a card-network prefix with a length that network uses, passing Luhn: 13-16 digits in one
  piece, or 13-19 in groups of 3-6 joined by one consistent space or dash (``4111 1111 1111 1111``). Digit
  runs that fail Luhn or have no card prefix are left alone, and so are ungrouped runs of 17+ digits (ids,
  seeds) and runs of more than 7 groups (tables of numbers).
* ``assignment``: the value assigned to a sensitive key, see below.

Provider prefixes that are short or plain (``sk-``, ``SK``, ``AKIA``, ``key-``) must start a token; distinctive
ones (``sk-ant-``, ``ghp_``, ``glpat-``, ...) are found even glued to other text (``xxxxsk-ant-api03-...``).

The assignment rule. A key is split into words (snake, kebab, dotted, camelCase) and classed:

* Strong (``P``): password / passwd / passphrase / pwd / secret / credential(s) / creds, ``<x>key`` or
  ``<x>token`` where x is an auth-ish word or a provider (api, access, secret, private, client, auth,
  refresh, session, bearer, bot, oauth, signing, master, openai, github, ...), ``pass`` alone or after
  db/user/smtp/.... Any *literal* value is redacted, however weak-looking (``password = hunter2``).
* UPPER_SNAKE names ending in ``_KEY`` / ``_TOKEN`` / ``_PASS`` (``MISTRAL_KEY``): strong when written as a
  shell/dotenv assignment (``NAME=value``) or a Kubernetes name/value pair, weak as a code constant
  (``STATS_KEY = "_hypothesis_stats"``).
* Weak (``T``): a bare ``key`` / ``token`` / ``auth`` / ``sig`` / ``signature`` word (``cache_key``,
  ``token``, ``next_page_token``). The value is redacted only if it looks random: no whitespace, at least
  12 characters, not a word / identifier / number / version / path / URL / template, letters mixed with
  digits (or long mixed case), entropy >= 3 bits a character.
* Not sensitive: a key with a measuring, naming or pointing word (``max_tokens``, ``TOKEN_LIMIT``,
  ``token_count``, ``key_id``, ``secret_name``, ``token_url``, ``password_file``, ``token_type``,
  ``password_min_length``, ``public_key``, ``key_sha256``, ...), plurals used as counts (``tokens``,
  ``keys``), and words that merely contain a stem (``keyboard``, ``author``, ``bypass``).

What counts as a literal value: a quoted string (``"..."``, ``'...'``, also JSON-escaped ``\\"...\\"``) is
always a literal. An unquoted value is a literal unless it reads as code: it contains ``( [ {``, is a dotted
attribute path (``self.password``, ``os.environ``), a keyword (``None``, ``true``, ``null``, ``lambda``), a
reference or template (``$VAR``, ``${VAR}``, ``%VAR%``, ``{{ x }}``, ``<your-token>``), a mask (``****``), a
type (``password: str``, ``ClientToken = str``), a name echoing the key's own word (``password =
new_password``, ``token: token``), or a bare identifier right of a key that is itself code (``self.password
= value``, ``"key": var``, ``user, password = pair``). So ``password = hunter2`` is redacted (it may be an
INI file; a Python variable named hunter2 is over-redacted), while ``token = self.tokenizer.next()`` and
``password_hash = bcrypt(...)`` are not. Shell/dotenv lines (``UPPER_KEY=value``) skip the code exemptions
and take the value up to whitespace. With ``key = value`` / ``key: value`` (spaces: code, YAML, INI, prose)
an unquoted value counts only if it ends the line (bar closing punctuation or a comment), so the prose line
``Password: make sure it is strong`` passes; ``key=value`` written tight (CLI args, query strings, libpq
conninfo, log fields) counts anywhere. CLI flags: ``--password X`` / ``--token=X``. Kubernetes / ECS /
CloudFormation ``name: DB_PASSWORD`` + ``value: ...`` pairs are assignments to DB_PASSWORD, as is XML
``<password>...</password>``.

Never a secret, even under a strong key: values shorter than 3 characters (``accesskey="n"``), the key's own
name (``PASSWORD = "password"``), documentation placeholders (``password``, ``secret``, ``token``,
``user:password@host``), f-strings and templates unless their literal part looks random, and numbers
unless they have 4+ digits under a password-like key (a PIN; ``HAVE_STRUCT_PASSWD = 1`` or
``CLIENT_KEY_EXCHANGE = 16`` are not).

Deliberately not redacted (documented trade-offs): bare high-entropy strings with no prefix and no
sensitive key (git SHAs, UUIDs, hashes, base64 blobs would all be false positives); unquoted multi-word
values after a spaced separator (``password: correct horse battery staple`` - quote it); short CLI flags
other than ``curl -u`` / ``docker login -p`` / ``sshpass -p`` (``mysql -phunter2``); ``PWD`` / ``OLDPWD``
whose value is a path (the shell's working directory, in every env dump); public-by-design keys
(``public_key``, ``NEXT_PUBLIC_*``); numbers inside ``redact_data`` (non-strings are returned unchanged).

Idempotence: ``redact(redact(x)) == redact(x)``. Placeholders match no rule, and a candidate that touches an
existing placeholder is dropped (it is the echo of an earlier redaction whose token boundaries moved).

Cost: every search is a literal-prefixed regex or ``str.find`` (case-insensitive rules run on a lowercase
copy with the same indices), values are capped at 8 KiB and no pattern nests unbounded quantifiers, so
redaction is linear: a few hundred milliseconds a megabyte for dense code or transcripts.
"""
from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "PLACEHOLDER_RE", "Finding", "find_secrets", "placeholder", "redact", "redact_data"]


@dataclass(frozen=True)
class Finding:
    """One secret: what kind, and the half-open span ``text[start:end]`` that ``redact`` replaces."""

    kind: str
    start: int
    end: int


PLACEHOLDER_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


# Priorities decide the kind shown when several rules cover overlapping text (the spans are merged).
_PRIO_PROVIDER = 100
_PRIO_KEY = 95
_PRIO_JWT = 90
_PRIO_CONTEXT = 85
_PRIO_PASSWORD = 80
_PRIO_AUTH = 60
_PRIO_COOKIE = 55
_PRIO_BEARER = 50
_PRIO_ASSIGN = 40
_PRIO_CARD = 30

_Candidate = tuple[int, int, int, str]  # start, end, priority, kind

_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_ESCAPE_LETTERS = frozenset("nrtbf")
_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}


def _at_boundary(text: str, pos: int, also: str = "") -> bool:
    """True when text[pos] starts a token: no word char (nor one of ``also``) before it. A JSON escape such
    as ``\\n`` counts as a break, so ``\\nghp_...`` inside a JSON string is still found."""
    if pos == 0:
        return True
    prev = text[pos - 1]
    if prev not in _WORD_CHARS:
        return prev not in also
    return prev in _ESCAPE_LETTERS and pos >= 2 and text[pos - 2] == "\\"


def _lower(text: str) -> str:
    """A lowercase copy with the same indices as text (str.lower can grow a few non-ASCII characters)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


# ---------------------------------------------------------------------------------------------------------
# Value heuristics (regex-backed so long values cost C time, not Python loops)
# ---------------------------------------------------------------------------------------------------------

_KEYWORDS = frozenset({
    "none", "null", "nil", "true", "false", "yes", "no", "on", "off", "undefined", "nan", "~",
    "required", "optional", "hidden", "masked", "redacted", "unset", "empty", "n/a", "tbd", "todo",
    # well-known option values that sit under credential-like keys: fetch(..., {credentials: 'include'}),
    # GitHub Actions `permissions: id-token: write`
    "include", "omit", "same-origin", "write", "read",
    # documentation placeholders: user:password@host, api_key = "token"
    "password", "pass", "passwd", "pwd", "pw", "secret", "token", "key", "apikey", "api_key", "api-key",
})
_CODE_WORDS = frozenset({"lambda", "await", "yield", "not", "new", "typeof", "function", "fn", "async", "self",
                         "this", "super", "input", "getpass", "os", "env", "process", "sys"})
_TYPE_NAMES = frozenset({
    "str", "string", "int", "integer", "bytes", "bool", "boolean", "float", "number", "any", "object", "dict",
    "list", "tuple", "optional", "secretstr", "secretbytes", "char", "uuid", "text", "varchar", "buffer",
    "unknown", "never", "void", "mapping", "sequence", "pathlike", "path",
})
_ALNUM_RE = re.compile(r"[^\W_]")
_SPACE_RE = re.compile(r"\s")
_DIGIT_RE = re.compile(r"[0-9]")
_ALPHA_RE = re.compile(r"[A-Za-z]")
_UPPER_RE = re.compile(r"[A-Z]")
_LOWER_RE = re.compile(r"[a-z]")
_MASK_RE = re.compile(r"[*xX\u2022\u00b7.\u2026_#?-]+")
_REFERENCE_RE = re.compile(
    r"""\$[A-Za-z_{(]          # $VAR ${VAR} $(cmd)
      | %[A-Za-z_(][^%\s]*%?   # %VAR% %(name)s
      | \{\{                   # {{ template }}
      | <[^<>]*>$              # <your-token>
      | \[[^\[\]]*\]$          # [placeholder], [REDACTED:x]
      | \#\{                   # ruby #{x}
      | !(?:Ref|Sub|GetAtt|Secret|ImportValue|vault|env)\b   # YAML tags
      | (?:vault|secretsmanager|ssm|op|keyring|env|file):[A-Za-z/]   # secret-manager references
    """,
    re.X,
)
_TEMPLATE_RE = re.compile(r"\$\{[^{}]*\}|\{\{.*?\}\}|\{[A-Za-z_][A-Za-z0-9_.\[\]'\"]*\}|%\([A-Za-z_]+\)[sd]|%[sd]")
_YOUR_RE = re.compile(r"(?i)<?(?:your|my|the|insert|enter|replace|put)[-_ ]?[a-z0-9_ -]{0,40}"
                      r"(?:key|token|secret|password|pass|pwd|credential)s?(?:[-_ ]?here)?>?")
_PLAIN_IDENT_RE = re.compile(
    r"""[A-Za-z]+(?:[-_.][A-Za-z]+)*      # words: my-cache, user_name, YOUR_TOKEN, CamelCase
      | [a-z]+(?:[A-Z][a-z]+)+            # camelCase
    """,
    re.X,
)
_IDENTISH_RE = re.compile(r"[A-Za-z]+[0-9]{0,3}(?:[_.-](?:[A-Za-z]+[0-9]{0,3}|[0-9]{1,3}))*")
_STRUCTURED_RE = re.compile(r"(?:[A-Za-z]+|[0-9]{1,6})(?:[:/._@,;#|-](?:[A-Za-z]+|[0-9]{1,6}))*")
_PATHISH_RE = re.compile(r"(?:~?/|\.\.?/|[A-Za-z]:[\\/]|[A-Za-z][A-Za-z0-9+.-]*://)")
_NUMBER_RE = re.compile(r"[-+]?(?:[0-9][0-9_,]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?[%a-zA-Z]{0,3}")
_VERSIONISH_RE = re.compile(r"v?[0-9]+(?:\.[0-9]+){1,3}(?:[-+][A-Za-z0-9.]+)?")


def _entropy(s: str) -> float:
    s = s[:256]
    n = len(s)
    return -sum(k / n * math.log2(k / n) for k in (s.count(c) for c in set(s)))


def _is_trivial(value: str) -> bool:
    """Values that cannot be a secret: empty, punctuation, keywords, masks, references, templates, placeholders."""
    v = value.strip()
    if not _ALNUM_RE.search(v):
        return True
    if len(v) <= 16 and v.lower() in _KEYWORDS:
        return True
    if _MASK_RE.fullmatch(v) or _REFERENCE_RE.match(v) or (len(v) <= 64 and _YOUR_RE.fullmatch(v)):
        return True
    if ("{" in v or "%" in v) and not _ALNUM_RE.search(_TEMPLATE_RE.sub("", v)):
        return True
    if "[REDACTED:" in v and not _ALNUM_RE.search(PLACEHOLDER_RE.sub("", v)):
        return True
    return False


def _looks_secret(value: str, min_len: int = 12) -> bool:
    """A random-looking token: long, no spaces, letters with digits (or long mixed case), high entropy."""
    v = value.strip()
    if len(v) < min_len or _SPACE_RE.search(v) or _is_trivial(v):
        return False
    if _NUMBER_RE.fullmatch(v) or _VERSIONISH_RE.fullmatch(v):
        return False
    if _PLAIN_IDENT_RE.fullmatch(v) or _STRUCTURED_RE.fullmatch(v) or _PATHISH_RE.match(v):
        return False
    if _IDENTISH_RE.fullmatch(v) or ("{" in v and "}" in v):
        return False  # CVSS2_VECTOR, sha256_digest; f"{x}" / "${y}" templates are built, not random
    if not _ALPHA_RE.search(v):
        return False
    ent = _entropy(v)
    if _DIGIT_RE.search(v) and ent >= 3.0:
        return True
    return len(v) >= 20 and bool(_UPPER_RE.search(v)) and bool(_LOWER_RE.search(v)) and ent >= 3.5


def _has_letter_and_digit(s: str) -> bool:
    return bool(_DIGIT_RE.search(s)) and bool(_ALPHA_RE.search(s))


# ---------------------------------------------------------------------------------------------------------
# Provider tokens: (prefix literal, kind, full pattern matched at the prefix, optional validator)
# ---------------------------------------------------------------------------------------------------------

_TOKEN_SPECS: list[tuple[str, str, str, Callable[[str], bool] | None]] = [
    # model providers
    ("sk-ant-", "anthropic-api-key", r"sk-ant-[A-Za-z0-9_-]{20,}", None),
    ("sk-or-", "openrouter-api-key", r"sk-or-v1-[A-Za-z0-9]{20,}", None),
    ("sk-", "openai-api-key", r"sk-[A-Za-z0-9_-]{20,}", _has_letter_and_digit),
    ("AIza", "google-api-key", r"AIza[0-9A-Za-z_-]{30,}", None),
    ("ya29.", "google-oauth-token", r"ya29\.[0-9A-Za-z_-]{20,}", None),
    ("GOCSPX-", "google-client-secret", r"GOCSPX-[0-9A-Za-z_-]{20,}", None),
    ("hf_", "huggingface-token", r"hf_[A-Za-z0-9]{30,}", None),
    ("api_org_", "huggingface-token", r"api_org_[A-Za-z0-9]{30,}", None),
    ("gsk_", "groq-api-key", r"gsk_[A-Za-z0-9]{32,}", None),
    ("xai-", "xai-api-key", r"xai-[A-Za-z0-9]{32,}", None),
    ("r8_", "replicate-api-token", r"r8_[A-Za-z0-9]{30,}", None),
    ("pplx-", "perplexity-api-key", r"pplx-[A-Za-z0-9]{32,}", None),
    ("lsv2_", "langsmith-api-key", r"lsv2_[a-z]{2}_[A-Za-z0-9_]{30,}", None),
    ("tvly-", "tavily-api-key", r"tvly-[A-Za-z0-9-]{30,}", None),
    ("pcsk_", "pinecone-api-key", r"pcsk_[A-Za-z0-9_]{30,}", None),
    ("fw_", "fireworks-api-key", r"fw_[A-Za-z0-9]{20,}", _has_letter_and_digit),
    ("tgp_v1_", "together-api-key", r"tgp_v1_[A-Za-z0-9_-]{30,}", None),
    # payments, messaging, email
    ("sk_live_", "stripe-key", r"sk_live_[A-Za-z0-9]{10,}", None),
    ("sk_test_", "stripe-key", r"sk_test_[A-Za-z0-9]{10,}", None),
    ("rk_live_", "stripe-key", r"rk_live_[A-Za-z0-9]{10,}", None),
    ("rk_test_", "stripe-key", r"rk_test_[A-Za-z0-9]{10,}", None),
    ("pk_live_", "stripe-key", r"pk_live_[A-Za-z0-9]{10,}", None),
    ("pk_test_", "stripe-key", r"pk_test_[A-Za-z0-9]{10,}", None),
    ("whsec_", "stripe-key", r"whsec_[A-Za-z0-9+/=]{20,}", None),
    ("sk_", "api-key", r"sk_[a-f0-9]{32,}(?![A-Za-z0-9])", _has_letter_and_digit),
    ("SG.", "sendgrid-api-key", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", None),
    ("SK", "twilio-api-key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", _has_letter_and_digit),
    ("key-", "mailgun-api-key", r"key-[0-9a-zA-Z]{32}(?![A-Za-z0-9])", _has_letter_and_digit),
    ("sq0atp-", "square-token", r"sq0atp-[A-Za-z0-9_-]{22,}", None),
    ("sq0csp-", "square-token", r"sq0csp-[A-Za-z0-9_-]{40,}", None),
    ("EAAA", "square-token", r"EAAA[A-Za-z0-9_-]{60,}", _has_letter_and_digit),
    *[(p, "shopify-token", re.escape(p) + r"[a-fA-F0-9]{32}", None) for p in ("shpat_", "shpca_", "shppa_", "shpss_")],
    # code hosting, registries, chat
    *[(p, "github-token", re.escape(p) + r"[A-Za-z0-9]{30,}", None) for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")],
    ("github_pat_", "github-token", r"github_pat_[A-Za-z0-9_]{30,}", None),
    *[(p, "gitlab-token", re.escape(p) + r"[A-Za-z0-9_-]{20,}", None) for p in (
        "glpat-", "gldt-", "glptt-", "glrt-", "glrtr-", "gloas-", "glcbt-", "glimt-", "glsoat-", "glffct-",
        "glagent-", "glft-", "glwt-")],
    ("GR1348941", "gitlab-token", r"GR1348941[A-Za-z0-9_-]{20,}", None),
    ("xox", "slack-token", r"xox[a-z](?:\.xox[a-z])?-[A-Za-z0-9-]{10,}", None),
    ("xapp-", "slack-token", r"xapp-[0-9]-[A-Za-z0-9-]{10,}", None),
    ("npm_", "npm-token", r"npm_[A-Za-z0-9]{30,}", None),
    ("pypi-AgE", "pypi-token", r"pypi-AgE[A-Za-z0-9_-]{30,}", None),
    ("dckr_pat_", "docker-token", r"dckr_pat_[A-Za-z0-9_-]{20,}", None),
    ("ATATT3", "atlassian-token", r"ATATT3[A-Za-z0-9_=-]{50,}", None),
    ("ATCTT3", "atlassian-token", r"ATCTT3[A-Za-z0-9_=-]{50,}", None),
    ("ATBB", "bitbucket-token", r"ATBB[A-Za-z0-9]{28,}", None),
    ("lin_api_", "linear-api-key", r"lin_api_[A-Za-z0-9]{30,}", None),
    ("ntn_", "notion-token", r"ntn_[A-Za-z0-9]{30,}", None),
    ("secret_", "notion-token", r"secret_[A-Za-z0-9]{40,}(?![A-Za-z0-9_])", _has_letter_and_digit),
    ("PMAK-", "postman-api-key", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", None),
    # clouds and infrastructure
    *[(p, "aws-access-key", re.escape(p) + r"[A-Z0-9]{16}(?![A-Za-z0-9])", None) for p in (
        "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "APKA", "AROA")],
    ("A3T", "aws-access-key", r"A3T[A-Z0-9][A-Z0-9]{16}(?![A-Za-z0-9])", None),
    *[(p, "digitalocean-token", re.escape(p) + r"[a-f0-9]{64}", None) for p in ("dop_v1_", "doo_v1_", "dor_v1_")],
    ("dapi", "databricks-token", r"dapi[a-f0-9]{32}(?:-[0-9]+)?(?![A-Za-z0-9])", _has_letter_and_digit),
    ("sntrys_", "sentry-token", r"sntrys_[A-Za-z0-9+/=_]{40,}", None),
    ("sntryu_", "sentry-token", r"sntryu_[a-f0-9]{40,}", None),
    ("sbp_", "supabase-token", r"sbp_[a-f0-9]{40,}", None),
    ("HRKU-", "heroku-api-key", r"HRKU-[A-Za-z0-9_-]{30,}", None),
    ("pul-", "pulumi-token", r"pul-[a-f0-9]{40}", None),
    ("glc_", "grafana-token", r"glc_[A-Za-z0-9+/=]{32,}", None),
    ("glsa_", "grafana-token", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", None),
    ("NRAK-", "newrelic-api-key", r"NRAK-[A-Z0-9]{27}", None),
    *[(p, "vault-token", re.escape(p) + r"[A-Za-z0-9_-]{24,}", None) for p in ("hvs.", "hvb.", "hvr.")],
    *[(p, "doppler-token", re.escape(p) + r"[A-Za-z0-9]{40,}", None) for p in (
        "dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit.")],
    ("AAAA", "firebase-server-key", r"AAAA[A-Za-z0-9_-]{7}:[A-Za-z0-9_-]{100,}", None),
    ("AGE-SECRET-KEY-1", "age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{50,}", None),
    ("sk.eyJ", "mapbox-token", r"sk\.eyJ[A-Za-z0-9_.-]{50,}", None),
]

# Tokens whose distinctive part is in the middle: (anchor regex, starting with a literal; the part before the
# anchor, matched backwards from the anchor to a token boundary; kind).
_ANCHORED_SPECS: list[tuple[re.Pattern[str], re.Pattern[str], str]] = [
    (re.compile(r"\.atlasv1\.[A-Za-z0-9_=-]{60,}"), re.compile(r"[A-Za-z0-9]{14}$"), "terraform-token"),
    (re.compile(r"Q~[A-Za-z0-9_~.-]{31,34}"), re.compile(r"[A-Za-z0-9_~.]{3}[0-9]$"), "azure-client-secret"),
    # Telegram tokens are often glued to a path (https://api.telegram.org/bot<id>:AA...): no boundary needed
    (re.compile(r":AA[A-Za-z0-9_-]{30,}"), re.compile(r"(?<![0-9])[0-9]{8,10}$"), "telegram-bot-token"),
    (re.compile(r"-us[0-9]{1,2}(?![0-9])"), re.compile(r"[0-9a-f]{32}$"), "mailchimp-api-key"),
    (re.compile(r"//0[0-9A-Za-z_-]{30,}"), re.compile(r"1$"), "google-oauth-token"),
]
_Spec = tuple[str, str, "re.Pattern[str]", "Callable[[str], bool] | None", bool]
# Prefixes short or plain enough to occur inside ordinary words need a token boundary before them; distinctive
# ones (sk-ant-, ghp_, glpat-, ...) are found even glued to other text ("xxxxsk-ant-api03-...").
_GLUE_OK_EXCLUDED = frozenset({"key-", "secret_", "xai-", "pul-"})


def _needs_boundary(prefix: str) -> bool:
    return len(prefix) < 4 or prefix.isalnum() or prefix in _GLUE_OK_EXCLUDED


def _trie_pattern(words: Iterable[str]) -> str:
    """An alternation of literals factored by common prefixes. The regex engine then tests one character per
    branch point instead of every word at every position (several times faster than a flat a|b|c)."""
    groups: dict[str, list[str]] = {}
    optional = False
    for w in words:
        if w:
            groups.setdefault(w[0], []).append(w[1:])
        else:
            optional = True
    if not groups:
        return ""
    alts = [re.escape(c) + _trie_pattern(rest) for c, rest in sorted(groups.items())]
    body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
    return "(?:" + body + ")?" if optional else body


def _build_token_table() -> tuple[re.Pattern[str], dict[str, list[_Spec]]]:
    """A search regex over the anchors (prefixes no shorter prefix covers), and each anchor's specs, longest first."""
    specs = [(p, k, re.compile(rx), check, _needs_boundary(p)) for p, k, rx, check in _TOKEN_SPECS]
    prefixes = {spec[0] for spec in specs}
    anchors = {p for p in prefixes if not any(o != p and p.startswith(o) for o in prefixes)}
    table: dict[str, list[_Spec]] = {}
    for anchor in anchors:
        table[anchor] = sorted((s for s in specs if s[0].startswith(anchor)), key=lambda s: -len(s[0]))
    return re.compile(_trie_pattern(anchors)), table


_ANCHOR_RE, _TOKEN_TABLE = _build_token_table()


def _find_tokens(text: str, out: list[_Candidate]) -> None:
    last_end = -1
    failed_until: dict[int, int] = {}  # spec id -> end of a run it already failed to validate on
    for hit in _ANCHOR_RE.finditer(text):
        pos = hit.start()
        if pos < last_end:
            continue
        boundary = _at_boundary(text, pos)
        for spec in _TOKEN_TABLE[hit.group()]:
            prefix, kind, pattern, check, strict = spec
            if (strict and not boundary) or not text.startswith(prefix, pos) or pos < failed_until.get(id(spec), -1):
                continue
            tm = pattern.match(text, pos)
            if tm is None:
                continue
            if check is not None and not check(tm.group()):
                failed_until[id(spec)] = tm.end()  # any later hit inside this run is a substring: fails too
                continue
            out.append((pos, tm.end(), _PRIO_PROVIDER, kind))
            last_end = tm.end()
            break
    for pattern, back, kind in _ANCHORED_SPECS:
        for am in pattern.finditer(text):
            bm = back.search(text, max(0, am.start() - 48), am.start())
            if bm is not None and (kind == "telegram-bot-token" or _at_boundary(text, bm.start())):
                out.append((bm.start(), am.end(), _PRIO_PROVIDER, kind))


# ---------------------------------------------------------------------------------------------------------
# Context rules. Each pattern starts with a literal so the regex engine can jump between candidates;
# case-insensitive ones run on the index-aligned lowercase copy and read the secret from the original.
# ---------------------------------------------------------------------------------------------------------

_Q = r"""(?:\\?["'])"""  # an optional-escape quote: " ' \" \'


_REGISTRY_CLI_RE = re.compile(r"(?:docker|podman|nerdctl|buildah|skopeo|oras)[ \t]+$")
_SQL_USER_RE = re.compile(r"\b(?:user|role|grant|login)\b|'@'")


def _docker_login_before(text: str, low: str, start: int) -> bool:
    return _REGISTRY_CLI_RE.search(low, max(0, start - 24), start) is not None


_AZURE_KEYS = ("accountkey", "sharedaccesskey", "sharedsecret", "primarykey", "secondarykey")


def _sql_user_before(text: str, low: str, start: int) -> bool:
    """IDENTIFIED BY is SQL only after CREATE/ALTER USER, GRANT ... TO or a 'user'@'host' on the same line."""
    return _SQL_USER_RE.search(low, max(0, low.rfind("\n", 0, start) + 1, start - 300), start) is not None


def _after_query_separator(text: str, low: str, start: int) -> bool:
    return start > 0 and text[start - 1] in "?&;"


# (gates: any must occur in low, search the lowercase copy?, kind, priority, pattern, boundary chars or None,
#  extra check on (text, low, match start))
_ContextRule = tuple[tuple[str, ...], bool, str, int, "re.Pattern[str]", "str | None",
                     "Callable[[str, str, int], bool] | None"]
_CONTEXT_RULES: list[_ContextRule] = [
    (("aws",), True, "aws-secret-key", _PRIO_CONTEXT, re.compile(
        r"aws_?secret_?(?:access_?)?key" + _Q + r"?[ \t]*(?:=>|=|:)[ \t]*" + _Q +
        r"?(?P<s>[a-z0-9/+=]{40})(?![a-z0-9/+=])"), "", None),
    (_AZURE_KEYS, True, "azure-storage-key", _PRIO_CONTEXT, re.compile(
        _trie_pattern(_AZURE_KEYS) + r"[ \t]*=[ \t]*(?P<s>[a-z0-9+/]{20,}={0,2})"), "", None),
    (("sig=",), True, "azure-sas-signature", _PRIO_CONTEXT, re.compile(
        r"sig=(?P<s>[a-z0-9%+/=]{20,})"), None, _after_query_separator),
    (("://",), False, "password", _PRIO_PASSWORD, re.compile(
        r"://(?P<u>[^\s:/?#@\"'<>\\`\[\]]{0,256}):(?P<s>[^\s/?#\"'<>\\`]{1,256})@"), None, None),
    (("-u", "--user", "--proxy-user", "-U"), False, "password", _PRIO_PASSWORD, re.compile(
        r"-(?:u|-user|-proxy-user|U)(?:[ \t]+|=)" + _Q +
        r"?(?P<u>[^\s:\"'\\-][^\s:\"'\\]{0,127}):(?P<s>[^\s\"'\\]{1,256})"),
     "-", None),
    (("login",), True, "password", _PRIO_PASSWORD, re.compile(
        r"login\b[^\n]{0,200}?[ \t]-p[ \t]*(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'-][^\s\"']*)"), "",
     _docker_login_before),
    (("sshpass",), True, "password", _PRIO_PASSWORD, re.compile(
        r"sshpass[ \t]+-p[ \t]*(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'-][^\s\"']*)"), "", None),
    (("machine",), True, "password", _PRIO_PASSWORD, re.compile(
        r"machine[ \t]+\S{1,256}(?:\s+login[ \t]+\S{1,256})?\s+password[ \t]+(?P<s>\S{1,256})"), "", None),
    (("password",), True, "password", _PRIO_PASSWORD, re.compile(
        r"password[ \t]+(?P<q>['\"])(?P<s>[^'\"\n\\]{1,256})(?P=q)"), "", None),
    (("identified",), True, "password", _PRIO_PASSWORD, re.compile(
        r"identified[ \t]+by[ \t]+(?P<q>['\"])(?P<s>[^'\"\n\\]{1,256})(?P=q)"), "", _sql_user_before),
]

# eyJ + base64url header, payload, optional signature (and JWE's extra segments).
# The lookbehinds sit after the literal (keeping the fast literal search) and reject starts inside a run.
_JWT_RE = re.compile(r"eyJ(?:(?<![A-Za-z0-9_-]eyJ)|(?<=\\[nrtbf]eyJ))"
                     r"[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*){0,3}")

# Webhook URLs: keep scheme and host, redact the path that carries the secret.
_WEBHOOK_RES: list[tuple[str, str, re.Pattern[str]]] = [
    ("hooks.slack.com", "slack-webhook",
     re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/-]{8,})")),
    ("/api/webhooks/", "discord-webhook",
     re.compile(r"/api/webhooks/(?P<s>[0-9]+/[A-Za-z0-9_-]{20,})")),
]


def _find_context(text: str, low: str, out: list[_Candidate]) -> None:
    for gates, on_low, kind, prio, pattern, boundary, extra in _CONTEXT_RULES:
        if not any(g in low for g in gates):
            continue
        for m in pattern.finditer(low if on_low else text):
            if boundary is not None and not _at_boundary(text, m.start(), boundary):
                continue
            if extra is not None and not extra(text, low, m.start()):
                continue
            s, e = m.span("s")
            value = text[s:e]
            if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
                s, e, value = s + 1, e - 1, value[1:-1]
            if not _is_trivial(value):
                out.append((s, e, prio, kind))
    if "eyJ" in text:
        for m in _JWT_RE.finditer(text):
            out.append((m.start(), m.end(), _PRIO_JWT, "jwt"))
    for gate, kind, pattern in _WEBHOOK_RES:
        if gate in text:
            for m in pattern.finditer(text):
                out.append((m.start("s"), m.end("s"), _PRIO_PROVIDER, kind))


# ---------------------------------------------------------------------------------------------------------
# HTTP credentials (run on the lowercase copy)
# ---------------------------------------------------------------------------------------------------------

_AUTHZ_RE = re.compile(
    r"authorization" + _Q + r"?[ \t]*[:=][ \t]*(?P<open>" + _Q + r"?)[ \t]*"
    r"(?:(?P<scheme>[a-z][a-z0-9_-]*)[ \t]+)?(?P<s>[^\s\"'\\<>{}$`,;][^\s\"'\\`,;]*)")
_SIMPLE_WORD_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+|[a-z]+(?:[_-][a-z]+)+|[A-Z]+(?:[_-][A-Z]+)+")
_AUTHZ_LONG_SCHEMES = frozenset({"digest", "aws4-hmac-sha256", "oauth", "hmac", "signature", "sharedkey"})
_BEARER_RE = re.compile(r"bearer[ \t]+(?P<s>[a-z0-9._~+/-]{8,}=*)")
_COOKIE_RE = re.compile(r"cookie" + _Q + r"?[ \t]*:[ \t]*(?P<v>[^\r\n\"'\\]+)")
_COOKIE_PAIR_RE = re.compile(r"([!#$%&*+.^_|~A-Za-z0-9-]+)=([^;,\s]+)")
_COOKIE_SECRET_NAME_RE = re.compile(r"sess|sid|auth|token|jwt|login|remember|csrf|xsrf|key|secret|pass|id$")
_COOKIE_ATTRS = frozenset({"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority",
                           "partitioned", "version", "comment"})


_EOL_RE = re.compile(r"\n|\\[nr]")


def _line_end(text: str, pos: int, limit: int = 4096) -> int:
    """Index of the end of the line containing pos (real newline or a JSON-escaped \\n / \\r), at most limit on."""
    stop = min(len(text), pos + limit)
    m = _EOL_RE.search(text, pos, stop)
    return m.start() if m else stop


def _find_headers(text: str, low: str, out: list[_Candidate]) -> None:
    if "authorization" in low:
        for m in _AUTHZ_RE.finditer(low):
            if not _at_boundary(text, m.start()):
                continue
            s, e = m.span("s")
            scheme = (m.group("scheme") or "").lower()
            if scheme in _AUTHZ_LONG_SCHEMES:
                e = _line_end(text, s)
                opener = m.group("open") or (text[m.start() - 1] if m.start() and text[m.start() - 1] in "\"'" else "")
                if opener:
                    q = text.find(opener, s, e)
                    if q != -1:
                        e = q
                out.append((s, e, _PRIO_AUTH, "authorization"))
            elif m.group("scheme") or _looks_secret(text[s:e], min_len=8):
                cred = text[s:e]  # after a scheme, anything but a plain word ("Bearer header") is a credential
                if len(cred) >= 6 and not _is_trivial(cred) and not _SIMPLE_WORD_RE.fullmatch(cred):
                    out.append((s, e, _PRIO_AUTH, "authorization"))
    if "bearer" in low:
        for m in _BEARER_RE.finditer(low):
            s, e = m.span("s")
            if _at_boundary(text, m.start(), "-") and _looks_secret(text[s:e], min_len=8):
                out.append((s, e, _PRIO_BEARER, "bearer-token"))
    if "cookie" in low:
        for m in _COOKIE_RE.finditer(low):
            if not _at_boundary(text, m.start()):
                continue
            base = m.start("v")
            for pm in _COOKIE_PAIR_RE.finditer(text, base, m.end("v")):
                name, value = pm.group(1).lower(), pm.group(2)
                if name in _COOKIE_ATTRS or _is_trivial(value):
                    continue
                if _COOKIE_SECRET_NAME_RE.search(name) or _looks_secret(value, min_len=10):
                    out.append((pm.start(2), pm.end(2), _PRIO_COOKIE, "cookie"))


# ---------------------------------------------------------------------------------------------------------
# Private keys
# ---------------------------------------------------------------------------------------------------------

_PEM_BEGIN_RE = re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END_RE = re.compile(r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_LINE_SEP = r"(?:[ \t]*(?:\r?\n|\\r\\n|\\n)[ \t]*)+"
# The rest of a key whose END line is missing (truncated output): line-separated base64 or header lines.
_PEM_BODY_RE = re.compile(
    r"(?:" + _PEM_LINE_SEP + r"(?:[A-Za-z][A-Za-z0-9-]*:[^\n\\]*|[A-Za-z0-9+/=]+)"
    r"(?=[ \t]*(?:\r?\n|\\[rn]|$|[\"',}\]])))*")
_PEM_MAX = 65536
_PEM_MATERIAL_RE = re.compile(r"[A-Za-z0-9+/=]{24,}")
_PUTTY_RE = re.compile(r"Private-Lines:[ \t]*[0-9]+[ \t]*\r?\n(?P<s>(?:[A-Za-z0-9+/=]+[ \t]*(?:\r?\n|$))+)")


def _find_pem(text: str, out: list[_Candidate]) -> None:
    if "PRIVATE KEY" in text:
        covered = -1
        end_m: re.Match[str] | None = None
        searched = False
        for m in _PEM_BEGIN_RE.finditer(text):
            if m.start() < covered:
                continue
            if not searched or (end_m is not None and end_m.start() < m.end()):
                end_m = _PEM_END_RE.search(text, m.end())  # the next END, shared by every BEGIN before it
                searched = True
            if (end_m is not None and end_m.start() - m.end() <= _PEM_MAX
                    and text.find("-----BEGIN", m.end(), end_m.start()) == -1):
                end = end_m.end()  # whatever lies between BEGIN and END goes, whatever its layout
            else:
                body = _PEM_BODY_RE.match(text, m.end(), m.end() + _PEM_MAX)
                end = body.end() if body else m.end()
            if _PEM_MATERIAL_RE.search(text, m.end(), end):  # not a mention of the markers in prose
                out.append((m.start(), end, _PRIO_KEY, "private-key"))
                covered = end
    if "Private-Lines:" in text:
        for m in _PUTTY_RE.finditer(text):
            out.append((m.start("s"), m.end("s"), _PRIO_KEY, "private-key"))


# ---------------------------------------------------------------------------------------------------------
# Credit cards
# ---------------------------------------------------------------------------------------------------------

_CARD_RUN_RE = re.compile(r"[0-9][0-9 -]{11,}[0-9]")
_DIGIT_RUN_RE = re.compile(r"[0-9]+")
_CARD_LEFT_BAD = "_.,:+-"  # besides word chars: decimals, times, signs, phone prefixes
_CARD_MAX_GROUPS = 7  # a card (4-5 groups) plus a neighbouring number or two


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = ord(ch) - 48
        if i % 2:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


def _card_network(d: str) -> bool:
    """A real issuer prefix with a length that issuer uses (Visa, Mastercard, Amex, Discover, Diners, JCB,
    UnionPay, Maestro). Keeps Luhn's 1-in-10 false positives off timestamps, ids and phone numbers."""
    n = len(d)
    if not 13 <= n <= 19 or len(set(d)) == 1:
        return False
    p2, p3, p4, p6 = int(d[:2]), int(d[:3]), int(d[:4]), int(d[:6])
    if d[0] == "4":
        return n in (13, 16, 19)
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16
    if p2 in (34, 37):
        return n == 15
    if p4 == 6011 or 644 <= p3 <= 649 or p2 == 65 or 622126 <= p6 <= 622925:
        return 16 <= n <= 19
    if 300 <= p3 <= 305 or p4 == 3095 or p2 in (36, 38, 39):
        return 14 <= n <= 19
    if 3528 <= p4 <= 3589 or p2 == 62:
        return 16 <= n <= 19
    if p2 == 50 or 56 <= p2 <= 69:
        return n >= 16  # Maestro; its rare 12-15 digit numbers look like any other integer
    return False


def _card_right_ok(text: str, end: int) -> bool:
    if end >= len(text):
        return True
    c = text[end]
    if c in _WORD_CHARS:
        return False
    return not (c in ".,:" and end + 1 < len(text) and text[end + 1].isdigit())


def _find_cards(text: str, out: list[_Candidate]) -> None:
    """Digit groups (13-16 digits in one piece, or 13-19 in groups of 3-6 joined by one consistent space or
    dash) that carry a card-network prefix and pass Luhn. Any group of a run may start a card, so one next to
    another number (an order id, a CVV) is still found; the longest valid window from each start wins. A run
    of more than _CARD_MAX_GROUPS groups is a table of numbers (ports, years, a printed array), not a card."""
    for m in _CARD_RUN_RE.finditer(text):
        run = m.group()
        if len(run) - run.count(" ") - run.count("-") < 13:
            continue
        groups = [g.span() for g in _DIGIT_RUN_RE.finditer(text, m.start(), m.end())]
        count = len(groups)
        if count > _CARD_MAX_GROUPS:
            continue
        right_ok = _card_right_ok(text, groups[-1][1])
        a = 0
        while a < count:
            gs, ge = groups[a]
            size = ge - gs
            if text[gs] not in "23456" or not (
                    _at_boundary(text, gs, _CARD_LEFT_BAD) if a == 0 else text[gs - 1] == " "):
                a += 1
                continue
            best = -1
            # an ungrouped run longer than 16 digits is far more often an id, seed or hash than a card
            if 13 <= size <= 16 and (a < count - 1 or right_ok):
                digits = text[gs:ge]
                if _card_network(digits) and _luhn(digits):
                    best = a
            if 3 <= size <= 6:
                total, sep, digits = size, "", text[gs:ge]
                for b in range(a + 1, count):
                    bs, be = groups[b]
                    between = text[groups[b - 1][1]:bs]
                    if len(between) != 1 or (sep and between != sep):
                        break
                    sep = between
                    total += be - bs
                    if total > 19 or be - bs > 6:
                        break
                    digits += text[bs:be]
                    if total >= 13 and (b < count - 1 or right_ok) and _card_network(digits) and _luhn(digits):
                        best = b
                    if be - bs < 3:
                        break  # a short group can only end a card
            if best < 0:
                a += 1
                continue
            out.append((gs, groups[best][1], _PRIO_CARD, "credit-card"))
            a = best + 1


# ---------------------------------------------------------------------------------------------------------
# Assignments: key (sep) value
# ---------------------------------------------------------------------------------------------------------

_STEMS = ("pass", "pwd", "secret", "token", "key", "cred", "auth", "sig")
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_ENV_KEY_RE = re.compile(r"[A-Z][A-Z0-9_]*")

_P_WORDS = frozenset({"password", "passwords", "passwd", "passphrase", "pwd", "secret", "secrets",
                      "credential", "credentials", "creds", "privatekey", "apikey", "accesskey", "secretkey",
                      "authtoken", "accesstoken", "refreshtoken", "sessiontoken", "apitoken", "clientsecret",
                      "passcode", "pword"})
_P_SUFFIXES = ("password", "passwd", "passphrase", "secret", "apikey", "accesskey", "secretkey", "privatekey",
               "authtoken", "accesstoken", "refreshtoken")
_STRONG_PREFIX = frozenset({
    "api", "access", "secret", "private", "client", "signing", "sign", "encryption", "encrypt", "decryption",
    "master", "auth", "app", "account", "consumer", "service", "subscription", "license", "licence", "webhook",
    "session", "shared", "storage", "admin", "deploy", "ssh", "gpg", "pgp", "jwt", "hmac", "bearer",
    "bot", "oauth", "oauth2", "refresh", "id", "personal", "pat", "security", "registry", "integration",
    "github", "gh", "gitlab", "npm", "pypi", "slack", "discord", "telegram", "hf", "openai", "anthropic",
    "groq", "mistral", "cohere", "gemini", "google", "azure", "aws", "stripe", "twilio", "sendgrid", "mailgun",
    "vault", "cloudflare", "vercel", "netlify", "heroku", "sentry", "datadog", "dd", "newrelic", "pagerduty",
    "linear", "notion", "jira", "atlassian", "figma", "docker", "hub", "pinecone", "replicate",
    "together", "fireworks", "perplexity", "xai", "deepseek", "voyage", "tavily", "serp", "serper", "brave",
    "mapbox", "algolia", "supabase", "firebase", "twitch", "twitter", "x", "facebook", "fb", "csrf", "xsrf",
})
_PASS_PREFIX = frozenset({"db", "database", "user", "admin", "root", "smtp", "mail", "email", "ftp", "sftp",
                          "ldap", "proxy", "basic", "login", "redis", "mysql", "pg", "postgres", "mongo",
                          "rabbit", "rabbitmq", "amqp", "sql", "http", "app", "api", "auth", "sudo", "vnc",
                          "wifi", "wpa", "keystore", "truststore", "key", "store", "bind", "master"})
_T_WORDS = frozenset({"key", "token", "auth", "sig", "signature", "bearer", "cookie"})
_NEUTRAL_ANY = frozenset({
    "max", "min", "limit", "limits", "count", "counts", "num", "number", "len", "length", "size", "ttl",
    "timeout", "expiry", "expires", "expiration", "lifetime", "budget", "usage", "used", "remaining", "rate",
    "window", "estimate", "estimated", "total", "per", "stdin", "prompt", "placeholder", "label", "hint",
    "validation", "validator", "strength", "policy", "rotation", "reset", "forgot", "changed", "generator",
    "public", "pub", "pubkey",  # public keys are public
})
_NEUTRAL_LAST = frozenset({
    "id", "ids", "name", "names", "type", "types", "kind", "url", "uri", "urls", "endpoint", "path", "paths",
    "file", "files", "filename", "dir", "directory", "env", "var", "field", "fields", "header", "prefix",
    "suffix", "format", "pattern", "regex", "version", "enabled", "disabled", "required", "provider",
    "location", "method", "mode", "strategy", "algorithm", "alg", "description", "desc", "help", "error",
    "errors", "message", "msg", "at", "style", "index", "idx", "position", "pos", "bits", "ref", "source",
    "command", "cmd", "manager", "sock", "socket", "home", "bus", "address", "addr", "host", "port", "server",
    "class", "module", "parser", "handler", "store", "storage", "service", "client", "helper", "mask", "masked",
    "input", "button", "form", "dialog", "column", "col", "map", "set", "list", "fn", "func", "callback",
    "getter", "setter", "lookup", "cache", "exists", "present", "valid", "matches", "check", "region", "arn", "scope", "scopes", "audience", "issuer", "owner", "user", "username",
    "login", "email", "account", "spec", "schema", "option", "options", "flag", "flags", "arg", "args",
    "param", "params", "config", "settings", "test", "tests", "example", "sample", "demo", "fixture", "mock",
    "dummy", "fake", "stub", "sha1", "sha256", "sha512", "md5", "fingerprint", "checksum", "digest",
})
_FILE_EXTS = frozenset({"txt", "json", "yaml", "yml", "toml", "ini", "cfg", "conf", "py", "js", "ts", "md",
                        "log", "csv", "pem", "crt", "cer", "der", "p12", "pfx", "jks", "gpg", "asc", "enc",
                        "bak", "tmp", "lock", "sh", "rs", "go", "rb", "java", "html", "xml", "pub", "example"})
_SENSITIVE_IDENT_WORDS = frozenset({"password", "passwd", "pwd", "pw", "pass", "passphrase", "secret", "secrets",
                                    "token", "tokens", "key", "keys", "apikey", "credential", "credentials",
                                    "creds", "cred", "auth", "sig", "signature"})
_STOPWORDS = frozenset({"and", "or", "the", "to", "is", "a", "an", "flag", "option", "argument", "arg",
                        "parameter", "param", "value", "with", "for", "in", "of", "on", "if", "when", "from",
                        "as", "you", "must", "should", "can", "will", "was", "are", "be", "not", "no", "then",
                        "instead", "only", "also", "without", "it", "this", "that", "which", "but", "so", "by",
                        "at", "into", "isn't", "does", "do", "here", "there"})


def _components(key: str) -> list[str]:
    comps: list[str] = []
    for part in re.split(r"[_.\-]+", key):
        comps.extend(m.group().lower() for m in _CAMEL_RE.finditer(part))
    return comps


@functools.lru_cache(maxsize=4096)
def _classify(key: str) -> str | None:
    """'P' (strong: redact any literal), 'T' (weak: redact random-looking values), 'E' (an UPPER_SNAKE name
    ending in _KEY / _TOKEN / _PASS: P when written as a shell/dotenv assignment, T otherwise) or None."""
    key = key.strip("-.\"'")
    if not key:
        return None
    comps = _components(key)
    if not comps:
        return None
    if "." in key and comps[-1] in _FILE_EXTS:
        return None
    parts = re.split(r"[_.\-]+", key.lower())
    if any(c in _NEUTRAL_ANY for c in comps) or comps[-1] in _NEUTRAL_LAST or parts[-1] in _NEUTRAL_LAST:
        return None
    if comps in (["authorization"], ["proxy", "authorization"], ["cookie"], ["set", "cookie"]):
        return None  # header rules handle these
    env_style = _ENV_KEY_RE.fullmatch(key) is not None and len(comps) >= 2
    weak = False
    for i, c in enumerate(comps):
        if c in _P_WORDS or c.endswith(_P_SUFFIXES) or c.startswith("password"):
            return "P"
        if c == "pass" and (len(comps) == 1 or (i > 0 and comps[i - 1] in _PASS_PREFIX)):
            return "P"
        if c in ("key", "keys", "token", "tokens") and i > 0 and comps[i - 1] in _STRONG_PREFIX:
            return "P"
        if c in ("key", "token", "pass") and env_style and i == len(comps) - 1:
            return "E"  # FOO_KEY: strong in a shell/dotenv line, weak as a code constant (STATS_KEY = "...")
        if c in _T_WORDS:
            weak = True
    return "T" if weak else None


def _ident_names_secret(value: str, key: str) -> bool:
    """password = new_password, token: token, apiKey: apiKey, git-credential-x: git-credential-x.o - a name
    echoing the key's own secret word is a variable or a file, not a secret."""
    if not _NAME_RE.fullmatch(value):
        return False
    shared = set(_components(value)) & set(_components(key)) & _SENSITIVE_IDENT_WORDS
    return bool(shared)


_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_DOTTED_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_ANNOT_RE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_.]*(?:\[[^\]\n]{0,80}\])?(?:[ \t]*\|[ \t]*[A-Za-z_][A-Za-z0-9_.]*(?:\[[^\]\n]{0,80}\])?)*"
    r"[ \t]*=(?![=~])[ \t]*")
_VALUE_MAX = 8192  # longest value examined; a longer one is cut there (adversarial input stays linear-ish)
_UNQ_RE = re.compile(r"[^\s\"'`\\,;&)}\]>]{1,%d}" % _VALUE_MAX)
_UNQ_ENV_RE = re.compile(r"[^\s\"'`\\]{1,%d}" % _VALUE_MAX)
_QUOTED_RES = {q: re.compile(q + r"([^%s\\\n]*(?:\\.[^%s\\\n]*)*)" % (q, q) + q) for q in ("\"", "'", "`")}
# A sensitive word, the rest of its key, an optional closing quote and a separator: the one-pass first filter
# (on the lowercase copy); everything else about the key is checked in Python on the few hits.
_HINT_RE = re.compile(_trie_pattern(_STEMS) + r"(?P<t>[a-z0-9_.-]{0,80})(?P<q>\\?[\"'])?[ \t]*"
                      r"(?P<sep>=>|:=|=(?![=~])|:(?!:))")
# A CLI flag followed by a separate value: --password X (the flag name is classed in Python).
_CLI_RE = re.compile(r"--?(?P<k>[a-z_][a-z0-9_.-]{0,80})[ \t]+(?=[^\s-])")
# Kubernetes / ECS / CloudFormation pairs: name: DB_PASSWORD  +  value: ...
_PAIR_VALUE_RE = re.compile(r"value" + _Q + r"?[ \t]*[:=](?![=:])")
_PAIR_NAME_RE = re.compile(
    r"(?:^|[^a-z0-9_])(?:name|key|parameterkey|variable)" + _Q + r"?[ \t]*[:=][ \t]*" + _Q +
    r"?(?P<k>[a-z_][a-z0-9_.-]{0,80})" + _Q + r"?[ \t]*,?[ \t]*(?:\r?\n|\\n)?[ \t]*(?:-[ \t]*)?" + _Q + r"?$")
_STRING_PREFIX_RE = re.compile(r"(?:[rRbBuUfF]{1,2})(?=\\?[\"'])")


def _scan_quoted(text: str, pos: int) -> tuple[int, int, bool] | None:
    """A quoted string at pos (" ' ` or JSON-escaped \\" \\'): (content start, content end, closed).
    An unterminated string yields the rest of its line, flagged not closed."""
    n = len(text)
    stop = min(n, pos + _VALUE_MAX)
    if text[pos] == "\\":
        quote = text[pos:pos + 2]
        start = pos + 2
        end = text.find(quote, start, stop)
        line = _line_end(text, start, _VALUE_MAX)
        if end == -1 or end > line:
            return start, line, False
        return start, end, True
    m = _QUOTED_RES[text[pos]].match(text, pos, stop)
    if m is not None:
        return m.start(1), m.end(1), True
    return pos + 1, _line_end(text, pos + 1, _VALUE_MAX), False


_REST_EMPTY_RE = re.compile(r"""[ \t]*(?:[,;)}\]"'`]|\\["'])*[ \t]*(?:\r?\n|\\[nr]|#|//|<!--|$)""")


def _rest_is_empty(text: str, pos: int) -> bool:
    """After an unquoted value: nothing but closing punctuation and a comment before the end of the line
    (so ``a, b = user, password`` and prose are not mistaken for ``password: hunter2``)."""
    return _REST_EMPTY_RE.match(text, pos) is not None


_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _unquoted_is_code(value: str, key: str, env_style: bool, code_key: bool) -> bool:
    """An unquoted value that reads as code (a call, an attribute, a variable, a type), not a literal.
    code_key: the key itself is code (self.x, a quoted dict key, a dotted name assigned with spaces), so a
    bare identifier on the right is a variable."""
    if _is_trivial(value):
        return True
    if env_style:
        return False
    low = value.lower()
    if any(c in value for c in "([{") or low in _CODE_WORDS or value[0] == "<":
        return True
    if _DOTTED_RE.fullmatch(value) and not any(c.isdigit() for c in value):
        return True
    if _ident_names_secret(value, key) or (code_key and _IDENT_RE.fullmatch(value)):
        return True
    if low.rstrip(";,?") in _TYPE_NAMES:
        return True
    return False


def _value_is_secret(key: str, value: str, cls: str) -> bool:
    if cls != "P":
        return _looks_secret(value)
    if _is_trivial(value):
        return False
    v = value.strip()
    if len(v) < 3:
        return False  # accesskey="n": nothing two characters long is worth a placeholder
    bare_key = key.strip("-.\"'")
    if bare_key.upper() in ("PWD", "OLDPWD") and _PATHISH_RE.match(v):
        return False  # the shell's working directory, in every env dump
    comps = _components(bare_key)
    if v.lower() in (bare_key.lower(), comps[-1] if comps else ""):
        return False  # PASSWORD = "password", TOKEN = 'token': a name constant, not a secret
    if "{" in v:
        rest = _TEMPLATE_RE.sub("", v)
        if rest != v:  # f"{registry_id}-auth-token": built from variables; only a random literal part counts
            return _looks_secret(rest, min_len=8)
    if _NUMBER_RE.fullmatch(v):
        # a PIN under a password-ish key; never a flag like HAVE_STRUCT_PASSWD = 1 or CLIENT_KEY_EXCHANGE = 16
        return sum(c.isdigit() for c in v) >= 4 and any(
            c.startswith(("pass", "pwd", "pin")) or "secret" in c for c in comps)
    return True


_STRING_GAP_RE = re.compile(r"\s+[-+%.,)\]}|&*/<>=?:]")


def _after_comma(text: str, pos: int) -> bool:
    """``a, password = ...``: tuple unpacking in code."""
    while pos > 0 and text[pos - 1] in " \t":
        pos -= 1
    return pos > 0 and text[pos - 1] == ","


def _value_span(text: str, v: int, key: str, cls: str, sep: str, spaced: bool,
                quoted_key: bool = False, key_start: int = 0) -> tuple[int, int] | None:
    """The span of the literal assigned at v, if it is one and it is secret; None otherwise."""
    n = len(text)
    q = v
    while v < n and text[v] in " \t":
        v += 1
    spaced = spaced or v > q
    if v >= n:
        return None
    tight = sep in ("=", ":=", "=>", "pair") and not spaced
    env_style = tight and sep == "=" and _ENV_KEY_RE.fullmatch(key) is not None
    if cls == "E":
        cls = "P" if env_style or sep == "pair" else "T"
    pm = _STRING_PREFIX_RE.match(text, v)
    vq = pm.end() if pm else v
    if text[vq] in "\"'`" or text.startswith(("\\\"", "\\'"), vq):
        scanned = _scan_quoted(text, vq)
        if scanned is None:
            return None
        cs, ce, closed = scanned
        value = text[cs:ce]
        if _STRING_GAP_RE.match(value):
            return None  # "second pass: " + reason: the key sat inside a string, this is the code after it
        if not closed and not _looks_secret(value):
            return None  # an unterminated quote is as likely the end of a string literal as a value
        return (cs, ce) if _value_is_secret(key, value, cls) else None
    um = (_UNQ_ENV_RE if env_style else _UNQ_RE).match(text, v)
    if not um:
        return None
    value = um.group()
    if sep == " " and (value.startswith("-") or value.lower() in _STOPWORDS):
        return None
    code_key = quoted_key or key.startswith(("self.", "this.", "cls.")) or ("." in key and spaced) or (
        sep == "=" and spaced and _after_comma(text, key_start))
    if _unquoted_is_code(value, key, env_style, code_key) or not _value_is_secret(key, value, cls):
        return None
    if not tight and sep != " " and not _rest_is_empty(text, um.end()) and not _looks_secret(value):
        return None  # prose: "Password: make sure it is strong"
    return um.start(), um.end()


def _key_at(text: str, stem_start: int, key_end: int) -> tuple[int, str] | None:
    """Grow a key back from its sensitive word: (key start, key without leading dashes)."""
    ks = stem_start
    lim = max(0, ks - 80)
    while ks > lim and text[ks - 1] in _KEY_CHARS:
        ks -= 1
    if ks >= 1 and text[ks - 1] == "\\" and text[ks] in _ESCAPE_LETTERS:
        ks += 1  # \nPASSWORD=... inside a JSON string
    raw_key = text[ks:key_end]
    key = raw_key.strip("-.")
    if not key or not (key[0].isalpha() or key[0] == "_"):
        return None
    if ks >= 1 and (text[ks - 1] in "$%" or (text[ks - 1] == "{" and ks >= 2 and text[ks - 2] == "$")):
        return None  # $PASSWORD, ${TOKEN}, %API_KEY%: a use, not an assignment
    return ks, key


def _find_assignments(text: str, low: str, out: list[_Candidate]) -> None:
    n = len(text)
    hits: list[int] = []
    for stem in _STEMS:  # str.find per word beats one regex alternation of common letters
        i = low.find(stem)
        while i != -1:
            hits.append(i)
            i = low.find(stem, i + len(stem))
    hits.sort()
    done_until = -1
    for i in hits:
        if i < done_until:
            continue
        m = _HINT_RE.match(low, i)
        if m is None:
            continue
        done_until = m.end("t")  # other sensitive words inside the same key
        found = _key_at(text, m.start(), m.end("t"))
        if found is None:
            continue
        ks, key = found
        cls = _classify(key)
        if cls is None:
            continue
        before = text[ks - 1] if ks >= 1 else "\n"
        quote = m.group("q")
        quoted_key = False
        if quote:
            if before not in "\"'" or quote[-1] != before:
                continue  # the quote closes something else
            quoted_key = True
        sep = m.group("sep")
        spaced = m.start("sep") > m.end("q" if quote else "t")
        p = m.end("sep")
        if sep == ":":
            nxt = text[p] if p < n else "\n"
            if not quoted_key and nxt not in " \t\r\n\"'\\":
                continue  # YAML needs a space after the colon; this is a URL, a time, a C++ scope...
            r = p
            while r < n and text[r] in " \t":
                r += 1
            am = _ANNOT_RE.match(text, r)
            if am and not quoted_key:  # password: str = "..."
                sep, p = "=", am.end()
        span = _value_span(text, p, key, cls, sep, spaced, quoted_key, ks)
        if span is not None:
            out.append((span[0], span[1], _PRIO_ASSIGN, "assignment"))
            done_until = span[1]
    if "-" in text:
        for m in _CLI_RE.finditer(low):
            if not _at_boundary(text, m.start(), "-"):
                continue
            key = text[m.start("k"):m.end("k")].rstrip(".-")
            cls = _classify(key)
            if cls is not None:
                span = _value_span(text, m.end(), key, cls, " ", True)
                if span is not None:
                    out.append((span[0], span[1], _PRIO_ASSIGN, "assignment"))
    if "value" in low:
        for m in _PAIR_VALUE_RE.finditer(low):
            vs = m.start() - 9 if low.endswith("parameter", 0, m.start()) else m.start()  # ParameterValue
            if not _at_boundary(text, vs):
                continue
            bm = _PAIR_NAME_RE.search(low, max(0, vs - 200), vs)
            if bm is None:
                continue
            key = text[bm.start("k"):bm.end("k")]
            cls = _classify(key)
            if cls is not None:
                span = _value_span(text, m.end(), key, cls, "pair", False)
                if span is not None:
                    out.append((span[0], span[1], _PRIO_ASSIGN, "assignment"))


_XML_RE = re.compile(r"<(?P<k>[A-Za-z_][A-Za-z0-9_.:-]{0,80})>(?P<s>[^<\n]{1,4096})</(?P=k)>")


def _find_xml(text: str, out: list[_Candidate]) -> None:
    if "</" not in text:
        return
    for m in _XML_RE.finditer(text):
        cls = _classify(m.group("k").rpartition(":")[2])
        cls = "T" if cls == "E" else cls
        if cls and _value_is_secret(m.group("k"), m.group("s"), cls):
            out.append((m.start("s"), m.end("s"), _PRIO_ASSIGN, "assignment"))


# ---------------------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------------------

KINDS: tuple[str, ...] = tuple(sorted(
    {k for _, k, _, _ in _TOKEN_SPECS} | {k for _, _, k in _ANCHORED_SPECS} | {k for _, k, _ in _WEBHOOK_RES}
    | {rule[2] for rule in _CONTEXT_RULES}
    | {"private-key", "jwt", "authorization", "bearer-token", "cookie", "assignment", "credit-card"}))


def _candidates(text: str) -> list[_Candidate]:
    out: list[_Candidate] = []
    low = _lower(text)
    _find_tokens(text, out)
    _find_pem(text, out)
    _find_context(text, low, out)
    _find_headers(text, low, out)
    _find_assignments(text, low, out)
    _find_xml(text, out)
    _find_cards(text, out)
    return out


def _drop_placeholders(text: str, cands: list[_Candidate]) -> list[_Candidate]:
    """Idempotence: a candidate touching an existing placeholder is the echo of an earlier redaction (its value
    now reads differently because the placeholder changed the token boundaries), not a new secret. Rules that
    match a real secret next to a placeholder still find it, since they start and end on the secret itself."""
    if "[REDACTED:" not in text:
        return cands
    spans = [m.span() for m in PLACEHOLDER_RE.finditer(text)]
    starts = [s for s, _ in spans]
    kept = []
    for c in cands:
        i = bisect.bisect_right(starts, c[0]) - 1  # the last placeholder starting at or before the candidate
        if i >= 0 and spans[i][1] > c[0]:
            continue
        if i + 1 < len(spans) and spans[i + 1][0] < c[1]:
            continue
        kept.append(c)
    return kept


def find_secrets(text: str) -> list[Finding]:
    """What ``redact`` would replace: merged, non-overlapping findings in text order."""
    if not isinstance(text, str):
        raise TypeError(f"find_secrets() needs str, not {type(text).__name__}")
    if not text:
        return []
    cands = _drop_placeholders(text, [c for c in _candidates(text) if c[1] > c[0]])
    cands.sort(key=lambda c: (c[0], -c[1]))
    merged: list[list[Any]] = []
    for s, e, prio, kind in cands:
        if merged and s < merged[-1][1]:
            top = merged[-1]
            top[1] = max(top[1], e)
            if prio > top[2]:
                top[2], top[3] = prio, kind
        else:
            merged.append([s, e, prio, kind])
    return [Finding(kind, s, e) for s, e, _, kind in merged]


def redact(text: str) -> str:
    """Replace every secret in text with ``[REDACTED:<kind>]``. Idempotent."""
    findings = find_secrets(text)
    if not findings:
        return text
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos:f.start])
        parts.append(placeholder(f.kind))
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts)


_PAIR_NAME_KEYS = ("name", "Name", "key", "Key", "ParameterKey", "variable")
_PAIR_VALUE_KEYS = ("value", "Value", "ParameterValue")


def redact_data(obj: Any) -> Any:
    """A copy of obj with every string redacted, dict keys included, recursing into dicts, lists, tuples and
    sets. A string under a strongly sensitive key (``{"password": "hunter2"}``) is replaced whole, as is the
    value of a ``{"name": "DB_PASSWORD", "value": ...}`` pair. Non-string leaves are returned unchanged."""
    return _redact_obj(obj, None, None)


def _redact_obj(obj: Any, key: str | None, cls: str | None) -> Any:
    if isinstance(obj, str):
        if cls == "P" and key is not None and _value_is_secret(key, obj, "P"):
            return placeholder("assignment")
        return redact(obj)
    if isinstance(obj, dict):
        pair_key: str | None = None
        for nk in _PAIR_NAME_KEYS:
            if isinstance(obj.get(nk), str) and any(vk in obj for vk in _PAIR_VALUE_KEYS):
                pair_key = obj[nk]
                break
        out: dict[Any, Any] = {}
        for k, v in obj.items():
            if isinstance(k, str):
                if pair_key is not None and k in _PAIR_VALUE_KEYS:
                    ctx_key = pair_key
                else:
                    ctx_key = k
                if "[REDACTED:" in ctx_key:  # idempotence: a redacted key is classed by what is left of it
                    ctx_key = PLACEHOLDER_RE.sub("", ctx_key)
                child_cls = _classify(ctx_key)
                child_cls = "P" if child_cls == "E" else child_cls
                new_k: Any = redact(k)
                if new_k in out:
                    i = 2
                    while f"{new_k}#{i}" in out:
                        i += 1
                    new_k = f"{new_k}#{i}"
            else:
                ctx_key, child_cls, new_k = None, None, k
            out[new_k] = _redact_obj(v, ctx_key, child_cls if child_cls == "P" else None)
        return out
    if isinstance(obj, list):
        return [_redact_obj(x, key, cls) for x in obj]
    if isinstance(obj, tuple):
        items = [_redact_obj(x, key, cls) for x in obj]
        if hasattr(obj, "_fields"):
            return type(obj)(*items)
        return tuple(items)
    if isinstance(obj, (set, frozenset)):
        return type(obj)(_redact_obj(x, key, cls) for x in obj)
    return obj
