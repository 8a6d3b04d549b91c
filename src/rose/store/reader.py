"""The one way rose reads a file a repository can commit into a store (or a hostile checkout script, or a shared
folder, can make there): a regular file, within a size fit for it, never through a link that leaves the store.

A repository is untrusted. git commits symlinks, and a script or a synced folder can leave a FIFO or a device
node; `Path.read_text` on a link to /dev/zero reads until memory runs out, and on a FIFO it waits for a writer
that never comes, so a hook would block past its deadline and a command would never end. Here a file is opened
with O_NOFOLLOW (a link is refused by the open itself, or followed only to a target inside `within`, the store) and
O_NONBLOCK (a FIFO's open returns at once), then fstat'ed before a byte is read: anything but a regular file is
refused, and so is a file larger than the limit its caller names (a clear one-line error, UnsafeFile); the read
itself stops one byte past the limit, so a file that grows while it is read is refused too. UnsafeFile is an
OSError, so a reader that skips an unreadable file (a corrupt lesson, a torn cache) skips this one the same way,
and says so where its file is the user's (a problem entry, a logged skip).

Stdlib only, beside the other file primitives (rose.store.atomic): config and trust read through it.
"""
from __future__ import annotations

import errno
import os
import stat

from rose.errors import UnsafeFile
from rose.store.paths import inside

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

# How much each kind of store file may hold before it is refused unread, not how much it usually holds.
SMALL = 1 << 20       # what a person or rose writes a few lines of, parsed as YAML (config.yaml, a selection rule):
                      # 1 MiB of YAML is seconds of a prompt's parse already
RECORD = 16 << 20     # one record as JSON or a lesson (an episode, a session's scratch, a queued job, a cache file)
LOG = 512 << 20       # what only grows with use (usage.jsonl, the archive's catalog, events, the learner's log)

FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
         | getattr(os, "O_NOCTTY", 0))
_CHUNK = 1 << 16
_LINK_ERRNOS = {errno.ELOOP, getattr(errno, "EMLINK", errno.ELOOP), getattr(errno, "EFTYPE", errno.ELOOP)}


def kind(mode: int) -> str:
    """What a file of this mode is, in words."""
    if stat.S_ISREG(mode):
        return "regular file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISLNK(mode):
        return "symbolic link"
    return "special file"


def open_regular(path: Path | str, within: Path | str | None = None) -> tuple[int, os.stat_result]:
    """A descriptor on `path` and its fstat, only when it is a regular file. A symbolic link is refused, unless
    `within` is given and the link resolves to a path inside it (then its target is opened the same way). Raises
    UnsafeFile for a link, a FIFO, socket, device or directory; the open's own OSError otherwise
    (FileNotFoundError for a miss). Never blocks: O_NONBLOCK, and nothing is read."""
    try:
        fd = os.open(path, FLAGS)
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS and os.path.islink(path):
            if within is None:
                raise UnsafeFile(path, "is a symbolic link: rose reads no link in a store") from None
            target, root = os.path.realpath(path), os.path.realpath(within)
            if not inside(target, root):
                raise UnsafeFile(path, f"is a symbolic link to {target}, outside {root}: not followed") from None
            fd, st = open_regular(target)
            return fd, st
        if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):   # a socket: no open at all
            raise UnsafeFile(path, "is a socket, not a regular file: not read") from None
        raise
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnsafeFile(path, f"is a {kind(st.st_mode)}, not a regular file: not read")
    return fd, st


APPEND_FLAGS = (os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))


def open_append(path: os.PathLike[str] | str, read: bool = False) -> int:
    """A descriptor to append to `path` (made 0600 when missing; readable too when `read`), only when it is a
    regular file: a link (O_NOFOLLOW), a FIFO (whose open would wait for a reader, or whose buffer would fill), a
    device or a folder is refused with UnsafeFile, so a line meant for a log never lands anywhere else."""
    flags = (APPEND_FLAGS & ~os.O_WRONLY) | os.O_RDWR if read else APPEND_FLAGS
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS and os.path.islink(path):
            raise UnsafeFile(path, "is a symbolic link: rose writes through no link in a store") from None
        if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP, errno.EISDIR):   # a FIFO with no reader, a socket, a folder
            raise UnsafeFile(path, "is not a regular file: not written") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafeFile(path, f"is a {kind(mode)}, not a regular file: not written")
    return fd


def _too_big(path: Path | str, size: int | str, limit: int) -> UnsafeFile:
    return UnsafeFile(path, f"holds {size} bytes, more than the {limit} rose reads from such a file: not read")


def read_fd(path: Path | str, fd: int, st: os.stat_result, limit: int) -> bytes:
    """The rest of an open regular file's bytes, refusing (UnsafeFile) more than `limit` of them."""
    if st.st_size > limit:
        raise _too_big(path, st.st_size, limit)
    first = os.read(fd, min(limit + 1, max(st.st_size + 1, _CHUNK)))
    chunks, total = [first], len(first)
    while first and total <= limit:
        first = os.read(fd, min(_CHUNK, limit + 1 - total))
        chunks.append(first)
        total += len(first)
    if total > limit:
        raise _too_big(path, f"over {limit}", limit)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_bytes(path: Path | str, limit: int = RECORD, within: Path | str | None = None) -> bytes:
    """A store file's bytes: a regular file only, at most `limit` of them, a link followed only inside `within`.
    Raises UnsafeFile (an OSError) for anything else, and the open's OSError for a miss."""
    fd, st = open_regular(path, within)
    try:
        return read_fd(path, fd, st, limit)
    finally:
        os.close(fd)


def read_text(path: Path | str, limit: int = RECORD, within: Path | str | None = None,
              errors: str = "strict") -> str:
    """read_bytes as UTF-8 text (UnicodeDecodeError, a ValueError, for bytes that are not, unless `errors`)."""
    return read_bytes(path, limit, within).decode("utf-8", errors)


def read_private(path: Path | str, limit: int = RECORD) -> bytes:
    """A file only this user could have written, read as read_bytes does: a regular file (never through a link)
    owned by this user and closed to group and others (0600, as rose writes its own). Raises UnsafeFile for any
    other, so a cache or a record another user made, or could have rewritten, is never taken as the user's own."""
    from rose.ownership import not_own

    fd, st = open_regular(path)
    try:
        why = not_own(st, os.geteuid())
        if why is not None:
            raise UnsafeFile(path, f"{why}: not read as your own")
        return read_fd(path, fd, st, limit)
    finally:
        os.close(fd)
