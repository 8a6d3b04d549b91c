"""`rose search`: ranked lessons for a query across both stores, with the path an agent can open.

The same fused ranking recall uses (BM25 + dense, reciprocal rank fusion), but over every node as it is: an agent
searching wants the detailed lesson that names its error string, not only the compressed form recall would serve.
After them come the cold archive's exact matches (rose.retention.paging: at most two, status `archived`), so a
record retention put away is still found by the words it holds.
"""
from __future__ import annotations

from rose.store import Layers
from rose.typedrecord import Record, asdict


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

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def search(layers: Layers, query: str, limit: int = 10) -> list[Hit]:
    from rose.recall import candidates
    from rose.recall.pipeline import rank_lists
    from rose.retention.paging import page

    stores = layers.require_any()
    for store in stores:
        store.sync()
    settings = layers.settings()
    lists = rank_lists(stores, query, settings, hot=False)
    ranked = [c for c in candidates.fuse(stores, lists, settings.recall, map_up=False)
              if candidates.relevant_enough(c)]
    hits = [Hit(c.id, c.row.title, c.row.family, c.row.level, c.row.status, c.store.scope.value, c.row.gist,
                str(c.store.root / c.row.path), round(c.score, 5), c.lexical_rank, c.dense_rank)
            for c in ranked[:limit]]
    return hits + [Hit(p.row.id, p.row.title, p.row.family, p.row.level, p.row.status, p.store.scope.value, p.row.gist,
                       str(p.store.root / p.row.path), 0.0, None, None) for p in page(stores, query)]
