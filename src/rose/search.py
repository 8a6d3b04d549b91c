"""`rose search`: ranked lessons for a query across both stores, with the path an agent can open."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from rose.store import Layers


@dataclass
class Hit:
    id: str
    title: str
    family: str
    level: int
    scope: str
    gist: str
    path: str
    score: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def search(layers: Layers, query: str, limit: int = 10) -> list[Hit]:
    hits: list[Hit] = []
    for store in layers.require_any():
        store.sync()
        ranked = store.index.search(query, limit=limit)
        rows = {r.id: r for r in store.index.rows("id IN (%s)" % ",".join("?" * len(ranked)),
                                                  [i for i, _ in ranked])} if ranked else {}
        for node_id, score in ranked:
            r = rows.get(node_id)
            if r is not None:
                hits.append(Hit(r.id, r.title, r.family, r.level, store.scope.value, r.gist,
                                str(store.root / r.path), round(score, 4)))
    hits.sort(key=lambda h: -h.score)
    return hits[:limit]
