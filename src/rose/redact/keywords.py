"""Secrets by the name they are assigned to: ``password = hunter2``, ``"apiKey": "..."``, ``--token X``, ...

Two tables of data drive it: the key words (which names are secret, weakly secret or not at all) and the
assignment syntaxes (which separators, quotes and wrappers put a value under a name). Only the value is replaced,
so the key, the quotes and the rest of the line stay readable.

A key is split into words (snake, kebab, dotted, camelCase) and classed:

* Strong (``P``): password / passwd / passphrase / pwd / pw / secret / credential(s) / creds, keytool's
  storepass / keypass (and their src / dest forms), ``<x>key`` or
  ``<x>token`` where x is an auth-ish word or a provider (api, access, secret, private, client, auth, refresh,
  session, bearer, bot, oauth, signing, master, openai, github, ...), ``pass`` alone or after db/user/smtp/...
  or a build registry (maven, nexus, artifactory, ...: gradle.properties' ``mavenPass``).
  Any *literal* value is redacted, however weak-looking (``password = hunter2``); an all-digit value of 4+ digits
  under a password/pin/secret key, of 8+ digits under any other strong key.
* UPPER_SNAKE names ending in ``_KEY`` / ``_TOKEN`` / ``_PASS`` / ``_SALT`` / ``_SIGNING`` (``MISTRAL_KEY``,
  ``HASH_SALT``): strong when written as a shell/dotenv assignment (``NAME=value``) or a Kubernetes name/value
  pair, weak as a code constant (``STATS_KEY = "_hypothesis_stats"``).
* Weak (``T``): a bare ``key`` / ``token`` / ``auth`` / ``sig`` / ``signature`` / ``salt`` word, or a provider
  name with one (``sourcegraph_token``), and ids that are credentials (``access_id``, ``secret_id``,
  ``client_id``). The value is redacted only if it looks random (no whitespace, 12+ characters, not a word /
  identifier / number / version / path / URL / template, letters mixed with digits or long mixed case, entropy
  >= 3 bits a character), or, under a compound key (``codecov_token``), is UUID-shaped or 12+ digits.
* Not sensitive: a key with a measuring, naming or pointing word (``max_tokens``, ``TOKEN_LIMIT``,
  ``token_count``, ``key_id``, ``secret_name``, ``token_url``, ``password_file``, ``token_type``,
  ``password_min_length``, ``public_key``, ``key_sha256``, ...), plurals used as counts (``tokens``, ``keys``),
  words that merely contain a stem (``keyboard``, ``author``, ``bypass``), and test-runner status words
  (``--- PASS: TestX``).

Assignment syntaxes (``_HINT_RE``): ``=`` ``:`` ``=>`` ``:=`` ``?=`` ``::=`` ``.=`` ``||=`` (shell, dotenv,
YAML, JSON, TOML, INI, Makefile, PHP, Go, Ruby, ...), a Go type between name and ``=`` (``var k string =``), a
quoted key in a subscript (``os.environ["K"] = ``, ``$cfg['k'] =``), a quoted key as the first argument of a call
(``System.setProperty("k", "v")``, ``os.Setenv``, ``setdefault``, ``define``); CLI flags (``--password X``,
``--token=X``); Kubernetes / ECS / CloudFormation ``name: K`` + ``value: v`` pairs and XML
``<add key="K" value="v"/>``; XML elements ``<password>v</password>``, also with the value on its own line;
Dockerfile ``ENV K v``; Terraform ``variable "k" { default = "v" }``.

What counts as a literal value: a quoted string (``"..."``, ``'...'``, also JSON-escaped ``\\"...\\"``) is
always a literal; one joined to more literals (``"ab" + "cd"``, PHP ``.``, a line continuation, or adjacent
strings inside parentheses) is one value through its last piece. An unquoted value is a literal unless it reads
as code: it contains ``( [ {``, is a dotted attribute path (``self.password``, ``os.environ``), a keyword
(``None``, ``true``, ``null``, ``lambda``), a reference or template (``$VAR``, ``${VAR}``, ``%VAR%``,
``{{ x }}``, ``<your-token>``), a mask (``****``), a type (``password: str``), a name echoing the key's own word
(``password = new_password``), or a bare identifier right of a key that is itself code (``self.password =
value``, ``"key": var``, ``user, password = pair``).
Shell/dotenv lines (``UPPER_KEY=value``) skip the code exemptions and take the value up to whitespace. With
``key = value`` / ``key: value`` (spaces: code, YAML, INI, prose) an unquoted value counts only if it ends the
line (bar closing punctuation or a comment), so the prose line ``Password: make sure it is strong`` passes;
``key=value`` written tight (CLI args, query strings, libpq conninfo, log fields) counts anywhere.

Never a secret, even under a strong key: values shorter than 3 characters, the key's own name (``PASSWORD =
"password"``), documentation placeholders, f-strings and templates unless their literal part looks random.
"""
from __future__ import annotations

import functools
import re

from rose.redact.core import ESCAPE_LETTERS, PRIO_ASSIGN, Q, Candidate, at_boundary, line_end, trie_pattern
from rose.redact.values import (_CODE_WORDS, _NUMBER_RE, _PATHISH_RE, _TEMPLATE_RE, _TYPE_NAMES, _is_trivial,
                                _looks_secret)

_Q = Q
_STEMS = ("pass", "pw", "secret", "token", "key", "cred", "auth", "sig", "salt",
          # the id half of a credential pair (sumologic_access_id, DISCORD_CLIENT_ID)
          "access_id", "accessid", "access-id", "access.id", "client_id", "clientid", "client-id", "client.id")
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_ENV_KEY_RE = re.compile(r"[A-Z][A-Z0-9_]*")

_P_WORDS = frozenset({"password", "passwords", "passwd", "passphrase", "pwd", "secret", "secrets",
                      "credential", "credentials", "creds", "privatekey", "apikey", "accesskey", "secretkey",
                      "authtoken", "accesstoken", "refreshtoken", "sessiontoken", "apitoken", "clientsecret",
                      "passcode", "pword", "pw",
                      # keytool's keystore and key passwords (-storepass, -keypass, -srcstorepass, ...)
                      "storepass", "keypass", "srcstorepass", "deststorepass", "srckeypass", "destkeypass"})
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
                          "wifi", "wpa", "keystore", "truststore", "key", "store", "bind", "master",
                          # build and package registries (gradle.properties: mavenPass, nexusPass, ...)
                          "maven", "nexus", "artifactory", "gradle", "repo", "registry", "deploy", "publish",
                          "ossrh", "sonatype", "signing", "docker", "npm", "pypi", "nuget", "git", "jenkins"})
_T_WORDS = frozenset({"key", "token", "auth", "sig", "signature", "bearer", "cookie", "salt"})
# the last word of an UPPER_SNAKE name that is a secret in a shell/dotenv line (HASH_SALT=, JWT_SIGNING=)
_ENV_SECRET_LAST = frozenset({"key", "token", "pass", "salt", "signing"})
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
    "getter", "setter", "lookup", "cache", "exists", "present", "valid", "matches", "check", "region", "arn", "scope",
    "scopes", "audience", "issuer", "owner", "user", "username",
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
    if len(comps) >= 2 and comps[-1] == "id" and comps[-2] in _CREDENTIAL_ID_WORDS and not any(
            c in _NEUTRAL_ANY for c in comps):
        return "T"  # access_id, secret_id, client_id: half of a credential pair, redacted when random-looking
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
        if c in _ENV_SECRET_LAST and env_style and i == len(comps) - 1:
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
# Separators: = : => := (Go, Makefile) ?= ::= (Makefile) .= (PHP) ||= (Ruby) <- (R), and a comma after a quoted
# key (a call's first argument: setProperty("k", "v")). A quoted key may sit in a subscript (environ["K"] =);
# a Go type may sit between the name and "=" (var k string = "v").
_HINT_RE = re.compile(trie_pattern(_STEMS) + r"(?P<t>[a-z0-9_.-]{0,80})(?P<q>\\?[\"'])?(?P<br>\])?"
                      r"(?P<ty>[ \t]+(?:string|\[\]byte))?[ \t]*"
                      r"(?P<sep>=>|::?=|\?=|\.=|\|\|=|<-|=(?![=~])|:(?!:)|,)")
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
        line = line_end(text, start, _VALUE_MAX)
        if end == -1 or end > line:
            return start, line, False
        return start, end, True
    m = _QUOTED_RES[text[pos]].match(text, pos, stop)
    if m is not None:
        return m.start(1), m.end(1), True
    return pos + 1, line_end(text, pos + 1, _VALUE_MAX), False


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


_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_CREDENTIAL_ID_WORDS = frozenset({"access", "secret", "client", "consumer", "app", "application"})


def _value_is_secret(key: str, value: str, cls: str) -> bool:
    if cls != "P":
        if _looks_secret(value):
            return True
        # under a compound key (codecov_token, heroku_api_key): UUID-shaped and long all-digit tokens too
        v = value.strip()
        return len(_components(key.strip("-.\"'"))) >= 2 and (
            _UUID_RE.fullmatch(v) is not None or (v.isdigit() and len(v) >= 12))
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
        if v.isdigit() and len(v) >= 8:
            return True  # api_key = 1234567890123: numeric tokens exist (app secrets, client ids, PINs)
        return sum(c.isdigit() for c in v) >= 4 and any(
            c.startswith(("pass", "pwd", "pin")) or "secret" in c for c in comps)
    return True


_PAREN_STRING_RE = re.compile(r"\([ \t]*(?:\r?\n[ \t]*)?(?=[rRbBuUfF]{0,2}[\"'`])")
# What joins two string literals into one value: + (Python, JS, Java, C#), . (PHP), .. (Lua), & (VB), || (SQL),
# with the operator ending a line or starting the next; a backslash line continuation (Python); inside parentheses
# plain adjacency ("abc" "def", C and Python implicit concatenation).
_JOIN = r"(?:\+|\.\.?|&|\|\|)"
_JOINED_RE = re.compile(r"[ \t]*(?:" + _JOIN + r"[ \t]*(?:\\?\r?\n[ \t]*)?|\\?\r?\n[ \t]*" + _JOIN + r"[ \t]*"
                        r"|\\\r?\n[ \t]*)(?=[rRbBuUfF]{0,2}[\"'`])")
_PAREN_CLOSE_RE = re.compile(r"\s{0,80}\)")
_ADJACENT_RE = re.compile(r"[ \t]*(?:\r?\n[ \t]*)?(?=[rRbBuUfF]{0,2}[\"'`])")
_MAX_PIECES = 16


def _joined_strings(text: str, end: int, in_parens: bool) -> tuple[int, str]:
    """A string split into joined literals ('abc' + 'def', ("abc"\n "def")): the end of its last piece and what
    the later pieces hold. The value runs through the last piece and is judged whole, so no part of a secret
    survives and a key cut after its prefix ("ghp_" + "...") still reads as one."""
    rest: list[str] = []
    for _ in range(_MAX_PIECES):
        pos = end + 1  # past the closing quote
        m = _JOINED_RE.match(text, pos) or (_ADJACENT_RE.match(text, pos) if in_parens else None)
        if m is None:
            break
        pm = _STRING_PREFIX_RE.match(text, m.end())
        scanned = _scan_quoted(text, pm.end() if pm else m.end())
        if scanned is None or not scanned[2]:
            break
        end = scanned[1]
        rest.append(text[scanned[0]:end])
    return end, "".join(rest)


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
    paren = _PAREN_STRING_RE.match(text, v)
    if paren is not None:
        v = paren.end()  # password = ("abc"\n "def"): a parenthesised (implicitly joined) string
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
        end, rest = _joined_strings(text, ce, paren is not None) if closed else (ce, "")
        if paren is not None and (not closed or _PAREN_CLOSE_RE.match(text, end + 1) is None):
            return None  # ("a", "b"): a tuple or a call's arguments, not one string
        return (cs, end) if _value_is_secret(key, value + rest, cls) else None
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


# An HTTP header name (RFC 9110 field names as people write them: words joined by hyphens, X-API-Token)
_HEADER_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+")
_HEADER_VALUE_RE = re.compile(r"[^\s\"'\\@]{12,}")


def _tight_header(text: str, ks: int, p: int, key: str) -> bool:
    """``curl -H "X-API-Token:abc..."``, HTTPie's ``X-Api-Key:abc...``: a header written without the space after
    its colon. Only a hyphenated header name with a random-looking value counts, so ``host:port``, times, URLs and
    ``scope::name`` stay what they are, and so does a URL's ``//user:password@`` (the URL rules own it)."""
    if _HEADER_NAME_RE.fullmatch(key) is None or text.startswith("//", max(0, ks - 2)):
        return False
    m = _HEADER_VALUE_RE.match(text, p)
    return m is not None and _looks_secret(m.group())


def _key_at(text: str, stem_start: int, key_end: int) -> tuple[int, str] | None:
    """Grow a key back from its sensitive word: (key start, key without leading dashes)."""
    ks = stem_start
    lim = max(0, ks - 80)
    while ks > lim and text[ks - 1] in _KEY_CHARS:
        ks -= 1
    if ks >= 1 and text[ks - 1] == "\\" and text[ks] in ESCAPE_LETTERS:
        ks += 1  # \nPASSWORD=... inside a JSON string
    raw_key = text[ks:key_end]
    key = raw_key.strip("-.")
    if not key or not (key[0].isalpha() or key[0] == "_"):
        return None
    if ks >= 1 and (text[ks - 1] == "%" or (text[ks - 1] == "{" and ks >= 2 and text[ks - 2] == "$")):
        return None  # ${TOKEN}, %API_KEY%: a use, not an assignment
    return ks, key


def _find_assignments(text: str, low: str, out: list[Candidate]) -> None:
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
        elif m.group("br"):
            continue  # x[password] = ...: an index, not a name
        sep = m.group("sep")
        if sep == ":" and key in _STATUS_WORDS:
            continue  # --- PASS: TestX (go test), PASS: src/x.test.ts (jest)
        p = m.end("sep")
        if sep == "," or before == "$" or m.group("ty"):
            # setProperty("k", "v"), $php = "v", var k string = "v": only a quoted literal is a value
            if (sep == "," and not quoted_key) or (m.group("ty") and sep != "="):
                continue
            r = p
            while r < n and text[r] in " \t":
                r += 1
            if r >= n or text[r] not in "\"'`":
                continue
            if sep == ",":
                scanned = _scan_quoted(text, r)
                after = scanned[1] + 1 if scanned else n
                while after < n and text[after] in " \t":
                    after += 1
                if scanned is None or not scanned[2] or after >= n or text[after] != ")":
                    continue  # only a two-argument call f("K", "v"): not a list or tuple of strings
                b = ks - 2
                while b >= 0 and text[b] in " \t":
                    b -= 1
                if b < 0 or text[b] != "(":
                    continue
            sep = "="
        if sep in ("::=", "?=", ".=", "||=", "<-"):
            sep = "="
        spaced = m.start("sep") > m.end("q" if quote else "t")
        if sep == ":":
            nxt = text[p] if p < n else "\n"
            if not quoted_key and nxt not in " \t\r\n\"'\\" and not _tight_header(text, ks, p, key):
                continue  # YAML needs a space after the colon; this is a URL, a time, a C++ scope...
            r = p
            while r < n and text[r] in " \t":
                r += 1
            am = _ANNOT_RE.match(text, r)
            if am and not quoted_key:  # password: str = "..."
                sep, p = "=", am.end()
        span = _value_span(text, p, key, cls, sep, spaced, quoted_key, ks)
        if span is not None and key.lower() in ("key", "name") and _NAMES_A_VALUE_RE.match(text, span[1]):
            span = None  # <add key="ApiKey" value="...">: this is the name of the pair, the value follows
        if span is not None:
            out.append((span[0], span[1], PRIO_ASSIGN, "assignment"))
            done_until = span[1]
    if "-" in text:
        for m in _CLI_RE.finditer(low):
            if not at_boundary(text, m.start(), "-"):
                continue
            key = text[m.start("k"):m.end("k")].rstrip(".-")
            cls = _classify(key)
            if cls is not None:
                span = _value_span(text, m.end(), key, cls, " ", True)
                if span is not None:
                    out.append((span[0], span[1], PRIO_ASSIGN, "assignment"))
    if "value" in low:
        for m in _PAIR_VALUE_RE.finditer(low):
            vs = m.start() - 9 if low.endswith("parameter", 0, m.start()) else m.start()  # ParameterValue
            if not at_boundary(text, vs):
                continue
            bm = _PAIR_NAME_RE.search(low, max(0, vs - 200), vs)
            if bm is None:
                continue
            key = text[bm.start("k"):bm.end("k")]
            cls = _classify(key)
            if cls is not None:
                span = _value_span(text, m.end(), key, cls, "pair", False)
                if span is not None:
                    out.append((span[0], span[1], PRIO_ASSIGN, "assignment"))


# <password>v</password>, also with the value on a line of its own
_XML_RE = re.compile(r"<(?P<k>[A-Za-z_][A-Za-z0-9_.:-]{0,80})>[ \t]*(?:\r?\n[ \t]*)?(?P<s>[^<\s](?:[^<\n]{0,4094}[^<\s])?)"
                     r"[ \t]*(?:\r?\n[ \t]*)?</(?P=k)>")
# Dockerfile ENV / ARG with a space: ENV API_TOKEN abc...
_DOCKER_ENV_RE = re.compile(r"(?m)^[ \t]*(?:ENV|ARG)[ \t]+(?P<k>[A-Za-z_][A-Za-z0-9_.-]{0,80})[ \t]+(?=[^\s=])")
# Terraform: variable "db_password" { ... default = "..." }
_TF_VAR_RE = re.compile(r'variable[ \t]+"(?P<k>[A-Za-z_][A-Za-z0-9_-]{0,80})"[ \t]*\{[^{}]{0,400}?\bdefault[ \t]*=')
_NAMES_A_VALUE_RE = re.compile(r"""\\?["']?[ \t]+value[ \t]*=""", re.I)
_STATUS_WORDS = frozenset({"PASS", "FAIL", "Pass", "SKIP"})


def _find_xml(text: str, out: list[Candidate]) -> None:
    if "</" not in text:
        return
    for m in _XML_RE.finditer(text):
        cls = _classify(m.group("k").rpartition(":")[2])
        cls = "T" if cls == "E" else cls
        if cls and _value_is_secret(m.group("k"), m.group("s"), cls):
            out.append((m.start("s"), m.end("s"), PRIO_ASSIGN, "assignment"))



def _find_other(text: str, out: list[Candidate]) -> None:
    for gated, pattern, spaced in (("ENV" in text or "ARG" in text, _DOCKER_ENV_RE, False),
                                   ("variable" in text, _TF_VAR_RE, True)):
        if not gated:
            continue
        for m in pattern.finditer(text):
            key = m.group("k")
            cls = _classify(key)
            if cls is None:
                continue
            span = _value_span(text, m.end(), key, cls, "=", spaced)
            if span is not None:
                out.append((span[0], span[1], PRIO_ASSIGN, "assignment"))


def find(text: str, low: str, out: list[Candidate]) -> None:
    _find_assignments(text, low, out)
    _find_xml(text, out)
    _find_other(text, out)
