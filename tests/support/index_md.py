"""What the whole rewrite of index.md writes, for the tests that hold a splice equal to it."""
from __future__ import annotations

from rose.store import Store


def full_rewrite(store: Store) -> bytes:
    """What the whole rewrite writes for the index as it is (index.md is put back as it was)."""
    kept = store.index_md_path.read_bytes()
    with store.lock():
        store._write_index_md()
    full = store.index_md_path.read_bytes()
    store.index_md_path.write_bytes(kept)
    return full
