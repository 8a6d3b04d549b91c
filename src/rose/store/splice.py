"""A large sorted file changed by a few lines without handling its text in Python (index.md, 8.6 MB at 50,000
lessons): `FileView` reads only the bytes a bisection looks at, and `write_spliced` writes the new file as ranges
of the old one, copied by the kernel (copy_file_range, else sendfile, else read and write), with the new lines
between them, to a temp file renamed into place as every atomic write is (rose.store.atomic).

`stamp` names one file as it is on disk (device, inode, size, mtime and ctime in ns): a writer records its own
file's, and a later writer that finds the same stamp knows the file is still the bytes it wrote (any write,
rename onto it or chmod changes the ctime, which no user sets by hand)."""
from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Sequence
from pathlib import Path

from rose.errors import SourceChanged
from rose.store.atomic import _temp_beside, fsync_dir, private_dir

BLOCK = 4096
Piece = bytes | memoryview | tuple[int, int]   # bytes to write, or (offset, length) of the source file to copy



def stamp(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


class FileView:
    """The slicing, `find` and `rfind` of a newline that a bisection over a file's lines needs, read by pread in
    blocks (cached), so a file of any size costs a few small reads. Raises SourceChanged if the file got shorter."""

    def __init__(self, fd: int, size: int):
        self.fd = fd
        self.size = size
        self._blocks: dict[int, bytes] = {}

    def __len__(self) -> int:
        return self.size

    def _block(self, i: int) -> bytes:
        block = self._blocks.get(i)
        if block is None:
            want = min(BLOCK, self.size - i * BLOCK)
            block = os.pread(self.fd, want, i * BLOCK)
            if len(block) != want:
                raise SourceChanged(errno.EIO, "the file got shorter while it was read")
            self._blocks[i] = block
        return block

    def __getitem__(self, span: slice) -> bytes:
        start, stop, _ = span.indices(self.size)
        if start >= stop:
            return b""
        first, last = start // BLOCK, (stop - 1) // BLOCK
        data = b"".join(self._block(i) for i in range(first, last + 1))
        return data[start - first * BLOCK:stop - first * BLOCK]

    def find(self, sub: bytes, start: int, stop: int) -> int:
        """The first `sub` (one byte) in [start, stop), or -1."""
        assert len(sub) == 1
        stop = min(stop, self.size)
        i = start // BLOCK
        while start < stop:
            base = i * BLOCK
            at = self._block(i).find(sub, start - base, stop - base)
            if at >= 0:
                return base + at
            i += 1
            start = i * BLOCK
        return -1

    def rfind(self, sub: bytes, start: int, stop: int) -> int:
        """The last `sub` (one byte) in [start, stop), or -1."""
        assert len(sub) == 1
        stop = min(stop, self.size)
        if start >= stop:
            return -1
        i = (stop - 1) // BLOCK
        while stop > start:
            base = i * BLOCK
            at = self._block(i).rfind(sub, max(start, base) - base, stop - base)
            if at >= 0:
                return base + at
            stop = base
            i -= 1
        return -1


def write_spliced(path: Path, pieces: Sequence[Piece], source: int | None = None,
                  source_stamp: str | None = None) -> os.stat_result:
    """`path` made of `pieces` in order, atomically (a reader sees the old file or the new one): bytes written,
    (offset, length) ranges copied from the open file `source`. With `source_stamp`, the source is checked after
    the copy and SourceChanged raised (nothing replaced) if another program wrote it meanwhile. Returns the new file's
    stat after the rename (its ctime is the rename's: what `stamp` of the file in place gives)."""
    private_dir(path.parent)
    fd, tmp = _temp_beside(path)
    try:
        for piece in pieces:
            if isinstance(piece, tuple):
                assert source is not None
                _copy(source, fd, *piece)
            else:
                _write_all(fd, piece)
        if source is not None and source_stamp is not None and stamp(os.fstat(source)) != source_stamp:
            raise SourceChanged(errno.EAGAIN, f"{path} changed while it was copied")
        os.fsync(fd)
        os.replace(tmp, path)
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    fsync_dir(path.parent)
    return st


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:   # a raw write may take less than all of it
        view = view[os.write(fd, view):]


# errors that say "this way of copying is not available here" (an old kernel, another file system, a sandbox):
# the next way is tried, from the same offset (a failed call copied nothing)
_UNSUPPORTED = {errno.ENOSYS, errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EPERM,
                getattr(errno, "ENOTSUPP", 524)}


def _by_copy_file_range(src: int, dst: int, offset: int, length: int) -> int:
    return os.copy_file_range(src, dst, length, offset)   # the destination's own offset moves, as a write's


def _by_sendfile(src: int, dst: int, offset: int, length: int) -> int:
    return os.sendfile(dst, src, offset, length)


def _by_read(src: int, dst: int, offset: int, length: int) -> int:
    data = os.pread(src, min(length, 1 << 20), offset)
    if data:
        _write_all(dst, data)
    return len(data)


_WAYS = [way for way, name in ((_by_copy_file_range, "copy_file_range"), (_by_sendfile, "sendfile"))
         if hasattr(os, name)] + [_by_read]


def _copy(src: int, dst: int, offset: int, length: int) -> None:
    while length > 0:
        way = _WAYS[0]
        try:
            n = way(src, dst, offset, length)
        except OSError as exc:
            if exc.errno not in _UNSUPPORTED or way is _by_read:
                raise
            with contextlib.suppress(ValueError):   # another thread may have dropped it first
                _WAYS.remove(way)   # not here: not tried again in this process
            continue
        if n <= 0:
            raise SourceChanged(errno.EIO, "the file got shorter while it was copied")
        offset += n
        length -= n
