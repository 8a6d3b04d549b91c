"""The full-text index merged into one piece (rose.store.fulltext): due only past a size and a growth since the last
merge, run in bounded steps under the store's lock, changing no ranking; and the warm helper's tidy() runs it for
the indexes it ranked against."""
from __future__ import annotations

import random
import threading

import pytest

from rose.errors import JobStopped
from rose.learn import jobs
from rose.learn.learner import serve_pending
from rose.model import Node
from rose.store import Layers, fulltext
from rose.warm import server

WORDS = ("cache deploy staging pytest fixture flaky redis migration column index retry backoff vite bundle "
         "docker compose lint format schema rollback token secret queue worker cron alert metric trace").split()


def _grow(store, rng: random.Random, start: int, batches: int, per: int) -> list[Node]:
    """Lessons saved in many small batches, and some of them rewritten: FTS5 is left in many segments, with the
    entries of replaced rows among them."""
    saved: list[Node] = []
    for b in range(batches):
        batch = [Node(id=f"n_m{start + b * per + i:05x}", family="f",
                      title=" ".join(rng.sample(WORDS, 3)), body=" ".join(rng.choices(WORDS, k=40)))
                 for i in range(per)]
        store.save_many(batch)
        saved += batch
    for node in rng.sample(saved, len(saved) // 4):
        store.update(node.id, lambda n: setattr(n, "body", " ".join(rng.choices(WORDS, k=40))))
    return saved


def _rankings(index) -> list[list[tuple[str, float]]]:
    queries = [" ".join(random.Random(i).sample(WORDS, 1 + i % 4)) for i in range(40)]
    return [index.search(q, limit=20) for q in queries]


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(fulltext, "SMALLEST", 1)   # a test store is far below the real floor
    monkeypatch.setattr(fulltext, "STEP_PAGES", 4)


def test_a_merge_halves_nothing_of_the_rankings_and_is_due_again_only_after_growth(layers: Layers, small) -> None:
    store = layers.project
    rng = random.Random(7)
    _grow(store, rng, 0, batches=30, per=20)
    conn = store.index.conn
    before, size = _rankings(store.index), fulltext.size(conn)
    assert fulltext.due(conn)                                   # never merged
    locked: list[bool] = []
    real_lock = store.lock

    def lock():
        locked.append(True)
        return real_lock()

    steps = fulltext.merge(conn, lock, pages=fulltext.STEP_PAGES)
    assert steps > 1 and len(locked) == steps + 1               # each step under the lock, and the record after it
    assert fulltext.size(conn) < size                           # the replaced rows' entries are gone
    conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('integrity-check')")
    assert _rankings(store.index) == before                     # the same ids and scores, every query
    assert not fulltext.due(conn) and fulltext.merge(conn, store.lock) == 0
    assert not fulltext.step(conn, first=True)                  # one piece: nothing left to move
    merged = fulltext.size(conn)
    _grow(store, rng, 10_000, batches=2, per=5)                 # a little growth: not yet due
    assert fulltext.size(conn) <= fulltext.GROWTH * merged and not fulltext.due(conn)
    _grow(store, rng, 20_000, batches=20, per=20)               # past GROWTH: due again
    assert fulltext.due(conn)


def test_below_the_smallest_size_or_with_a_foreign_record_in_meta(layers: Layers, monkeypatch) -> None:
    store = layers.project
    _grow(store, random.Random(3), 0, batches=5, per=10)
    conn = store.index.conn
    assert not fulltext.due(conn)                               # a small index: its lookups are cheap as they are
    monkeypatch.setattr(fulltext, "SMALLEST", 1)
    fulltext.merge(conn, store.lock)
    assert not fulltext.due(conn)
    conn.execute("UPDATE meta SET value = 'garbage' WHERE key = ?", (fulltext.MERGED_AT,))
    assert fulltext.due(conn)                                   # not a size this module wrote: merged again


def test_a_writer_between_steps_loses_nothing(layers: Layers, small) -> None:
    store = layers.project
    rng = random.Random(11)
    _grow(store, rng, 0, batches=20, per=20)
    conn = store.index.conn
    written = threading.Event()
    real_lock = store.lock
    calls = 0

    def lock():
        nonlocal calls
        calls += 1
        if calls == 2:   # between the first and second steps another writer saves lessons
            store.save_many([Node(id=f"n_w{i:05x}", family="f", title="interleaved zebra lesson",
                                  body="zebra " * 5) for i in range(15)])
            written.set()
        return real_lock()

    fulltext.merge(conn, lock, pages=fulltext.STEP_PAGES)
    assert written.is_set()
    conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('integrity-check')")
    assert {i for i, _ in store.index.search("zebra", limit=50)} == {f"n_w{i:05x}" for i in range(15)}


def test_the_helper_tidies_the_indexes_it_ranked_against(layers: Layers, small) -> None:
    store = layers.project
    _grow(store, random.Random(5), 0, batches=20, per=20)
    db = str(store.index_db_path)
    warm = server.Warm()
    embed = {"provider": "auto"}
    warm.embedders[warm._key(embed)] = None   # no model here: the ranking fails, and still the index is known
    with pytest.raises(RuntimeError):
        warm.rank(embed, "cache", [db], 5)
    assert db in warm.seen and fulltext.due(store.index.conn)
    warm.tidy()
    assert not fulltext.due(store.index.conn)
    row = store.index.conn.execute("SELECT value FROM meta WHERE key = ?", (fulltext.MERGED_AT,)).fetchone()
    assert row is not None and int(row[0]) == fulltext.size(store.index.conn)


# -- the learner merges too: a user with the helper off still gets a merged index ---------------------------------
def _queue_a_session(layers: Layers, tmp_path) -> None:
    from tests.trust.test_learning_never_stalls import _job, _transcript, standin

    standin(tmp_path)
    _job(layers, "s-merge", _transcript(tmp_path))
    jobs.mark_pending(layers.project)


def test_the_learner_merges_a_store_it_ran_jobs_for(layers: Layers, small, tmp_path) -> None:
    store = layers.project
    _grow(store, random.Random(6), 0, batches=20, per=20)
    assert fulltext.due(store.index.conn)
    _queue_a_session(layers, tmp_path)
    assert serve_pending(jobs.try_lock()) == 1
    assert not fulltext.due(store.index.conn)
    assert "full-text index merged" in (store.logs_dir / "learner.log").read_text(encoding="utf-8")
    store.index.conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('integrity-check')")   # raises if not whole


def test_a_merge_cut_short_by_the_learners_timer_keeps_the_index_whole(layers: Layers, small, tmp_path,
                                                                        monkeypatch) -> None:
    store = layers.project
    _grow(store, random.Random(7), 0, batches=20, per=20)
    real_step, calls = fulltext.step, []

    def stopped_at_the_second(conn, first, pages=fulltext.STEP_PAGES):
        calls.append(first)
        if len(calls) == 2:
            raise JobStopped()
        return real_step(conn, first, pages)

    monkeypatch.setattr(fulltext, "step", stopped_at_the_second)
    _queue_a_session(layers, tmp_path)
    assert serve_pending(jobs.try_lock()) == 1          # the learner itself carries on
    assert fulltext.due(store.index.conn)               # not recorded as merged
    store.index.conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('integrity-check')")   # raises if not whole
    log = (store.logs_dir / "learner.log").read_text(encoding="utf-8")
    assert "merging the full-text index ran past the time a job may take" in log
    monkeypatch.setattr(fulltext, "step", real_step)
    assert fulltext.merge(store.index.conn, store.lock) > 0 and not fulltext.due(store.index.conn)
