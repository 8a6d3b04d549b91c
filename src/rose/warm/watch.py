"""The warm helper's inotify watch on its stores' lesson folders: when it has seen no event under a store since
that store's last full sync, the next sync may skip the per-file stat (rose.store.index.WATCH).

Race-free by construction: a full sync first adds the watches (a new family folder gets its own), drains what the
kernel queued and marks the store clean; only then does it scan, so an event during the scan marks it dirty again
and a folder made before its watch existed is read by that scan. A check drains the queue itself (non-blocking)
before it answers, so a write that returned before the command was sent is always seen: the kernel queues an
event inside the writing call. Any doubt answers "changed" (the full stat path): not Linux, no libc, a filesystem
whose events are not known to be reliable, a watch that failed to add (ENOSPC: the user's watch limit), a queue
overflow, a watch removed under us, an index another process brought in line since.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ONLYDIR = 0x4000, 0x8000, 0x01000000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
FOLDER_EVENTS = (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB
                 | IN_DELETE_SELF | IN_MOVE_SELF)
ROOT_EVENTS = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF
_EVENT = struct.Struct("iIII")   # struct inotify_event: wd, mask, cookie, len (then len bytes of name)

# statfs f_type of local filesystems whose inotify events reflect every change (network and FUSE ones need not:
# a write on another machine, or behind the FUSE daemon, raises no event here)
LOCAL_FS = frozenset({0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0x794C7630, 0x2FC12FC1, 0xF2F52010,
                      0x3153464A, 0x52654973})   # ext2/3/4, xfs, btrfs, tmpfs, overlay, zfs, f2fs, jfs, reiserfs


class _Libc:
    """inotify and statfs through ctypes; None (see `load`) where they are not to be had."""

    def __init__(self, lib: ctypes.CDLL):
        self.lib = lib
        self.lib.inotify_init1.argtypes = [ctypes.c_int]
        self.lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.lib.statfs.argtypes = [ctypes.c_char_p, ctypes.c_void_p]

    def init(self) -> int:
        fd = self.lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        return int(fd)

    def add_watch(self, fd: int, path: str, mask: int) -> int:
        wd = self.lib.inotify_add_watch(fd, os.fsencode(path), mask)
        if wd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), path)
        return int(wd)

    def fs_type(self, path: str) -> int | None:
        buf = ctypes.create_string_buffer(256)   # struct statfs is 120 bytes on x86-64; f_type comes first
        if self.lib.statfs(os.fsencode(path), buf) != 0:
            return None
        return ctypes.c_long.from_buffer(buf).value & 0xFFFFFFFF


def load() -> _Libc | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        name = ctypes.util.find_library("c") or "libc.so.6"
        return _Libc(ctypes.CDLL(name, use_errno=True))
    except (OSError, AttributeError):
        return None


@dataclass
class _Store:
    root: str
    tops: frozenset[str]                 # names of the record folders (nodes, archive) in the root
    wds: set[int] = field(default_factory=set)
    folders: set[str] = field(default_factory=set)   # paths watched
    clean: bool = False                  # no event since the mark below
    stamp: str | None = None             # the index's full_scan mark when the store was last brought in line


class Watch:
    """One inotify instance for every store the helper syncs. Thread-safe: commands run on several threads."""

    def __init__(self, libc: _Libc | None = None, fd: int | None = None):
        self._libc = libc
        self._fd = fd
        self._lock = threading.Lock()
        self._stores: dict[str, _Store] = {}
        self._by_wd: dict[int, tuple[_Store, bool]] = {}   # wd -> (store, is the store root)
        self.healthy = fd is not None

    @classmethod
    def open(cls) -> Watch:
        libc = load()
        if libc is None:
            return cls()
        try:
            return cls(libc, libc.init())
        except OSError:
            return cls()

    def close(self) -> None:
        with self._lock:
            fd, self._fd, self.healthy = self._fd, None, False
            self._stores.clear()
            self._by_wd.clear()
        if fd is not None:
            os.close(fd)

    @property
    def closed(self) -> bool:
        return self._fd is None

    # -- the index's side (rose.store.index.WATCH) --------------------------------------------------------
    def quiet(self, root: Path, stamp: str | None) -> bool:
        """True only when this store was brought in line under a healthy watch, with this full_scan mark, and no
        event has come under it since: its files are as the index has them."""
        with self._lock:
            if not self._drain():
                return False
            store = self._stores.get(os.path.realpath(root))
            return store is not None and store.clean and stamp is not None and store.stamp == stamp

    def arm(self, root: Path, dirs: Sequence[Path]) -> Callable[[str | None], None] | None:
        """Before a full scan: every folder watched, the queue drained, the store marked clean. Returns what the
        sync calls with its new full_scan mark once the scan brought the index in line (None: no watch)."""
        with self._lock:
            store = self._arm(os.path.realpath(root), dirs)
        if store is None:
            return None

        def done(stamp: str | None) -> None:
            with self._lock:
                if self._stores.get(store.root) is store:
                    store.stamp = stamp
        return done

    # -- inside the lock ------------------------------------------------------------------------------------
    def _arm(self, root: str, dirs: Sequence[Path]) -> _Store | None:
        if not self._drain() or self._libc is None or self._fd is None:
            return None
        kind = self._libc.fs_type(root)
        if kind not in LOCAL_FS:
            self._forget(root)
            return None
        store = self._stores.get(root)
        if store is None:
            store = self._stores[root] = _Store(root, frozenset(d.name for d in dirs))
        store.clean, store.stamp = False, None
        try:
            self._add(store, root, ROOT_EVENTS, is_root=True)
            for top in dirs:
                if not top.is_dir():
                    continue   # its creation is an event in the root
                self._add(store, str(top), FOLDER_EVENTS, is_root=False)
                with os.scandir(top) as subs:
                    for sub in subs:
                        if sub.is_dir(follow_symlinks=False) and not sub.name.startswith("."):
                            self._add(store, sub.path, FOLDER_EVENTS, is_root=False)
        except OSError as exc:   # ENOSPC: the watch limit; ENOENT: a folder gone meanwhile; either way, no trust
            if exc.errno == errno.ENOSPC:
                print(f"inotify watch limit reached under {root}: full scans", file=sys.stderr, flush=True)
            self._forget(root)
            return None
        if not self._drain():
            return None
        store.clean = True
        return store

    def _add(self, store: _Store, path: str, mask: int, *, is_root: bool) -> None:
        if path in store.folders:
            return
        assert self._libc is not None and self._fd is not None
        wd = self._libc.add_watch(self._fd, path, mask | IN_ONLYDIR)
        store.folders.add(path)
        store.wds.add(wd)
        self._by_wd[wd] = (store, is_root)

    def _forget(self, root: str) -> None:
        store = self._stores.pop(root, None)
        if store is not None:
            store.clean = False   # its watches stay in the kernel; their events are no longer matched to it
            for wd in store.wds:
                self._by_wd.pop(wd, None)

    def _drain(self) -> bool:
        """Read every queued event; False (and unhealthy for good) on an overflow or an unreadable queue."""
        if self._fd is None or not self.healthy:
            return False
        while True:
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                return True
            except OSError:
                self._fail()
                return False
            if not data:
                return True
            self._apply(data)
            if not self.healthy:
                return False

    def _apply(self, data: bytes) -> None:
        at = 0
        while at + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, at)
            name = data[at + _EVENT.size: at + _EVENT.size + length].rstrip(b"\0")
            at += _EVENT.size + length
            if mask & IN_Q_OVERFLOW:
                self._fail()
                return
            hit = self._by_wd.get(wd)
            if hit is None:
                continue
            store, is_root = hit
            if is_root and not mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) \
                    and os.fsdecode(name) not in store.tops:
                continue   # the index's own database, index.md, the usage log: not lesson folders
            store.clean = False
            if mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF):   # a watched folder gone: watch afresh
                store.folders.clear()
                for old in store.wds:
                    self._by_wd.pop(old, None)
                store.wds.clear()

    def _fail(self) -> None:
        self.healthy = False
        for store in self._stores.values():
            store.clean = False
