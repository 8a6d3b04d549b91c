"""The vector file: one embedder's vectors of one index as a single file beside index.db, memory-mapped.

A command without a warm helper used to read every vector row from SQLite (160-210 ms at 50,000 lessons) only to
join the blobs again; this file holds them already joined. It is derived and machine-local (`index.db-*`, ignored
by git) and trusted only while the index itself says it is current: migration 0013's `vector_state` row holds the
index's own identity (made with the index file: a rebuilt index.db is a new index), a tag every write to
`embeddings` replaces (a trigger, so every writer keeps it, in the writer's own transaction) and a tag every hot
lesson row inserted, or changed in id, text or coldness, replaces. The file's header names the identity and the
vectors tag it was read at, and, when the one who wrote it had found no hot lesson lacking a vector, the lessons
tag of that finding.

Before use the file is checked: opened without following a link, a regular file of this user's, no group or other
permission bits, its size what its header says, the header's magic, identity, model and tag, and a checksum of the
header, ids, text hashes and blob sizes. The vector bytes themselves are not summed (24 ms at 50,000 lessons, more
than the rest of the check): a file rose wrote is complete (temp file, fsync, rename), and what else could change
them is an in-place write by this same user. Anything amiss is a skip its caller logs; the caller reads SQLite instead and
writes the file again. A stale tag is no skip, only a rewrite.
"""
from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

from rose.typedrecord import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

MAGIC = b"ROSEVEC1"
# magic, identity (32 hex), vectors tag, lessons tag, marked (0/1), count, then the byte lengths of the model name,
# the ids, the text hashes and the vectors, and the checksum
_HEAD = struct.Struct("<8s32sqqqQQQQQQ")
_ALIGN = 64   # the vectors start on a cache line: numpy reads them in place
STATE_SQL = "SELECT identity, vectors, nodes FROM vector_state"


class Tags(NamedTuple):
    """What the index says of its vectors now (migration 0013's vector_state)."""
    identity: str
    vectors: int
    nodes: int


class Vectors(NamedTuple):
    """One space's vector rows, in the order read: ids, text hashes, each blob's length, and the blobs joined."""
    ids: list[str]
    hashes: list[str]
    sizes: Any        # numpy int64 array
    joined: Any       # bytes or a memoryview of the mapped file
    complete_at: int | None   # the lessons tag at which no hot lesson lacked a vector (None: not known)


def path_for(db_path: Path, model: str) -> Path:
    """Beside index.db, one per space (`index.db-*`: machine-local, ignored by git like the database's own)."""
    return db_path.with_name(f"{db_path.name}-vectors-{zlib.crc32(model.encode('utf-8')):08x}")


def index_tags(conn: sqlite3.Connection) -> Tags | None:
    """The index's tags; None for an index without them (older than migration 0013): no file is used then."""
    import sqlite3

    try:
        row = conn.execute(STATE_SQL).fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else Tags(str(row[0]), int(row[1]), int(row[2]))


def _checksum(head: bytes, parts: Sequence[bytes | memoryview]) -> int:
    crc = zlib.crc32(head)
    for part in parts:
        crc = zlib.crc32(part, crc)
    return crc


def _pad(length: int) -> int:
    return -length % _ALIGN


def write(path: Path, tags: Tags, model: str, vectors: Vectors) -> None:
    """The file for `vectors`, read at `tags` (its lessons tag recorded only when `vectors.complete_at` says so),
    written atomically with mode 0600."""
    import array

    from rose.store.atomic import write_bytes_atomic

    model_b = model.encode("utf-8")
    ids_b = "\n".join(vectors.ids).encode("utf-8", "surrogatepass")
    hashes_b = "\n".join(vectors.hashes).encode("utf-8", "surrogatepass")
    sizes_b = array.array("q", (int(s) for s in vectors.sizes)).tobytes()
    data = vectors.joined
    marked = vectors.complete_at is not None
    fields = (MAGIC, tags.identity.encode("ascii"), tags.vectors, vectors.complete_at if marked else 0, int(marked),
              len(vectors.ids), len(model_b), len(ids_b), len(hashes_b), len(data))
    crc = _checksum(_HEAD.pack(*fields, 0), (model_b, ids_b, hashes_b, sizes_b))
    head = _HEAD.pack(*fields, crc)
    before = len(head) + len(model_b) + len(ids_b) + len(hashes_b) + len(sizes_b)
    write_bytes_atomic(path, [head, model_b, ids_b, hashes_b, sizes_b, b"\0" * _pad(before), data], mode=0o600)


def read(path: Path, tags: Tags, model: str, np: Any, skips: list[str], uid: int | None = None) -> Vectors | None:
    """The file's vectors when it is this index's at `tags` and passes every check; None when it is missing or
    stale (rewrite it), or rejected (why is appended to `skips`, for the caller to log: this layer sits under the
    store's event log). `uid`: whose file it must be (this user's)."""
    try:
        found = _read(path, tags, model, np, os.geteuid() if uid is None else uid)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:   # unreadable, or not mappable: a reason like any other
        found = f"{type(exc).__name__}: {exc}"
    if isinstance(found, str):
        skips.append(f"{path.name}: {found}")
        return None
    return found


STALE = None   # _read's answer for another index's file, or this one's before a vector write: rewritten, no skip


def _read(path: Path, tags: Tags, model: str, np: Any, uid: int) -> Vectors | str | None:
    """The vectors, STALE, or why the file is rejected."""
    import mmap

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        if os.path.islink(path):
            return "a symbolic link"
        raise
    try:
        from rose.ownership import not_own

        st = os.fstat(fd)
        why = not_own(st, uid)
        if why is not None:
            return why
        if st.st_size < _HEAD.size:
            return "shorter than its header"
        # read-only, its pages faulted in by one call where the system can (10 ms at 50,000 lessons where reading
        # the bytes into memory costs 50)
        populate = getattr(mmap, "MAP_POPULATE", None)
        mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if populate is None else \
            mmap.mmap(fd, 0, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ)
    finally:
        os.close(fd)
    view = memoryview(mapped)
    (magic, identity, vectors_tag, nodes_tag, marked, count, model_len, ids_len, hashes_len, data_len,
     crc) = _HEAD.unpack_from(view)
    if magic != MAGIC:
        return "not a rose vector file"
    if identity != tags.identity.encode("ascii") or vectors_tag != tags.vectors:
        return STALE
    at = _HEAD.size
    ends = at + model_len, at + model_len + ids_len, at + model_len + ids_len + hashes_len
    sizes_end = ends[2] + 8 * count
    data_at = sizes_end + _pad(sizes_end)
    if st.st_size != data_at + data_len:
        return f"{st.st_size} bytes where its header says {data_at + data_len}"
    parts = view[at:ends[0]], view[ends[0]:ends[1]], view[ends[1]:ends[2]], view[ends[2]:sizes_end]
    fields = (magic, identity, vectors_tag, nodes_tag, marked, count, model_len, ids_len, hashes_len, data_len)
    if _checksum(_HEAD.pack(*fields, 0), parts) != crc:
        return "checksum mismatch"
    if bytes(parts[0]) != model.encode("utf-8"):
        return STALE   # (a crc32 of the name collided: another space's file)
    ids = bytes(parts[1]).decode("utf-8", "surrogatepass").split("\n") if count else []
    hashes = bytes(parts[2]).decode("utf-8", "surrogatepass").split("\n") if count else []
    sizes = np.frombuffer(parts[3], dtype="<i8").astype(np.int64)
    if len(ids) != count or len(hashes) != count or int(sizes.sum()) != data_len or (sizes < 0).any():
        return "its ids, hashes and sizes disagree with its header"
    return Vectors(ids, hashes, sizes, view[data_at:data_at + data_len], nodes_tag if marked else None)
