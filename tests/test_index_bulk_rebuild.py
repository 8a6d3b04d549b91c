"""A full rebuild writes its rows a batch at a time (Index._bulk_add / _bulk_flush): the index it leaves is the one
the lesson-by-lesson path builds from the same files, cold records, a corrupt file, a duplicate id, usage and a hand
edit with a secret included; and a rebuild that fails midway leaves the index as it was."""
from __future__ import annotations

import os
import sqlite3

import pytest

from rose.model import Node
from rose.store import Layers, Store
from rose.store import index as index_module
from tests.support.gen_store import make_nodes

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
TABLES = {
    "nodes": "SELECT * FROM nodes ORDER BY id",
    "nodes_fts": "SELECT id, title, gist, tags, body FROM nodes_fts ORDER BY id",
    "cold_fts": "SELECT id, title, tags, preview FROM cold_fts ORDER BY id",
    "files": "SELECT path, mtime_ns, size, node_id, problem FROM files ORDER BY path",
    "clean_files": "SELECT path, digest FROM clean_files ORDER BY path",
    "fts_match": "SELECT id FROM nodes_fts WHERE nodes_fts MATCH 'backoff OR pytest' ORDER BY id",
    "fts_rowids": "SELECT n.id FROM nodes n JOIN nodes_fts f ON f.rowid = n.rowid ORDER BY n.id",
    "cold_rowids": "SELECT n.id FROM nodes n JOIN cold_fts f ON f.rowid = n.rowid ORDER BY n.id",
}


def _tables(store: Store) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(store.index_db_path)
    try:
        names = [r[1] for r in conn.execute("PRAGMA table_info(nodes)")]
        got = {name: conn.execute(sql).fetchall() for name, sql in TABLES.items()}
        got["nodes"] = [tuple(v for n, v in zip(names, row)) for row in got["nodes"]]
        return got
    finally:
        conn.close()


def _store(layers: Layers) -> Store:
    store = layers.project
    store.save_many(make_nodes(120))
    store.archive([f"n_{i:06x}" for i in range(0, 120, 7)], "old")
    node = store.get("n_000003")
    node.stats.attempts, node.use_count = 3, 2
    store.save(node)
    hot = store.root / store.index.path_of("n_000005")
    hot.write_text(hot.read_text().replace("Context:", f"token = {TOKEN}\nContext:"))   # a hand edit, a secret
    (store.nodes_dir / "retry" / "n_broken.md").write_text("no frontmatter here\n")
    twin = store.root / store.index.path_of("n_000009")
    (store.nodes_dir / "zzcopy").mkdir()
    (store.nodes_dir / "zzcopy" / "n_000009.md").write_bytes(twin.read_bytes())   # the same id twice
    return store


def test_a_rebuild_indexes_what_the_lesson_by_lesson_path_does(layers: Layers) -> None:
    store = _store(layers)
    store.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(str(store.index_db_path) + suffix):
            os.unlink(str(store.index_db_path) + suffix)
    by_lesson = Store(store.root, store.scope)
    by_lesson._catch_up_usage()   # as Store.sync does first
    synced = by_lesson.index.sync(by_lesson.record_dirs, by_lesson._parse_for_index)   # file by file
    expected = _tables(by_lesson)
    assert any(row[4] and "duplicate id" in row[4] for row in expected["files"])
    assert any(row[4] and "duplicate id" not in row[4] for row in expected["files"])
    assert expected["cold_fts"] and expected["fts_match"]
    assert TOKEN not in repr(expected)
    report = by_lesson.rebuild_index()
    assert _tables(by_lesson) == expected
    assert (report.added, report.problems, report.files) == (synced.added, synced.problems, synced.files)
    by_lesson.rebuild_index()   # the clean digests recorded by the first: the same again
    assert _tables(by_lesson) == expected


def test_rows_are_flushed_a_batch_at_a_time(layers: Layers, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(layers)
    store.rebuild_index()
    expected = _tables(store)
    monkeypatch.setattr(index_module, "BULK_ROWS", 7)
    flushes = []
    real = index_module.Index._bulk_flush
    monkeypatch.setattr(index_module.Index, "_bulk_flush", lambda self, bulk: (flushes.append(len(bulk.nodes)),
                                                                                 real(self, bulk)))
    store.rebuild_index()
    assert len(flushes) > 10
    assert _tables(store) == expected


def test_a_rebuild_that_fails_midway_leaves_the_index_as_it_was(layers: Layers,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(layers)
    store.rebuild_index()
    before = _tables(store)
    monkeypatch.setattr(index_module, "BULK_ROWS", 10)
    calls = []
    real = index_module.Index._bulk_flush

    def failing(self, bulk):
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk full")
        real(self, bulk)

    monkeypatch.setattr(index_module.Index, "_bulk_flush", failing)
    with pytest.raises(OSError):
        store.rebuild_index()
    monkeypatch.setattr(index_module.Index, "_bulk_flush", real)
    assert store.index._bulk is None
    assert _tables(store) == before
    assert store.get("n_000004").id == "n_000004"   # the index still serves


def test_outside_a_rebuild_writes_go_straight_to_the_tables(layers: Layers) -> None:
    store = _store(layers)
    store.rebuild_index()
    store.save(Node(id="n_after1", family="retry", title="after the rebuild", body="Written after."))
    assert store.index._bulk is None
    assert store.index.path_of("n_after1") == "nodes/retry/n_after1.md"


def _schema_and_tag(store: Store) -> tuple[list[tuple], int]:
    c = store.index.conn
    schema = c.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
    return schema.fetchall(), c.execute("SELECT nodes FROM vector_state").fetchone()[0]


def test_a_rebuild_replaces_the_lessons_tag_once_as_its_trigger_did_and_leaves_the_trigger(layers: Layers) -> None:
    # the rebuild drops lessons_inserted for its bulk load (each insert would journal every page it touches) and
    # makes it again, replacing the tag itself when a hot row went in: what the trigger would have left
    store = _store(layers)
    store.rebuild_index()
    triggers, tag = _schema_and_tag(store)
    assert index_module.HOT_INSERT_TRIGGER in {name for _t, name, _tbl, _sql in triggers}
    settings = [store.index.conn.execute(f"PRAGMA {name}").fetchone()[0] for name in ("temp_store", "cache_size")]
    store.rebuild_index()
    after, new_tag = _schema_and_tag(store)
    assert after == triggers and new_tag != tag
    assert [store.index.conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("temp_store", "cache_size")] == settings   # set back after
    store.save(Node(id="n_after2", family="retry", title="after the rebuild", body="Written after."))
    assert _schema_and_tag(store)[1] != new_tag   # the trigger is back at work


def test_a_rebuild_with_no_hot_lesson_leaves_the_lessons_tag(layers: Layers) -> None:
    store = layers.project
    store.rebuild_index()
    triggers, tag = _schema_and_tag(store)
    store.rebuild_index()
    assert _schema_and_tag(store) == (triggers, tag)


def test_a_rebuild_inside_a_transaction_leaves_temp_store_alone(layers: Layers) -> None:
    store = _store(layers)
    store.rebuild_index()
    expected = _tables(store)
    settings = [store.index.conn.execute(f"PRAGMA {name}").fetchone()[0] for name in ("temp_store", "cache_size")]
    with store.index.batch():   # temp_store cannot change inside a transaction: the rebuild joins it as it is
        store.index.rebuild(store.record_dirs, store._parse_for_index)
    assert _tables(store) == expected
    assert [store.index.conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("temp_store", "cache_size")] == settings


def test_the_rebuilds_one_tag_update_is_the_hot_insert_triggers_own_body() -> None:
    """The rebuild runs once what migration 0013's trigger runs per hot row: the statement is the trigger's body."""
    from rose.store.index import HOT_INSERT_TRIGGER, MIGRATIONS, NODES_TAG_REPLACED

    sql = dict(MIGRATIONS)["0013_vector_state"]
    trigger = sql[sql.index(f"CREATE TRIGGER {HOT_INSERT_TRIGGER}"):]
    body = trigger[trigger.index("BEGIN") + len("BEGIN"):trigger.index("END;")]
    assert body.strip() == NODES_TAG_REPLACED + ";"
