"""`python -m rose.store.build ROOT SCOPE`: finish indexing a store that a prompt could only start.

A fresh clone of a repository that commits a large `.rose/` has lesson files and no index.db. The prompt hook parses
what fits its share of the deadline (Index.sync `until`), serves that, names the rest on the notice, and starts this
job, detached, to parse the rest: one job per store at a time (a lock; a second one exits at once), committing a
batch every BATCH_S so every prompt meanwhile serves the lessons indexed so far. It ends with a full sync (usage
folded, index.md written), exactly as `rose index` would.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from rose.store.paths import local_root

BATCH_S = 2.0   # parsing between commits: prompts see progress, and no write transaction is held for long


def _lock_path(root: Path) -> Path:
    return local_root(root) / "locks" / "index-build.lock"


def _try_lock(root: Path) -> int | None:
    """The build lock of this store, held (a file descriptor), or None when a build holds it already."""
    from rose.store.atomic import try_lock_file

    return try_lock_file(_lock_path(root))


def running(root: Path) -> bool:
    fd = _try_lock(root)
    if fd is None:
        return True
    os.close(fd)
    return False


def start(root: Path, scope: str) -> bool:
    """Start the job for this store unless one runs. Returns whether one was started now."""
    if running(root):
        return False
    from rose.detach import python_module, spawn_detached

    return spawn_detached(python_module("rose.store.build", str(root), scope),
                          local_root(root) / "logs" / "index-build.log",
                          cwd=local_root(root)) is not None   # not the store: a repository fills that folder


def build(root: Path, scope: str) -> int:
    """Parse every file the index lacks, a batch at a time. Returns the files indexed."""
    from rose.model import Scope
    from rose.store.store import Store

    fd = _try_lock(root)
    if fd is None:
        return 0   # another build of this store is running
    store = Store(root, Scope(scope))
    done = 0
    try:
        while True:
            report = store.index.sync(store.nodes_dir, store._parse_for_index, until=time.monotonic() + BATCH_S)
            done += report.added + report.updated
            if not report.pending:
                break
        store.sync()   # the usage log folded and index.md written, as any command's sync does
    finally:
        store.close()
        os.close(fd)
    return done


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m rose.store.build ROOT SCOPE", file=sys.stderr)
        return 2
    from rose.detach import redact_own_output

    redact_own_output()
    print(f"indexed {build(Path(argv[0]), argv[1])} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
