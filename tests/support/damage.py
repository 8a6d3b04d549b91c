"""Damage an index.db the way a disk fault or a half-synced copy does, deterministically."""
from __future__ import annotations

import sqlite3
from pathlib import Path

PAGE_PATTERN = bytes(range(256)) * 16   # one 4 KiB page of bytes no b-tree page begins with


def damage_lessons_table(db: Path) -> None:
    """Overwrite the pages holding the lessons' rows and their full text, leaving the header, the schema and the
    migrations table whole: the index opens and migrates cleanly, and the first query that reads a lesson fails."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    roots = [page for name, page in conn.execute("SELECT name, rootpage FROM sqlite_master WHERE rootpage > 1")
             if name == "nodes" or name.endswith("_data")]
    conn.close()
    assert page_size == len(PAGE_PATTERN) and roots
    with open(db, "r+b") as handle:
        for page in roots:
            handle.seek((page - 1) * page_size)
            handle.write(PAGE_PATTERN)
