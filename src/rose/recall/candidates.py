"""Candidate search without a model call: BM25 over every node, fused with dense similarity, mapped to what to serve.

Every node is searched, not only apexes: a lesson whose body names the exact error string is found even when its
compressed apex no longer says it. A hit on a node that is not servable itself (superseded by a compression) is
mapped up to the lesson that should be served, and remembered as the route it was found by.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum

from rose.config import RecallSettings
from rose.store import Store
from rose.store.index import IndexRow

LEXICAL_DEPTH = 50       # how deep each rank list goes before fusion
DENSE_FLOOR = 0.45       # a dense-only match needs this cosine: the best wrong lesson clears it on ~25% of prompts
                         # (bench/recall_quality: needed lessons median 0.42, best wrong one 0.39)
RECENCY_BOOST = 0.5      # up to +50% for a lesson used today, halving every recency_half_life_days
IMPORTANCE_SPAN = 0.5    # importance maps to a 0.75x .. 1.25x multiplier: relevance stays primary


class DenseStatus(str, Enum):
    ON = "on"
    OFF = "off"                # embed.provider none, or no model installed
    WARMING = "warming"        # the warm helper is starting; this prompt ran lexical-only
    FAILED = "failed"          # the embedder errored; lexical-only


@dataclass
class Candidate:
    id: str
    store: Store
    row: IndexRow
    lexical_rank: int | None = None   # 1-based, best = 1
    dense_rank: int | None = None
    dense_cos: float | None = None
    fused: float = 0.0                # reciprocal rank fusion
    score: float = 0.0                # fused, reweighted by recency and importance
    via: list[str] = field(default_factory=list)   # matched lower nodes that mapped up to this one
    pass_no: int = 1                  # 2 = found by progressive disclosure

    def trace(self) -> dict[str, object]:
        return {"id": self.id, "title": self.row.title, "scope": self.store.scope.value, "level": self.row.level,
                "lexical_rank": self.lexical_rank, "dense_rank": self.dense_rank,
                "dense_cos": None if self.dense_cos is None else round(self.dense_cos, 3),
                "fused": round(self.fused, 5), "score": round(self.score, 5), "via": self.via, "pass": self.pass_no}


@dataclass
class RankLists:
    lexical: list[tuple[Store, str, float]]          # (store, id, bm25) best first
    dense: list[tuple[Store, str, float]]            # (store, id, cosine) best first
    dense_status: DenseStatus


def lexical(stores: list[Store], query: str, depth: int = LEXICAL_DEPTH) -> list[tuple[Store, str, float]]:
    hits = [(s, node_id, score) for s in stores for node_id, score in s.index.search(query, limit=depth)]
    hits.sort(key=lambda h: -h[2])
    return hits[:depth]


def fuse(stores: list[Store], lists: RankLists, settings: RecallSettings, now: datetime | None = None,
         exclude: set[str] | None = None, map_up: bool = True) -> list[Candidate]:
    """RRF over the two rank lists, mapped to servable nodes, reweighted; best first."""
    k = settings.rrf_k
    raw: dict[tuple[int, str], Candidate] = {}
    rows = {id(s): s.index.rows_by_id([i for st, i, _ in lists.lexical + lists.dense if st is s]) for s in stores}

    def entry(store: Store, node_id: str) -> Candidate | None:
        row = rows[id(store)].get(node_id)
        if row is None:
            return None
        return raw.setdefault((id(store), node_id), Candidate(node_id, store, row))

    for rank, (store, node_id, _score) in enumerate(lists.lexical, 1):
        c = entry(store, node_id)
        if c is not None and c.lexical_rank is None:
            c.lexical_rank = rank
            c.fused += 1.0 / (k + rank)
    for rank, (store, node_id, cos) in enumerate(lists.dense, 1):
        c = entry(store, node_id)
        if c is not None and c.dense_rank is None:
            c.dense_rank, c.dense_cos = rank, cos
            c.fused += settings.dense_weight / (k + rank)

    served: dict[tuple[int, str], Candidate] = {}
    for c in raw.values():
        target = _servable(c.store, c.row, rows[id(c.store)]) if map_up else c.row
        if target is None or (exclude and target.id in exclude):
            continue
        key = (id(c.store), target.id)
        best = served.get(key)
        if best is None:
            best = served[key] = Candidate(target.id, c.store, target)
        if c.id != target.id:
            best.via.append(c.id)
        # the target inherits its best route's evidence
        if c.fused > best.fused:
            best.fused = c.fused
            best.lexical_rank, best.dense_rank, best.dense_cos = c.lexical_rank, c.dense_rank, c.dense_cos
    now = now or datetime.now(timezone.utc)
    for c in served.values():
        c.score = c.fused * _recency(c.row, settings, now) * (1 - IMPORTANCE_SPAN / 2 + IMPORTANCE_SPAN * c.row.importance)
    return sorted(served.values(), key=lambda c: (-c.score, c.id))


def _servable(store: Store, row: IndexRow, cache: dict[str, IndexRow], hops: int = 12) -> IndexRow | None:
    """The node to serve for a hit: itself if servable, else its nearest servable ancestor (up the parents)."""
    frontier = [row]
    seen = {row.id}
    for _ in range(hops):
        nxt = []
        for r in frontier:
            if r.servable:
                return r
            if r.status == "archived":
                continue
            missing = [p for p in r.parents if p not in cache]
            if missing:
                cache.update(store.index.rows_by_id(missing))
            nxt += [cache[p] for p in r.parents if p in cache and p not in seen]
            seen.update(r.parents)
        if not nxt:
            return None
        # prefer the most concrete servable ancestor: a compression parent before a merge grandparent
        frontier = sorted(nxt, key=lambda r: r.level)
    return None


def _recency(row: IndexRow, settings: RecallSettings, now: datetime) -> float:
    if not row.last_used:
        return 1.0
    try:
        when = datetime.fromisoformat(row.last_used.replace("Z", "+00:00"))
    except ValueError:
        return 1.0
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    age_days = max(0.0, (now - when).total_seconds() / 86400)
    return 1.0 + RECENCY_BOOST * math.pow(0.5, age_days / max(settings.recency_half_life_days, 1e-6))


def relevant_enough(c: Candidate) -> bool:
    """The no-model floor: a lexical match on a content word, or a dense match above the noise floor."""
    return c.lexical_rank is not None or (c.dense_cos is not None and c.dense_cos >= DENSE_FLOOR)
