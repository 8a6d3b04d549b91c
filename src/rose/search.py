"""`rose search`: ranked lessons for a query across both stores, with the path an agent can open.

The same fused ranking recall uses (BM25 + dense, reciprocal rank fusion), but over every node as it is: an agent
searching wants the detailed lesson that names its error string, not only the compressed form recall would serve.
Hits with evidence come first (the no-model bar recall serves by: an exact phrase or selective words of the query,
or a cosine at the serving floor). When they are fewer than the limit, the list goes on with the weaker matches,
marked `evidence: false`: the rest of the fused ranking, then the lessons nearest in meaning under the noise floor.
A search is asked for; a short list hides the next-closest lessons from the one who asked (bench_conversations: the
answering turn of an everyday question is often a dense match under the bar). Nothing is served from them.
After them come the cold archive's exact matches (rose.retention.paging: at most two, status `archived`), so a
record retention put away is still found by the words it holds.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rose.store import Layers
from rose.typedrecord import Record, asdict

if TYPE_CHECKING:
    from rose.config import RecallSettings
    from rose.recall.candidates import Candidate, RankLists
    from rose.store import Store


class Hit(Record):
    id: str
    title: str
    family: str
    level: int
    status: str
    scope: str
    gist: str
    path: str
    score: float
    lexical_rank: int | None
    dense_rank: int | None
    evidence: bool = True    # false: a weaker match, listed after every hit with evidence

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def search(layers: Layers, query: str, limit: int = 10) -> list[Hit]:
    from rose.recall.pipeline import rank_lists
    from rose.retention.paging import page

    stores = layers.require_any()
    for store in stores:
        store.sync()
    settings = layers.settings()
    lists = rank_lists(stores, query, settings, hot=False)
    ranked = listed(stores, lists, settings.recall, limit)
    hits = [Hit(c.id, c.row.title, c.row.family, c.row.level, c.row.status, c.store.scope.value, c.row.gist,
                str(c.store.root / c.row.path), round(c.score, 5), c.lexical_rank, c.dense_rank, evidence)
            for c, evidence in ranked]
    return hits + [Hit(p.row.id, p.row.title, p.row.family, p.row.level, p.row.status, p.store.scope.value, p.row.gist,
                       str(p.store.root / p.row.path), 0.0, None, None) for p in page(stores, query)]


def listed(stores: list[Store], lists: RankLists, settings: RecallSettings, limit: int) -> list[tuple[Candidate, bool]]:
    """What a search lists, in order, each with whether it has evidence: the hits recall would count as relevant,
    then the rest of the fused ranking, then (while still short of `limit`) the dense ranks under the noise floor."""
    from rose.recall import candidates

    fused = candidates.fuse(stores, lists, settings, map_up=False)
    # a stable sort: the hits with evidence first, each part in fused order
    ranked = sorted(((c, candidates.relevant_enough(c)) for c in fused), key=lambda pair: not pair[1])
    if len(ranked) < limit:
        seen = {(id(c.store), c.id) for c in fused}
        ranked += [(c, False) for c in candidates.under_noise(stores, lists, settings, seen)]
    return ranked[:limit]
