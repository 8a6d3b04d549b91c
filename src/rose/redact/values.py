"""What a value looks like: the heuristics that tell a literal secret from a word, a reference or a template.

Shared by the keyword rules (``password = ...``), the header rules and the provider checks. Regex-backed so that
long values cost C time, not Python loops.
"""
from __future__ import annotations

import math
import re

from rose.redact.core import PLACEHOLDER_RE

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


