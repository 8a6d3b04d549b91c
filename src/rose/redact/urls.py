"""Credentials by their place in a URL, a command line or an HTTP message, whatever their shape.

* ``password``: the password of ``scheme://user:password@host`` (any scheme: postgres, mysql, mongodb+srv, redis,
  amqp, https, ...), ``curl -u user:pass`` / ``--user``, ``docker login -p``, ``echo X | ... --password-stdin``,
  ``sshpass -p``, ``mysql -pX``, ``redis-cli -a``, ``sqlcmd -P``, ``ldap* -w``, ``smbclient -U user%X``, openssl
  ``pass:X``, ``htpasswd -b``, ``.netrc`` (``machine`` and ``default`` entries), ``.pgpass`` lines, SQL
  ``PASSWORD '...'`` / ``IDENTIFIED BY '...'``; a token used as the whole userinfo (``https://<token>@host``).
* ``password-hash``: crypt(3) hashes (bcrypt, md5-crypt, apr1, sha256/512-crypt, yescrypt, argon2) and LDAP
  ``{SHA}`` / ``{SSHA}``, as in htpasswd files and /etc/shadow.
* ``aws-secret-key``, ``azure-storage-key`` (``AccountKey=`` / ``SharedAccessKey=``), ``azure-sas-signature``.
* Webhook URLs (Slack, Discord, Microsoft Teams / Office 365 connectors): scheme and host stay, the path goes.
* ``authorization`` (the credential of an ``Authorization:`` / ``Proxy-Authorization:`` header: Bearer, Basic,
  Token, Digest, AWS4, SSWS, ...); ``bearer-token`` (a bare ``Bearer <token>``); ``cookie`` (values in
  ``Cookie:`` / ``Set-Cookie:``, ``document.cookie = "..."``, ``curl -b`` / ``--cookie``).

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


_C64 = "[./A-Za-z0-9]"  # crypt(3)'s alphabet
_CRYPT_SCHEMES = [  # what follows the leading "$" of each scheme's hash
    r"2[abxy]?\$[0-9]{2}\$" + _C64 + "{53}",                                     # bcrypt
    r"(?:1|apr1)\$" + _C64 + r"{1,8}\$" + _C64 + "{22}",                          # md5-crypt, Apache's apr1
    r"[56]\$(?:rounds=[0-9]{1,9}\$)?" + _C64 + r"{1,16}\$" + _C64 + "{43,86}",   # sha256-crypt, sha512-crypt
    r"y\$" + _C64 + r"{1,32}\$" + _C64 + r"{1,86}\$" + _C64 + "{43}",             # yescrypt
    r"argon2(?:id|i|d)\$(?:v=[0-9]+\$)?m=[0-9]+,t=[0-9]+,p=[0-9]+\$[A-Za-z0-9+/]{8,}\$[A-Za-z0-9+/]{16,}",
]

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
    # netrc(5): "machine <host>" or the catch-all "default", then login / account / password tokens in any order
    *[((start,), True, "password", PRIO_PASSWORD, re.compile(
        start + (r"[ \t]+[^\s\"'\\]{1,256}" if start == "machine" else "") +
        r"(?:\s+(?:login|account)[ \t]+[^\s\"'\\]{1,256}){0,2}\s+password[ \t]+(?P<s>[^\s\"'\\]{1,256})"), "", None)
      for start in ("machine", "default")],
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
    # MySQL / MariaDB clients take the password glued to -p (-psecret, -p'secret'); "-p db" prompts instead
    (("mysql", "mariadb"), False, "password", PRIO_PASSWORD, re.compile(
        r"(?:mysql|mariadb)[a-z_-]*\b[^\n]{0,200}?[ \t]-p(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'-][^\s\"']*)"), "",
     None),
    # the password flags of other database and directory clients: redis-cli -a, sqlcmd / bcp -P, ldap* -w
    (("redis-cli",), True, "password", PRIO_PASSWORD, re.compile(
        r"redis-cli\b[^\n|;&]{0,200}?[ \t](?:-a|--pass)[ \t]+(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'-][^\s\"']*)"),
     "", None),
    (("sqlcmd",), False, "password", PRIO_PASSWORD, re.compile(
        r"sqlcmd\b[^\n|;&]{0,200}?[ \t]-P[ \t]*(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'-][^\s\"']*)"), "", None),
    (("ldap",), False, "password", PRIO_PASSWORD, re.compile(
        r"ldap[a-z]{3,12}\b[^\n|;&]{0,300}?[ \t]-w[ \t]*(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'-][^\s\"']*)"),
     "", None),
    # Samba tools: -U user%password
    (("-u",), False, "password", PRIO_PASSWORD, re.compile(
        r"-U[ \t]*[\"']?[^\s%\"'\\]{1,128}%(?P<s>[^\s\"'\\]{1,256})"), "-", None),
    # openssl pass phrase arguments: -passin / -passout / -pass / -password pass:<secret>
    (("pass:",), True, "password", PRIO_PASSWORD, re.compile(
        r"-pass(?:in|out|word)?[ \t]+[\"']?pass:(?P<s>[^\s\"']{1,256})"), "-", None),
    # echo <secret> | docker login ... --password-stdin (and podman, helm registry, ...)
    (("--password-stdin",), True, "password", PRIO_PASSWORD, re.compile(
        r"echo[ \t]+(?:-[ne][ \t]+)?(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'|-][^\s\"'|]*)[ \t]*\|"
        r"[^\n|]{0,200}--password-stdin"), "", None),
    # crypt(3) password hashes (htpasswd, /etc/shadow) and LDAP-style {SHA} / {SSHA}: offline-crackable, so as
    # secret as the password. Each pattern starts with one literal ("$", "{") for the engine to jump between.
    (("$",), False, "password-hash", PRIO_PASSWORD, re.compile(
        r"(?P<s>\$(?:" + "|".join(_CRYPT_SCHEMES) + "))"), None, None),
    (("sha",), False, "password-hash", PRIO_PASSWORD, re.compile(
        r"(?P<s>\{S?SHA(?:256|512)?\}[A-Za-z0-9+/]{20,}={0,2})"), None, None),
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


# libpq's password file (~/.pgpass, PGPASSFILE): hostname:port:database:username:password, one entry a line, "*" a
# wildcard, "\:" and "\\" escapes. Found from its port field (a literal colon to jump between), the host read back
# to the start of its line (or an opening quote: echo 'h:5432:db:u:pw' >> ~/.pgpass).
_PGPASS_RE = re.compile(
    r":(?:[0-9]{1,5}|\*):(?:[A-Za-z0-9_.$*-]|\\[:\\]){1,63}:(?P<u>(?:[A-Za-z0-9_.@$*-]|\\[:\\]){1,63}):"
    r"(?P<s>(?:[^\s:\\'\"]|\\[:\\]){1,256})(?=\r?\n|\\[nr]|['\"]|$)")
_PGPASS_HOST_RE = re.compile(r"(?:^|(?<=\n)|(?<=\\[nr])|(?<=['\"]))[A-Za-z0-9_.*/\[\]%-]{1,253}$")
_LETTER_RE = re.compile(r"[A-Za-z*]")


def find_pgpass(text: str, out: list[Candidate]) -> None:
    if "::" not in text and ":*:" not in text and not _PORT_FIELD_RE.search(text):
        return
    for m in _PGPASS_RE.finditer(text):
        if _LETTER_RE.search(m.group("u")) is None:
            continue  # 12:00:00:00:00 - a user name has a letter (or is the * wildcard)
        if _PGPASS_HOST_RE.search(text, max(0, m.start() - 254), m.start()) is None:
            continue
        if m.group("s") != "*":  # a file, not a template: "%x" or "$x" here is the password itself
            out.append((m.start("s"), m.end("s"), PRIO_PASSWORD, "password"))


_PORT_FIELD_RE = re.compile(r":[0-9]{1,5}:")

# htpasswd's batch mode takes the password as an argument: htpasswd -b[c|m|B...] file user password, or with -n
# (print, no file) htpasswd -nb user password. -C cost and -r rounds take a number.
_HTPASSWD_RE = re.compile(r"htpasswd(?P<f>(?:[ \t]+-[A-Za-z]*[Cr][ \t]+[0-9]+|[ \t]+-[A-Za-z]+)+)"
                          r"(?P<args>(?:[ \t]+(?:'[^'\n]*'|\"[^\"\n]*\"|[^\s'\"|;&]+)){2,3})")
_ARG_RE = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"|([^\s'\"|;&]+)")


def find_htpasswd(text: str, out: list[Candidate]) -> None:
    if "htpasswd" not in text:
        return
    for m in _HTPASSWD_RE.finditer(text):
        flags = m.group("f")
        if "b" not in flags.replace("-C", "").replace("-r", ""):
            continue
        args = list(_ARG_RE.finditer(text, m.start("args"), m.end("args")))
        want = 2 if "n" in flags else 3
        if len(args) < want:
            continue
        arg = args[want - 1]
        group = next(g for g in (1, 2, 3) if arg.group(g) is not None)
        if not _is_trivial(arg.group(group)):
            out.append((arg.start(group), arg.end(group), PRIO_PASSWORD, "password"))


def find_context(text: str, low: str, out: list[Candidate]) -> None:
    find_pgpass(text, out)
    find_htpasswd(text, out)
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
            if kind == "password-hash" or not _is_trivial(value):  # a hash's "$apr1$..." is no $VAR reference
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
# Cookie: / Set-Cookie: headers and document.cookie = "..." assignments
_COOKIE_RE = re.compile(r"cookie" + _Q + r"?[ \t]*(?::|=(?!=))[ \t]*" + _Q + r"?(?P<v>[^\r\n\"'\\]+)")
# curl's -b / --cookie "name=value; ..." (without "=" the argument is a cookie file)
_COOKIE_FLAG_RE = re.compile(r"(?:-b|--cookie)(?:[ \t]+|=)(?:\"(?P<d>[^\"\n]*)\"|'(?P<s>[^'\n]*)'|(?P<u>[^\s\"']+))")
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
            if at_boundary(text, m.start()):
                _cookie_pairs(text, m.start("v"), m.end("v"), out)
    if "curl" in low and ("-b" in low or "--cookie" in low):
        for m in _COOKIE_FLAG_RE.finditer(text):
            if at_boundary(text, m.start(), "-"):
                group = "d" if m.group("d") is not None else "s" if m.group("s") is not None else "u"
                _cookie_pairs(text, m.start(group), m.end(group), out)


def _cookie_pairs(text: str, start: int, end: int, out: list[Candidate]) -> None:
    """The secret values among a cookie string's name=value pairs: under a session-ish name, or random-looking."""
    for pm in _COOKIE_PAIR_RE.finditer(text, start, end):
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
