"""The vector file beside index.db (rose.embed.vecfile): trusted only at the tags the index keeps (migration 0013),
invalidated by every write of a vector, ignored and written again when it is anything but rose's own, and the
rankings from it the very ones the index's rows give."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rose.embed import Chunked, dense, load_numpy, to_blob, vecfile
from rose.model import Node
from rose.store import Layers
from tests.support.four_words import FourWords



EMBEDDER = Chunked(FourWords())


class Reads:
    """What each table load found: the file's vectors ("file"), or nothing usable ("index")."""

    def __init__(self, monkeypatch):
        self.seen: list[str] = []
        real = vecfile.read

        def spy(*args, **kwargs):
            found = real(*args, **kwargs)
            self.seen.append("index" if found is None else "file")
            return found

        monkeypatch.setattr(vecfile, "read", spy)

    def last(self) -> str:
        return self.seen[-1]


def _table(store) -> dense.VectorTable:
    return dense.VectorTable(store.index_db_path, EMBEDDER.name)


def _rank(store, query: str, k: int = 50) -> list[tuple[str, float]]:
    table = _table(store)
    try:
        [q] = EMBEDDER.embed([query])
        return table.rank(q, k)
    finally:
        table.close()


def _file(store) -> Path:
    return vecfile.path_for(store.index_db_path, EMBEDDER.name)


def _tags(store) -> vecfile.Tags:
    conn = sqlite3.connect(store.index_db_path)
    try:
        tags = vecfile.index_tags(conn)
    finally:
        conn.close()
    assert tags is not None
    return tags


def _lessons(store, n: int = 6) -> None:
    store.save_many([Node(id=f"n_w{i:05d}", family="w", title=f"{w.title()} {i}", body=f"{w} {w} step {i}")
                     for i, w in zip(range(n), FourWords.words * n)])
    store.embed_missing(EMBEDDER)


def _file_valid(store) -> bool:
    return vecfile.read(_file(store), _tags(store), EMBEDDER.name, load_numpy(), []) is not None


def test_a_command_reads_the_index_once_then_maps_the_file(layers: Layers, monkeypatch) -> None:
    store = layers.project
    _lessons(store)
    reads = Reads(monkeypatch)
    first = _rank(store, "beta")
    assert reads.seen == ["index"] and _file(store).exists()
    assert _rank(store, "beta") == first and reads.last() == "file"
    st = _file(store).stat()
    assert st.st_mode & 0o777 == 0o600 and st.st_uid == os.geteuid()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rankings_from_the_file_are_the_indexs_bit_for_bit(layers: Layers, monkeypatch, seed: int) -> None:
    """Random vectors of random widths (one lesson's chunks, torn and foreign blobs among them): the ranking from the
    mapped file equals, score for score, the one from the rows read out of SQLite."""
    store = layers.project
    store.sync()
    rng = np.random.default_rng(seed)
    conn = sqlite3.connect(store.index_db_path)
    rows = []
    for i in range(int(rng.integers(20, 120))):
        chunks = int(rng.integers(1, 5))
        vec = rng.standard_normal((chunks, 8)).astype(np.float32)
        rows.append((f"n_r{i:05d}", EMBEDDER.name, vec.tobytes(), f"h{i}"))
    rows.append(("n_torn00", EMBEDDER.name, b"\x01" * 10, "t"))
    rows.append(("n_other0", "another space", to_blob([1.0] * 8), "o"))
    conn.executemany("INSERT INTO embeddings(node_id, model, vec, text_hash) VALUES (?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    queries = [rng.standard_normal(8).astype(np.float32).tolist() for _ in range(10)]

    def ranked() -> list[list[tuple[str, float]]]:
        table = _table(store)
        try:
            return [table.rank(q, 25) for q in queries]
        finally:
            table.close()

    reads = Reads(monkeypatch)
    from_index = ranked()
    from_file = ranked()
    assert reads.seen == ["index", "file"]
    assert from_file == from_index                      # the same ids and the very same float scores
    assert all(len(r) == 25 for r in from_file)


def test_every_vector_write_makes_the_file_stale(layers: Layers, monkeypatch) -> None:
    store = layers.project
    _lessons(store)
    reads = Reads(monkeypatch)

    def after(write) -> None:
        _rank(store, "alpha")
        assert _file_valid(store)
        write()
        assert not _file_valid(store)                       # the index's vectors tag moved on
        truth = _rank(store, "alpha")
        assert reads.last() == "index" and _file_valid(store)   # read from the index, and the file written again
        assert _rank(store, "alpha") == truth and reads.last() == "file"

    def insert() -> None:
        store.save(Node(id="n_new0001", family="w", title="Gamma new", body="gamma gamma gamma"))
        store.embed_missing(EMBEDDER)

    def replace() -> None:
        node = store.get("n_w00001")
        node.body = "now alpha alpha alpha"
        store.save(node)
        store.embed_missing(EMBEDDER)

    def delete() -> None:
        store.delete("n_w00002")

    def another_process() -> None:
        code = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
                " c.execute(\"UPDATE embeddings SET vec = ? WHERE node_id = 'n_w00000'\", (bytes(16),)); c.commit()")
        subprocess.run([sys.executable, "-c", code, str(store.index_db_path)], check=True, timeout=60)

    for write in (insert, replace, delete, another_process):
        after(write)
    assert "n_w00002" not in {i for i, _ in _rank(store, "gamma")}


def test_a_rebuild_keeps_the_vectors_and_a_new_index_db_is_a_new_index(layers: Layers, monkeypatch) -> None:
    store = layers.project
    _lessons(store)
    before = _rank(store, "delta")
    identity = _tags(store).identity
    store.rebuild_index()                               # the same file: vectors kept, so the file still serves
    assert _tags(store).identity == identity and _file_valid(store)
    reads = Reads(monkeypatch)
    assert _rank(store, "delta") == before and reads.last() == "file"

    store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(store.index_db_path) + suffix).unlink(missing_ok=True)
    store.sync()
    assert _tags(store).identity != identity            # a rebuilt index.db is another index
    assert not _file_valid(store)
    store.embed_missing(EMBEDDER)
    assert _rank(store, "delta") == before and reads.last() == "index"


def _corrupt(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[:-7])
    elif how == "header":
        path.write_bytes(data[:60] + bytes([data[60] ^ 0xFF]) + data[61:])
    elif how == "ids":
        at = data.index(b"n_w00003")
        path.write_bytes(data[:at] + b"n_w00009" + data[at + 8:])
    elif how == "magic":
        path.write_bytes(b"NOTROSE!" + data[8:])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "mode":
        os.chmod(path, 0o644)
    elif how == "symlink":
        elsewhere = path.with_name("elsewhere")
        os.replace(path, elsewhere)
        path.symlink_to(elsewhere)
    elif how == "directory":
        path.unlink()
        path.mkdir()
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["truncated", "header", "ids", "magic", "empty", "mode", "symlink"])
def test_a_damaged_or_foreign_file_is_ignored_logged_and_written_again(layers: Layers, monkeypatch, how: str) -> None:
    store = layers.project
    _lessons(store)
    truth = _rank(store, "beta")
    _corrupt(_file(store), how)
    skips: list[str] = []
    assert vecfile.read(_file(store), _tags(store), EMBEDDER.name, load_numpy(), skips) is None
    assert len(skips) == 1
    reads = Reads(monkeypatch)
    table = _table(store)
    try:
        [q] = EMBEDDER.embed(["beta"])
        assert table.rank(q, 50) == truth and reads.last() == "index"
        assert table.skips and _file(store).name in table.skips[0]   # for the caller to log
    finally:
        table.close()
    assert not _file(store).is_symlink() and _file_valid(store)     # written again, rose's own
    assert _rank(store, "beta") == truth and reads.last() == "file"


def test_a_file_of_another_user_is_ignored(layers: Layers) -> None:
    store = layers.project
    _lessons(store)
    _rank(store, "beta")
    skips: list[str] = []
    np_ = load_numpy()
    assert vecfile.read(_file(store), _tags(store), EMBEDDER.name, np_, skips, uid=os.geteuid() + 1) is None
    assert "belongs to uid" in skips[0]
    if os.geteuid() == 0:   # and for real, where a file can be given away
        os.chown(_file(store), 12345, 12345)
        assert vecfile.read(_file(store), _tags(store), EMBEDDER.name, np_, skips) is None
        _rank(store, "beta")
        assert _file(store).stat().st_uid == 0 and _file_valid(store)


def test_a_command_logs_the_skip_on_its_store(layers: Layers, monkeypatch) -> None:
    from rose.config import EmbedProvider, Settings
    from rose.recall.pipeline import rank_lists
    from rose.store import events

    store = layers.project
    _lessons(store)
    monkeypatch.setattr(dense, "_local", {})
    monkeypatch.setattr("rose.embed.make_embedder", lambda settings: EMBEDDER)
    monkeypatch.setenv("ROSE_WARM_HELPER", "0")
    settings = Settings()
    settings.embed.provider = EmbedProvider.OPENAI   # any provider with a model: the one above answers
    rank_lists([store], "beta", settings, hot=False)
    _corrupt(_file(store), "truncated")
    monkeypatch.setattr(dense, "_local", {})         # another process
    lists = rank_lists([store], "beta", settings, hot=False)
    assert lists.dense and lists.dense[0][1].startswith("n_w")
    logged = [e for e in events.read(store.events_path, "skip") if e.get("what") == "vector file"]
    assert len(logged) == 1 and "bytes where its header says" in logged[0]["reason"]


def test_lacking_is_free_at_the_tag_a_check_found_complete_and_true_after_a_new_lesson(layers: Layers,
                                                                                       monkeypatch) -> None:
    store = layers.project
    _lessons(store)
    table = _table(store)
    try:
        assert not table.lacking()                      # checked: the file is written with the finding
    finally:
        table.close()
    marked = vecfile.read(_file(store), _tags(store), EMBEDDER.name, load_numpy(), [])
    assert marked is not None and marked.complete_at == _tags(store).nodes

    read_nodes = []
    real_connect = sqlite3.connect

    class Traced(sqlite3.Connection):
        def execute(self, sql, *args):
            if "FROM nodes" in sql:
                read_nodes.append(sql)
            return super().execute(sql, *args)

    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: real_connect(*a, factory=Traced, **k))
    table = _table(store)
    try:
        assert not table.lacking() and read_nodes == []   # another process: told by the tags, no lesson read
    finally:
        table.close()
    monkeypatch.setattr(sqlite3, "connect", real_connect)

    store.save(Node(id="n_new0001", family="w", title="Gamma new", body="gamma gamma"))
    table = _table(store)
    try:
        assert table.lacking()                          # a hot lesson inserted: the tag moved, the check says yes
        assert table.lacking() == bool(store.index.missing_embeddings(EMBEDDER.name, limit=1))
        store.embed_missing(EMBEDDER)
        assert not table.lacking()
    finally:
        table.close()
    node = store.get("n_w00001")
    node.body = "alpha with a new text"
    store.save(node)                                    # an edited text: its vector is stale
    table = _table(store)
    try:
        assert table.lacking()
    finally:
        table.close()


def test_an_index_without_tags_reads_its_rows_and_writes_no_file(layers: Layers, monkeypatch) -> None:
    """An index older than migration 0013 (here: its table dropped) is ranked as before, with no file."""
    store = layers.project
    _lessons(store)
    truth = _rank(store, "gamma")
    _file(store).unlink()
    conn = sqlite3.connect(store.index_db_path)
    conn.execute("DROP TABLE vector_state")
    conn.commit()
    conn.close()
    assert _rank(store, "gamma") == truth and not _file(store).exists()


def test_the_helper_writes_the_file_on_load_and_logs_a_skip(layers: Layers) -> None:
    from rose.store import events
    from rose.warm.server import Warm

    store = layers.project
    _lessons(store)
    truth = _rank(store, "beta")
    _corrupt(_file(store), "ids")
    warm = Warm()
    warm._load_table(str(store.index_db_path), EMBEDDER)
    table = warm.tables[(str(store.index_db_path), EMBEDDER.name)]
    try:
        [q] = EMBEDDER.embed(["beta"])
        assert table.rank(q, 50, refresh=False) == truth
    finally:
        table.close()
    assert _file_valid(store)                           # written again by the helper, from the index's rows
    logged = [e for e in events.read(store.events_path, "skip") if e.get("what") == "vector file"]
    assert len(logged) == 1 and "checksum" in logged[0]["reason"]
