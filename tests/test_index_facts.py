"""Index.facts(): the per-group counts and sums `rose status` reads three ways (its counts, compression_facts,
buckets) in one pass over the index, kept between calls until the index changes. After random writes (through
this connection, through another one, through the store), what they say equals a count of the rows themselves."""
from __future__ import annotations

import random
import sqlite3
from collections import Counter

from rose import report
from rose.model import MemoryType, Node, Origin, Status
from rose.store import Layers, Store

_STATUSES = [Status.ACTIVE, Status.DISPUTED, Status.DEMOTED, Status.ARCHIVED]
_COLUMNS = ("scope", "memory_type", "family", "level", "status", "origin", "tokens", "heldout_passed",
            "heldout_total", "origin_rescues", "trials", "gaps")


def _lessons(rng: random.Random, n: int) -> list[Node]:
    return [Node(id=f"n_fact{i:04d}", family=rng.choice(["alpha", "beta", "gamma"]), title=f"lesson {i}",
                 body="word " * rng.randint(1, 40), level=rng.choice([0, 0, 1, 2]),
                 status=rng.choice(_STATUSES[:3]), origin=rng.choice(list(Origin)),
                 memory_type=rng.choice(list(MemoryType)), heldout_passed=rng.randint(0, 2),
                 heldout_total=rng.randint(2, 4) if rng.random() < 0.5 else 0) for i in range(n)]


def _scramble(conn: sqlite3.Connection, rng: random.Random, rowids: list[int]) -> None:
    """Index rows changed as a learner's writes change them (the facts the files carry and the index keeps)."""
    for rowid in rng.sample(rowids, len(rowids) // 3):
        conn.execute("UPDATE nodes SET status=?, origin=?, heldout_passed=?, heldout_total=?, origin_rescues=?,"
                     " trials=?, gaps=?, tokens=?, level=? WHERE rowid=?",
                     (rng.choice(_STATUSES).value, rng.choice(list(Origin)).value, rng.randint(0, 3),
                      rng.randint(0, 5), rng.randint(0, 3), rng.randint(0, 2), rng.randint(0, 2),
                      rng.randint(1, 300), rng.randint(0, 3), rowid))


def _counted(conn: sqlite3.Connection) -> tuple[dict, list, Counter]:
    """compression_facts, buckets and status's counts, from every row read one by one."""
    rows = [dict(zip(_COLUMNS, r)) for r in conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM nodes")]  # noqa: S608
    servable = [r for r in rows if r["status"] in ("active", "disputed")]
    compression = {"compressed": sum(r["origin"] == "compression" for r in rows),
                   "merged": sum(r["origin"] == "merge" for r in rows),
                   "heldout_passed": sum(r["heldout_passed"] for r in rows),
                   "heldout_total": sum(r["heldout_total"] for r in rows),
                   "evaluated": sum(r["heldout_total"] > 0 for r in rows),
                   "demoted": sum(r["status"] == "demoted" for r in rows),
                   "sticky": sum(r["origin_rescues"] for r in servable),
                   "open_trials": sum(r["trials"] for r in servable), "gaps": sum(r["gaps"] for r in servable)}
    keys = sorted({(r["scope"], r["memory_type"]) for r in rows})
    buckets = []
    for scope, memory_type in keys:
        mine = [r for r in rows if (r["scope"], r["memory_type"]) == (scope, memory_type)]
        hot = [r for r in mine if r["status"] != "archived"]
        cold = [r for r in mine if r["status"] == "archived"]
        buckets.append((scope, memory_type, len(hot), sum(r["tokens"] for r in hot), len(cold),
                        sum(r["tokens"] for r in cold)))
    counts = Counter()
    for r in rows:
        counts.update({("family", r["family"]): 1, ("level", r["level"]): 1, ("status", r["status"]): 1,
                       ("memory_type", r["memory_type"]): 1, ("tokens",): r["tokens"], ("lessons",): 1})
    return compression, buckets, counts


def _status_counts(layers: Layers) -> Counter:
    got = report.status(layers)
    counts = Counter()
    for column, values in (("family", got.families), ("level", got.levels), ("status", got.statuses),
                           ("memory_type", got.memory_types)):
        counts.update({(column, k): v for k, v in values.items()})
    counts[("tokens",)] = got.tokens
    counts[("lessons",)] = sum(s.lessons for s in got.stores)
    return counts


def _agree(store: Store, layers: Layers) -> None:
    compression, buckets, counts = _counted(sqlite3.connect(store.index_db_path))
    # the buckets of a connection that holds no facts yet (rose list's own pass), then of one that does
    assert Store(store.root, store.scope).index.buckets() == buckets
    assert store.index.compression_facts() == compression
    assert store.index.buckets() == buckets
    assert _status_counts(layers) == +counts


def test_the_facts_equal_a_count_of_the_rows_after_random_writes(layers: Layers) -> None:
    rng = random.Random(15)
    store = layers.project
    store.save_many(_lessons(rng, 120))
    store.sync()
    _agree(store, layers)
    rowids = [r[0] for r in store.index.conn.execute("SELECT rowid FROM nodes")]
    for round_ in range(6):
        if round_ % 2:   # another process's commit: this connection's own counter does not move
            other = sqlite3.connect(store.index_db_path, isolation_level=None)
            _scramble(other, rng, rowids)
            other.close()
        else:            # this connection's writes
            _scramble(store.index.conn, rng, rowids)
        _agree(store, layers)
    for i in range(0, 120, 12):   # and lessons deleted through the store
        store.delete(f"n_fact{i:04d}")
    _agree(store, layers)


def test_facts_are_read_once_while_the_index_is_unchanged(layers: Layers) -> None:
    store = layers.project
    store.save_many(_lessons(random.Random(3), 20))
    store.sync()
    first = store.index.facts()
    assert store.index.facts() is first and store.index.compression_facts() == store.index.compression_facts()
    store.index.conn.execute("UPDATE nodes SET tokens = tokens + 1 WHERE rowid = (SELECT min(rowid) FROM nodes)")
    again = store.index.facts()
    assert again is not first and sum(g.tokens for g in again) == sum(g.tokens for g in first) + 1


def test_the_lesson_count_follows_every_write_while_it_is_kept(layers: Layers) -> None:
    """lesson_count() is kept between calls like facts(): rows added or removed through this connection, through
    another one and through the store are counted at the next call."""
    store = layers.project
    store.save_many(_lessons(random.Random(4), 30))
    store.sync()
    index = store.index

    def counted() -> int:
        return index.conn.execute("SELECT count(*) FROM nodes").fetchone()[0]

    assert index.lesson_count() == index.lesson_count() == counted() == 30
    index.conn.execute("DELETE FROM nodes WHERE rowid = (SELECT min(rowid) FROM nodes)")   # this connection
    assert index.lesson_count() == counted() == 29
    other = sqlite3.connect(store.index_db_path, isolation_level=None)   # another process's commit
    other.execute("DELETE FROM nodes WHERE rowid = (SELECT min(rowid) FROM nodes)")
    other.close()
    assert index.lesson_count() == counted() == 28
    store.delete("n_fact0010")
    assert index.lesson_count() == counted() == 27
    store.save(_lessons(random.Random(5), 31)[30])
    assert index.lesson_count() == counted() == 28
