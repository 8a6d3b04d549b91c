"""Atomic writes and cross-process locks: the two primitives that keep two sessions from tearing a file.

Every write goes to a temp file in the destination's own folder, is fsynced, then renamed over the target, so a
reader sees the old file or the new one and never half of either. Every read-modify-write holds an exclusive
`flock` on a lock file; the lock is re-entrant within a process so nested store calls do not deadlock.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from rose.errors import LockTimeout

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: fall back to an exclusive create loop
    fcntl = None  # type: ignore[assignment]

LOCK_TIMEOUT_S = 30.0      # a learner holds the lock for milliseconds; 30 s means something is stuck
LOCK_POLL_S = 0.005


def fsync_dir(folder: Path) -> None:
    """Make a folder's entries (a rename in or out of it) durable."""
    _fsync_dir(folder)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


TEMP_SUFFIX = ".tmp"
STRAY_TEMP_AGE_S = 3600.0   # a temp file this old is stray even if a process with its writer's pid is alive


def write_bytes_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write `data` to `path` so a reader sees the old file or the new one, never half of either.

    The temp file is named `.<name>.<pid>.<random>.tmp` beside the target, so one left by a writer that was killed
    is recognised as stray (its pid is gone) and removed by `clean_stray_temps`. `mode` sets the file's mode (the
    default is mkstemp's 0600: rose's files are the user's own)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def write_text_atomic(path: Path, text: str, mode: int | None = None) -> None:
    write_bytes_atomic(path, text.encode("utf-8", "surrogatepass"), mode=mode)


def move_file(source: Path, dest: Path, *, sync: bool = True) -> None:
    """Move a file by one atomic rename (same filesystem): at every instant it is at exactly one of the two paths.
    Never over another file: a destination that exists is an error, not a silent loss. Both folders are synced
    unless the caller syncs them once for a batch (`sync=False`; a process killed before that loses nothing, the
    file is at one of the two paths either way)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        raise FileExistsError(f"{dest} exists already: not moving {source} over it")
    os.rename(source, dest)
    if sync:
        _fsync_dir(dest.parent)
        _fsync_dir(source.parent)


def _writer_pid(name: str) -> int | None:
    parts = name.split(".")
    # ".<name>.<pid>.<random>.tmp" -> ['', <name parts...>, <pid>, <random>, 'tmp']
    if len(parts) >= 5 and parts[-3].isdigit():
        return int(parts[-3])
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stray_temps(folder: Path, *, recursive: bool = True, now: float | None = None) -> int:
    """Remove temp files whose writer is dead (or that are older than STRAY_TEMP_AGE_S). Returns how many.

    A writer killed between its temp file and the rename leaves the temp behind; the target itself is intact
    (the old version), so removing the temp loses nothing."""
    now = time.time() if now is None else now
    removed = 0
    if not folder.is_dir():
        return 0
    walker = os.walk(folder) if recursive else [(str(folder), [], os.listdir(folder))]
    for root, _dirs, files in walker:
        for name in files:
            if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
                continue
            full = os.path.join(root, name)
            try:
                age = now - os.lstat(full).st_mtime
            except FileNotFoundError:
                continue
            pid = _writer_pid(name)
            if age < STRAY_TEMP_AGE_S and (pid is None or pid == os.getpid() or _alive(pid)):
                continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(full)
                removed += 1
    return removed


class _Held(threading.local):
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.fds: dict[str, int] = {}


_held = _Held()
_process_locks: dict[str, threading.Lock] = {}
_process_locks_guard = threading.Lock()


def _thread_lock(key: str) -> threading.Lock:
    with _process_locks_guard:
        return _process_locks.setdefault(key, threading.Lock())


@contextlib.contextmanager
def file_lock(path: Path, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive lock named by `path` across processes (flock) and threads; re-entrant per thread."""
    key = str(path)
    if _held.counts.get(key):
        _held.counts[key] += 1
        try:
            yield
        finally:
            _held.counts[key] -= 1
        return
    deadline = time.monotonic() + timeout_s
    tlock = _thread_lock(key)
    if not tlock.acquire(timeout=timeout_s):
        raise LockTimeout(path, timeout_s)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _acquire(fd, path, deadline, timeout_s)
            _held.counts[key] = 1
            try:
                yield
            finally:
                _held.counts.pop(key, None)
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    finally:
        tlock.release()


def _acquire(fd: int, path: Path, deadline: float, timeout_s: float) -> None:
    if fcntl is None:  # pragma: no cover
        return
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout(path, timeout_s) from None
            time.sleep(LOCK_POLL_S)
