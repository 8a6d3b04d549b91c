"""Learning work as files, and the one learner that works through it.

Claude Code kills SessionEnd hooks after about 1.5 s and a Stop hook blocks the user, so hooks only write a small
job file into the store's `queue/` and ask for a learner, then return. A job stays in the queue until it is done,
so an outage (no backend, a crash, a deadline) loses nothing.

At most one learner runs per user (so at most one per store, and a bound across stores). Its lock is taken by the
hook that starts it, non-blocking, and handed to the child as an inherited file descriptor, so two hooks at the
same moment never start two learners: the second finds the lock held and only queues. Which stores have work is
recorded beside the lock (`pending/`, one file per store), so the one learner serves every store of the user and
exits when no job is due. The order of the two sides makes that race-free:

    hook:     enqueue the job -> mark the store pending -> try the lock (held: done, the learner will see the mark)
    learner:  ... no store has a due job -> release the lock -> look at the marks again -> re-take it, or exit

A job that fails is counted and backed off (BACKOFF_S doubling); after MAX_ATTEMPTS it moves to `queue/dead/`
with its reason, which `rose doctor` reports. One bad job never blocks the ones behind it.
"""
from __future__ import annotations

import contextlib
import json
import os
import time
from enum import Enum
from pathlib import Path

from rose.text import load_json
from rose import envvars
from rose.model import now_iso
from rose.store import Store
from rose.store import reader
from rose.store.atomic import private_dir, write_text_atomic
from rose.typedrecord import Record, asdict, field

MAX_ATTEMPTS = 5            # a job that keeps failing is set aside (queue/dead/) after this many tries
BACKOFF_S = 60.0            # wait after the first failure; doubles with each further one
MAX_BACKOFF_S = 6 * 3600.0
NO_BACKEND_WAIT_S = 600.0   # a job waiting for a model backend is looked at again after this (not a failure)
LOCK_FD_ENV = envvars.LEARNER_LOCK_FD
INHERITED_FD = 3            # the fd number the learner finds its lock at


class JobKind(str, Enum):
    SESSION_END = "session_end"    # attribution, an episode, then minting from what is left
    REFLECT = "reflect"            # mid-session: minting from the new part of the transcript


class Job(Record):
    kind: JobKind
    session_id: str
    transcript_path: str
    agent: str
    cwd: str
    fork: bool = False             # reflection.mode fork: judge calls fork the live session instead of a digest
    created: str = field(default_factory=now_iso)
    attempts: int = 0
    last_error: str = ""
    not_before: float = 0.0        # epoch seconds: backed off until then

    @property
    def name(self) -> str:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.session_id)[:100]
        return f"{safe}.{self.kind.value}.json"

    def due(self, now: float | None = None) -> bool:
        return self.not_before <= (time.time() if now is None else now)

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "kind": self.kind.value}

    @classmethod
    def from_dict(cls, data: dict) -> Job:
        return cls(kind=JobKind(data["kind"]), session_id=str(data["session_id"]),
                   transcript_path=str(data.get("transcript_path", "")), agent=str(data.get("agent", "claude")),
                   cwd=str(data.get("cwd", "")), fork=bool(data.get("fork", False)),
                   created=str(data.get("created", now_iso())), attempts=int(data.get("attempts", 0)),
                   last_error=str(data.get("last_error", "")), not_before=float(data.get("not_before", 0.0)))


def backoff_s(attempts: int) -> float:
    """How long a job that has failed `attempts` times waits before its next try."""
    return min(MAX_BACKOFF_S, BACKOFF_S * 2 ** max(0, attempts - 1))


def _write_job(path: Path, job: Job) -> None:
    """A job as written by the learner: it may carry an error message quoting model output, so it is redacted."""
    from rose.redact import redact_data

    write_text_atomic(path, json.dumps(redact_data(job.to_dict()), indent=1))


def enqueue(store: Store, job: Job) -> Path:
    """Queue a job (one file per session and kind: a second Stop of a session replaces its first, never doubles).

    A new job holds ids, paths and counters only (no error yet), so the hook writes it without loading the
    redactor: SessionEnd has about a second before Claude Code kills it."""
    path = store.queue_dir / job.name
    if job.last_error:
        _write_job(path, job)
    else:
        write_text_atomic(path, json.dumps(job.to_dict(), indent=1))
    return path


def save(path: Path, job: Job) -> None:
    _write_job(path, job)


def queued(store: Store) -> list[tuple[Path, Job]]:
    out = []
    if store.queue_dir.is_dir():
        for path in sorted(store.queue_dir.glob("*.json"), key=_mtime):
            try:
                out.append((path, Job.from_dict(load_json(reader.read_text(path, reader.RECORD)))))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a torn job file is skipped; doctor lists the folder
    return out


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def dead_dir(store: Store) -> Path:
    return store.queue_dir / "dead"


def bury(store: Store, path: Path, job: Job) -> Path:
    """Set a job aside for good (queue/dead/), reason included; the queue goes on without it."""
    target = dead_dir(store) / path.name
    _write_job(target, job)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return target


def dead(store: Store) -> list[tuple[Path, Job]]:
    out = []
    folder = dead_dir(store)
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            try:
                out.append((path, Job.from_dict(load_json(reader.read_text(path, reader.RECORD)))))
            except (OSError, ValueError, KeyError, TypeError):
                continue
    return out


def log_line(store: Store, text: str) -> None:
    from rose.redact import redact

    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{os.getpid()}] {redact(text)}\n".encode("utf-8", "replace")
    try:
        private_dir(store.logs_dir)
        if os.path.islink(store.logs_dir):   # a repository's link: the log would land wherever it points
            return
        # never through a link, never blocked by a FIFO: a committed .rose/logs/learner.log is the repository's
        fd = reader.open_append(store.logs_dir / "learner.log")
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass  # a log that cannot be written must not fail the work it describes


# -- the one learner: its lock, and which stores have work --------------------------------------------------------
def _home() -> Path:
    from rose.store.layers import global_root

    return global_root()


def lock_path() -> Path:
    return _home() / "locks" / "learner.lock"


def pending_dir() -> Path:
    return _home() / "pending"


def _mark_name(root: Path) -> str:
    import hashlib   # here: ~8 ms (OpenSSL's library) that `rose doctor`, which reads the queue, does not need

    return hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:20] + ".json"


def mark_pending(store: Store) -> None:
    root = store.root.resolve()
    write_text_atomic(pending_dir() / _mark_name(root), json.dumps({"root": str(root)}))


def clear_pending(root: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (pending_dir() / _mark_name(root.resolve())).unlink()


def moved_store(old_root: Path, store: Store) -> None:
    """`rose init` moved a repository's lessons and queued sessions from the user's store into `store`: the learner
    is told where they wait now (the old store's mark named a queue that is empty)."""
    clear_pending(old_root)
    if queued(store):
        mark_pending(store)


def pending_roots() -> list[Path]:
    out = []
    folder = pending_dir()
    if folder.is_dir():
        for path in sorted(folder.glob("*.json"), key=_mtime):
            try:
                out.append(Path(load_json(reader.read_text(path, reader.RECORD))["root"]))
            except (OSError, ValueError, KeyError, TypeError):
                with contextlib.suppress(OSError):
                    path.unlink()   # a torn mark names nothing; its store is marked again by its next hook
    return out


def try_lock() -> int | None:
    """The learner lock's fd when it was free (the caller now holds it), else None (a learner runs)."""
    from rose.store.atomic import try_lock_file

    return try_lock_file(lock_path())


def release(fd: int) -> None:
    import fcntl

    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    with contextlib.suppress(OSError):
        os.close(fd)


def holder_running() -> bool:
    """Is a learner running now? (The lock is held.)"""
    fd = try_lock()
    if fd is None:
        return True
    release(fd)
    return False


def request_learning(store: Store) -> bool:
    """After a job was queued: mark its store and start the learner unless one runs. True when one was started."""
    mark_pending(store)
    fd = try_lock()
    if fd is None:
        return False     # the running learner sees the mark before it exits
    try:
        return spawn_learner(fd) is not None
    finally:
        os.close(fd)     # the child holds the lock through its own copy of the descriptor


def spawn_learner(lock_fd: int) -> int | None:
    """Start the detached learner, handing it the learner lock. Returns its pid (None if it could not start)."""
    from rose.detach import python_module, spawn_detached

    log = _home() / "logs" / "learner.log"
    return spawn_detached(python_module("rose.learn.run"), log, cwd=_home(), keep_fd=lock_fd,
                          extra_env={LOCK_FD_ENV: str(INHERITED_FD)})
