"""What every detector shares: the finding type, placeholders, rule priorities and text helpers.

Kept tiny and free of rule tables so that ``import rose.redact`` costs almost nothing: the detector modules (and
their compiled patterns) load on the first call, never on import.
"""
from __future__ import annotations

import re
from collections.abc import Iterable


class Finding:
    """One secret: what kind, and the half-open span ``text[start:end]`` that ``redact`` replaces. Immutable.
    (A hand-written class, not a dataclass: importing ``dataclasses`` would triple this package's import time.)"""

    __slots__ = ("end", "kind", "start")
    kind: str
    start: int
    end: int

    def __init__(self, kind: str, start: int, end: int) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Finding is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Finding is immutable: cannot delete {name!r}")

    def _key(self) -> tuple[str, int, int]:
        return (self.kind, self.start, self.end)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if isinstance(other, Finding) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Finding(kind={self.kind!r}, start={self.start}, end={self.end})"


PLACEHOLDER_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


# Priorities decide the kind shown when several rules cover overlapping text (the spans are merged).
PRIO_PROVIDER = 100
PRIO_KEY = 95
PRIO_JWT = 90
PRIO_CONTEXT = 85
PRIO_PASSWORD = 80
PRIO_ENCODED = 70
PRIO_AUTH = 60
PRIO_COOKIE = 55
PRIO_BEARER = 50
PRIO_ASSIGN = 40
PRIO_CARD = 30

Candidate = tuple[int, int, int, str]  # start, end, priority, kind

WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
ESCAPE_LETTERS = frozenset("nrtbf")
_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}

Q = r"""(?:\\?["'])"""  # an optional-escape quote: " ' \" \'


def at_boundary(text: str, pos: int, also: str = "") -> bool:
    """True when text[pos] starts a token: no word char (nor one of ``also``) before it. A JSON escape such
    as ``\\n`` counts as a break, so ``\\nghp_...`` inside a JSON string is still found."""
    if pos == 0:
        return True
    prev = text[pos - 1]
    if prev not in WORD_CHARS:
        return prev not in also
    return prev in ESCAPE_LETTERS and pos >= 2 and text[pos - 2] == "\\"


def lower(text: str) -> str:
    """A lowercase copy with the same indices as text (str.lower can grow a few non-ASCII characters)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


def trie_pattern(words: Iterable[str]) -> str:
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
    alts = [re.escape(c) + trie_pattern(rest) for c, rest in sorted(groups.items())]
    body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
    return "(?:" + body + ")?" if optional else body


_EOL_RE = re.compile(r"\n|\\[nr]")


def line_end(text: str, pos: int, limit: int = 4096) -> int:
    """Index of the end of the line containing pos (real newline or a JSON-escaped \\n / \\r), at most limit on."""
    stop = min(len(text), pos + limit)
    m = _EOL_RE.search(text, pos, stop)
    return m.start() if m else stop
