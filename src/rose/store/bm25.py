"""What FTS5's bm25 can give: a ceiling on any one query word's share of a lesson's score, so a top-k query can
leave out the lessons that provably cannot reach it (the prompt path's lexical passes, rose.store.index).

FTS5 scores a row (fts5_aux.c, fts5Bm25Function) as the sum over the query's phrases of
    IDF * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl)),    IDF = log((N - n + 0.5) / (n + 0.5)), raised to 1e-6
where f is the phrase's column-weighted count in the row, D the row's length, N the rows of the table and n the rows
holding the phrase. With non-negative weights the middle factor stays below k1 + 1 for every f and D, so no row gets
more than (k1 + 1) * IDF from one phrase, and a row holding none of some phrases gets nothing from them. A lesson
that holds only the "common" words of a query therefore scores below the sum of their ceilings; when the k-th best
of the lessons holding some other word already beats that sum, the common-only lessons cannot be among the best k,
and ranking the others alone (the same MATCH, so the same IDFs and the same scores) gives the same answer.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

K1 = 1.2               # fts5_aux.c's k1 (b = 0.75 does not enter the ceiling)
IDF_FLOOR = 1e-6       # fts5_aux.c raises an IDF at or below zero to this
# a ceiling is compared with scores SQLite computed in its own order of additions: beaten only by a clear margin
MARGIN = 1e-9
AVERAGES_ROWID = 1     # the %_data record where FTS5 keeps its row count, then each column's token total
# Leaving lessons out is not free: the rare words' lessons are set aside first, then each row the whole query matches
# is looked up among them, about half the cost of scoring a row (at 50,000 generated lessons: a query whose rare
# words hold three quarters of its lessons ranked twice as slowly filtered). It pays when the rare words' holders
# are below this share of all the words' holders.
PRUNE_SHARE = 0.55


def ceiling(rows: int, holders: int) -> float:
    """More than one phrase can add to any row's bm25: (k1 + 1) * its IDF. `holders` may be a lower bound of the
    rows holding it (the IDF only falls as they grow); `rows` must be FTS5's own count (row_count)."""
    spare = rows - holders + 0.5
    if spare <= 0:
        return math.inf   # counts that do not fit the table: no bound (nothing is left out)
    idf = math.log(spare / (holders + 0.5))
    return (K1 + 1.0) * (idf if idf > 0.0 else IDF_FLOOR)


def beats(score: float, bound: float) -> bool:
    """Whether a score (bm25 as a positive number) is clearly above a ceiling sum."""
    return score > bound * (1.0 + MARGIN) + MARGIN


def row_count(averages: bytes) -> int:
    """FTS5's row count, the first varint of its averages record (SQLite's varint: 7 bits a byte, high bit = more,
    a ninth byte of 8 bits). Raises ValueError on a record too short to hold one."""
    value = 0
    for i in range(9):
        if i >= len(averages):
            raise ValueError("truncated FTS5 averages record")
        byte = averages[i]
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value
    raise ValueError("unreachable")


def split(words: Sequence[str], holders: Mapping[str, int], limit: int, rows: int) -> tuple[list[str], list[str]]:
    """(rare, common): the words whose lessons are ranked, and the commonest words, whose lessons holding nothing
    else are left out if their ceilings allow; ([], []) when nothing is worth leaving out. The guess at the
    `limit`-th best score is the ceiling of the word at which the rarest words' holders, counted rarest first, fill
    the list (the lesson in that place likely holds it, and a word or two besides): the commonest words are set
    aside while their ceilings together stay below it. `beats` then checks: a guess too high costs a second query,
    never a different answer. A word no lesson holds is neither."""
    held = sorted((w for w in words if holders[w] > 0), key=holders.__getitem__)
    filled = 0
    reach = 0.0
    for word in held:
        filled += holders[word]
        if filled >= limit:
            reach = ceiling(rows, holders[word])
            break
    common: list[str] = []
    total = 0.0
    for word in reversed(held):
        total += ceiling(rows, holders[word])
        if total >= reach:
            break
        common.append(word)
    rare = [w for w in held if w not in common]
    if not common or not rare:
        return [], []
    return rare, common


def pays(rare_holders: int, common_holders: int) -> bool:
    """Whether ranking only the lessons holding a rare word costs less than ranking every matching lesson (see
    PRUNE_SHARE); the counts may be lower bounds of the common words' holders (a bound that says no is only slower,
    never a different answer: both rankings are exact)."""
    return rare_holders < PRUNE_SHARE * (rare_holders + common_holders)


def common_needed(rare_holders: int) -> int:
    """The fewest holders of the common words at which leaving them out pays: how far to count them."""
    return int(rare_holders * (1.0 - PRUNE_SHARE) / PRUNE_SHARE) + 1


def left_out(common: Sequence[str], holders: Mapping[str, int], rows: int, floor: float) -> list[str]:
    """The commonest of `common` whose ceilings together stay clearly below `floor` (a k-th best score already
    reached): the lessons holding only those cannot reach the top k."""
    out: list[str] = []
    total = 0.0
    for word in sorted(common, key=lambda w: -holders[w]):
        more = total + ceiling(rows, holders[word])
        if not beats(floor, more):
            break
        out.append(word)
        total = more
    return out
