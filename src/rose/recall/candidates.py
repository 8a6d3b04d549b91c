"""Candidate search without a model call: BM25 over every node, fused with dense similarity, mapped to what to serve.

Every node is searched, not only apexes: a lesson whose body names the exact error string is found even when its
compressed apex no longer says it. A hit on a node that is not servable itself (superseded by a compression) is
mapped up to the lesson that should be served, and remembered as the route it was found by.

Ranking and serving ask different things. The rank (reciprocal rank fusion) decides the order a selector reads the
candidates in, and fusion scores depend only on ranks. Whether a candidate is evidence at all rests on its real
scores, kept beside the rank: a lexical hit counts when it holds an exact phrase of the prompt or two selective
words (`IndexRow` evidence, rose.store.index.LexicalHit), a dense hit when its cosine clears the embedder's floor.
A dense hit under the noise floor never enters fusion: a rank earned by the least bad of many unrelated lessons is
no evidence.
"""
from __future__ import annotations

import math
from datetime import datetime, timezone
from enum import Enum

from rose.model import SERVABLE_SQL
from rose.config import RecallSettings
from rose.store import Store
from rose.store.index import IndexRow, LexicalHit
from rose.typedrecord import Record, field

LEXICAL_DEPTH = 50       # how deep each rank list goes before fusion
DENSE_FLOOR = 0.45       # a dense-only match needs this cosine (wordllama: the best wrong lesson clears it on ~25% of
                         # prompts; bench/recall_quality: needed lessons median 0.42, best wrong one 0.39)
RECENCY_BOOST = 0.5      # up to +50% for a lesson used today, halving every recency_half_life_days
IMPORTANCE_SPAN = 0.5    # importance maps to a 0.75x .. 1.25x multiplier: relevance stays primary


class DenseStatus(str, Enum):
    ON = "on"
    OFF = "off"                # embed.provider none, or no model installed
    WARMING = "warming"        # the warm helper is starting; this prompt ran lexical-only
    FAILED = "failed"          # the embedder errored; lexical-only


class Candidate(Record):
    """A servable lesson found by search: its ranks in each list, its evidence, and its fused score."""
    id: str
    store: Store
    row: IndexRow
    lexical_rank: int | None = None   # 1-based, best = 1
    dense_rank: int | None = None
    dense_cos: float | None = None
    bm25: float | None = None         # the real lexical score, beside its rank
    admitted: bool = False            # the lexical hit holds a phrase of the prompt or two selective words
    corroborable: bool = True         # a dense agreement may stand in for its missing lexical evidence
    serve_floor: float = DENSE_FLOOR  # the cosine a dense-only match needs in its space (Floors.serve)
    fused: float = 0.0                # reciprocal rank fusion
    score: float = 0.0                # fused, reweighted by recency and importance
    via: list[str] = field(default_factory=list)   # matched lower nodes that mapped up to this one
    pass_no: int = 1                  # 2 = found by progressive disclosure
    rule: str | None = None           # added because this selection rule points at its folder

    def trace(self) -> dict[str, object]:
        return {"id": self.id, "title": self.row.title, "scope": self.store.scope.value, "level": self.row.level,
                "lexical_rank": self.lexical_rank, "dense_rank": self.dense_rank,
                "dense_cos": None if self.dense_cos is None else round(self.dense_cos, 3),
                "bm25": None if self.bm25 is None else round(self.bm25, 3), "admitted": self.admitted,
                **({} if self.corroborable else {"corroborable": False}),
                "fused": round(self.fused, 5), "score": round(self.score, 5), "via": self.via, "pass": self.pass_no,
                **({"rule": self.rule} if self.rule else {})}


class Floors(Record, frozen=True):
    """Cosines that mean something in one embedder's space: below `noise` a dense hit is not fused at all; a
    dense-only candidate is served without a model only at `serve` or above."""

    noise: float
    serve: float


# per vector space (the embedder's name, with or without its chunking suffix); measured on bench/recall_quality
FLOORS = {"wordllama-l2_supercat-256": Floors(noise=0.25, serve=DENSE_FLOOR)}
DEFAULT_FLOORS = Floors(noise=0.20, serve=0.50)   # another model (an endpoint): the seed's noise floor, a firm bar


def floors_for(model: str | None) -> Floors:
    base = (model or "").split("+", 1)[0]
    return FLOORS.get(base, DEFAULT_FLOORS)


class RankLists(Record):
    """The lexical and dense rankings of one query, before fusion."""
    lexical: list[tuple[Store, str, float]]          # (store, id, bm25) best first
    dense: list[tuple[Store, str, float]]            # (store, id, cosine) best first
    dense_status: DenseStatus
    evidence: dict[tuple[int, str], LexicalHit] = field(default_factory=dict)   # (id(store), node id) -> evidence
    dense_model: str | None = None                   # the vector space the cosines are in (its floors)

    @property
    def floors(self) -> Floors:
        return floors_for(self.dense_model)


def lexical(stores: list[Store], query: str, depth: int = LEXICAL_DEPTH,
            selective_only: bool = False) -> list[tuple[Store, str, float]]:
    """Plain BM25 hits of every store, best first (no evidence counted). `selective_only`: each store is searched
    for the query's words that are selective in it (Index.selective_words), the generic ones left out."""
    hits = [(s, node_id, score) for s in stores
            for node_id, score in s.index.search(" ".join(s.index.selective_words(query)) if selective_only
                                                 else query, limit=depth)]
    hits.sort(key=lambda h: -h[2])
    return hits[:depth]


def lexical_hits(stores: list[Store], query: str, depth: int = LEXICAL_DEPTH) -> list[tuple[Store, LexicalHit]]:
    """BM25 hits of every store with their evidence, best first (across stores by score)."""
    hits = [(s, h) for s in stores for h in s.index.search_evidence(query, limit=depth)]
    hits.sort(key=lambda sh: -sh[1].score)
    return hits[:depth]


def evidence_of(hits: list[tuple[Store, LexicalHit]]) -> dict[tuple[int, str], LexicalHit]:
    return {(id(s), h.id): h for s, h in hits}


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

    for rank, (store, node_id, score) in enumerate(lists.lexical, 1):
        c = entry(store, node_id)
        if c is not None and c.lexical_rank is None:
            c.lexical_rank, c.bm25 = rank, score
            hit = lists.evidence.get((id(store), node_id))
            c.admitted = hit.admitted if hit is not None else True   # no evidence counted: a plain BM25 list
            c.corroborable = hit.corroborable if hit is not None else True
            c.fused += 1.0 / (k + rank)
    noise = lists.floors.noise
    for rank, (store, node_id, cos) in enumerate(lists.dense, start=1):
        if cos < noise:
            break   # best first: the rest is noise too, and a rank among noise is no evidence
        c = entry(store, node_id)
        if c is not None and c.dense_rank is None:
            c.dense_rank, c.dense_cos = rank, cos
            c.fused += settings.dense_weight / (k + rank)

    served: dict[tuple[int, str], Candidate] = {}
    for c in raw.values():
        target = servable(c.store, c.row, rows[id(c.store)]) if map_up else c.row
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
            best.bm25, best.admitted, best.corroborable = c.bm25, c.admitted, c.corroborable
    now = now or datetime.now(timezone.utc)
    for c in served.values():
        c.serve_floor = lists.floors.serve
        c.score = c.fused * _recency(c.row, settings, now) * (1 - IMPORTANCE_SPAN / 2 + IMPORTANCE_SPAN * c.row.importance)
    return sorted(served.values(), key=lambda c: (-c.score, c.id))


def under_noise(stores: list[Store], lists: RankLists, settings: RecallSettings,
                listed: set[tuple[int, str]]) -> list[Candidate]:
    """The dense ranks fusion leaves out (cosine under the noise floor), best first: nearest by meaning and no
    evidence at all. Nothing is served from them; `rose search` lists them last, marked, so a query with little
    evidence still shows the closest lessons instead of a short list."""
    noise = lists.floors.noise
    tail = [(store, node_id, cos, rank) for rank, (store, node_id, cos) in enumerate(lists.dense, start=1)
            if cos < noise and (id(store), node_id) not in listed]
    rows = {id(s): s.index.rows_by_id([i for st, i, _c, _r in tail if st is s]) for s in stores}
    out = []
    for store, node_id, cos, rank in tail:
        row = rows.get(id(store), {}).get(node_id)
        if row is not None:
            weight = settings.dense_weight / (settings.rrf_k + rank)
            out.append(Candidate(node_id, store, row, dense_rank=rank, dense_cos=cos, fused=weight, score=weight,
                                 serve_floor=lists.floors.serve))
    return out


def servable(store: Store, row: IndexRow, cache: dict[str, IndexRow], hops: int = 12) -> IndexRow | None:
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
    """The no-model floor: lexical evidence (below), or a dense match at the serving floor of its space."""
    return lexical_evidence(c) or dense_evidence(c)


def lexical_evidence(c: Candidate) -> bool:
    """An admitted lexical hit (a phrase of the prompt, or two selective words), or a lexical hit the dense model
    also ranks above its noise floor: two independent signals agreeing (bench: recall .80 -> .83, off-topic
    unchanged). Not the agreement when the prompt is mostly words the store has never seen (LexicalHit.corroborable):
    there a shared generic word and a middling cosine are both what any unrelated prompt gets."""
    return c.lexical_rank is not None and (c.admitted or (c.dense_rank is not None and c.corroborable))


def dense_evidence(c: Candidate) -> bool:
    return c.dense_cos is not None and c.dense_cos >= c.serve_floor


def dense_model(embed_settings) -> str | None:
    """The vector space recall's cosines come from, known without loading a model (None: lexical only)."""
    try:
        from rose.embed import embedder_name

        return embedder_name(embed_settings)
    except Exception:  # noqa: BLE001 - only the floors depend on it; the defaults hold
        return None


RULE_EXTRA = 6          # candidates the selection rules may add, in all
RULE_EXTRA_EACH = 3     # ... per folder a rule points at


def from_rule_folders(stores: list[Store], rules, ranked: list[Candidate], found: list[Candidate]) -> list[Candidate]:
    """Candidates from the folders the rules point at (`look_in`) that the search did not hand on: the best ranked
    of them first, then the folder's most used lessons. Whether a rule's condition fits this prompt is the
    selector's judgement; this only puts the lessons it points at in front of it. Bounded by RULE_EXTRA."""
    have = {(id(c.store), c.id) for c in found}
    out: list[Candidate] = []
    for rule in rules:
        for family in rule.look_in:
            mine = [c for c in ranked if c.row.family == family and (id(c.store), c.id) not in have]
            if len(mine) < RULE_EXTRA_EACH:
                taken = {(id(c.store), c.id) for c in mine} | have
                more = []
                for store in stores:   # the folder's most used lessons, a few per store (never the whole folder)
                    top = [r[0] for r in store.index.conn.execute(
                        f"SELECT id FROM nodes WHERE family = ? AND status IN {SERVABLE_SQL}"
                        " ORDER BY use_count DESC, importance DESC, id LIMIT ?", (family, 2 * RULE_EXTRA_EACH))]
                    more += [Candidate(i, store, row) for i, row in store.index.rows_by_id(top).items()
                             if (id(store), i) not in taken]
                mine += sorted(more, key=lambda c: (-c.row.use_count, -c.row.importance, c.id))
            for c in mine[:RULE_EXTRA_EACH]:
                c.rule = rule.id
                have.add((id(c.store), c.id))
                out.append(c)
                if len(out) >= RULE_EXTRA:
                    return out
    return out
