"""The query stop-word list: words too common to say what a prompt is about. One list for every search (the hot
index's BM25, the cold archive's exact matches); most of lexical search's gain over plain BM25 comes from it.
Beside it, the table of everyday English words lexical evidence tells a store's terms apart with (`everyday`), and
the table of everyday multiword expressions that takes a term's word out of its technical sense (`collocated`)."""
from __future__ import annotations

from functools import cache
from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:   # typing is not imported to run (the prompt path reads this module)
    from collections.abc import Callable

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


COLLOCATIONS_FILE = Path(__file__).with_name("data") / "collocations_en.txt"
COLLOCATION_WORDS = (2, 3)   # the lengths of the table's expressions


@cache
def _collocations() -> bytes:
    """The table of everyday multiword expressions (rose/data/collocations_en.txt, from WordNet 3.0; how it is made
    and its licence in the README beside it), one a line, sorted, read as bytes: a lookup is a binary search over
    them, so a prompt answered in its own process pays one file read (about 0.5 MB), not a set of 37,000 strings."""
    return b"\n" + COLLOCATIONS_FILE.read_bytes()


def is_collocation(phrase: str) -> bool:
    """Whether `phrase` (lower-case words, one space apart) is a line of the table. A binary search on byte offsets:
    each probe reads the line that holds the midpoint."""
    data = _collocations()
    key = phrase.encode("utf-8")
    lo, hi = 0, len(data)            # invariant: every line starting before lo sorts below key, none at hi or after
    while lo < hi:
        mid = (lo + hi) // 2
        start = data.rfind(b"\n", 0, mid + 1) + 1
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line = data[start:end]
        if line == key:
            return True
        if line < key:
            lo = end + 1
        else:
            hi = start - 1 if start > 0 else 0
            if hi <= lo:
                break
    return False


def _singular(word: str) -> str:
    """A plural's likely base ("browns" -> "brown", "boxes" -> "box"): WordNet lists the base form only."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def collocations_around(tokens: list[str], i: int) -> list[str]:
    """The expressions of the table that the word at `tokens[i]` stands inside ("price tag" for "tag" in "the price
    tag fell off"), each as the table spells it (its last word's plural taken as the base: "hash browns")."""
    found: list[str] = []
    for n in COLLOCATION_WORDS:
        for first in range(max(0, i - n + 1), min(i, len(tokens) - n) + 1):
            window = tokens[first:first + n]
            if any(w in STOPWORDS or len(w) < 2 or not w.isalpha() for w in window):
                continue
            for last in dict.fromkeys((window[-1], _singular(window[-1]))):
                phrase = " ".join([*window[:-1], last])
                if is_collocation(phrase) and phrase not in found:
                    found.append(phrase)
    return found


def collocated(word: str, tokens: list[str], store_holds: Callable[[str], bool]) -> bool:
    """Whether every use of `word` in a prompt (`tokens`: its words in order, lower case) stands inside an everyday
    multiword expression of the table that the store does not hold as a phrase itself: "tag" in "the price tag fell
    off a gift", "limit" in "the speed limit on the motorway". Such a word is no term of the store there, however
    technical its other senses. An expression some lesson holds ("time zone" beside a timestamp lesson) is the
    store's own collocation and keeps its words; `store_holds` is asked only about expressions the table lists."""
    at = [i for i, t in enumerate(tokens) if t == word]
    if not at:
        return False
    for i in at:
        if not any(not store_holds(phrase) for phrase in collocations_around(tokens, i)):
            return False
    return True
