"""Deriving a lesson's routing view from its text: a title and a one-line gist when nobody gave them."""
from __future__ import annotations

import re

TITLE_MAX_CHARS = 80
GIST_MAX_CHARS = 160
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut.rstrip(",;:-") + "…"


def derive_title(text: str) -> str:
    first = next((line.strip(" #*-\t") for line in text.splitlines() if line.strip(" #*-\t")), "")
    return _clip(first, TITLE_MAX_CHARS) or "Untitled lesson"


def derive_gist(text: str) -> str:
    flat = " ".join(text.split())
    first_sentence = _SENTENCE_END.split(flat, 1)[0]
    return _clip(first_sentence, GIST_MAX_CHARS)
