"""Dense ranking: cosine of the query against every stored vector of one embedder's space."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


class VectorTable:
    """All vectors of one index in one space, as a matrix; reloaded when the index changed."""

    def __init__(self, db_path: Path, model: str):
        import sqlite3

        import numpy as np

        self._np = np
        self.db_path = db_path
        self.model = model
        self._conn = sqlite3.connect(db_path, timeout=5, check_same_thread=False)
        self._conn.execute("PRAGMA busy_timeout=5000")
        self._version: tuple[int, int] = (-1, -1)
        self._data_version = -1
        self.ids: list[str] = []
        self.matrix = np.zeros((0, 0), dtype=np.float32)

    def version(self) -> tuple[int, int]:
        """Changes whenever a vector of this space is added, replaced or removed (not on other index writes)."""
        row = self._conn.execute("SELECT count(*), coalesce(max(rowid), 0) FROM embeddings WHERE model=?",
                                 (self.model,)).fetchone()
        return int(row[0]), int(row[1])

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
        rows = self._conn.execute("SELECT node_id, vec FROM embeddings WHERE model=?", (self.model,)).fetchall()
        np = self._np
        self.ids = [r[0] for r in rows]
        self.matrix = (np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows]) if rows
                       else np.zeros((0, 0), dtype=np.float32))
        self._version = version

    def rank(self, query: Sequence[float], k: int) -> list[tuple[str, float]]:
        self.refresh()
        if not self.ids:
            return []
        np = self._np
        q = np.asarray(query, dtype=np.float32)
        if q.shape[0] != self.matrix.shape[1]:
            return []
        scores = self.matrix @ q
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
