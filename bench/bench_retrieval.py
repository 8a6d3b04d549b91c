#!/usr/bin/env python3
"""Retrieval quality of recall's no-model candidate search on a labelled set: lexical vs dense vs fused.

    .venv/bin/python bench/bench_retrieval.py                       defaults (RecallSettings, BM25_WEIGHTS)
    .venv/bin/python bench/bench_retrieval.py --dense-weight 0.3 --rrf-k 20
    .venv/bin/python bench/bench_retrieval.py --bm25-weights 1,1,1,1   lexical with other column weights (bench-only)
    .venv/bin/python bench/bench_retrieval.py --sweep               + weight x k grid and bench-only variants

The set is bench/recall_quality/ (lessons.jsonl, prompts.jsonl; see its README). A temporary store is built with
Store.create + save_many, vectors come from Store.embed_missing with the offline StaticEmbedder (wordllama), and
every prompt is ranked three ways, each as recall does it:

    lexical   candidates.lexical([store], prompt)                   FTS5 BM25, porter, depth LEXICAL_DEPTH
    dense     cosine of the query vector against every lesson        = rose.embed.dense ranking, depth LEXICAL_DEPTH
    fused     candidates.fuse([store], RankLists(lexical, dense, ON), RecallSettings(...))

Metrics: recall@5 and recall@20 (share of a prompt's needed lessons in the top k; 20 = RecallSettings.candidates,
what a selector is handed), MRR (1 / rank of the first needed lesson, 0 when absent), for all prompts, the `named`
ones and the `unnamed` ones (no content word shared with the title, gist or tags of what they need). The 95%
intervals are a paired bootstrap over prompts. "Served" rows are what the no-model hybrid selector would inject:
the fused top `candidates` filtered by relevant_enough, at most 6 (recall of needed lessons, mean number served,
precision). The cosine section compares needed and not-needed lessons, to choose DENSE_FLOOR.

Everything marked bench-only (other BM25 column weights, a dense floor or z-score inside fusion, score fusion, a
relative gate for the hybrid selector) is implemented in this file; nothing under src/ is changed.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "bench" / "recall_quality"
sys.path.insert(0, str(REPO / "src"))

from rose.config import RecallSettings  # noqa: E402
from rose.model import Node, Scope  # noqa: E402
from rose.recall import candidates as cand  # noqa: E402
from rose.store import Store  # noqa: E402
from rose.store.index import BM25_WEIGHTS, fts_query  # noqa: E402

Ranking = list[str]  # lesson ids, best first
Hits = list[tuple[Store, str, float]]


@dataclass
class Query:
    id: str
    text: str
    needs: set[str]
    unnamed: bool
    lexical: Hits            # as recall sees it (depth LEXICAL_DEPTH)
    dense: Hits              # top LEXICAL_DEPTH by cosine, as recall sees it
    cos: dict[str, float]    # cosine of every lesson (for the distribution and z-scores)


# -- the set and the store --------------------------------------------------------------------------------------
def load() -> tuple[list[dict], list[dict]]:
    lessons = [json.loads(line) for line in open(DATA / "lessons.jsonl", encoding="utf-8")]
    prompts = [json.loads(line) for line in open(DATA / "prompts.jsonl", encoding="utf-8")]
    return lessons, prompts


def build_store(root: Path, lessons: list[dict]) -> Store:
    store = Store.create(root, Scope.PROJECT)
    nodes = [Node(id=x["id"], family=x["family"], title=x["title"], body=x["body"], gist=x["gist"],
                  tags=list(x["tags"])) for x in lessons]
    store.save_many(nodes)
    changed = [n.id for n, x in zip(nodes, lessons) if (n.title, n.gist, n.body) != (x["title"], x["gist"], x["body"])]
    if changed:  # save_many redacts in place: a redacted lesson is not the text its labels were written for
        print(f"warning: redaction changed {len(changed)} lesson(s): {changed[:5]}", file=sys.stderr)
    return store


def rank_all(store: Store, embedder, prompts: list[dict], n_lessons: int) -> tuple[list[Query], dict[str, float]]:
    from rose.embed.dense import VectorTable

    table = VectorTable(store.index_db_path, embedder.name)  # what rank_in_process does, without reopening per query
    timing = {"lexical": 0.0, "dense": 0.0}
    out = []
    try:
        for p in prompts:
            t0 = time.perf_counter()
            lex = cand.lexical([store], p["prompt"])
            t1 = time.perf_counter()
            [qvec] = embedder.embed([p["prompt"]])
            full = table.rank(qvec, n_lessons)
            t2 = time.perf_counter()
            timing["lexical"] += t1 - t0
            timing["dense"] += t2 - t1
            dense = [(store, i, c) for i, c in full[: cand.LEXICAL_DEPTH]]
            out.append(Query(p["id"], p["prompt"], set(p["needs"]), bool(p["unnamed"]), lex, dense, dict(full)))
    finally:
        table.close()
    return out, timing


def lexical_with_weights(store: Store, text: str, weights: tuple[float, ...]) -> Hits:
    """Bench-only: Index.search with other BM25 column weights (title, gist, tags, body); same query, same depth."""
    q = fts_query(text)
    if not q:
        return []
    w = ", ".join(str(x) for x in (0.0, *weights))
    sql = f"SELECT id, bm25(nodes_fts, {w}) AS s FROM nodes_fts WHERE nodes_fts MATCH ? ORDER BY s LIMIT ?"
    return [(store, r[0], -r[1]) for r in store.index.conn.execute(sql, (q, cand.LEXICAL_DEPTH))]


# -- rankings ---------------------------------------------------------------------------------------------------
def lexical_ranking(q: Query) -> Ranking:
    return [i for _s, i, _ in q.lexical]


def dense_ranking(q: Query) -> Ranking:
    return [i for _s, i, _ in q.dense]


def fuse(store: Store, q: Query, settings: RecallSettings) -> list[cand.Candidate]:
    lists = cand.RankLists(q.lexical, q.dense, cand.DenseStatus.ON)
    return cand.fuse([store], lists, settings, map_up=False)


def fused_ranking(store: Store, q: Query, settings: RecallSettings) -> Ranking:
    return [c.id for c in fuse(store, q, settings)]


def hybrid_served(store: Store, q: Query, settings: RecallSettings, floor: float | None = None,
                  relative: float = 0.0) -> Ranking:
    """What selectors.hybrid serves: fused top `candidates`, relevant_enough, at most HYBRID_MAX_LESSONS.

    Bench-only knobs: `floor` replaces DENSE_FLOOR in relevant_enough; `relative` also drops candidates whose score
    is below that fraction of the best candidate's.
    """
    from rose.recall.selectors import HYBRID_MAX_LESSONS, hybrid

    found = fuse(store, q, settings)[: settings.candidates]
    if floor is None and not relative:  # the real selector, exactly as recall runs it
        return [ch.id for ch in hybrid(found).chosen]
    if floor is None:
        ok = [c for c in found if cand.relevant_enough(c)]
    else:
        ok = [c for c in found if c.lexical_rank is not None or (c.dense_cos or 0) >= floor]
    if relative and found:
        ok = [c for c in ok if c.score >= relative * found[0].score]
    return [c.id for c in ok][:HYBRID_MAX_LESSONS]


def rrf_gated_ranking(q: Query, k: int, weight: float, floor: float | None = None,
                      z_floor: float | None = None) -> Ranking:
    """Bench-only: RRF where a dense entry votes only if its cosine >= floor (absolute) or its z-score within this
    query's cosines >= z_floor (relative: how far above this query's typical lesson it stands)."""
    score: dict[str, float] = {}
    for rank, (_s, i, _b) in enumerate(q.lexical, 1):
        score[i] = score.get(i, 0.0) + 1.0 / (k + rank)
    mu, sd = _cos_stats(q)
    for rank, (_s, i, c) in enumerate(q.dense, 1):
        if floor is not None and c < floor:
            continue
        if z_floor is not None and (c - mu) / sd < z_floor:
            continue
        score[i] = score.get(i, 0.0) + weight / (k + rank)
    return sorted(score, key=lambda i: (-score[i], i))


def score_fusion_ranking(q: Query, weight: float, z_floor: float) -> Ranking:
    """Bench-only: BM25 / best BM25 of the query, plus weight * (z - z_floor) for dense entries above z_floor."""
    score: dict[str, float] = {}
    if q.lexical:
        top = max(b for _s, _i, b in q.lexical) or 1.0
        for _s, i, b in q.lexical:
            score[i] = b / top
    mu, sd = _cos_stats(q)
    for _s, i, c in q.dense:
        z = (c - mu) / sd
        if z > z_floor:
            score[i] = score.get(i, 0.0) + weight * (z - z_floor)
    return sorted(score, key=lambda i: (-score[i], i))


def _cos_stats(q: Query) -> tuple[float, float]:
    vals = list(q.cos.values())
    return statistics.fmean(vals), (statistics.pstdev(vals) or 1.0)


# -- metrics ----------------------------------------------------------------------------------------------------
def recall_at(r: Ranking, needs: set[str], k: int) -> float:
    return len(needs & set(r[:k])) / len(needs)


def rr(r: Ranking, needs: set[str]) -> float:
    for pos, i in enumerate(r, 1):
        if i in needs:
            return 1.0 / pos
    return 0.0


METRICS: tuple[tuple[str, Callable[[Ranking, Query], float]], ...] = (
    ("R@5", lambda r, q: recall_at(r, q.needs, 5)),
    ("R@20", lambda r, q: recall_at(r, q.needs, 20)),
    ("MRR", lambda r, q: rr(r, q.needs)),
)
GROUPS: tuple[tuple[str, Callable[[Query], bool]], ...] = (
    ("all", lambda q: True), ("named", lambda q: not q.unnamed), ("unnamed", lambda q: q.unnamed))
LABEL = 46


def header(queries: list[Query], cols: str = "   R@5   R@20    MRR") -> str:
    names = [f"{name} (n={sum(keep(q) for q in queries)})" for name, keep in GROUPS]
    return (f"{'':<{LABEL}} " + "   ".join(f"{n:^20}" for n in names) + "\n"
            + f"{'':<{LABEL}} " + "   ".join(f"{cols:>20}" for _ in GROUPS))


def row(label: str, queries: list[Query], rankings: list[Ranking]) -> str:
    parts = []
    for _name, keep in GROUPS:
        pairs = [(q, r) for q, r in zip(queries, rankings) if keep(q)]
        n = len(pairs) or 1
        parts.append(" ".join(f"{sum(m(r, q) for q, r in pairs) / n:>6.3f}" for _m, m in METRICS))
    return f"{label:<{LABEL}} " + "   ".join(parts)


def served_row(label: str, queries: list[Query], served: list[Ranking]) -> str:
    parts = []
    for _name, keep in GROUPS:
        pairs = [(q, s) for q, s in zip(queries, served) if keep(q)]
        n = len(pairs) or 1
        rec = sum(len(q.needs & set(s)) / len(q.needs) for q, s in pairs) / n
        size = sum(len(s) for _q, s in pairs) / n
        prec = sum(len(q.needs & set(s)) / max(len(s), 1) for q, s in pairs) / n
        parts.append(f"{rec:>6.3f} {size:>6.2f} {prec:>6.3f}")
    return f"{label:<{LABEL}} " + "   ".join(parts)


def bootstrap(queries: list[Query], base: list[Ranking], other: list[Ranking], label: str,
              resamples: int = 4000, seed: int = 7) -> str:
    """Paired bootstrap over prompts: mean difference (other - base) and its 95% interval, per metric."""
    import numpy as np

    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(queries), size=(resamples, len(queries)))
    parts = []
    for name, m in METRICS:
        d = np.array([m(y, q) - m(x, q) for q, x, y in zip(queries, base, other)])
        lo, hi = np.percentile(d[idx].mean(axis=1), [2.5, 97.5])
        parts.append(f"{name} {d.mean():+.3f} [{lo:+.3f}, {hi:+.3f}]")
    return f"{label:<{LABEL}} " + "   ".join(parts)


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


def cosine_report(queries: list[Query]) -> list[str]:
    needed, others, best_other, lex_missed = [], [], [], []
    for q in queries:
        lex_ids = {i for _s, i, _ in q.lexical}
        for i, c in q.cos.items():
            (needed if i in q.needs else others).append(c)
        best_other.append(max(c for i, c in q.cos.items() if i not in q.needs))
        lex_missed += [q.cos[i] for i in q.needs if i not in lex_ids]
    ps = (5, 10, 25, 50, 75, 90, 95, 99)
    lines = ["dense cosine (wordllama) of each prompt against each lesson",
             f"{'':<34}" + "".join(f"{'p' + str(p):>7}" for p in ps) + f"{'n':>8}"]
    for label, vals in (("needed lessons", needed), ("needed, not in the lexical list", lex_missed),
                        ("not-needed lessons", others), ("best not-needed, per prompt", best_other)):
        lines.append(f"{label:<34}" + "".join(f"{pct(vals, p):>7.3f}" for p in ps) + f"{len(vals):>8}")
    lines.append("")
    lines.append(f"{'floor':>6} {'needed >= floor':>16} {'not in lexical >= floor':>24} {'not-needed >= floor':>20} "
                 f"{'prompts whose best not-needed >= floor':>39}")
    for floor in (0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60):
        def share(vals: list[float]) -> float:
            return sum(v >= floor for v in vals) / max(len(vals), 1)
        lines.append(f"{floor:>6.2f} {share(needed):>16.3f} {share(lex_missed):>24.3f} {share(others):>20.3f} "
                     f"{share(best_other):>39.3f}")
    return lines


# -- the run ----------------------------------------------------------------------------------------------------
def main() -> int:
    defaults = RecallSettings()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dense-weight", type=float, default=defaults.dense_weight)
    ap.add_argument("--rrf-k", type=int, default=defaults.rrf_k)
    ap.add_argument("--bm25-weights", default="",
                    help="bench-only: title,gist,tags,body column weights for lexical (default: the store's)")
    ap.add_argument("--sweep", action="store_true", help="also print the weight x k grid and bench-only variants")
    args = ap.parse_args()
    start = time.perf_counter()

    from rose.embed.static import StaticEmbedder, available

    if not available():
        print("wordllama is not installed: dense and fused rankings need it (pip install wordllama)", file=sys.stderr)
        return 2
    lessons, prompts = load()
    with tempfile.TemporaryDirectory(prefix="rose-retrieval-") as tmp:
        t0 = time.perf_counter()
        store = build_store(Path(tmp) / ".rose", lessons)
        t1 = time.perf_counter()
        embedder = StaticEmbedder()
        store.embed_missing(embedder)
        t2 = time.perf_counter()
        queries, timing = rank_all(store, embedder, prompts, len(lessons))
        weights = tuple(BM25_WEIGHTS[1:])
        if args.bm25_weights:
            weights = tuple(float(x) for x in args.bm25_weights.split(","))
            if len(weights) != 4:
                ap.error("--bm25-weights takes four numbers: title,gist,tags,body")
            queries = [replace(q, lexical=lexical_with_weights(store, q.text, weights)) for q in queries]
        settings = replace(defaults, dense_weight=args.dense_weight, rrf_k=args.rrf_k)
        t3 = time.perf_counter()
        lex = [lexical_ranking(q) for q in queries]
        den = [dense_ranking(q) for q in queries]
        fus = [fused_ranking(store, q, settings) for q in queries]
        t_fuse = time.perf_counter() - t3
        fused_label = f"fused (RRF k={settings.rrf_k}, dense_weight={settings.dense_weight:g})"

        print(f"set: {len(lessons)} lessons in {len({x['family'] for x in lessons})} families, {len(queries)} prompts "
              f"({sum(q.unnamed for q in queries)} unnamed, {sum(len(q.needs) > 1 for q in queries)} needing 2-3 "
              f"lessons); depth {cand.LEXICAL_DEPTH} per list; BM25 column weights (title, gist, tags, body) = "
              f"{weights}{'' if args.bm25_weights else ' (the store default)'}")
        print()
        print(header(queries))
        print(row("lexical (FTS5 BM25)", queries, lex))
        print(row("dense (wordllama cosine)", queries, den))
        print(row(fused_label, queries, fus))
        print()
        print("paired bootstrap over all prompts, mean difference [95% interval]")
        print(bootstrap(queries, lex, fus, "fused - lexical"))
        print(bootstrap(queries, den, fus, "fused - dense"))
        print()
        print(header(queries, "recall served   prec"))
        print(served_row("served by the hybrid selector (selectors.hybrid)", queries,
                         [hybrid_served(store, q, settings) for q in queries]))
        print()
        print("\n".join(cosine_report(queries)))

        if args.sweep:
            sweep(store, queries, lex, den, defaults, settings)
        store.close()

    wall = time.perf_counter() - start
    n = len(queries) or 1
    print()
    print(f"wall time {wall:.2f}s: store {t1 - t0:.2f}s, embed {len(lessons)} lessons {t2 - t1:.2f}s (incl. model "
          f"load); per prompt: lexical {timing['lexical'] / n * 1000:.2f}ms, dense {timing['dense'] / n * 1000:.2f}ms, "
          f"fuse {t_fuse / n * 1000:.2f}ms")
    return 0


def sweep(store: Store, queries: list[Query], lex: list[Ranking], den: list[Ranking], defaults: RecallSettings,
          settings: RecallSettings) -> None:
    print()
    print("sweep 1: RRF exactly as recall does it (candidates.fuse), dense_weight x rrf_k")
    print(header(queries))
    print(row("lexical (FTS5 BM25)", queries, lex))
    print(row("dense (wordllama cosine)", queries, den))
    for k in (20, 60):
        for w in (0.1, 0.2, 0.3, 0.5, 0.7, 1.0):
            s = replace(defaults, dense_weight=w, rrf_k=k)
            print(row(f"fused RRF k={k} w={w:g}", queries, [fused_ranking(store, q, s) for q in queries]))

    print()
    print("sweep 2 (bench-only): the dense list votes in RRF only above a floor, absolute cosine or per-query z-score")
    print(header(queries))
    for k in (20, 60):
        for w in (0.3, 0.7, 1.0):
            for floor in (0.35, 0.45):
                print(row(f"RRF k={k} w={w:g}, cos >= {floor:.2f}", queries,
                          [rrf_gated_ranking(q, k, w, floor=floor) for q in queries]))
            for z in (2.0, 3.0):
                print(row(f"RRF k={k} w={w:g}, z >= {z:g}", queries,
                          [rrf_gated_ranking(q, k, w, z_floor=z) for q in queries]))

    print()
    print("sweep 3 (bench-only): score fusion = bm25 / best bm25 + w * (z - z0) for dense z-scores above z0")
    print(header(queries))
    for z0 in (1.5, 2.0, 2.5):
        for w in (0.05, 0.1, 0.2, 0.3):
            print(row(f"score fusion w={w:g} z0={z0:g}", queries,
                      [score_fusion_ranking(q, w, z0) for q in queries]))

    print()
    print("sweep 4 (bench-only): BM25 column weights (title, gist, tags, body) for lexical, and RRF on top of it")
    print(header(queries))
    for weights in ((4.0, 2.5, 2.0, 1.0), (2.0, 1.5, 1.5, 1.0), (1.0, 1.0, 1.0, 1.0), (1.0, 1.0, 1.0, 1.5),
                    (1.0, 1.0, 1.0, 2.0), (2.0, 1.5, 1.5, 2.0)):
        qs = [replace(q, lexical=lexical_with_weights(store, q.text, weights)) for q in queries]
        base = [lexical_ranking(q) for q in qs]
        print(row(f"lexical {weights}", qs, base))
        for k, w in ((20, 0.2), (20, 0.3), (60, 0.2), (60, 0.7)):
            s = replace(defaults, dense_weight=w, rrf_k=k)
            print(row(f"  + dense, RRF k={k} w={w:g}", qs, [fused_ranking(store, q, s) for q in qs]))
    print()
    print("paired bootstrap over all prompts, mean difference [95% interval]")
    for weights in ((1.0, 1.0, 1.0, 1.0), (1.0, 1.0, 1.0, 1.5)):
        alt = [[i for _s, i, _ in lexical_with_weights(store, q.text, weights)] for q in queries]
        print(bootstrap(queries, lex, alt, f"lexical {weights} - lexical default"))
        named = [i for i, q in enumerate(queries) if not q.unnamed]
        print(bootstrap([queries[i] for i in named], [lex[i] for i in named], [alt[i] for i in named],
                        "  same, named prompts only"))
    for k, w in ((20, 0.2), (20, 0.3)):
        s = replace(defaults, dense_weight=w, rrf_k=k)
        print(bootstrap(queries, lex, [fused_ranking(store, q, s) for q in queries],
                        f"fused RRF k={k} w={w:g} - lexical"))

    print()
    print("sweep 5: what the hybrid selector serves (max 6) under other floors and a relative gate (bench-only)")
    print(header(queries, "recall served   prec"))
    for floor in (0.35, 0.45, 0.55):
        print(served_row(f"DENSE_FLOOR {floor:.2f}, k={settings.rrf_k} w={settings.dense_weight:g}", queries,
                         [hybrid_served(store, q, settings, floor=floor) for q in queries]))
    for k, w in ((60, 0.7), (20, 0.3)):
        s = replace(defaults, dense_weight=w, rrf_k=k)
        for rel in (0.0, 0.7, 0.8, 0.9):
            print(served_row(f"k={k} w={w:g}, keep score >= {rel:g} x best", queries,
                             [hybrid_served(store, q, s, relative=rel) for q in queries]))


if __name__ == "__main__":
    raise SystemExit(main())
