"""The lexical top-k leaves out lessons that provably cannot reach it (rose.store.bm25): the same hits, the same
scores, the same order as ranking every matching lesson, and fewer lessons scored."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from rose.model import Scope
from rose.store import Store, bm25
from rose.store.index import query_words, selective_cap
from tests.support.gen_store import make_nodes

QUERIES = ["the staging deploy with argo rollout is stuck", "why is the redis cache ttl ignored",
           "add retries with backoff to the http client", "always restart argo rollout 1234 77",
           "rollout 1234 77 1500", "connection pool 19 46 4955", "clear the cache of redis eviction stampede",
           "postgres migration deadlock on the connection pool", "never restart the cache", "cache", "zzz qqq",
           "always never prefer remember avoid check restart inspect", "testing pytest 9 99 999"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = Path(tmp_path_factory.mktemp("bm25")) / ".rose"
    s = Store.create(root, Scope.PROJECT)
    s.save_many(make_nodes(2400))
    yield s
    s.close()


def _words(store: Store, text: str) -> list[str]:
    return query_words(text)


@pytest.mark.parametrize("limit", [1, 3, 20, 50])
def test_the_pruned_top_is_the_whole_ranking(store: Store, limit: int) -> None:
    index = store.index
    generic = selective_cap(index.lesson_count()) + 1
    for text in QUERIES:
        words = _words(store, text)
        if not words:
            continue
        q = " OR ".join(f'"{w}"' for w in words)
        assert index._best(words, limit, generic) == index._top(q, limit), (text, limit)
        assert index._best(words, limit, generic) == index._top(q, 50)[:limit], (text, limit)


def test_lessons_holding_only_common_words_are_not_scored(store: Store) -> None:
    index = store.index
    statements: list[str] = []
    index.conn.set_trace_callback(statements.append)
    try:
        hits = index.search("why is the redis cache ttl ignored", limit=20)
    finally:
        index.conn.set_trace_callback(None)
    ranked = [s for s in statements if "bm25(nodes_fts" in s]
    assert ranked and all("+rowid IN" in s for s in ranked)   # every ranking ran over the filtered lessons
    assert len(hits) == 20


def test_the_ceiling_is_above_every_lessons_score_from_one_word(store: Store) -> None:
    index = store.index
    rows = index._fts_rows()
    assert rows == index.conn.execute("SELECT count(*) FROM nodes_fts_docsize").fetchone()[0]
    for word in ("cache", "redis", "rollout", "always", "1234"):
        holders = index.conn.execute("SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH ?",
                                     (f'"{word}"',)).fetchone()[0]
        best = index._top(f'"{word}"', 1)
        assert best and -best[0][1] < bm25.ceiling(rows, holders)
        # a lower bound of the holders gives a higher ceiling, never a lower one
        assert bm25.ceiling(rows, max(1, holders // 2)) >= bm25.ceiling(rows, holders)


def test_the_ceiling_follows_fts5s_idf_floor_and_refuses_counts_that_do_not_fit() -> None:
    assert bm25.ceiling(100, 90) == pytest.approx((bm25.K1 + 1) * bm25.IDF_FLOOR)
    assert bm25.ceiling(100, 1) == pytest.approx((bm25.K1 + 1) * math.log(99.5 / 1.5))
    assert bm25.ceiling(10, 20) == math.inf
    assert not bm25.beats(5.0, 5.0) and bm25.beats(5.1, 5.0)


def test_the_row_count_is_read_as_sqlites_varint() -> None:
    assert bm25.row_count(bytes([0x05, 0x00])) == 5
    assert bm25.row_count(bytes([0x83, 0x60])) == 3 * 128 + 0x60
    assert bm25.row_count(bytes([0xFF] * 8 + [0x01])) == ((1 << 56) - 1) << 8 | 1
    with pytest.raises(ValueError):
        bm25.row_count(bytes([0x83]))


def _traced_best(store: Store) -> tuple[list, list[str], list[str]]:
    """The pruned top 20 of one prompt's words, the words, and the SQL statements it ran."""
    index = store.index
    generic = selective_cap(index.lesson_count()) + 1
    words = query_words("why is the redis cache ttl ignored")
    statements: list[str] = []
    index.conn.set_trace_callback(statements.append)
    try:
        got = index._best(words, 20, generic)
    finally:
        index.conn.set_trace_callback(None)
    return got, words, statements


def test_an_unreadable_row_count_ranks_every_lesson(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store.index, "_fts_rows", lambda: None)
    got, words, statements = _traced_best(store)
    index = store.index
    assert got == index._top(" OR ".join(f'"{w}"' for w in words), 20)
    assert not any("+rowid IN" in s for s in statements)


def test_a_write_between_the_counts_and_the_ranking_ranks_every_lesson(store: Store,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The ceilings rest on counts of one state of the index: if another process wrote between them and the
    filtered ranking, the whole ranking answers instead."""
    stamps = iter([b"before", b"after"])
    monkeypatch.setattr(store.index, "_fts_stamp", lambda: next(stamps, b"after"))
    got, words, statements = _traced_best(store)
    index = store.index
    ranked = [s for s in statements if "bm25(nodes_fts" in s]
    assert "+rowid IN" in ranked[0] and "+rowid IN" not in ranked[-1]
    assert got == index._top(" OR ".join(f'"{w}"' for w in words), 20)


def test_leaving_out_pays_only_past_a_share_of_the_holders() -> None:
    assert bm25.pays(100, 200) and not bm25.pays(100, 50)
    for rare in (0, 1, 7, 1000, 5263):
        need = bm25.common_needed(rare)
        assert bm25.pays(rare, need) and (need == 1 or not bm25.pays(rare, need - 1))


def test_a_filter_that_would_cost_more_than_it_saves_is_not_run(store: Store) -> None:
    """Words of a like rarity: the commonest holds about as many lessons as each of the others, so setting the
    others' lessons aside would cost more than scoring the few left out. The whole ranking answers, the same."""
    index = store.index
    generic = selective_cap(index.lesson_count()) + 1
    words = query_words("pytest fixture flaky on the integration db")
    holders = index.doc_freqs(words, up_to=generic)
    rare, common = bm25.split(words, holders, 50, index._fts_rows())
    assert rare and common and not bm25.pays(sum(holders[w] for w in rare), sum(holders[w] for w in common))
    statements: list[str] = []
    index.conn.set_trace_callback(statements.append)
    try:
        got = index._best(words, 50, generic)
    finally:
        index.conn.set_trace_callback(None)
    assert not any("+rowid IN" in s for s in statements)
    assert got == index._top(" OR ".join(f'"{w}"' for w in words), 50)


def test_a_full_text_rowid_reads_its_own_lessons_columns(tmp_path: Path) -> None:
    """_fts_columns reads id and title from nodes at the full-text rowids: every write (a bulk save, a rewrite,
    a removal) gives a lesson's two rows one rowid."""
    s = Store.create(tmp_path / ".rose", Scope.PROJECT)
    try:
        nodes = make_nodes(60)
        s.save_many(nodes)
        nodes[3].title = "Rewritten title of three"
        s.save(nodes[3])
        s.index.remove_path(s.index.path_of(nodes[7].id))
        s.save_many(make_nodes(80)[60:])
        index = s.index
        fts = dict((r[0], (r[1], r[2])) for r in index.conn.execute("SELECT rowid, id, title FROM nodes_fts"))
        assert len(fts) == 79 and index._fts_columns(list(fts), "id, title") == fts
        assert fts[next(k for k, v in fts.items() if v[0] == nodes[3].id)][1] == "Rewritten title of three"
    finally:
        s.close()
