"""Document frequencies remembered by a long-lived process (the warm helper) are never stale, and the second pass
searches the selective words of its expansion only."""
from __future__ import annotations

from rose.model import Node, Scope
from rose.recall import candidates
from rose.store import Layers, Store
from rose.store import index as index_mod
from tests.support.gen_store import make_nodes


def _lesson(i: int, body: str) -> Node:
    return Node(id=f"n_{0xd00 + i:06x}", family="misc", title=f"Lesson {i}", body=body, gist=body[:40],
                tags=["misc"], scope=Scope.PROJECT)


def _counted(store: Store, term: str) -> int:
    return store.index.conn.execute("SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH ?",
                                    (f'"{term}"',)).fetchone()[0]


def test_a_remembered_count_follows_every_write(layers: Layers) -> None:
    store = layers.project
    store.save_many([_lesson(i, f"Retry the upload {i} with backoff.") for i in range(3)])
    assert store.index.doc_freqs(["backoff", "upload", "zeppelin"]) == {"backoff": 3, "upload": 3, "zeppelin": 0}
    # another connection (another process: the learner, `rose add`) writes; this one's memory must not answer
    other = Store(store.root, Scope.PROJECT)
    other.save(_lesson(7, "A zeppelin of backoff."))
    other.close()
    assert store.index.doc_freqs(["backoff", "zeppelin"]) == {"backoff": 4, "zeppelin": 1}
    store.delete(f"n_{0xd00:06x}")
    assert store.index.doc_freqs(["backoff", "upload"]) == {t: _counted(store, t) for t in ("backoff", "upload")}
    # a fresh Index on the same file (the next prompt's) shares the memory, and it is keyed by the file
    again = Store(store.root, Scope.PROJECT)
    assert again.index.doc_freqs(["backoff"]) == {"backoff": _counted(again, "backoff")}
    again.close()


def test_a_write_between_the_stamp_and_the_counts_is_not_remembered(layers: Layers, monkeypatch) -> None:
    store = layers.project
    store.save_many([_lesson(i, "jitter and backoff") for i in range(2)])
    stamps = iter([b"before", b"after"])
    monkeypatch.setattr(index_mod.Index, "_fts_stamp", lambda self: next(stamps))
    assert store.index.doc_freqs(["jitter"]) == {"jitter": 2}
    assert index_mod._DOC_FREQS.get(str(store.index.db_path), (None, {}))[1].get("jitter") is None


def test_a_count_that_stops_early_is_never_taken_for_the_whole(layers: Layers) -> None:
    store = layers.project
    store.save_many([_lesson(i, f"backoff {'jitter' if i < 2 else ''}") for i in range(6)])
    assert store.index.doc_freqs(["backoff", "jitter"], up_to=3) == {"backoff": 3, "jitter": 2}
    # "backoff" is remembered as "3 or more": asked for the whole count, it is counted, not answered with 3
    assert store.index.doc_freqs(["backoff", "jitter"]) == {"backoff": 6, "jitter": 2}
    assert store.index.doc_freqs(["backoff"], up_to=4) == {"backoff": 4}


def test_the_selective_words_leave_out_the_generic_ones(layers: Layers) -> None:
    store = layers.project
    store.save_many(make_nodes(200))
    cap = index_mod.selective_cap(store.index.lesson_count())
    text = "Always restart redis when working on ttl zeppelin"
    freqs = store.index.doc_freqs(index_mod.query_words(text))
    assert any(f > cap for f in freqs.values()) and any(0 < f <= cap for f in freqs.values())
    assert store.index.selective_words(text) == [w for w in index_mod.query_words(text) if 0 < freqs[w] <= cap]
    hits = candidates.lexical([store], text, selective_only=True)
    assert [(i, s) for _st, i, s in hits] == store.index.search(" ".join(store.index.selective_words(text)), 50)


def test_phrases_no_ranked_hit_can_hold_are_not_searched_and_nothing_changes(layers: Layers) -> None:
    """search_evidence skips a phrase when no ranked hit holds both its words: every hit's phrase mark is still what
    searching every phrase gives."""
    store = layers.project
    store.save_many(make_nodes(400))
    cap = index_mod.selective_cap(store.index.lesson_count())
    conn = store.index.conn
    prompts = ["postgres migration deadlock on the connection pool", "redis cache ttl eviction stampede",
               "signed commits rebase worktree", "circuit breaker timeout on 503", "vite bundle size react upgrade"]
    skipped = 0
    for prompt in prompts:
        hits = store.index.search_evidence(prompt)
        rowid = {r[1]: r[0] for r in conn.execute("SELECT rowid, id FROM nodes_fts")}
        for phrase in index_mod.query_phrases(prompt):
            a, b = phrase.split(" ")
            words = [{r[0] for r in conn.execute("SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?", (f'"{w}"',))}
                     for w in (a, b)]
            ranked = {rowid[h.id] for h in hits}
            skipped += not (words[0] & words[1] & ranked)
        expected = {h.id: False for h in hits}
        for phrase in index_mod.query_phrases(prompt):
            found = {r[0] for r in conn.execute("SELECT id FROM nodes_fts WHERE nodes_fts MATCH ?", (f'"{phrase}"',))}
            if len(found) <= cap:
                for h in hits:
                    expected[h.id] |= h.id in found
        assert {h.id: h.phrase for h in hits} == expected, prompt
    assert skipped   # the shortcut was taken on these prompts
