"""Atomic writes and cross-process locks: the two primitives that keep two sessions from tearing a file.

Every write goes to a temp file in the destination's own folder, is fsynced, then renamed over the target, so a
reader sees the old file or the new one and never half of either. Every read-modify-write holds an exclusive
`flock` on a lock file; the lock is re-entrant within a process so nested store calls do not deadlock.
"""
from __future__ import annotations

import contextlib
import os
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


def _fsync_dir(folder: Path | str) -> None:
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


PRIVATE_DIR = 0o700    # the user's own folders (their store, a store's machine-local ones): nobody else's to read
PRIVATE_FILE = 0o600


def private_dir(folder: Path) -> None:
    """Make `folder` and any missing folder above it 0700, whatever the umask (each made one is chmod'ed
    explicitly: a umask of 000 makes no folder of rose's open to others). Folders that were there are left as
    they are: whether they may be trusted is the caller's question (rose.ownership)."""
    missing: list[Path] = []
    current = folder
    while not current.exists() and current.parent != current:
        missing.append(current)
        current = current.parent
    for one in reversed(missing):
        try:
            os.mkdir(one, PRIVATE_DIR)
        except FileExistsError:
            continue          # another process made it first: its mode is its maker's (rose's makes are 0700)
        os.chmod(one, PRIVATE_DIR)


def create_private(path: Path) -> None:
    """Make sure `path` exists as a 0600 regular file of this user's, whatever the umask, before a library that
    creates files with modes of its own (SQLite: 0644) opens it; a file that is there already and ours is closed
    to others too. Never through a link (O_NOFOLLOW). SQLite gives a database's -wal and -shm its mode."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_NONBLOCK", 0), PRIVATE_FILE)
    try:
        st = os.fstat(fd)
        if st.st_uid == os.geteuid() and st.st_mode & 0o077:
            os.fchmod(fd, PRIVATE_FILE)
    finally:
        os.close(fd)


TEMP_SUFFIX = ".tmp"
STRAY_TEMP_AGE_S = 3600.0   # a temp file this old is stray even if a process with its writer's pid is alive


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new private file `.<name>.<pid>.<random>.tmp` beside `path`, created exclusively (never followed, never
    reused). tempfile.mkstemp does the same, but importing tempfile costs every hook shutil, bz2, lzma and random."""
    return _temp_in(str(path.parent), path.name)


def _temp_in(folder: str, name: str, unique: str = "") -> tuple[int, str]:
    """_temp_beside by folder and name; `unique` (a batch's pid, token and count, see FileBatch) is tried first
    as the pid and random parts: O_EXCL still refuses any name taken, and the random names follow."""
    if unique:
        tmp = os.path.join(folder, f".{name}.{unique}{TEMP_SUFFIX}")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o600), tmp
        except FileExistsError:
            pass
    for _ in range(100):
        tmp = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(6).hex()}{TEMP_SUFFIX}")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temp name beside {os.path.join(folder, name)}")


def write_bytes_atomic(path: Path, data: bytes | list[bytes | memoryview], mode: int | None = None) -> None:
    """Write `data` (or its pieces one after another: a splice of a large file, never joined in memory) to `path`
    so a reader sees the old file or the new one, never half of either.

    The temp file is named `.<name>.<pid>.<random>.tmp` beside the target, so one left by a writer that was killed
    is recognised as stray (its pid is gone) and removed by `clean_stray_temps`. `mode` sets the file's mode (the
    default is mkstemp's 0600: rose's files are the user's own)."""
    private_dir(path.parent)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            if isinstance(data, bytes):
                handle.write(data)
            else:
                handle.writelines(data)
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


class FileBatch:
    """Many atomic writes made durable together (a bulk save): one flush of the file system instead of two fsyncs
    a file. Each file goes to its temp beside the target at once; `commit` flushes every temp to disk with one
    sync, then renames each over its target and fsyncs each folder once. Killed before the renames, no target
    changed (the temps are stray, and clean_stray_temps removes them); after, each target is whole and durable. A
    reader sees the old file or the new one, never half of either, exactly as with write_bytes_atomic."""

    def __init__(self) -> None:
        self._pending: list[tuple[str, str]] = []
        self._unlinks: list[Path] = []
        self._folders: set[str] = set()   # made (or found) already: one mkdir per folder a batch, not per file
        # the temps' pid and random parts: once a batch, with a count, not a getpid and a getrandom call a file
        # (O_EXCL still refuses a name taken; clean_stray_temps reads the pid as from any temp)
        self._token = f"{os.getpid()}.{os.urandom(4).hex()}"
        self._count = 0

    def write_text(self, path: Path | str, text: str) -> os.stat_result:
        """The temp file written (not yet durable, not yet in place); its stat is the target's after the rename.
        `path` may be text (a bulk save joins it as text: no pathlib a lesson)."""
        return self.write_bytes(path, text.encode("utf-8", "surrogatepass"))

    def write_bytes(self, path: Path | str, data: bytes) -> os.stat_result:
        """write_text of text already encoded (a bulk save encodes a lesson once, for its clean digest and this)."""
        folder, name = os.path.split(os.fspath(path))
        if folder not in self._folders:
            private_dir(Path(folder))
            self._folders.add(folder)
        self._count += 1
        fd, tmp = _temp_in(folder, name, f"{self._token}{self._count:x}")
        try:
            try:
                view = memoryview(data)
                while view:   # a raw write may take less than all of it
                    view = view[os.write(fd, view):]
                st = os.fstat(fd)
            finally:
                os.close(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._pending.append((tmp, os.fspath(path)))
        return st

    def unlink_after(self, path: Path) -> None:
        """Remove `path` once the batch's files are in place (a moved file's old copy goes only after its new one
        is durable)."""
        self._unlinks.append(path)

    def __len__(self) -> int:
        return len(self._pending) + len(self._unlinks)

    def commit(self) -> None:
        if not self._pending and not self._unlinks:
            return
        if self._pending:
            _sync_file_system(self._pending[0][0])
        folders: dict[str, None] = {}   # in first-touched order, each once
        for tmp, target in self._pending:
            os.replace(tmp, target)
            folders[os.path.dirname(target)] = None
        self._pending = []
        for path in self._unlinks:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            folders[str(path.parent)] = None
        self._unlinks = []
        for folder in folders:
            _fsync_dir(folder)

    def abort(self) -> None:
        """Nothing of an uncommitted batch reaches a target: its temps are removed."""
        for tmp, _path in self._pending:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        self._pending = []
        self._unlinks = []


def _sync_file_system(any_file: str) -> None:
    """Every written page of the file system holding `any_file` on disk: syncfs(2) where there is one (only that
    file system), else sync(2)."""
    try:
        import ctypes

        syncfs = ctypes.CDLL(None, use_errno=True).syncfs   # the process's own libc (no ldconfig search)
    except (OSError, AttributeError):
        os.sync()
        return
    fd = os.open(any_file, os.O_RDONLY)
    try:
        if syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)


def move_file(source: Path, dest: Path, *, sync: bool = True) -> None:
    """Move a file by one atomic rename (same filesystem): at every instant it is at exactly one of the two paths.
    Never over another file: a destination that exists is an error, not a silent loss. Both folders are synced
    unless the caller syncs them once for a batch (`sync=False`; a process killed before that loses nothing, the
    file is at one of the two paths either way)."""
    private_dir(dest.parent)
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


def lock_or_close(fd: int) -> int | None:
    """Take an exclusive lock on `fd` without waiting: the fd, now holding it, or None (closed) when another
    process holds it. For locks that mean "one of these runs" (the learner, an index build, the warm helper)."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def try_lock_file(path: Path) -> int | None:
    """`lock_or_close` on a lock file of rose's own (made 0600, a symlink in its place refused)."""
    private_dir(path.parent)
    return lock_or_close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600))


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
        private_dir(path.parent)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                     PRIVATE_FILE)
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
