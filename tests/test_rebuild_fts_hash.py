"""A rebuild holds more of the full-text tables' new words in memory (FTS5's 'hashsize', Index._fts_hash_size):
fewer segments, the same answers. Queries answer exactly as they do after a rebuild under FTS5's default, the
tables' config reads as a fresh table's afterwards, and the setting changes where the words lie (so these
comparisons can fail); files are read by rose.store.reader.read_bytes, byte for byte as Path.read_bytes reads them."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rose.store import Layers, Store
from rose.store import index as index_module
from rose.errors import UnsafeFile
from rose.store import reader
from tests.support.gen_store import TOPICS, make_nodes

QUERIES = [w for words in TOPICS.values() for w in words] + [
    "backoff jitter", "pytest fixture flaky", "postgres migration deadlock", "lesson 17", "value docs",
    "Never restart redis", "timeout OR rollout", "the agent forgot", "helm canary kubectl image tag",
]


def _store(layers: Layers) -> Store:
    store = layers.project
    store.save_many(make_nodes(300))
    store.archive([f"n_{i:06x}" for i in range(0, 300, 11)], "old")
    return store


def _answers(store: Store) -> dict[str, object]:
    index = store.index
    return {q: (index.search(q, limit=50), index.cold_search(q, limit=50),
                [(h.id, h.score, h.words, h.selective, h.terms, h.phrase) for h in index.search_evidence(q, limit=50)])
            for q in QUERIES}


def _fts_layout(store: Store) -> dict[str, object]:
    conn = sqlite3.connect(store.index_db_path)
    try:
        return {t: (conn.execute(f"SELECT * FROM {t}_config ORDER BY k").fetchall(),  # noqa: S608
                    conn.execute(f"SELECT count(*) FROM {t}_data").fetchone()[0])  # noqa: S608
                for t in ("nodes_fts", "cold_fts")}
    finally:
        conn.close()


def test_a_rebuild_answers_queries_as_under_the_default_hash_size(layers: Layers,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(layers)
    # a tiny hash writes a segment every few lessons (many merges): the layout the default gives at scale
    monkeypatch.setattr(index_module, "REBUILD_FTS_HASH", 512)
    store.rebuild_index()
    small, small_layout = _answers(store), _fts_layout(store)
    monkeypatch.setattr(index_module, "REBUILD_FTS_HASH", 16 << 20)
    store.rebuild_index()
    large, large_layout = _answers(store), _fts_layout(store)
    assert any(hits for hits, _cold, _ev in large.values()) and any(cold for _h, cold, _ev in large.values())
    assert large == small
    fresh = [("version", 4)]
    assert large_layout["nodes_fts"][0] == small_layout["nodes_fts"][0] == fresh
    assert large_layout["cold_fts"][0] == fresh
    assert large_layout["nodes_fts"][1] < small_layout["nodes_fts"][1]   # the setting took: fewer data rows


def test_an_sqlite_without_the_setting_rebuilds_as_before(layers: Layers, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(layers)
    store.rebuild_index()
    expected, layout = _answers(store), _fts_layout(store)
    # FTS5 refuses a setting it does not know with the same error an SQLite without 'hashsize' would raise
    monkeypatch.setattr(index_module, "FTS_HASH_SETTING", "no-such-setting")
    with pytest.raises(sqlite3.OperationalError):
        sqlite3.connect(":memory:").executescript(
            "CREATE VIRTUAL TABLE t USING fts5(x); INSERT INTO t(t, rank) VALUES ('no-such-setting', 1);")
    store.rebuild_index()
    assert _answers(store) == expected
    assert _fts_layout(store)["nodes_fts"][0] == layout["nodes_fts"][0] == [("version", 4)]


def test_after_a_rebuild_the_connection_writes_with_the_default_hash_size(layers: Layers) -> None:
    store = _store(layers)
    store.rebuild_index()
    conn = store.index.conn
    before = conn.execute("SELECT count(*) FROM nodes_fts_data").fetchone()[0]
    # a transaction whose words pass 1 MB writes a segment before its end only under the default
    words = " ".join(f"w{i}x" for i in range(30_000))
    conn.execute("BEGIN")
    try:
        conn.executemany("INSERT INTO nodes_fts(rowid, id, title, gist, tags, body) VALUES (?,?,?,?,?,?)",
                         [(100_000 + i, f"x{i}", "", "", "", words) for i in range(12)])
        middle = conn.execute("SELECT count(*) FROM nodes_fts_data").fetchone()[0]
    finally:
        conn.execute("ROLLBACK")
    assert middle > before


@pytest.mark.parametrize("size", [0, 1, 100, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, 3 * (1 << 16), 300_001])
def test_read_bytes_reads_what_path_read_bytes_reads(tmp_path: Path, size: int) -> None:
    path = tmp_path / "lesson.md"
    path.write_bytes(bytes((i * 7 + 3) % 256 for i in range(size)))
    assert reader.read_bytes(path) == path.read_bytes()


def test_read_bytes_raises_what_path_read_bytes_raises(tmp_path: Path) -> None:
    with pytest.raises(OSError) as ours:
        reader.read_bytes(tmp_path / "missing.md")
    with pytest.raises(OSError) as theirs:
        (tmp_path / "missing.md").read_bytes()
    assert type(ours.value) is type(theirs.value)
    with pytest.raises(UnsafeFile, match="is a directory"):   # an OSError too, refused before any read
        reader.read_bytes(tmp_path)
