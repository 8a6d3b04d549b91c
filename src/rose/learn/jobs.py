"""Learning work as files: a hook queues a job and hands it to a detached process that outlives the hook.

Claude Code kills SessionEnd hooks after about 1.5 s and a Stop hook blocks the user, so hooks only write a small
job file into `.rose/queue/` and start `python -m rose.learn.run` in its own session with stdio closed and
ROSE_CHILD=1, then return. A job stays in the queue until it is done, so an outage (no backend, a crash, a
deadline) loses nothing: the next learner run, or `rose learn`, picks it up.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from rose.model import now_iso
from rose.store import Store
from rose.store.atomic import write_text_atomic


class JobKind(str, Enum):
    SESSION_END = "session_end"    # attribution, an episode, then minting from what is left
    REFLECT = "reflect"            # mid-session: minting from the new part of the transcript


@dataclass
class Job:
    kind: JobKind
    session_id: str
    transcript_path: str
    agent: str
    cwd: str
    fork: bool = False             # reflection.mode fork: judge calls fork the live session instead of a digest
    created: str = field(default_factory=now_iso)
    attempts: int = 0
    last_error: str = ""

    @property
    def name(self) -> str:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.session_id)[:100]
        return f"{safe}.{self.kind.value}.json"

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "kind": self.kind.value}

    @classmethod
    def from_dict(cls, data: dict) -> Job:
        return cls(kind=JobKind(data["kind"]), session_id=str(data["session_id"]),
                   transcript_path=str(data.get("transcript_path", "")), agent=str(data.get("agent", "claude")),
                   cwd=str(data.get("cwd", "")), fork=bool(data.get("fork", False)),
                   created=str(data.get("created", now_iso())), attempts=int(data.get("attempts", 0)),
                   last_error=str(data.get("last_error", "")))


def enqueue(store: Store, job: Job) -> Path:
    path = store.queue_dir / job.name
    write_text_atomic(path, json.dumps(job.to_dict(), indent=1))
    return path


def queued(store: Store) -> list[tuple[Path, Job]]:
    out = []
    if store.queue_dir.is_dir():
        for path in sorted(store.queue_dir.glob("*.json"), key=lambda p: p.stat().st_mtime):
            try:
                out.append((path, Job.from_dict(json.loads(path.read_text(encoding="utf-8")))))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a torn job file is skipped; doctor lists the folder
    return out


def spawn_learner(store: Store) -> int | None:
    """Start a detached learner over this store's queue. Returns its pid (None if it could not start)."""
    from rose.detach import python_module, spawn_detached

    return spawn_detached(python_module("rose.learn.run", str(store.root)), store.logs_dir / "learner.log",
                          cwd=store.root)


def log_line(store: Store, text: str) -> None:
    store.logs_dir.mkdir(parents=True, exist_ok=True)
    with open(store.logs_dir / "learner.log", "a", encoding="utf-8") as handle:
        handle.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{os.getpid()}] {text}\n")
