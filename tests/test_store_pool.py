"""rose.store.pool: the warm helper keeps index connections open between requests (rose.store.index.POOL). A
connection is used again only for the same file, only outside a transaction, and by one Index at a time."""
from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rose.model import Node
from rose.store import index as index_mod
from rose.store.index import Index
from rose.store.pool import PER_INDEX, Pool


@pytest.fixture()
def pool() -> Iterator[Pool]:
    kept = Pool()
    index_mod.POOL = kept
    try:
        yield kept
    finally:
        index_mod.POOL = None
        kept.close()


def _index(tmp_path: Path) -> Index:
    """An Index of the file in `tmp_path`, made first if need be (a connection that created its file is not
    pooled: the file had no identity when it was opened)."""
    if not (tmp_path / "index.db").exists():
        made = Index(tmp_path, tmp_path / "index.db")
        assert made.lesson_count() == 0
        made.close()
    return Index(tmp_path, tmp_path / "index.db")


def test_a_closed_index_gives_its_connection_to_the_next_one(tmp_path: Path, pool: Pool) -> None:
    first = _index(tmp_path)
    first.upsert(Node(id="n_pool1", family="f", title="pooled lesson", body="kept open"), "n_pool1.md", 1, 1)
    conn = first.conn
    first.close()
    second = _index(tmp_path)
    assert second.conn is conn and second.has_id("n_pool1")
    other = _index(tmp_path)   # taken by `second`: another Index opens its own
    assert other.conn is not conn and other.has_id("n_pool1")
    other.close()
    second.close()


def test_a_connection_is_not_kept_inside_a_transaction(tmp_path: Path, pool: Pool) -> None:
    first = _index(tmp_path)
    conn = first.conn
    conn.execute("BEGIN")
    first.close()
    second = _index(tmp_path)
    assert second.conn is not conn and not second.conn.in_transaction
    second.close()


def test_a_replaced_index_file_is_never_read_through_an_old_connection(tmp_path: Path, pool: Pool) -> None:
    first = _index(tmp_path)
    first.upsert(Node(id="n_old", family="f", title="old file", body="before"), "n_old.md", 1, 1)
    conn = first.conn
    first.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(str(tmp_path / "index.db") + suffix):
            os.unlink(str(tmp_path / "index.db") + suffix)
    fresh = _index(tmp_path)
    assert fresh.conn is not conn and not fresh.has_id("n_old")
    fresh.close()


def test_a_pooled_connection_serves_another_thread(tmp_path: Path, pool: Pool) -> None:
    first = _index(tmp_path)
    first.upsert(Node(id="n_thread", family="f", title="threads", body="one at a time"), "n_thread.md", 1, 1)
    conn = first.conn
    first.close()
    seen: list[bool] = []

    def request() -> None:
        index = _index(tmp_path)
        seen.append(index.conn is conn and index.has_id("n_thread"))
        index.close()

    worker = threading.Thread(target=request)
    worker.start()
    worker.join(60)
    assert seen == [True]


def test_the_pool_keeps_a_few_per_index_and_closes_the_rest(tmp_path: Path, pool: Pool) -> None:
    indexes = [_index(tmp_path) for _ in range(PER_INDEX + 2)]
    conns = [index.conn for index in indexes]
    for index in indexes:
        index.close()
    reopened = [_index(tmp_path) for _ in range(PER_INDEX + 2)]
    again = [index.conn for index in reopened]
    assert len({id(c) for c in again} & {id(c) for c in conns[:PER_INDEX]}) == PER_INDEX
    assert not {id(c) for c in again} & {id(c) for c in conns[PER_INDEX:]}
    for index in reopened:
        index.close()


def test_a_new_index_files_connection_is_kept_for_that_file_alone(tmp_path: Path, pool: Pool) -> None:
    """rose makes index.db itself (0600, atomic.create_private) before SQLite opens it, so the identity the pool
    keeps is read off the very file the connection opens: kept, and never used for a file made in its place."""
    first = Index(tmp_path, tmp_path / "index.db")
    conn = first.conn
    first.close()
    second = Index(tmp_path, tmp_path / "index.db")
    assert second.conn is conn
    second.close()
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"index.db{suffix}").unlink(missing_ok=True)
    third = Index(tmp_path, tmp_path / "index.db")
    assert third.conn is not conn
    third.close()


def test_without_a_pool_every_index_closes_its_own(tmp_path: Path) -> None:
    assert index_mod.POOL is None
    first = _index(tmp_path)
    conn = first.conn
    first.close()
    second = _index(tmp_path)
    assert second.conn is not conn
    second.close()
