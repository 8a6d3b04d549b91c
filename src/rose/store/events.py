"""Telemetry: one JSON object per line in events.jsonl (machine-local), redacted, appended under a lock.

Events are what `rose events`, `rose status` (calls and cost per stage) and `rose doctor` read. The file is
rotated once it passes MAX_BYTES so a long-lived store never grows it without bound.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator
from enum import Enum
from pathlib import Path

from rose.text import load_json
from rose.errors import UnsafeFile
from rose.model import now_iso
from rose.store.atomic import file_lock
from rose.store.reader import LOG, open_append, read_text
from rose.typedrecord import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_BYTES = 16 * 1024 * 1024  # ~50k events; one rotated generation is kept beside it


class EventKind(str, Enum):
    ADD = "add"                # a lesson was stored (by hand or learned)
    UPDATE = "update"          # a lesson was changed
    INDEX = "index"            # the derived index was rebuilt or caught up
    SKIP = "skip"              # bad input was skipped (corrupt file, malformed payload); data says why
    INJECT = "inject"          # recall served lessons
    JUDGE = "judge"            # one model call (or cache hit) and its accounting
    HOOK = "hook"              # a hook ran (event, ms, outcome)
    LEARN = "learn"            # the detached learner processed a session
    EPISODE = "episode"        # an episode was recorded
    CONFIG = "config"          # a setting was changed
    RETENTION = "retention"    # a record was archived, restored, consolidated, promoted or deleted (data says which)


class Event(Record):
    """One line of a store's event log."""
    kind: EventKind
    data: dict[str, Any] = field(default_factory=dict)
    ts: str = field(default_factory=now_iso)

    def to_dict(self) -> dict[str, Any]:
        return {"ts": self.ts, "kind": self.kind.value, **self.data}


def append(path: Path, kind: EventKind, *, structural: bool = False, lock_timeout_s: float | None = None,
           **data: Any) -> None:
    """Append one event. `structural` events (ids, counts, enum values only) skip the redactor's import cost on
    the per-prompt path; anything carrying free text is redacted."""
    if not structural:
        from rose.redact import redact_data

        data = redact_data(data)
    line = json.dumps(Event(kind, data).to_dict(), ensure_ascii=False, default=str) + "\n"
    lock = path.parent / "locks" / "events.lock"
    with file_lock(lock, **({"timeout_s": lock_timeout_s} if lock_timeout_s is not None else {})):
        try:
            if path.stat().st_size > MAX_BYTES:
                os.replace(path, path.with_name(path.stem + ".1" + path.suffix))
        except FileNotFoundError:
            pass
        try:
            fd = open_append(path)   # a regular file only: no FIFO waited on, no link written through
        except UnsafeFile:
            return   # telemetry only: a log that is not a file (a checkout's FIFO or device) loses the line
        try:
            view = memoryview(line.encode("utf-8"))
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)


def note_skips(path: Path, what: str, reasons: list[str], lock_timeout_s: float) -> None:
    """Each reason a structural skip of `what` (a file's name and a reason rose wrote). A busy or unwritable log
    loses only the note: a skip is something its caller has already worked around."""
    from rose.errors import LockTimeout

    for reason in reasons:
        try:
            append(path, EventKind.SKIP, structural=True, lock_timeout_s=lock_timeout_s, what=what,
                   reason=reason[:300])
        except (OSError, LockTimeout):
            pass


def read(path: Path, kind: str | None = None, limit: int | None = None) -> Iterator[dict[str, Any]]:
    """Yield events oldest first (rotated file included); lines that do not parse are skipped, not fatal."""
    files = [path.with_name(path.stem + ".1" + path.suffix), path]
    selected: list[dict[str, Any]] = []
    for f in files:
        try:   # a regular file only, bounded: a FIFO, a device or a link a checkout left there is never read
            text = read_text(f, LOG, errors="replace")
        except OSError:
            continue
        for raw in text.split("\n"):   # not splitlines: a line's text may hold U+2028
            try:
                event = load_json(raw)
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(event, dict) and (kind is None or event.get("kind") == kind):
                selected.append(event)
    if limit is not None:
        selected = selected[-limit:]
    yield from selected
