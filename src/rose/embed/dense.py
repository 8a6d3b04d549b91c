"""Dense ranking: cosine of the query against every stored vector of one embedder's space.

A lesson's row may hold several vectors one after another (a long lesson's chunks, rose.embed.chunk_texts): the
matrix has one row per vector, and a lesson's cosine is its best row's."""
from __future__ import annotations

import _thread
import gc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rose.embed import vecfile


class _Uncollected:
    """The cyclic collector paused over a bulk read: tens of thousands of fresh row tuples (no cycle among them)
    each set off collections that walked them all again."""

    def __enter__(self) -> None:
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *_exc: object) -> None:
        if self.was:
            gc.enable()


class VectorTable:
    """All vectors of one index in one space, as a matrix; reloaded when the index changed."""

    def __init__(self, db_path: Path, model: str):
        import sqlite3

        from rose.embed import load_numpy

        np = load_numpy()

        self._np = np
        self.db_path = db_path
        self.model = model
        self._conn = sqlite3.connect(db_path, timeout=5, check_same_thread=False)
        self._conn.execute("PRAGMA busy_timeout=5000")
        self._version: tuple[int, int] = (-1, -1)
        self._data_version = -1
        self._complete_at = -1                 # the data_version at which no lesson lacked a vector
        self.ids: list[str] = []
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self._all_ids: list[str] = []          # every row of the space, as read
        self._sizes = np.zeros(0, dtype=np.int64)   # ... each one's blob length in bytes
        self._hashes: list[str] = []           # ... the hash of the text each was made from
        self._joined = b""                     # ... and their blobs, one after another in the same order
        self._dim = -1
        self._starts = np.zeros(0, dtype=np.intp)
        self._chunked = False
        self._file = vecfile.path_for(db_path, model)
        self._tags: vecfile.Tags | None = None   # the index's tags the rows held were read at (None: no file kept)
        self._complete_nodes: int | None = None  # the lessons tag at which no hot lesson lacked one of them
        self._unsaved = False                    # rows read from SQLite that the file does not hold yet
        self.skips: list[str] = []               # why a vector file was not used or not written, for a log

    def version(self) -> tuple[int, int]:
        """Changes whenever a vector of this space is added, replaced or removed: the index's vectors tag (free),
        or for an index without one, the count and last rowid of the rows (a scan)."""
        tags = vecfile.index_tags(self._conn)
        if tags is not None:
            return tags.vectors, 0
        row = self._conn.execute("SELECT count(*), coalesce(max(rowid), 0) FROM embeddings WHERE model=?",
                                 (self.model,)).fetchone()
        return int(row[0]), int(row[1])

    def changed(self) -> bool:
        """Has anything been committed to the index since this table last checked? (free: no table is read)"""
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0]) != self._data_version

    @property
    def loaded_version(self) -> tuple[int, int]:
        return self._version

    def still_current(self, version: tuple[int, int], data_version: int) -> None:
        """Another connection found `version` (read after `data_version` was read here): when it is the one this
        table holds, the commits seen since changed no vector of its space, and the table stays as it is."""
        if version == self._version:
            self._data_version = data_version

    def data_version(self) -> int:
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def refresh(self) -> None:
        # data_version is free and changes on any commit by another connection; only then is the vector version
        # worth asking, and only a changed vector version reloads the matrix
        data_version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        if data_version == self._data_version and self._version != (-1, -1):
            return
        self._data_version = data_version
        if self._version != (-1, -1) and self.version() == self._version:
            return   # (a table never loaded reads its rows at once: their version is known from them)
        self._load()

    def _load(self) -> None:
        """The rows from the vector file when the index's tags say it is current, else from SQLite (the file is
        written after, by save). The tags and the rows are read in one snapshot of the index."""
        np = self._np
        conn = self._conn
        conn.execute("BEGIN")
        try:
            tags = vecfile.index_tags(conn)
            held = vecfile.read(self._file, tags, self.model, np, self.skips) if tags is not None else None
            if held is None:
                with _Uncollected():
                    rows = conn.execute("SELECT rowid, node_id, text_hash, vec FROM embeddings WHERE model=?",
                                        (self.model,)).fetchall()
                    blobs = [r[3] for r in rows]
                    ids = [r[1] for r in rows]
                    hashes = [r[2] for r in rows]
                last = max((r[0] for r in rows), default=0)
                del rows
        finally:
            conn.execute("COMMIT")
        if held is not None:
            self._all_ids, self._hashes, self._sizes, self._joined = held.ids, held.hashes, held.sizes, held.joined
            self._complete_nodes = held.complete_at
            self._unsaved = False
        else:
            self._all_ids, self._hashes = ids, hashes
            self._sizes = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
            self._joined = b"".join(blobs)   # one copy, no array per row: the matrix is a view of it
            self._complete_nodes = None
            self._unsaved = tags is not None
        self.ids = self._all_ids
        self._tags = tags
        self._dim = -1   # the matrix is laid out when the first query says the dimension
        # what version() says, from the same snapshot
        self._version = (tags.vectors, 0) if tags is not None else (len(self._all_ids), last)

    def save(self) -> None:
        """Write the vector file for the rows read from SQLite (with the lessons tag at which none lacked a vector,
        when that is known): the next process maps it instead of reading them. Best effort: a file that cannot be
        written is read from SQLite again next time."""
        if not self._unsaved or self._tags is None:
            return
        self._unsaved = False
        try:
            vecfile.write(self._file, self._tags, self.model,
                          vecfile.Vectors(self._all_ids, self._hashes, self._sizes, self._joined,
                                          self._complete_nodes))
        except OSError as exc:   # a full disk, a read-only folder: the file is an improvement, never a requirement
            self.skips.append(f"{self._file.name} not written: {type(exc).__name__}: {exc}")

    def lacking(self) -> bool:
        """Has a hot lesson of this index no vector of its current text in this space? The question
        Index.missing_embeddings answers with a join of every lesson to its vector (0.15-0.2 s at 50,000 lessons),
        told here without reading a lesson when the index's lessons tag is the one at which a check (this
        process's, or the vector file's writer's) found none lacking; else from the vectors this table reads anyway
        and one read of the lessons' text hashes (from their own narrow index). A command without a warm helper
        asks it before every ranking, and calls the real catch-up only on a yes. A "no" holds until the next
        commit to the index (recall's second pass asks again at once)."""
        seen = self.data_version()   # read before the rows: a commit after it is seen by the next question
        if seen == self._complete_at:
            return False
        self.refresh()
        conn = self._conn
        conn.execute("BEGIN")   # the tags and the lessons they describe, in one snapshot
        try:
            tags = vecfile.index_tags(conn)
            current = tags if tags is not None and self._tags is not None and tags.vectors == self._tags.vectors \
                else None   # the index's tags, when they are the ones this table's vectors were read at
            if current is not None and current.nodes == self._complete_nodes:
                lacking = False
            else:
                with _Uncollected():
                    hot = conn.execute("SELECT id, text_hash FROM nodes WHERE cold = 0").fetchall()
                    held = dict(zip(self._all_ids, self._hashes))
                    ids, hashes = zip(*hot) if hot else ((), ())
                    lacking = list(map(held.get, ids)) != list(hashes)
                if not lacking and current is not None:
                    if self._complete_nodes != current.nodes:
                        self._unsaved = True   # the file is written again with the finding
                    self._complete_nodes = current.nodes
        finally:
            conn.execute("COMMIT")
        if not lacking:
            self._complete_at = seen
            self.save()
        return lacking

    def _layout(self, dim: int) -> bool:
        """One matrix row per vector, and where each lesson's rows start; False when no vector fits `dim`. The
        matrix is a view of the joined blobs when every blob fits `dim` (always, for what rose writes); a blob that
        does not (another space's vector under this name, a torn write) is skipped, not misread."""
        if dim == self._dim:
            return bool(self.ids)
        np = self._np
        width = 4 * dim
        fits = (self._sizes > 0) & (self._sizes % width == 0)
        if fits.all():
            ids, joined, sizes = self._all_ids, self._joined, self._sizes
        else:
            ends = np.cumsum(self._sizes)
            kept = np.flatnonzero(fits).tolist()
            ids = [self._all_ids[i] for i in kept]
            joined = b"".join(self._joined[int(ends[i] - self._sizes[i]):int(ends[i])] for i in kept)
            sizes = self._sizes[fits]
        counts = sizes // width
        self.ids = list(ids)
        self.matrix = np.frombuffer(joined, dtype=np.float32).reshape(-1, dim)
        self._starts = (np.cumsum(counts) - counts).astype(np.intp)
        self._chunked = int(counts.sum()) != len(ids)
        self._dim = dim
        return bool(ids)

    def rank(self, query: Sequence[float], k: int, refresh: bool = True) -> list[tuple[str, float]]:
        """The k best lessons for `query`; `refresh=False` ranks with the vectors loaded (the warm helper reloads a
        changed table in the background, never inside a request)."""
        if refresh:
            self.refresh()
            self.save()
        np = self._np
        q = np.asarray(query, dtype=np.float32)
        if not self._all_ids or not self._layout(int(q.shape[0])):
            return []
        scores = self.matrix @ q
        if self._chunked:
            scores = np.maximum.reduceat(scores, self._starts)   # a lesson scores as its best chunk
        k = min(k, len(self.ids))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(self.ids[i], float(scores[i])) for i in top]

    def close(self) -> None:
        self._conn.close()


# The tables a process without a warm helper ranks against, kept for the process: `rose recall` and `rose trace` rank
# twice (the second pass), and reading and laying out every vector was most of a pass. A table checks the index
# for commits at each use (refresh: data_version, then its vector version), and a table whose file was replaced
# (index.db deleted and rebuilt) is opened again; a process ranks against its stores' few indexes, so the bound
# only keeps a long-lived caller (the MCP server, a test run) from holding a connection per index it ever saw.
LOCAL_TABLES = 4
_local_lock = _thread.allocate_lock()   # a table's refresh and layout are not for two threads at once
_local: dict[tuple[str, str], tuple[tuple[int, int], VectorTable]] = {}


def local_table(db: Path, model: str) -> VectorTable:
    """This process's table for `db` in `model`'s space (refreshed by rank)."""
    import os

    st = os.stat(db)   # raises when there is no index: nothing to rank
    key, ident = (str(db), model), (st.st_dev, st.st_ino)
    held = _local.pop(key, None)
    if held is not None and held[0] != ident:
        held[1].close()
        held = None
    table = held[1] if held is not None else VectorTable(db, model)
    _local[key] = (ident, table)   # most recently used last
    while len(_local) > LOCAL_TABLES:
        _old_key, (_ident, old) = next(iter(_local.items()))
        del _local[_old_key]
        old.close()
    return table


def lacking_in_process(db: Path, model: str) -> bool:
    """VectorTable.lacking, with this process's table for `db` (which the ranking then uses as it is)."""
    with _local_lock:
        return local_table(db, model).lacking()


def skips_in_process(db: Path, model: str) -> list[str]:
    """Why this process's table for `db` did not use or write its vector file since last asked (its caller logs)."""
    with _local_lock:
        held = _local.get((str(db), model))
        if held is None:
            return []
        skips, held[1].skips = held[1].skips, []
        return skips


def rank_in_process(db_paths: Sequence[Path], embedder: Any, query: str, k: int) -> dict[str, list[tuple[str, float]]]:
    [qvec] = embedder.embed([query])
    with _local_lock:
        return {str(db): local_table(db, embedder.name).rank(qvec, k) for db in db_paths}
