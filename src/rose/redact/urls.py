"""Credentials by their place in a URL, a command line or an HTTP message, whatever their shape.

* ``password``: the password of ``scheme://user:password@host`` (any scheme: postgres, mysql, mongodb+srv, redis,
  amqp, https, ...), ``curl -u user:pass`` / ``--user``, ``docker login -p``, ``sshpass -p``, ``.netrc``, SQL
  ``PASSWORD '...'`` / ``IDENTIFIED BY '...'``; a token used as the whole userinfo (``https://<token>@host``).
* ``aws-secret-key``, ``azure-storage-key`` (``AccountKey=`` / ``SharedAccessKey=``), ``azure-sas-signature``.
* Webhook URLs (Slack, Discord, Microsoft Teams / Office 365 connectors): scheme and host stay, the path goes.
* ``authorization`` (the credential of an ``Authorization:`` / ``Proxy-Authorization:`` header: Bearer, Basic,
  Token, Digest, AWS4, SSWS, ...); ``bearer-token`` (a bare ``Bearer <token>``); ``cookie`` (values in
  ``Cookie:`` / ``Set-Cookie:``).

Each pattern starts with a literal so the regex engine can jump between candidates; case-insensitive ones run on
the index-aligned lowercase copy and read the secret from the original.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from rose.redact.core import (PRIO_AUTH, PRIO_BEARER, PRIO_CONTEXT, PRIO_COOKIE, PRIO_PASSWORD, PRIO_PROVIDER, Q,
                              Candidate, at_boundary, line_end, trie_pattern)
from rose.redact.values import _is_trivial, _looks_secret

_Q = Q
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
    (("aws",), True, "aws-secret-key", PRIO_CONTEXT, re.compile(
        r"aws_?secret_?(?:access_?)?key" + _Q + r"?[ \t]*(?:=>|=|:)[ \t]*" + _Q +
        r"?(?P<s>[a-z0-9/+=]{40})(?![a-z0-9/+=])"), "", None),
    (_AZURE_KEYS, True, "azure-storage-key", PRIO_CONTEXT, re.compile(
        trie_pattern(_AZURE_KEYS) + r"[ \t]*=[ \t]*(?P<s>[a-z0-9+/]{20,}={0,2})"), "", None),
    (("sig=",), True, "azure-sas-signature", PRIO_CONTEXT, re.compile(
        r"sig=(?P<s>[a-z0-9%+/=]{20,})"), None, _after_query_separator),
    (("://",), False, "password", PRIO_PASSWORD, re.compile(
        r"://(?P<u>[^\s:/?#@\"'<>\\`\[\]]{0,256}):(?P<s>[^\s/?#\"'<>\\`]{1,256})@"), None, None),
    (("-u", "--user", "--proxy-user", "-U"), False, "password", PRIO_PASSWORD, re.compile(
        r"-(?:u|-user|-proxy-user|U)(?:[ \t]+|=)" + _Q +
        r"?(?P<u>[^\s:\"'\\-][^\s:\"'\\]{0,127}):(?P<s>[^\s\"'\\]{1,256})"),
     "-", None),
    (("login",), True, "password", PRIO_PASSWORD, re.compile(
        r"login\b[^\n]{0,200}?[ \t]-p[ \t]*(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'-][^\s\"']*)"), "",
     _docker_login_before),
    (("sshpass",), True, "password", PRIO_PASSWORD, re.compile(
        r"sshpass[ \t]+-p[ \t]*(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'-][^\s\"']*)"), "", None),
    (("machine",), True, "password", PRIO_PASSWORD, re.compile(
        r"machine[ \t]+[^\s\"'\\]{1,256}(?:\s+login[ \t]+[^\s\"'\\]{1,256})?\s+password[ \t]+"
        r"(?P<s>[^\s\"'\\]{1,256})"), "", None),
    (("password",), True, "password", PRIO_PASSWORD, re.compile(
        r"password[ \t]+(?P<q>['\"])(?P<s>[^'\"\n\\]{1,256})(?P=q)"), "", None),
    # Bundler credentials for a private gem host (Sidekiq Enterprise, Gemfury, ...): BUNDLE_GEMS__HOST__COM=user:pass
    (("bundle_",), True, "password", PRIO_PASSWORD, re.compile(
        r"bundle_[a-z0-9_]*__[a-z0-9_]+" + _Q + r"?[ \t]*[=:][ \t]*" + _Q +
        r"?(?P<u>[^\s:\"'\\]{1,128}):(?P<s>[^\s\"'\\@]{1,256})"), "", None),
    (("bundle",), True, "password", PRIO_PASSWORD, re.compile(
        r"bundle[ \t]+config[ \t]+(?:set[ \t]+)?(?:--[a-z]+[ \t]+)*[a-z0-9.-]+\.[a-z]{2,}[ \t]+[\"']?"
        r"(?P<u>[^\s:\"']{1,128}):(?P<s>[^\s\"']{1,256})"), "", None),
    # HTTP basic auth in code: requests auth=("user", "pass"), HTTPBasicAuth("user", "pass"), BasicAuth(...)
    (("auth",), True, "password", PRIO_PASSWORD, re.compile(
        r"auth[ \t]*(?:=[ \t]*)?\([ \t]*(?P<q1>['\"])[^'\"\n]{1,128}(?P=q1)[ \t]*,[ \t]*(?P<q>['\"])"
        r"(?P<s>[^'\"\n\\]{1,256})(?P=q)[ \t]*\)"), None, None),
    (("identified",), True, "password", PRIO_PASSWORD, re.compile(
        r"identified[ \t]+by[ \t]+(?P<q>['\"])(?P<s>[^'\"\n\\]{1,256})(?P=q)"), "", _sql_user_before),
]

# Webhook URLs: keep scheme and host, redact the path that carries the secret.
_WEBHOOK_RES: list[tuple[str, str, re.Pattern[str]]] = [
    ("hooks.slack.com", "slack-webhook",
     re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/-]{8,})")),
    ("/api/webhooks/", "discord-webhook",
     re.compile(r"/api/webhooks/(?P<s>[0-9]+/[A-Za-z0-9_-]{20,})")),
    # Microsoft Teams / Office 365 connectors: <tenant>.webhook.office.com/webhookb2/<uuid>@<uuid>/IncomingWebhook/..
    ("/webhookb2/", "teams-webhook", re.compile(r"/webhookb2/(?P<s>[A-Za-z0-9@/_-]{40,})")),
    ("hooks.zapier.com/hooks/", "zapier-webhook",
     re.compile(r"hooks\.zapier\.com/hooks/(?:catch|standard)/(?P<s>[0-9]+/[A-Za-z0-9]+)")),
    ("outlook.office.com/webhook/", "teams-webhook",
     re.compile(r"outlook\.office\.com/webhook/(?P<s>[A-Za-z0-9@/_-]{40,})")),
]
# A token used as the whole userinfo of a URL (https://<token>@host, a Sentry DSN's key): no colon, random-looking.
_HEX_RE = re.compile(r"[0-9a-fA-F]+")
_USERINFO_TOKEN_RE = re.compile(r"://(?P<s>[A-Za-z0-9_~.%+-]{16,256})@")


def find_context(text: str, low: str, out: list[Candidate]) -> None:
    for gates, on_low, kind, prio, pattern, boundary, extra in _CONTEXT_RULES:
        for gate in gates:   # a plain loop, not any(generator): this runs for every rule of every text
            if gate in low:
                break
        else:
            continue
        for m in pattern.finditer(low if on_low else text):
            if boundary is not None and not at_boundary(text, m.start(), boundary):
                continue
            if extra is not None and not extra(text, low, m.start()):
                continue
            s, e = m.span("s")
            value = text[s:e]
            if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
                s, e, value = s + 1, e - 1, value[1:-1]
            if not _is_trivial(value):
                out.append((s, e, prio, kind))
    if "@" in text:
        for m in _USERINFO_TOKEN_RE.finditer(text):
            user = m.group("s")
            if _looks_secret(user, min_len=16) and not (len(user) < 32 and _HEX_RE.fullmatch(user)):
                out.append((m.start("s"), m.end("s"), PRIO_PASSWORD, "password"))
    for gate, kind, pattern in _WEBHOOK_RES:
        if gate in text:
            for m in pattern.finditer(text):
                out.append((m.start("s"), m.end("s"), PRIO_PROVIDER, kind))


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




def find_headers(text: str, low: str, out: list[Candidate]) -> None:
    if "authorization" in low:
        for m in _AUTHZ_RE.finditer(low):
            if not at_boundary(text, m.start()):
                continue
            s, e = m.span("s")
            scheme = (m.group("scheme") or "").lower()
            if scheme in _AUTHZ_LONG_SCHEMES:
                e = line_end(text, s)
                opener = m.group("open") or (text[m.start() - 1] if m.start() and text[m.start() - 1] in "\"'" else "")
                if opener:
                    q = text.find(opener, s, e)
                    if q != -1:
                        e = q
                out.append((s, e, PRIO_AUTH, "authorization"))
            elif m.group("scheme") or _looks_secret(text[s:e], min_len=8):
                cred = text[s:e]  # after a scheme, anything but a plain word ("Bearer header") is a credential
                if len(cred) >= 6 and not _is_trivial(cred) and not _SIMPLE_WORD_RE.fullmatch(cred):
                    out.append((s, e, PRIO_AUTH, "authorization"))
    if "bearer" in low:
        for m in _BEARER_RE.finditer(low):
            s, e = m.span("s")
            if at_boundary(text, m.start(), "-") and _looks_secret(text[s:e], min_len=8):
                out.append((s, e, PRIO_BEARER, "bearer-token"))
    if "cookie" in low:
        for m in _COOKIE_RE.finditer(low):
            if not at_boundary(text, m.start()):
                continue
            base = m.start("v")
            for pm in _COOKIE_PAIR_RE.finditer(text, base, m.end("v")):
                name, value = pm.group(1).lower(), pm.group(2)
                if name in _COOKIE_ATTRS or _is_trivial(value):
                    continue
                if _COOKIE_SECRET_NAME_RE.search(name) or _looks_secret(value, min_len=10):
                    out.append((pm.start(2), pm.end(2), PRIO_COOKIE, "cookie"))




def find(text: str, low: str, out: list[Candidate]) -> None:
    find_context(text, low, out)
    find_headers(text, low, out)


def kinds() -> set[str]:
    return {rule[2] for rule in _CONTEXT_RULES} | {k for _, k, _ in _WEBHOOK_RES}
