"""Index connections kept open between the warm helper's requests (rose.store.index.POOL, which only the helper
sets): a prompt opened two (its project's store and the global one) and closed them again, about 0.5 ms of CPU
each in connecting, setting the journal mode, checking the migrations and parsing the schema, and every query
then began with an empty page cache. Each connection is one request's at a time (taken, then given back), is
given back only outside a transaction, and is used again only while its file is the same file (a deleted and
rebuilt index.db is a new one: its old connections are closed).
"""
from __future__ import annotations

import _thread
import os
import sqlite3

PER_INDEX = 4   # idle connections kept per index file: requests that overlap each take their own


def identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the file at `path`, or None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class Pool:
    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._idle: dict[str, list[tuple[tuple[int, int], sqlite3.Connection]]] = {}

    def take(self, path: str) -> tuple[tuple[int, int], sqlite3.Connection] | None:
        """An idle connection to the file now at `path` (with that file's identity), or None: open one."""
        now = identity(path)
        stale: list[sqlite3.Connection] = []
        found = None
        with self._lock:
            idle = self._idle.get(path, [])
            while idle:
                ident, conn = idle.pop()
                if ident == now:
                    found = (ident, conn)
                    break
                stale.append(conn)
        for conn in stale:
            conn.close()
        return found

    def give(self, path: str, ident: tuple[int, int] | None, conn: sqlite3.Connection) -> bool:
        """Keep `conn` for the next request; False (the caller closes it) when it is inside a transaction, its
        file's identity is unknown or the index has PER_INDEX idle ones already."""
        if ident is None or conn.in_transaction:
            return False
        with self._lock:
            idle = self._idle.setdefault(path, [])
            if len(idle) >= PER_INDEX:
                return False
            idle.append((ident, conn))
        return True

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, {}
        for conns in idle.values():
            for _ident, conn in conns:
                conn.close()
