"""Keeping the full-text index in one piece: FTS5's incremental merge of every segment, in bounded steps.

Every write transaction leaves FTS5 a new segment; its automerge folds them level by level, but an index grown by
batches and rewrites keeps each word's entries spread over several segments, with the entries of rows since
deleted or replaced among them. The 50,000-lesson bench store's full-text data was 23.5 MB, and 11.5 MB once
merged, and a prompt ranked against it took 17% more instructions. A merge changes no row and no ranking, only how
FTS5 lays its entries out. Its cost is a rewrite of the whole index (0.45 s of CPU at 50,000 lessons), so it is
due only when the data has grown by a share of its size since the last merge, or was never merged: the rewriting
is then paid at most once per such growth (amortized, a constant per byte written). The warm helper runs it off
the request, a step at a time, each under the store lock.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable
    from contextlib import AbstractContextManager

MERGED_AT = "fulltext_merged_bytes"   # meta: the full-text data's size when it was last merged
GROWTH = 1.25          # due again once the data is this many times its merged size
SMALLEST = 1 << 20     # below this (about 2,000 lessons) a ranking's lookups are cheap however they are laid out
STEP_PAGES = 200       # pages a step writes: ~35 ms of CPU, so a writer waiting on the lock waits that long at most
_STRUCTURE = "SELECT block FROM nodes_fts_data WHERE id = 10"   # FTS5's structure record (its fixed rowid)


def size(conn: sqlite3.Connection) -> int:
    """The full-text data's bytes (10 ms at 50,000 lessons: lengths only, the blobs are not read)."""
    return int(conn.execute("SELECT coalesce(sum(length(block)), 0) FROM nodes_fts_data").fetchone()[0])


def due(conn: sqlite3.Connection) -> bool:
    """Is a merge worth its rewrite? The data is past SMALLEST, and never merged or grown by GROWTH since."""
    now = size(conn)
    if now < SMALLEST:
        return False
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (MERGED_AT,)).fetchone()
    try:
        merged = int(row[0]) if row is not None else 0
    except ValueError:
        merged = 0   # a value not written by this module: merged again, and written
    return merged <= 0 or now > GROWTH * merged


def step(conn: sqlite3.Connection, first: bool, pages: int = STEP_PAGES) -> bool:
    """One bounded step of merging every segment into one (a negative page count starts it, a positive one goes on
    with it); True when it did work. FTS5 rewrites its structure record whenever a merge moves anything, so an
    unchanged record is the one sign that nothing was left to merge."""
    before = conn.execute(_STRUCTURE).fetchone()
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('merge', ?)", (-pages if first else pages,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return conn.execute(_STRUCTURE).fetchone() != before


def merge(conn: sqlite3.Connection, lock: Callable[[], AbstractContextManager[object]],
          pages: int = STEP_PAGES, most_steps: int = 100_000) -> int:
    """Merge the full-text index when it is due, a step at a time, each step inside `lock()` (the store's lock: one
    writer of the index at a time, as everywhere); the merged size is then kept in meta. Returns the steps run
    (0: not due). `most_steps` bounds a merge another writer keeps feeding; what is left is the next merge's."""
    if not due(conn):
        return 0
    steps = 0
    while steps < most_steps:
        with lock():
            moved = step(conn, first=steps == 0, pages=pages)
        steps += 1
        if not moved:
            break
    with lock():
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (MERGED_AT, str(size(conn))))
    return steps
