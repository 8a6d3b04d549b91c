"""Paging cold records into recall: an exact lexical match brings at most two back into consideration.

Cold records are never embedded and never in the hot full-text index, so dense and lexical recall do not see them.
Recall (rose.recall.pipeline) asks here once per prompt: the cold archive's own index (title, tags and preview, no
stemming) is searched, and a record counts only as an exact match (rules.cold_match: two or more distinct query
words held verbatim, or its whole title in the prompt). At most COLD_PAGE_MAX records come back per recall, best
match first. A paged record competes like any candidate (it is served only if the selector and the budget keep it);
if the session then uses it, the learner promotes it back to the hot store before crediting the use
(rose.learn.attribute). Detail archived with its lesson is not paged on its own: it is reached through that lesson.
A record archived because negative credit brought it to the importance floor is not paged at all: the evidence says
it misleads, and paging it back would let it mislead again (`rose restore` still brings it back by hand).
"""
from __future__ import annotations


from rose.model import SERVABLE
from rose.retention import rules
from rose.typedrecord import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rose.store import Store
    from rose.store.index import IndexRow

SEARCH_DEPTH = 20   # cold full-text hits looked at per store before the exact-match rule picks
SERVABLE_VALUES = frozenset(s.value for s in SERVABLE)   # rose.model.SERVABLE, as the index stores it


class Paged(Record):
    """A cold record paged into recall, with its match score and why it matched."""
    store: Store
    row: IndexRow
    match: int        # rules.cold_match's score
    reason: str
    bm25: float       # the cold index's own score (higher is better; not on the hot index's scale)


def page(stores: list[Store], query: str, exclude: set[str] | frozenset[str] = frozenset(),
         limit: int = rules.COLD_PAGE_MAX) -> list[Paged]:
    hits: list[tuple[int, float, Store, IndexRow]] = []
    for store in stores:
        found = store.index.cold_search(query, limit=SEARCH_DEPTH)
        if not found:
            continue
        rows = store.index.rows_by_id([i for i, _t, _s in found])
        for node_id, text, bm25 in found:
            row = rows.get(node_id)
            if row is None or not row.cold or row.cold_from not in SERVABLE_VALUES or node_id in exclude \
                    or rules.archive_now(row.importance):
                continue
            match = rules.cold_match(query, row.title, text)
            if match:
                hits.append((match, bm25, store, row))
    hits.sort(key=lambda h: (-h[0], -h[1], h[3].id))
    out = []
    for match, bm25, store, row in hits[:limit]:
        why = "its title is in the prompt" if match >= 10 else f"{match} prompt words, verbatim"
        out.append(Paged(store, row, match, f"cold archive, an exact match ({why})", bm25))
    return out
