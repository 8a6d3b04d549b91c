"""The query stop-word list: words too common to say what a prompt is about. One list for every search (the hot
index's BM25, the cold archive's exact matches); most of lexical search's gain over plain BM25 comes from it.
Beside it, the table of everyday English words lexical evidence tells a store's terms apart with (`everyday`)."""
from __future__ import annotations

from functools import cache
from pathlib import Path

STOPWORDS = frozenset("""
    a about above after again against all am an and any are as at be because been before being below between both
    but by can could did do does doing don done down during each few for from further had has have having he her
    here hers him his how i if in into is it its itself just let me more most my no nor not now of off on once only
    or other our ours out over own please same she should so some such than that the their them then there these
    they this those through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself can't won't i'm it's let's need want make get got use using used also
""".split())

EVERYDAY_FILE = Path(__file__).with_name("data") / "everyday_en.txt"


@cache
def everyday() -> frozenset[str]:
    """The most common words of general English (rose/data/everyday_en.txt; its source and licence in the README
    beside it). A word outside it that a store holds is a term a topic can be recognised by; a prompt that shares only
    everyday words with the store is most likely about something else. Read on first use, then kept (the warm helper
    keeps it across prompts)."""
    # one word a line: split() reads the same set as stripping each line, in about half the time (every prompt
    # answered in its own process reads it)
    return frozenset(EVERYDAY_FILE.read_text(encoding="utf-8").split())
