"""Dense ranking: cosine of the query against every stored vector of one embedder's space.

A lesson's row may hold several vectors one after another (a long lesson's chunks, rose.embed.chunk_texts): the
matrix has one row per vector, and a lesson's cosine is its best row's."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


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
        self.ids: list[str] = []
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self._rows: list[tuple[str, bytes]] = []
        self._dim = -1
        self._starts = np.zeros(0, dtype=np.intp)
        self._chunked = False

    def version(self) -> tuple[int, int]:
        """Changes whenever a vector of this space is added, replaced or removed (not on other index writes)."""
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
        # data_version is free and changes on any commit by another connection; only then is the (table-scanning)
        # vector version worth asking, and only a changed vector version reloads the matrix
        data_version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        if data_version == self._data_version and self._version != (-1, -1):
            return
        self._data_version = data_version
        version = self.version()
        if version == self._version:
            return
        self._rows = self._conn.execute("SELECT node_id, vec FROM embeddings WHERE model=?", (self.model,)).fetchall()
        self.ids = [r[0] for r in self._rows]
        self._dim = -1   # the matrix is laid out when the first query says the dimension
        self._version = version

    def _layout(self, dim: int) -> bool:
        """One matrix row per vector, and where each lesson's rows start; False when no vector fits `dim`."""
        if dim == self._dim:
            return bool(self.ids)
        np = self._np
        ids, blocks, starts, at = [], [], [], 0
        for node_id, blob in self._rows:
            vec = np.frombuffer(blob, dtype=np.float32)
            if vec.size == 0 or vec.size % dim:
                continue   # another space's vector under this name (never written): skipped, not misread
            block = vec.reshape(-1, dim)
            ids.append(node_id)
            blocks.append(block)
            starts.append(at)
            at += block.shape[0]
        self.ids = ids
        self.matrix = np.vstack(blocks) if blocks else np.zeros((0, dim), dtype=np.float32)
        self._starts = np.asarray(starts, dtype=np.intp)
        self._chunked = at != len(ids)
        self._dim = dim
        return bool(ids)

    def rank(self, query: Sequence[float], k: int, refresh: bool = True) -> list[tuple[str, float]]:
        """The k best lessons for `query`; `refresh=False` ranks with the vectors loaded (the warm helper reloads a
        changed table in the background, never inside a request)."""
        if refresh:
            self.refresh()
        np = self._np
        q = np.asarray(query, dtype=np.float32)
        if not self._rows or not self._layout(int(q.shape[0])):
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


def rank_in_process(db_paths: Sequence[Path], embedder: Any, query: str, k: int) -> dict[str, list[tuple[str, float]]]:
    [qvec] = embedder.embed([query])
    out = {}
    for db in db_paths:
        table = VectorTable(db, embedder.name)
        try:
            out[str(db)] = table.rank(qvec, k)
        finally:
            table.close()
    return out
