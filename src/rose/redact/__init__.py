"""Secret redaction: the filter on every path to disk (lessons, transcript digests, events, judge cache).

Secrets never touch disk. The bias is to over-redact: a mangled lesson is recoverable, a leaked key is not.
Each secret is replaced by ``[REDACTED:<kind>]``; for assignments and connection strings only the value is
replaced, so the key name / scheme / user / host survive and the text stays readable::

    password = hunter2                   ->  password = [REDACTED:assignment]
    postgres://app:s3cret@db:5432/app    ->  postgres://app:[REDACTED:password]@db:5432/app
    Authorization: Bearer abc123...      ->  Authorization: Bearer [REDACTED:authorization]

Public API: ``redact(text)``, ``redact_data(obj)``, ``find_secrets(text) -> list[Finding]``, ``Finding``,
``KINDS``, ``PLACEHOLDER_RE``, ``placeholder(kind)``. ``redact`` is idempotent and placeholders never match a
rule. Stdlib only.

The detectors, one module per family, each adding candidate spans (start, end, priority, kind):

* ``providers``: provider tokens by their documented shape, as a data table (prefix, alphabet, length, boundary);
* ``pem``: private keys; ``jwt``: JSON Web Tokens, bare or base64-wrapped;
* ``encoded``: Kubernetes ``kind: Secret`` data (every value is a base64 secret);
* ``urls``: credentials by place in URLs, command lines and HTTP headers, webhook URLs;
* ``keywords``: values assigned to secret-named keys, in every common language and config syntax;
* ``cards``: Luhn-valid card numbers with a network prefix.

Overlapping candidates merge into one span (the highest-priority kind names it); a candidate touching an existing
placeholder is dropped (idempotence). Cost: detectors are literal-gated regex scans or ``str.find`` with no nested
unbounded quantifiers, values capped at 8 KiB, so redaction is linear. Import is cheap: this module loads only
``core``; the detectors and their compiled tables load on the first call (the per-prompt hook never imports it).
"""
from __future__ import annotations

import bisect
from typing import TypeVar, cast

from rose.redact.core import PLACEHOLDER_RE, Candidate, Finding, lower, placeholder

__all__ = ["KINDS", "PLACEHOLDER_RE", "Finding", "find_secrets", "placeholder", "redact", "redact_data",
           "rules_stamp"]

_EXTRA_KINDS = {"private-key", "jwt", "authorization", "bearer-token", "cookie", "assignment", "credit-card",
                "password", "kubernetes-secret"}


_STAMP: list[bytes] = []


def rules_stamp() -> bytes:
    """What this redactor is: a digest of its own source (rules and detectors alike). Text once found to need no
    redaction is known clean only under the same stamp (rose.store.store: a rebuild does not redact it again)."""
    if not _STAMP:
        import hashlib
        import os
        from pathlib import Path

        digest = hashlib.blake2b(digest_size=16)
        sources = sorted(Path(__file__).parent.glob("*.py"))
        for source in sources:
            digest.update(source.name.encode() + b"\x00" + source.read_bytes() + b"\x00")
        # an installation without its sources cannot say which redactor it is: a stamp of this process alone, so
        # nothing is ever known clean across processes there (every file is redacted, as before)
        _STAMP.append(digest.digest() if sources else os.urandom(16))
    return _STAMP[0]


def __getattr__(name: str) -> object:
    if name == "KINDS":  # computed on first use: it needs the detector tables
        from rose.redact import providers, urls
        kinds = tuple(sorted(providers.kinds() | urls.kinds() | _EXTRA_KINDS))
        globals()["KINDS"] = kinds
        return kinds
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_DETECTORS: list[tuple] = []


def _candidates(text: str) -> list[Candidate]:
    if not _DETECTORS:
        from rose.redact import cards, encoded, jwt, keywords, pem, providers, urls
        _DETECTORS.append((cards, encoded, jwt, keywords, pem, providers, urls))
    cards, encoded, jwt, keywords, pem, providers, urls = _DETECTORS[0]
    out: list[Candidate] = []
    low = lower(text)
    providers.find(text, out)
    pem.find(text, out)
    jwt.find(text, out)
    encoded.find(text, out)
    urls.find(text, low, out)
    keywords.find(text, low, out)
    cards.find(text, out)
    return out


def _drop_placeholders(text: str, cands: list[Candidate]) -> list[Candidate]:
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
    merged: list[list] = []
    for s, e, prio, kind in cands:
        if merged and s < merged[-1][1]:
            top = merged[-1]
            top[1] = max(top[1], e)
            if prio > top[2]:
                top[2], top[3] = prio, kind
        else:
            merged.append([s, e, prio, kind])
    return [Finding(kind, s, e) for s, e, _, kind in merged]


# Short texts recur (a lesson's family and tags, a status word): their redaction, a pure function of the text, is
# remembered. Bounded: emptied when full.
_SHORT = 64
_MEMO: dict[str, str] = {}
_MEMO_MAX = 4096


def redact(text: str) -> str:
    """Replace every secret in text with ``[REDACTED:<kind>]``. Idempotent."""
    if len(text) <= _SHORT:
        done = _MEMO.get(text)
        if done is None:
            if len(_MEMO) >= _MEMO_MAX:
                _MEMO.clear()
            done = _MEMO[text] = _redact(text)
        return done
    return _redact(text)


def _redact(text: str) -> str:
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


_T = TypeVar("_T")


def redact_data(obj: _T) -> _T:
    """A copy of obj with every string redacted, dict keys included, recursing into dicts, lists, tuples and
    sets. A string under a strongly sensitive key (``{"password": "hunter2"}``) is replaced whole, as is the
    value of a ``{"name": "DB_PASSWORD", "value": ...}`` pair. Non-string leaves are returned unchanged."""
    from rose.redact.keywords import _classify, _value_is_secret
    return cast(_T, _redact_obj(obj, None, None, _classify, _value_is_secret))  # same shape, strings redacted


def _redact_obj(obj: object, key: str | None, cls: str | None, classify, is_secret) -> object:
    if isinstance(obj, str):
        if cls == "P" and key is not None and is_secret(key, obj, "P"):
            return placeholder("assignment")
        return redact(obj)
    if isinstance(obj, dict):
        pair_key: str | None = None
        for nk in _PAIR_NAME_KEYS:
            if isinstance(obj.get(nk), str) and any(vk in obj for vk in _PAIR_VALUE_KEYS):
                pair_key = obj[nk]
                break
        out: dict = {}
        for k, v in obj.items():
            if isinstance(k, str):
                ctx_key = pair_key if pair_key is not None and k in _PAIR_VALUE_KEYS else k
                if "[REDACTED:" in ctx_key:  # idempotence: a redacted key is classed by what is left of it
                    ctx_key = PLACEHOLDER_RE.sub("", ctx_key)
                child_cls = classify(ctx_key)
                child_cls = "P" if child_cls == "E" else child_cls
                new_k: object = redact(k)
                if new_k in out:
                    i = 2
                    while f"{new_k}#{i}" in out:
                        i += 1
                    new_k = f"{new_k}#{i}"
            else:
                ctx_key, child_cls, new_k = None, None, k
            out[new_k] = _redact_obj(v, ctx_key, child_cls if child_cls == "P" else None, classify, is_secret)
        return out
    if isinstance(obj, list):
        return [_redact_obj(x, key, cls, classify, is_secret) for x in obj]
    if isinstance(obj, tuple):
        items = [_redact_obj(x, key, cls, classify, is_secret) for x in obj]
        if hasattr(obj, "_fields"):
            return type(obj)(*items)  # type: ignore[arg-type]  # a namedtuple takes its fields positionally
        return tuple(items)
    if isinstance(obj, (set, frozenset)):
        return type(obj)(_redact_obj(x, key, cls, classify, is_secret) for x in obj)
    return obj
