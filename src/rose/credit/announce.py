"""The one-time notice of a withdrawn lesson: the learner appends it to the session store's
`cache/credit-announce.json` (machine-local), and the next prompt's notice line takes it (the file is removed as it
is read). Its own module because the prompt path reads it on every prompt and needs nothing else of rose.credit's
reports (rose.credit.report re-exports it).
"""
from __future__ import annotations

from rose.text import load_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.store import Store

ANNOUNCE_FILE = "credit-announce.json"
MAX_PENDING = 20


def _paths(owner: Store) -> tuple[Any, Any]:
    return owner.cache_dir / ANNOUNCE_FILE, owner.locks_dir / "credit-announce.lock"


def announce(owner: Store, node_id: str, title: str, reason: str) -> None:
    from rose.store.atomic import file_lock

    path, lock = _paths(owner)
    with file_lock(lock, timeout_s=owner.wait_s):
        pending = _load(path)
        if all(p.get("id") != node_id for p in pending):
            pending.append({"id": node_id, "title": title, "reason": reason})
        owner.write_json(path, pending[-MAX_PENDING:])


def take_announcements(owner: Store) -> str:
    """The notice text for withdrawals not yet told ("" when there are none: one stat on the prompt path)."""
    import os

    path, lock = _paths(owner)
    if not os.path.exists(path):
        return ""
    from rose.inert import plain
    from rose.store.atomic import file_lock

    with file_lock(lock, timeout_s=owner.wait_s):
        pending = _load(path)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    if not pending:
        return ""
    if len(pending) == 1:
        p = pending[0]
        return (f"stopped serving “{plain(p.get('title', p.get('id', '?')), 60)}”: sessions did worse with it "
                f"than without it — rose credit")
    titles = ", ".join(f"“{plain(p.get('title', p.get('id', '?')), 40)}”" for p in pending[:3])
    return f"stopped serving {len(pending)} lessons that made sessions worse ({titles}) — rose credit"


def _load(path: Any) -> list[dict[str, str]]:
    from rose.store import reader

    try:
        data = load_json(reader.read_text(path, reader.RECORD))
    except (OSError, ValueError, RecursionError):   # UnsafeFile too: a FIFO or a link there is never read
        return []
    return [p for p in data if isinstance(p, dict)] if isinstance(data, list) else []
